import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// Names PostgreSQL would cut (over 63 bytes), through the built binary: a store's schema, an
/// entity's or attribute's name, refused before any work with the name, its length and the
/// limit (exit 64); reserved and NUL-bearing schema names refused with a message of ferry's own;
/// and a long but legal schema whose work schemas (a rebuild's, `ferry copy`'s, a migration's)
/// would be over 63 bytes, working with names made to fit.
@Suite(
    "PostgreSQL names over 63 bytes (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresNameLimitCLITests {
    /// A schema name of exactly `length` bytes, unique to this test.
    static func schemaName(_ length: Int) -> String {
        let unique = "ferry_len_" + UUID().uuidString.lowercased().replacing("-", with: "").prefix(12) + "_"
        return unique + String(repeating: "s", count: length - unique.utf8.count)
    }

    /// The number of Person rows in the store at `url` (through `ferry export`).
    static func personCount(_ url: String) throws -> Int {
        let export = try runFerry(["export", "--store", url, "--entity", "Person", "--format", "ndjson", "--quiet"])
        #expect(export.exitCode == 0, "\(export)")
        return export.stdout.split(separator: "\n").count
    }

    @Test(
        "an import or update into a store whose schema name is 64 bytes is refused up front (exit 64, naming the schema, its 64 bytes and the 63-byte limit), and the store PostgreSQL would have cut it to keeps its rows"
    )
    func longSchemaRefusedWithoutLoss() throws {
        let directory = TemporaryDirectory()
        let long = Self.schemaName(64)
        let cut = String(long.prefix(63))
        defer { PostgresStoreLoader.dropSchemas(startingWith: cut) }
        let base = try PostgresTestServer.requireURL()
        let first = try directory.write("first.csv", bytes: BigFiles.csv(ids: 1...20))
        let second = try directory.write("second.csv", bytes: BigFiles.csv(ids: 21...30))
        // The store as a first import through the 64-byte name made it before: in the cut schema.
        let made = try runFerry(
            [
                "import", first, "--store", base + "?schema=" + cut, "--model", Fixtures.peopleModel, "--entity",
                "Person", "--quiet",
            ])
        #expect(made.exitCode == 0, "\(made)")
        #expect(try Self.personCount(base + "?schema=" + cut) == 20)

        let longURL = base + "?schema=" + long
        let commands: [[String]] = [
            ["import", second, "--store", longURL, "--model", Fixtures.peopleModel, "--entity", "Person"],
            ["update", "--store", longURL, "--entity", "Person", "--where", "id == 1", "--set", "age=99"],
            ["export", "--store", longURL, "--entity", "Person", "--format", "csv"],
            ["store", "info", longURL],
        ]
        for arguments in commands {
            let result = try runFerry(arguments)
            #expect(result.exitCode == 64, "ferry \(arguments[0]): \(result)")
            #expect(result.stderr.contains("'\(long)' is 64 bytes long"), "ferry \(arguments[0]): \(result.stderr)")
            #expect(result.stderr.contains("63 bytes"), "\(result.stderr)")
            #expect(!result.stderr.contains("SQLSTATE"), "\(result.stderr)")
            #expect(try Self.personCount(base + "?schema=" + cut) == 20, "ferry \(arguments[0]) changed the store")
        }
        let job = try directory.write(
            "job.yml",
            """
            job: long-schema
            model: {path: \(Fixtures.peopleModel)}
            store: {path: "\(longURL)", rebuild: true}
            steps:
              - import: {source: "\(second)", entity: Person}
            """)
        let run = try runFerry(["run", job])
        #expect(run.exitCode == 64, "\(run)")
        #expect(run.stderr.contains("64 bytes long"), "\(run.stderr)")
        #expect(try Self.personCount(base + "?schema=" + cut) == 20)
        #expect(try PostgresStoreLoader.schemas(startingWith: cut) == [cut], "no schema beside the store was made")
    }

    @Test(
        "a model whose entity or attribute name (or join table) is 64 bytes is refused on PostgreSQL before any work, naming the entity, the name's length and the limit; SQLite takes it"
    )
    func longModelNamesRefused() throws {
        let directory = TemporaryDirectory()
        let schema = Self.schemaName(40)
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        let url = try PostgresTestServer.requireURL() + "?schema=" + schema
        let entity = "E" + String(repeating: "n", count: 63)
        let attribute = "a" + String(repeating: "t", count: 63)
        let relationship = "r" + String(repeating: "l", count: 46)
        try directory.write(
            "model.yml",
            """
            name: Long
            version: "1"
            entities:
              \(entity):
                attributes:
                  id: {type: int64, unique: true}
              Short:
                attributes:
                  id: {type: int64, unique: true}
                  \(attribute): string
                relationships:
                  \(relationship): {destination: Tag, to_many: true}
              Tag:
                attributes:
                  id: int64
            """)
        try directory.write("short.csv", "id\n1\n")
        let result = try runFerry(
            ["import", "short.csv", "--store", url, "--model", "model.yml", "--entity", "Short"], cwd: directory.path)
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.contains("entity '\(entity)'"), "\(result.stderr)")
        #expect(result.stderr.contains("'\(entity)' is 64 bytes long"), "\(result.stderr)")
        #expect(result.stderr.contains("attribute 'Short.\(attribute)'"), "\(result.stderr)")
        #expect(result.stderr.contains("relationship 'Short.\(relationship)'"), "\(result.stderr)")
        #expect(result.stderr.contains("ferry_link_Short_\(relationship)"), "\(result.stderr)")
        #expect(result.stderr.contains("limit of 63 bytes"), "\(result.stderr)")
        #expect(try PostgresStoreLoader.schemas(startingWith: schema) == [], "nothing was created")

        // The same through a job: refused by the job's checks, before the store is opened.
        let job = try directory.write(
            "job.yml",
            """
            job: long-names
            model: {path: model.yml}
            store: {path: "\(url)"}
            steps:
              - import: {source: short.csv, entity: Short}
            """)
        let run = try runFerry(["run", job], cwd: directory.path)
        #expect(run.exitCode == 64, "\(run)")
        #expect(run.stderr.contains("'\(entity)' is 64 bytes long"), "\(run.stderr)")
        #expect(try PostgresStoreLoader.schemas(startingWith: schema) == [])

        // SQLite keeps names of any length.
        let sqlite = try runFerry(
            ["import", "short.csv", "--store", "s.sqlite", "--model", "model.yml", "--entity", "Short"],
            cwd: directory.path)
        #expect(sqlite.exitCode == 0, "\(sqlite)")
    }

    @Test(
        "schema= with a NUL byte, pg_temp, pg_catalog, pg_toast or information_schema is refused with ferry's own message (exit 64), never a server error"
    )
    func reservedAndNULSchemasRefused() throws {
        let base = try PostgresTestServer.requireURL()
        let cases: [(schema: String, expected: String)] = [
            ("bad%00name", "NUL byte"),
            ("pg_temp", "reserves for itself"),
            ("pg_temp_3", "reserves for itself"),
            ("pg_catalog", "reserves for itself"),
            ("PG_TOAST", "reserves for itself"),
            ("information_schema", "information_schema"),
        ]
        let directory = TemporaryDirectory()
        let file = try directory.write("people.csv", bytes: BigFiles.csv(ids: 1...3))
        for (schema, expected) in cases {
            let result = try runFerry(
                [
                    "import", file, "--store", base + "?schema=" + schema, "--model", Fixtures.peopleModel, "--entity",
                    "Person",
                ])
            #expect(result.exitCode == 64, "schema=\(schema): \(result)")
            #expect(result.stderr.contains(expected), "schema=\(schema): \(result.stderr)")
            #expect(!result.stderr.contains("SQLSTATE"), "schema=\(schema): \(result.stderr)")
        }
    }

    @Test(
        "a 60-byte store schema works: a rebuild job, ferry copy into it and a migration build their work schemas under names made to fit 63 bytes, and leave none behind"
    )
    func longLegalSchemaWorks() throws {
        let directory = TemporaryDirectory()
        let schema = Self.schemaName(60)
        let prefix = String(schema.prefix(16))
        defer { PostgresStoreLoader.dropSchemas(startingWith: prefix) }
        let url = try PostgresTestServer.requireURL() + "?schema=" + schema
        let small = try directory.write("small.csv", bytes: BigFiles.csv(ids: 1...5))
        let other = try directory.write("other.csv", bytes: BigFiles.csv(ids: 6...12))
        let job = try directory.write(
            "rebuild.yml",
            """
            job: rebuild
            model: {path: \(Fixtures.peopleModel)}
            store: {path: "${store}", rebuild: true}
            steps:
              - import: {source: "${data}", entity: Person}
            """)
        for (data, count) in [(small, 5), (other, 7)] {
            let run = try runFerry(["run", job, "--param", "store=\(url)", "--param", "data=\(data)", "--quiet"])
            #expect(run.exitCode == 0, "\(run)")
            #expect(try Self.personCount(url) == count)
            #expect(try PostgresStoreLoader.schemas(startingWith: prefix) == [schema])
        }
        // ferry copy into the store (its scratch schema's name would be 71 bytes).
        let sqlite = directory.file("people.sqlite")
        let made = try runFerry(
            ["import", small, "--store", sqlite, "--model", Fixtures.peopleModel, "--entity", "Person", "--quiet"])
        #expect(made.exitCode == 0, "\(made)")
        let copy = try runFerry(["copy", sqlite, url, "--replace"])
        #expect(copy.exitCode == 0, "\(copy)")
        #expect(try Self.personCount(url) == 5)
        #expect(try PostgresStoreLoader.schemas(startingWith: prefix) == [schema])
        // A write after all of that finds the store and keeps it.
        let update = try runFerry([
            "update", "--store", url, "--entity", "Person", "--where", "id == 1", "--set", "age=7",
        ])
        #expect(update.exitCode == 0, "\(update)")
        #expect(try Self.personCount(url) == 5)

        // A migration in two steps: its new schemas (`S_next`, `S_next_1`) and its backup.
        let people = try String(contentsOfFile: Fixtures.peopleModel, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: directory.file("model"), withIntermediateDirectories: true)
        try directory.write("model/model.yml", "name: People\ncurrent: \"3\"\nversions: [v1.yml, v2.yml, v3.yml]\n")
        try directory.write("model/v1.yml", people)
        try directory.write(
            "model/v2.yml", people.replacing("version: \"1\"", with: "version: \"2\"") + "      nickname: string\n")
        try directory.write(
            "model/v3.yml",
            people.replacing("version: \"1\"", with: "version: \"3\"") + "      nickname: string\n      city: string\n")
        let migrate = try runFerry(["migrate", url, "--model", "model"], cwd: directory.path)
        #expect(migrate.exitCode == 0, "\(migrate)")
        #expect(try Self.personCount(url) == 5)
        let schemas = try PostgresStoreLoader.schemas(startingWith: prefix)
        #expect(schemas.count == 2 && schemas.contains(schema), "the store and its backup: \(schemas)")
        #expect(schemas.allSatisfy { $0.utf8.count <= 63 })
    }
}
