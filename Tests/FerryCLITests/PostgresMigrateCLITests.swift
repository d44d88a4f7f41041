import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `ferry migrate` of PostgreSQL stores through the built binary, compared with the same
/// migrations of SQLite stores: the same plan, the same objects, the same failures; the original
/// schema untouched by a failure or a SIGKILL.
@Suite(
    "PostgreSQL migrations (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresMigrateCLITests {
    static let root = TestPaths.packageRoot.path
    static let shop = root + "/samples/models/Shop"

    /// A fresh schema name on the test server and its store URL.
    static func freshSchema(_ prefix: String) throws -> (schema: String, url: String) {
        let schema = "ferry_mig_\(prefix)_" + UUID().uuidString.lowercased().replacing("-", with: "").prefix(12)
        return (schema, try PostgresTestServer.requireURL() + "?schema=" + schema)
    }

    static func exports(_ store: String, cwd: String) throws -> [String: String] {
        try PostgresStoreLoader.exports(store, cwd: cwd)
    }

    /// The Shop v1 snapshot twice: in a fresh PostgreSQL schema, and copied to `shop.sqlite` in `directory`.
    static func shopV1Stores(
        _ prefix: String, in directory: TemporaryDirectory
    ) throws -> (schema: String, url: String, sqlite: String) {
        let (schema, url) = try freshSchema(prefix)
        let sqlite = directory.file("shop.sqlite")
        try FileManager.default.copyItem(atPath: root + "/samples/snapshots/shop-v1.sqlite", toPath: sqlite)
        try PostgresStoreLoader.load(sqlite, into: url)
        return (schema, url, sqlite)
    }

    /// The 2 → 3 mapping of the Shop bundle without its custom policy (not in the test binary).
    static func mappingsWithoutPolicy(in directory: TemporaryDirectory) throws -> String {
        let folder = directory.file("mappings")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let text = try String(contentsOfFile: shop + "/mappings/2-to-3.yml", encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains("policy: PhoneNormalizer") }
            .joined(separator: "\n")
        try text.write(toFile: folder + "/2-to-3.yml", atomically: true, encoding: .utf8)
        return folder
    }

    @Test(
        "the Shop v1 snapshot migrates on PostgreSQL (inferred 1 → 2, then a mapping file with expressions 2 → 3) to exactly the objects of the same migration on SQLite, keeping the original schema as the backup; --dry-run changes nothing"
    )
    func shopMatchesSQLite() throws {
        let directory = TemporaryDirectory()
        let (schema, url, sqlite) = try Self.shopV1Stores("shop", in: directory)
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        let original = try Self.exports(url, cwd: directory.path)
        #expect(original == (try Self.exports(sqlite, cwd: directory.path)))

        // The plan: the same lines but for the store's name, and nothing changes.
        let plannedSQLite = try runFerry(["migrate", sqlite, "--model", Self.shop, "--dry-run"], cwd: directory.path)
        let planned = try runFerry(["migrate", url, "--model", Self.shop, "--dry-run"], cwd: directory.path)
        #expect(planned.exitCode == 0, "\(planned)")
        #expect(planned.stdout.replacing(url, with: "STORE") == plannedSQLite.stdout.replacing(sqlite, with: "STORE"))
        #expect(planned.stdout.contains("(197 records)"), "\(planned.stdout)")
        #expect(try PostgresStoreLoader.schemas(startingWith: schema) == [schema])

        let mappings = try Self.mappingsWithoutPolicy(in: directory)
        for arguments in [["--to", "2"], ["--mappings", mappings]] {
            let expected = try runFerry(
                ["migrate", sqlite, "--model", Self.shop, "--quiet"] + arguments, cwd: directory.path)
            let actual = try runFerry(["migrate", url, "--model", Self.shop] + arguments, cwd: directory.path)
            #expect(expected.exitCode == 0, "\(expected)")
            #expect(actual.exitCode == 0, "\(actual)")
            #expect(actual.stdout.contains("original kept as "), "\(actual.stdout)")
        }
        let migrated = try Self.exports(url, cwd: directory.path)
        #expect(migrated == (try Self.exports(sqlite, cwd: directory.path)))
        #expect(migrated["Customer"]?.contains("\"first_name\"") == true)
        #expect(migrated["version"] == "3")

        // Two backups (one per run), the first holding the original objects, and no scratch schema.
        let schemas = try PostgresStoreLoader.schemas(startingWith: schema)
        #expect(
            schemas.count == 3 && schemas.filter { $0.contains("_backup_v1_") }.count == 1
                && schemas.filter { $0.contains("_backup_v2_") }.count == 1, "\(schemas)")
        let backup = try #require(schemas.first { $0.contains("_backup_v1_") })
        #expect(
            try Self.exports(try PostgresTestServer.requireURL() + "?schema=" + backup, cwd: directory.path) == original
        )

        // Migrating again finds nothing to do.
        let again = try runFerry(["migrate", url, "--model", Self.shop, "--mappings", mappings], cwd: directory.path)
        #expect(again.exitCode == 0 && again.stdout.contains("already at Shop version 3"), "\(again)")
    }

    @Test("a job's migrate step migrates a PostgreSQL store in place, as `ferry migrate` does")
    func jobMigrateStep() throws {
        let directory = TemporaryDirectory()
        let (schema, url, sqlite) = try Self.shopV1Stores("job", in: directory)
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        try directory.write(
            "job.yml",
            "job: migrate-pg\nmodel: \(Self.shop)\nstore: {path: \"${store}\"}\nsteps:\n  - migrate: {to: \"2\"}\n")
        let expected = try runFerry(["run", "job.yml", "--param", "store=shop.sqlite", "--quiet"], cwd: directory.path)
        let result = try runFerry(["run", "job.yml", "--param", "store=\(url)", "--quiet"], cwd: directory.path)
        #expect(expected.exitCode == 0, "\(expected)")
        #expect(result.exitCode == 0, "\(result)")
        let migrated = try Self.exports(url, cwd: directory.path)
        #expect(migrated["version"] == "2")
        #expect(migrated == (try Self.exports(sqlite, cwd: directory.path)))
        #expect(try PostgresStoreLoader.schemas(startingWith: schema).count == 2)
    }

    @Test(
        "a job whose PostgreSQL store says migrate: auto brings the store to the job's model version before its steps, as on SQLite; a store already there is left alone"
    )
    func jobMigratesAutomatically() throws {
        let directory = TemporaryDirectory()
        let (schema, url, sqlite) = try Self.shopV1Stores("auto", in: directory)
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        try directory.write(
            "job.yml",
            """
            job: auto-pg
            model: {path: \(Self.shop), version: "2"}
            store: {path: "${store}", migrate: auto}
            steps:
              - export: {entity: Customer, output: "${out}", format: ndjson, sort: [email]}

            """)
        for round in 1...2 {
            let expected = try runFerry(
                ["run", "job.yml", "--param", "store=shop.sqlite", "--param", "out=sq.ndjson"], cwd: directory.path)
            let result = try runFerry(
                ["run", "job.yml", "--param", "store=\(url)", "--param", "out=pg.ndjson"], cwd: directory.path)
            #expect(expected.exitCode == 0, "\(expected)")
            #expect(result.exitCode == 0, "\(result)")
            // The same lines but for the backup's name and the output file's.
            let lines: (ProcessResult, String) -> [String] = { run, output in
                PostgresImportCLITests.countLines(run.stdout + run.stderr).map {
                    $0.replacing(#/original kept as .*/#, with: "original kept").replacing(output, with: "OUT")
                }
            }
            #expect(lines(result, "pg.ndjson") == lines(expected, "sq.ndjson"), "\(result)")
            // The first run migrates, then exports; the second only exports.
            #expect(lines(result, "pg.ndjson").count == (round == 1 ? 2 : 1), "\(result)")
        }
        #expect(try Self.exports(url, cwd: directory.path)["version"] == "2")
        #expect(try Self.exports(url, cwd: directory.path) == (try Self.exports(sqlite, cwd: directory.path)))
        // One migration, one backup: the second run found the store at version 2.
        #expect(try PostgresStoreLoader.schemas(startingWith: schema).count == 2)
    }

    /// The tables of `schema` as the catalog describes them: each column's position, type, `NOT
    /// NULL`, identity (and its sequence's definition), default and collation, each constraint (primary keys, foreign keys, checks) and each index,
    /// with the schema's name written `S`.
    static func shape(of schema: String) throws -> [String] {
        let database = try Store.inspectionSession(at: try PostgresTestServer.requireURL() + "?schema=public").session
        let queries = [
            """
            SELECT c.relname || '.' || a.attname || ' #' || a.attnum || ' ' || format_type(a.atttypid, a.atttypmod)
                || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END || ' identity:' || a.attidentity::text
                || ' default:' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
                || ' collation:' || coalesce(l.collname, '') || ' sequence:'
                || coalesce(pg_get_serial_sequence(quote_ident(n.nspname) || '.' || quote_ident(c.relname), a.attname), '')
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            LEFT JOIN pg_collation l ON l.oid = a.attcollation
            WHERE n.nspname = ? AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped ORDER BY 1
            """,
            """
            SELECT c.relname || ' ' || format_type(s.seqtypid, NULL) || ' start:' || s.seqstart || ' by:' || s.seqincrement
                || ' min:' || s.seqmin || ' max:' || s.seqmax || ' cache:' || s.seqcache || ' cycle:' || s.seqcycle::text
            FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = ? ORDER BY 1
            """,
            """
            SELECT c.relname || ' ' || k.conname || ' ' || k.contype::text || ' ' || pg_get_constraintdef(k.oid)
            FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = ? ORDER BY 1
            """,
            "SELECT tablename || ' ' || indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = ? ORDER BY 1",
        ]
        return try queries.flatMap { query in
            try database.rows(query, [.text(schema)]).compactMap { $0.first?.text?.replacing(schema, with: "S") }
        }
    }

    @Test(
        "a store migrated in the server (its tables made from their rows, keys added after the rows, join tables after the keys) has the tables, columns, identity keys, constraints and indexes of the same version's store made by ferry copy"
    )
    func migratedSchemaMatchesCreatedOne() throws {
        let directory = TemporaryDirectory()
        let (schema, url, sqlite) = try Self.shopV1Stores("shape", in: directory)
        let (created, createdURL) = try Self.freshSchema("shape_created")
        defer {
            PostgresStoreLoader.dropSchemas(startingWith: schema)
            PostgresStoreLoader.dropSchemas(startingWith: created)
        }
        let migrated = try runFerry(
            ["migrate", url, "--model", Self.shop, "--to", "2", "--no-backup"], cwd: directory.path)
        #expect(migrated.exitCode == 0, "\(migrated)")
        let expected = try runFerry(
            ["migrate", sqlite, "--model", Self.shop, "--to", "2", "--quiet"], cwd: directory.path)
        #expect(expected.exitCode == 0, "\(expected)")
        let copied = try runFerry(["copy", sqlite, createdURL, "--quiet"], cwd: directory.path)
        #expect(copied.exitCode == 0, "\(copied)")

        let shape = try Self.shape(of: schema)
        #expect(shape == (try Self.shape(of: created)))
        // Every entity table has its primary key and its identity key, and the join tables theirs.
        let keyed = shape.filter { $0.contains(".ferry_pk #1 bigint not null identity:d") }.count
        #expect(keyed > 1, "\(shape)")
        #expect(shape.filter { $0.contains(" p PRIMARY KEY (ferry_pk)") }.count == keyed, "\(shape)")
        #expect(shape.contains { $0.contains(" p PRIMARY KEY (") && !$0.contains("(ferry_pk)") }, "\(shape)")
        // The objects are those of the same migration on SQLite.
        #expect(try Self.exports(url, cwd: directory.path) == (try Self.exports(sqlite, cwd: directory.path)))
    }

    /// Version 1 of a model with every attribute type, optional and required attributes,
    /// defaults, uniqueness constraints, a to-one and a many-to-many relationship.
    static let everyTypeV1 = """
        version: "1"
        entities:
          Item:
            attributes:
              code: {type: string, optional: false, unique: true}
              small: int16
              medium: {type: int32, optional: false, default: 7}
              large: int64
              flag: {type: bool, optional: false, default: false}
              ratio: double
              single: float
              price: {type: decimal, optional: false, default: "1.50"}
              when: date
              ident: uuid
              data: json
              blob: binary
              link: uri
            relationships:
              owner: {destination: Person, inverse: items}
              tags: {destination: Tag, to_many: true, inverse: items}
          Person:
            attributes:
              name: {type: string, optional: false, unique: true}
            relationships:
              items: {destination: Item, to_many: true, inverse: owner}
          Tag:
            attributes:
              label: {type: string, optional: false, unique: true}
            relationships:
              items: {destination: Item, to_many: true, inverse: tags}

        """

    /// Version 2: new attributes with defaults (required and optional, text, integer, date,
    /// boolean), a new uniqueness constraint and index, a new optional attribute elsewhere.
    static let everyTypeV2 =
        everyTypeV1
        .replacing("version: \"1\"", with: "version: \"2\"")
        .replacing(
            "      link: uri\n",
            with: """
                      link: uri
                      note: {type: string, optional: false, default: "none"}
                      rank: {type: int64, optional: true, default: 3}
                      stamp: {type: date, optional: true, default: "2020-01-02T03:04:05Z"}
                      ok: {type: bool, optional: false, default: true}
                    unique:
                      - [small, medium]
                    indexes:
                      - large

                """
        )
        .replacing(
            "      name: {type: string, optional: false, unique: true}\n",
            with: "      name: {type: string, optional: false, unique: true}\n      nick: string\n")

    @Test(
        "a model with every attribute type, defaults, uniqueness constraints, a to-one and a many-to-many migrates in the server (its tables made from their rows) to the catalog of the same version's store made by ferry copy, with the objects of SQLite's migration"
    )
    func everyTypeSchemaMatchesCreatedOne() throws {
        let directory = TemporaryDirectory()
        let (schema, url) = try Self.freshSchema("every")
        let (created, createdURL) = try Self.freshSchema("every_created")
        defer {
            PostgresStoreLoader.dropSchemas(startingWith: schema)
            PostgresStoreLoader.dropSchemas(startingWith: created)
        }
        try FileManager.default.createDirectory(atPath: directory.file("model"), withIntermediateDirectories: true)
        try directory.write("model/model.yml", "name: every\ncurrent: \"2\"\nversions: [v1.yml, v2.yml]\n")
        try directory.write("model/v1.yml", Self.everyTypeV1)
        try directory.write("model/v2.yml", Self.everyTypeV2)
        try directory.write(
            "items.csv",
            """
            code,small,medium,large,flag,ratio,single,price,when,ident,data,blob,link
            A1,1,2,3,true,1.5,2.25,9.99,2021-05-06T07:08:09Z,0c3e2d1a-1b2c-4d3e-8f40-5a6b7c8d9e0f,"{""a"": [1, ""x""]}",aGVsbG8=,https://example.com/a
            A2,,5,,false,,,0,,,,,
            A3,-7,5,9000000000,true,-0.25,0.5,-12.345678901234567890,1999-12-31T23:59:59.5Z,,[],,

            """)
        try directory.write("people.csv", "name\nAna\nBo\n")
        try directory.write("tags.csv", "label\nred\nblue\n")
        let sqlite = directory.file("every.sqlite")
        for (file, entity) in [("items.csv", "Item"), ("people.csv", "Person"), ("tags.csv", "Tag")] {
            let imported = try runFerry(
                ["import", file, "--store", sqlite, "--entity", entity, "--model", "model/v1.yml", "--quiet"],
                cwd: directory.path)
            #expect(imported.exitCode == 0, "\(imported)")
        }
        // The links: owners and tags by key.
        let links = try Store.inspectionSession(at: sqlite).session
        try links.execute("UPDATE \"Item\" SET \"owner\" = 1 WHERE \"code\" IN ('A1', 'A3')")
        try links.execute("UPDATE \"Item\" SET \"owner\" = 2 WHERE \"code\" = 'A2'")
        try links.execute("INSERT INTO \"ferry_link_Item_tags\" VALUES (1, 1), (1, 2), (3, 2)")
        try PostgresStoreLoader.load(sqlite, into: url)

        let migrated = try runFerry(["migrate", url, "--model", "model", "--no-backup"], cwd: directory.path)
        #expect(migrated.exitCode == 0, "\(migrated)")
        let expected = try runFerry(["migrate", sqlite, "--model", "model", "--quiet"], cwd: directory.path)
        #expect(expected.exitCode == 0, "\(expected)")
        let copied = try runFerry(["copy", sqlite, createdURL, "--quiet"], cwd: directory.path)
        #expect(copied.exitCode == 0, "\(copied)")

        let shape = try Self.shape(of: schema)
        #expect(shape == (try Self.shape(of: created)))
        #expect(
            shape.contains {
                $0.hasPrefix("Item.note #") && $0.contains(" text not null ") && $0.contains("default:'none'::text")
            }, "\(shape)")
        #expect(shape.contains { $0.hasPrefix("Item.owner #") && $0.contains(" bigint ") }, "\(shape)")
        #expect(shape.contains { $0.contains("ferry_link_Item_tags") && $0.contains(" p PRIMARY KEY (") }, "\(shape)")
        #expect(try Self.exports(url, cwd: directory.path) == (try Self.exports(sqlite, cwd: directory.path)))
        // New objects get keys past the migrated ones, in every table made from its rows.
        let session = try Store.inspectionSession(at: url).session
        for (table, next) in [("Item", 4), ("Person", 3), ("Tag", 3)] {
            let key = try session.scalar(
                "SELECT nextval(pg_get_serial_sequence(?, 'ferry_pk'))", [.text("\"\(schema)\".\"\(table)\"")])?.int64
            #expect(key == Int64(next), "\(table)")
        }
    }

    /// Writes the bundle `model/` (`model.yml` naming v1 and v2, the two versions and the 1 → 2
    /// mapping), imports `csv` into Person at version 1 in a fresh PostgreSQL schema and a SQLite
    /// file, migrates both, and checks that both fail at `place` (SQLite's wording after it is
    /// its own), PostgreSQL with `message`, and that the original schema is left as it was.
    static func expectMigrationFails(
        _ prefix: String, v1: String, v2: String, mapping: String, csv: String, place: String, message: String
    ) throws {
        let directory = TemporaryDirectory()
        let (schema, url) = try Self.freshSchema(prefix)
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        try FileManager.default.createDirectory(
            atPath: directory.file("model/mappings"), withIntermediateDirectories: true)
        try directory.write("model/model.yml", "name: \(prefix)\ncurrent: \"2\"\nversions: [v1.yml, v2.yml]\n")
        try directory.write("model/v1.yml", v1)
        try directory.write("model/v2.yml", v2)
        try directory.write("model/mappings/1-to-2.yml", mapping)
        try directory.write("people.csv", csv)
        let sqlite = directory.file("people.sqlite")
        for store in [url, sqlite] {
            let imported = try runFerry(
                ["import", "people.csv", "--store", store, "--entity", "Person", "--model", "model/v1.yml", "--quiet"],
                cwd: directory.path)
            #expect(imported.exitCode == 0, "\(imported)")
        }
        let original = try Self.exports(url, cwd: directory.path)
        let expected = try runFerry(["migrate", sqlite, "--model", "model", "--no-backup"], cwd: directory.path)
        let result = try runFerry(["migrate", url, "--model", "model", "--no-backup"], cwd: directory.path)
        #expect(expected.exitCode != 0 && result.exitCode == expected.exitCode, "\(result)\n\(expected)")
        #expect(expected.errorLines.first?.hasPrefix(place) == true, "\(expected.stderr)")
        #expect(result.errorLines.first == place + message, "\(result.stderr)")
        #expect(result.stderr.contains("nothing was changed"), "\(result.stderr)")
        // Nothing of the failed migration is left.
        #expect(try PostgresStoreLoader.schemas(startingWith: schema) == [schema])
        #expect(try Self.exports(url, cwd: directory.path) == original)
    }

    @Test(
        "a nil written into a required attribute of a table made from its rows fails at its mapping, as on SQLite, and leaves the original schema"
    )
    func nilIntoRequiredAttribute() throws {
        try Self.expectMigrationFails(
            "nilreq",
            v1: "version: \"1\"\nentities:\n  Person:\n    attributes:\n      name: string\n      age: int16\n",
            v2:
                "version: \"2\"\nentities:\n  Person:\n    attributes:\n      name: {type: string, optional: false}\n      age: int16\n",
            mapping: "from: \"1\"\nto: \"2\"\nentities:\n  Person:\n    attributes:\n      name: {source: name}\n",
            csv: "name,age\nAna,1\n,2\nCy,3\n",
            place: "model/mappings/1-to-2.yml:4:3: error: mapping Person → Person: ",
            message: "column \"name\" of relation \"Person\" contains null values [SQLSTATE 23502]")
    }

    @Test(
        "two mappings copying the same objects into one entity (the same keys) fail in the server when the keys are added, with SQLite's place and mapping, and leave the original schema"
    )
    func duplicateKeysFromTwoMappings() throws {
        try Self.expectMigrationFails(
            "dupkeys", v1: "version: \"1\"\nentities:\n  Person:\n    attributes:\n      name: string\n",
            v2: "version: \"2\"\nentities:\n  Person:\n    attributes:\n      name: string\n      tag: string\n",
            mapping:
                "from: \"1\"\nto: \"2\"\nentities:\n  Person: {}\n  PersonAgain:\n    source: Person\n    entity: Person\n",
            csv: "name\nAna\nBo\nCy\n", place: "model/mappings/1-to-2.yml:5:3: error: mapping PersonAgain → Person: ",
            message: "two or more objects have the same key (Person.ferry_pk) as objects of mapping Person")
    }

    @Test("a schema named like the migration's scratch schema that is not a ferry store is refused, never dropped")
    func foreignScratchSchemaRefused() throws {
        let directory = TemporaryDirectory()
        let (schema, url) = try Self.freshSchema("foreign")
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        try Self.peopleStore(url, rows: 1...10, in: directory)
        let session = try Store.inspectionSession(at: try PostgresTestServer.requireURL() + "?schema=public").session
        try session.execute("CREATE SCHEMA \"\(schema)_next\"")
        try session.execute("CREATE TABLE \"\(schema)_next\".mine (x integer)")
        let result = try runFerry(MigrationCrashTests.migrateArguments(url, ["--to", "2"]))
        #expect(result.exitCode == 64, "\(result)")
        #expect(
            result.errorLines.first
                == "error: cannot migrate the store in schema '\(schema)': the schema '\(schema)_next' the new version is built in already exists and is not a ferry store",
            "\(result)")
        #expect(
            try session.scalar("SELECT count(*) FROM pg_tables WHERE schemaname = ?", [.text(schema + "_next")])?.int64
                == 1)
        #expect(try Self.exports(url, cwd: directory.path)["version"] == "1")
    }

    @Test(
        "ferry migrate never prints a password written in the store URL: the plan, the result and the backup show it as ***"
    )
    func passwordNeverPrinted() throws {
        let directory = TemporaryDirectory()
        let (schema, url) = try Self.freshSchema("secret")
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        try Self.peopleStore(url, rows: 1...10, in: directory)
        // The test server trusts loopback connections: the password is sent, not needed.
        let withPassword = url.replacing("postgresql://ferry@", with: "postgresql://ferry:s3cret-pw@")
        #expect(withPassword != url)
        for arguments in [["--dry-run"], []] {
            let result = try runFerry(
                ["migrate", withPassword, "--model", MigrationCrashTests.bundle, "--to", "2"] + arguments)
            #expect(result.exitCode == 0, "\(result)")
            #expect(!(result.stdout + result.stderr).contains("s3cret-pw"), "\(result)")
            #expect(result.stdout.contains("ferry:***@"), "\(result)")
        }
        #expect(try Self.exports(url, cwd: directory.path)["version"] == "2")
        // New objects get keys past the migrated ones (the identity sequence was moved).
        let session = try Store.inspectionSession(at: url).session
        let next = try session.scalar(
            "SELECT nextval(pg_get_serial_sequence(?, 'ferry_pk'))", [.text("\"\(schema)\".\"Person\"")])?.int64
        #expect(next == 11)
    }

    @Test(
        "a writer started during a migration waits for the store's lock, then finds the migrated store and fails with a version mismatch; nothing of it is written"
    )
    func writerWaitsForTheMigration() throws {
        let directory = TemporaryDirectory()
        let (schema, url) = try Self.freshSchema("writer")
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        try Self.peopleStore(url, rows: 1...20_000, in: directory)
        let temporary = ["TMPDIR": directory.file("tmp")]
        try FileManager.default.createDirectory(atPath: directory.file("tmp"), withIntermediateDirectories: true)
        let migration = try FerryProcess(MigrationCrashTests.migrateArguments(url, ["--to", "2"]), env: temporary)
        let started = ContinuousClock.now
        while try !PostgresStoreLoader.isLocked(schema: schema), migration.isRunning,
            ContinuousClock.now - started < .seconds(60)
        {
            Thread.sleep(forTimeInterval: 0.001)
        }
        #expect(migration.isRunning, "the migration ended before the writer started: nothing was tested")
        let data = try directory.write("more.csv", bytes: BigFiles.csv(ids: 20_001...20_005))
        let writer = try runFerry([
            "import", data, "--store", url, "--model", Fixtures.peopleModel, "--entity", "Person", "--quiet",
        ])
        let migrated = try migration.wait()
        #expect(migrated.exitCode == 0, "\(migrated)")
        #expect(writer.exitCode == 64, "\(writer)")
        #expect(writer.stderr.contains("version"), "\(writer)")
        let objects = try Self.exports(url, cwd: directory.path)
        #expect(objects["version"] == "2")
        #expect(objects["Person"]?.split(separator: "\n").count == 20_000)
    }

    /// The reference of a kill test: the People store of `rows` people as a SQLite file in
    /// `directory`, migrated there by ferry with `arguments` (`STORE` standing for the file); its
    /// objects before and after.
    static func sqliteReference(
        rows: ClosedRange<Int>, _ arguments: [String], in directory: TemporaryDirectory
    ) throws -> (original: [String: String], migrated: [String: String]) {
        let sqlite = directory.file("people.sqlite")
        let data = try directory.write("people.csv", bytes: BigFiles.csv(ids: rows))
        #expect(
            try runFerry([
                "import", data, "--store", sqlite, "--model", Fixtures.peopleModel, "--entity", "Person", "--quiet",
            ]).exitCode == 0)
        let original = try exports(sqlite, cwd: directory.path)
        #expect(try runFerry(arguments.map { $0 == "STORE" ? sqlite : $0 }).exitCode == 0)
        return (original, try exports(sqlite, cwd: directory.path))
    }

    /// The People store of the crash tests (`rows` people) imported into PostgreSQL at `url`.
    static func peopleStore(_ url: String, rows: ClosedRange<Int>, in directory: TemporaryDirectory) throws {
        let data = try directory.write("people-\(rows.count).csv", bytes: BigFiles.csv(ids: rows))
        let result = try runFerry([
            "import", data, "--store", url, "--model", Fixtures.peopleModel, "--entity", "Person", "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result)")
    }

    @Test(
        "a migration whose result fails verification (a tightened rule that stored values break) leaves the original schema and says why, as on SQLite"
    )
    func failingVerification() throws {
        let directory = TemporaryDirectory()
        let (schema, url) = try Self.freshSchema("verify")
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        try Self.peopleStore(url, rows: 1...200, in: directory)
        let bundle = try MigrationCrashTests.bundle(
            in: directory,
            version2: MigrationCrashTests.version2WithAgeAtMost90)
        let before = try Self.exports(url, cwd: directory.path)

        let result = try runFerry(["migrate", url, "--model", bundle])

        #expect(result.exitCode == 1, "\(result)")
        #expect(
            result.errorLines.first
                == "error: the migrated store failed verification: 1 of 5 checks failed on the version 2 copy of '\(url)' (first: validation Person)",
            "\(result)")
        #expect(result.errorLines.contains("  validation Person: age is above the maximum 90 in 18 rows"), "\(result)")
        #expect(result.errorLines.last == "  nothing was changed: the original store is as it was", "\(result)")
        #expect(try Self.exports(url, cwd: directory.path) == before)
        #expect(try PostgresStoreLoader.schemas(startingWith: schema) == [schema])
    }

    /// A 1 → 2 mapping of the People steps bundle with an expression, which sends the migration
    /// through the snapshot path (the SQLite engine on a private copy).
    static func expressionMapping(in directory: TemporaryDirectory) throws -> String {
        let folder = directory.file("expression-mappings")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
        from: "1"
        to: "2"
        entities:
          Person:
            attributes:
              city: lowercase($source.name)
        """.write(toFile: folder + "/1-to-2.yml", atomically: true, encoding: .utf8)
        return folder
    }

    @Test(
        "a step in the server whose objects break a new uniqueness constraint leaves the original schema and says why, as on SQLite"
    )
    func failingStepInServer() throws {
        let directory = TemporaryDirectory()
        let (schema, url) = try Self.freshSchema("unique")
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        try Self.peopleStore(url, rows: 1...200, in: directory)
        let bundle = try MigrationCrashTests.bundle(in: directory, version2: MigrationCrashTests.version2WithUniqueAge)
        let before = try Self.exports(url, cwd: directory.path)

        let result = try runFerry(["migrate", url, "--model", bundle])

        #expect(result.exitCode == 1, "\(result)")
        #expect(
            result.errorLines.first
                == "error: the migrated objects break a uniqueness constraint: two or more have the same Person.age",
            "\(result)")
        #expect(result.errorLines.last == "  nothing was changed: the original store is as it was", "\(result)")
        #expect(try Self.exports(url, cwd: directory.path) == before)
        #expect(try PostgresStoreLoader.schemas(startingWith: schema) == [schema])
    }

    @Test(
        "a migration through the snapshot path whose temporary directory is missing says so and changes nothing; the same store migrates in the server without it"
    )
    func missingTemporaryDirectory() throws {
        let directory = TemporaryDirectory()
        let (schema, url) = try Self.freshSchema("tmpdir")
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        try Self.peopleStore(url, rows: 1...50, in: directory)
        let before = try Self.exports(url, cwd: directory.path)
        let missing = ["TMPDIR": directory.file("missing")]
        let snapshot = try runFerry(
            MigrationCrashTests.migrateArguments(
                url, ["--to", "2", "--mappings", try Self.expressionMapping(in: directory)]), env: missing)
        #expect(snapshot.exitCode != 0, "\(snapshot)")
        #expect(
            snapshot.errorLines.first?.hasPrefix(
                "error: cannot create the folder of the migration's private snapshot '\(directory.file("missing"))/ferry-migrate-"
            ) == true, "\(snapshot)")
        #expect(snapshot.errorLines.last == "  nothing was changed: the original schema '\(schema)' is as it was")
        #expect(try Self.exports(url, cwd: directory.path) == before)
        #expect(try PostgresStoreLoader.schemas(startingWith: schema) == [schema])
        // An inferred step needs no snapshot: it runs in the server.
        let server = try runFerry(MigrationCrashTests.migrateArguments(url, ["--to", "2"]), env: missing)
        #expect(server.exitCode == 0, "\(server)")
        #expect(try Self.exports(url, cwd: directory.path)["version"] == "2")
    }

    @Test(
        "SIGKILL during the copy, the load and just before the swap leaves the original schema or the complete new version, never a mix; a rerun finishes and removes the killed run's scratch schema and snapshot"
    )
    func killAtManyMoments() throws {
        let directory = TemporaryDirectory()
        let (schema, url) = try Self.freshSchema("kill")
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        let rows = 1...20_000
        // An expression: the snapshot path, whose snapshot folder a kill may leave.
        let step = ["--to", "2", "--mappings", try Self.expressionMapping(in: directory)]
        let (original, migrated) = try Self.sqliteReference(
            rows: rows, MigrationCrashTests.migrateArguments("STORE", step), in: directory)

        var outcomes: [String] = []
        // The migrations' temporary directory, where their snapshots of the store are made.
        let temporary = ["TMPDIR": directory.file("tmp")]
        try FileManager.default.createDirectory(atPath: directory.file("tmp"), withIntermediateDirectories: true)
        var leftSnapshots = 0
        // By time, then once the new version's rows are being copied into the scratch schema
        // (`copying`), then once that schema exists, just before the swap.
        let moments: [Duration?] = (1...8).map { .milliseconds(100 * $0) } + [nil, nil]
        for (index, moment) in moments.enumerated() {
            let copying = moment == nil && index == moments.count - 2
            PostgresStoreLoader.dropSchemas(startingWith: schema)
            try Self.peopleStore(url, rows: rows, in: directory)
            let started = ContinuousClock.now
            let process = try FerryProcess(MigrationCrashTests.migrateArguments(url, step), env: temporary)
            while process.isRunning, ContinuousClock.now - started < .seconds(60) {
                if let moment, ContinuousClock.now - started >= moment { break }
                if copying, try PostgresStoreLoader.isCopying(into: schema + "_next") { break }
                if moment == nil, !copying, try PostgresStoreLoader.schemas(startingWith: schema + "_next") != [] {
                    break
                }
                Thread.sleep(forTimeInterval: 0.002)
            }
            process.kill()
            let result = try process.wait()
            let label =
                moment.map { "after \($0)" }
                ?? (copying ? "during the COPY into the _next schema" : "once the _next schema exists")
            if !result.wasSignaled { #expect(result.exitCode == 0, "\(label): \(result)") }
            let found = try Self.exports(url, cwd: directory.path)
            #expect(found == original || found == migrated, "\(label): neither the original nor the migrated store")
            let outcome = found == migrated ? "migrated" : "original"
            outcomes.append("\(label): \(result.wasSignaled ? "killed" : "finished"), \(outcome)")
            let snapshots = try FileManager.default.contentsOfDirectory(atPath: temporary["TMPDIR"]!).filter {
                $0.hasPrefix("ferry-migrate-")
            }
            if !result.wasSignaled {
                #expect(snapshots == [], "\(label): the snapshot folder outlived a finished migration")
            }
            let rerun = try runFerry(MigrationCrashTests.migrateArguments(url, step), env: temporary)
            // The rerun removed the killed run's snapshot folder (the same folder for the same store).
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: temporary["TMPDIR"]!).filter {
                    $0.hasPrefix("ferry-migrate-")
                } == [], "rerun \(label)")
            if result.wasSignaled && !snapshots.isEmpty { leftSnapshots += 1 }
            #expect(rerun.exitCode == 0, "rerun \(label): \(rerun)")
            #expect(try Self.exports(url, cwd: directory.path) == migrated, "rerun \(label)")
            #expect(try PostgresStoreLoader.schemas(startingWith: schema + "_next") == [], "rerun \(label)")
        }
        // A kill after the swap leaves the snapshot folder of a store with nothing left to do: the
        // next migration of the store removes it all the same.
        PostgresStoreLoader.dropSchemas(startingWith: schema)
        try Self.peopleStore(url, rows: rows, in: directory)
        let process = try FerryProcess(MigrationCrashTests.migrateArguments(url, step), env: temporary)
        while process.isRunning, try !PostgresStoreLoader.isCopying(into: schema + "_next") {
            Thread.sleep(forTimeInterval: 0.002)
        }
        process.kill()
        _ = try process.wait()
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary["TMPDIR"]!).filter {
            $0.hasPrefix("ferry-migrate-")
        }
        #expect(left.count == 1)
        try FileManager.default.createDirectory(atPath: directory.file("elsewhere"), withIntermediateDirectories: true)
        #expect(
            try runFerry(
                MigrationCrashTests.migrateArguments(url, step), env: ["TMPDIR": directory.file("elsewhere")]
            ).exitCode == 0)
        let nothingToDo = try runFerry(MigrationCrashTests.migrateArguments(url, step), env: temporary)
        #expect(nothingToDo.exitCode == 0, "\(nothingToDo)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: temporary["TMPDIR"]!).filter {
                $0.hasPrefix("ferry-migrate-")
            } == [])
        print(
            "PostgreSQL migration kill outcomes (\(leftSnapshots) kills left a snapshot folder):\n  "
                + outcomes.joined(separator: "\n  "))
        #expect(leftSnapshots > 0, "no kill left a snapshot folder: the cleanup is untested")
        #expect(outcomes.filter { $0.hasSuffix("killed, original") }.count >= 3, "\(outcomes)")
        #expect(outcomes.contains("during the COPY into the _next schema: killed, original"), "\(outcomes)")
        #expect(outcomes.contains("once the _next schema exists: killed, original"), "\(outcomes)")
    }

    /// The People steps bundle with a version 3 whose step runs in the server too (a rename and
    /// an index; the bundle's own 2 → 3 also widens `age`, whose rule sends it to the snapshot path).
    static func serverBundle(in directory: TemporaryDirectory) throws -> String {
        let folder = directory.file("server-bundle")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in ["model.yml", "v1.yml", "v2.yml"] {
            try FileManager.default.copyItem(
                atPath: MigrationCrashTests.bundle + "/" + name, toPath: folder + "/" + name)
        }
        try """
        version: "3"
        entities:
          Person:
            attributes:
              id: {type: int64, optional: false, unique: true}
              email: {type: string, pattern: "[^@ ]+@[^@ ]+"}
              fullName: {type: string, renamed_from: name}
              age: {type: int16, min: 0, max: 150}
              city: string
              level: {type: int16, optional: false, default: 1}
            indexes:
              - [level]
        """.write(toFile: folder + "/v3.yml", atomically: true, encoding: .utf8)
        return folder
    }

    @Test(
        "SIGKILL while a migration runs in the server (by time, and while each step's INSERT … SELECT fills its schema) leaves the original schema or the complete new version; a rerun finishes and leaves no scratch schema"
    )
    func killInServer() throws {
        let directory = TemporaryDirectory()
        let (schema, url) = try Self.freshSchema("skill")
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        let rows = 1...40_000
        let bundle = try Self.serverBundle(in: directory)
        let arguments = ["--model", bundle, "--quiet"]
        // The reference: the same two steps on SQLite.
        let (original, migrated) = try Self.sqliteReference(
            rows: rows, ["migrate", "STORE"] + arguments, in: directory)
        #expect(migrated["version"] == "3")

        let temporary = ["TMPDIR": directory.file("tmp")]
        try FileManager.default.createDirectory(atPath: directory.file("tmp"), withIntermediateDirectories: true)
        // The timed kills are spread over one whole run's time on this machine (a fixed list of
        // moments kills nothing on a fast machine and everything on a slow one).
        PostgresStoreLoader.dropSchemas(startingWith: schema)
        try Self.peopleStore(url, rows: rows, in: directory)
        let whole = ContinuousClock.now
        let untimed = try runFerry(["migrate", url] + arguments, env: temporary)
        #expect(untimed.exitCode == 0, "\(untimed)")
        let duration = ContinuousClock.now - whole
        var outcomes: [String] = []
        let moments: [Duration?] = [1, 3, 5, 7, 9].map { duration * $0 / 10 } + [nil, nil]
        for (index, moment) in moments.enumerated() {
            // The first step fills `_next_1`, the second `_next`.
            let filling = moment == nil ? schema + (index == moments.count - 2 ? "_next_1" : "_next") : nil
            var result: ProcessResult
            var attempts = 0
            var seen = false
            repeat {
                attempts += 1
                PostgresStoreLoader.dropSchemas(startingWith: schema)
                try Self.peopleStore(url, rows: rows, in: directory)
                let started = ContinuousClock.now
                let process = try FerryProcess(["migrate", url] + arguments, env: temporary)
                while process.isRunning, ContinuousClock.now - started < .seconds(60) {
                    if let moment, ContinuousClock.now - started >= moment { break }
                    if let filling, try PostgresStoreLoader.isInserting(into: filling) {
                        seen = true
                        break
                    }
                    Thread.sleep(forTimeInterval: 0.002)
                }
                process.kill()
                result = try process.wait()
                // A statement that ended between two looks (a loaded machine) is waited for again.
            } while filling != nil && !seen && attempts < 5
            let label =
                moment.map { "after \(Int(($0 / duration * 100).rounded())) % of a whole run" }
                ?? "during the INSERT … SELECT into \(filling ?? "")"
            if !result.wasSignaled { #expect(result.exitCode == 0, "\(label): \(result)") }
            let found = try Self.exports(url, cwd: directory.path)
            #expect(found == original || found == migrated, "\(label): neither the original nor the migrated store")
            outcomes.append(
                "\(label.replacing(schema, with: "S")): \(result.wasSignaled ? "killed" : "finished"), \(found == migrated ? "migrated" : "original")"
            )
            // Nothing of the killed run is left but, when the kill came between the commit of the
            // new schema and the swap, `_next` itself, which the next migration drops.
            let left = try PostgresStoreLoader.schemas(startingWith: schema + "_next")
            #expect(left == [] || (left == [schema + "_next"] && found == original), "\(label): \(left)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("tmp")) == [], "\(label)")
            let rerun = try runFerry(["migrate", url] + arguments, env: temporary)
            #expect(rerun.exitCode == 0, "rerun \(label): \(rerun)")
            #expect(try Self.exports(url, cwd: directory.path) == migrated, "rerun \(label)")
            #expect(try PostgresStoreLoader.schemas(startingWith: schema + "_next") == [], "rerun \(label)")
        }
        print("PostgreSQL in-server migration kill outcomes:\n  " + outcomes.joined(separator: "\n  "))
        // Every outcome above is the original or the migrated store; the two kills inside the
        // steps' INSERT … SELECT must leave the original.
        #expect(outcomes.contains("during the INSERT … SELECT into S_next_1: killed, original"), "\(outcomes)")
        #expect(outcomes.contains("during the INSERT … SELECT into S_next: killed, original"), "\(outcomes)")
    }
}
