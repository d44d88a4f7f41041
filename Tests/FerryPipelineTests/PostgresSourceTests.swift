import FerryCore
import FerryFormats
import FerryPipeline
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// PostgreSQL tables and queries as import sources, on the real test server: types from the
/// columns' OIDs, values kept typed, a server-side cursor, and the bad paths (a missing table, bad
/// SQL, a query that writes, an unreachable server whose password is never shown).
@Suite(
    "PostgreSQL as an import source", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresSourceTests {
    /// A fresh schema with a typed table of `rows` rows, dropped at the end of the test.
    final class Legacy {
        let connection: PostgresConnection
        let schema = "ferry_source_" + UUID().uuidString.lowercased().replacing("-", with: "")
        let url: String

        init(rows: Int) throws {
            url = try PostgresTestServer.requireURL()
            connection = try PostgresConnection(url)
            try connection.executeScript(
                """
                CREATE SCHEMA \(schema);
                CREATE TABLE \(schema).customers(id bigint PRIMARY KEY, name text NOT NULL, balance numeric(12,2), joined timestamptz,
                    uid uuid, doc jsonb, data bytea, small int2, score float8, flag bool, note varchar(20));
                INSERT INTO \(schema).customers
                    SELECT g, 'c' || g, g * 1.5, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 hour',
                        ('00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, jsonb_build_object('n', g), '\\x0102'::bytea,
                        g % 100, g / 4.0, g % 2 = 0, CASE WHEN g % 3 = 0 THEN NULL ELSE 'n' || g END
                    FROM generate_series(1, \(rows)) g;
                """)
        }

        deinit { _ = try? connection.execute("DROP SCHEMA \(schema) CASCADE") }
    }

    static let modelText = """
        name: Legacy
        version: "1"
        entities:
          Customer:
            attributes:
              id: {type: int64, unique: true}
              name: string
              balance: decimal
              joined: date
              uid: uuid
              doc: json
              data: binary
              small: int16
              score: double
              flag: bool
              note: {type: string, max_length: 3}
        """

    func run(_ source: DatabaseSource, dir: TemporaryDirectory, rejects: Bool = false) throws -> (StepReport, Store) {
        let model = try ModelLoader().load(path: try dir.write("legacy.yml", Self.modelText)).current
        let store = try Store.open(at: dir.file("s.sqlite"), model: model)
        var step = ImportStep(source: "-", format: .csv, entity: "Customer")
        step.database = source
        if rejects {
            step.rejectsPath = dir.file("rejects.ndjson")
            step.maxRejects = .unlimited
        }
        return (try ImportStepRunner(step: step, store: store).run(), store)
    }

    @Test("a table: more rows than one FETCH, every type mapped from its OID and kept without a text round trip")
    func table() throws {
        let legacy = try Legacy(rows: 4_321)
        let dir = TemporaryDirectory()
        let reader = try DatabaseRecordReader.open(
            DatabaseSource(database: .postgresql(url: legacy.url), selection: .table("\(legacy.schema).customers")))
        #expect(
            reader.columns.map(\.type) == [
                .int64, .string, .decimal, .date, .uuid, .json, .binary, .int16, .double, .bool, .string,
            ])
        let (report, store) = try run(reader.source, dir: dir, rejects: true)
        #expect(report.read == 4_321)
        #expect(report.inserted + report.rejected == 4_321)
        #expect(
            report.rejected == (100...4_321).filter { $0 % 3 != 0 }.count,
            "notes longer than 3 characters (n100 on) are rejected")
        let row = try store.withConnection {
            try $0.rows("SELECT id, balance, joined, uid, doc, data, small, score, flag FROM Customer WHERE id = 3")
        }
        #expect(
            row.first?.map(\.description) == [
                "3", "4.5", "2024-01-01T03:00:00.000Z", "00000000-0000-4000-8000-000000000003", #"{"n": 3}"#,
                "<2 bytes>", "3", "0.75", "0",
            ])
        let rejects = try String(contentsOfFile: dir.file("rejects.ndjson"), encoding: .utf8).split(separator: "\n")
        let first = try #require(rejects.first)
        #expect(first.contains(#""record":100,"line":100,"column":11,"field":"note""#), "\(first)")
    }

    @Test(
        "a query; a missing table, bad SQL and a query that writes are refused with the server's message, and nothing changes"
    )
    func queryAndBadPaths() throws {
        let legacy = try Legacy(rows: 10)
        let dir = TemporaryDirectory()
        let location = InputLocation(file: "job.yml", line: 7, column: 16)
        let (report, _) = try run(
            DatabaseSource(
                database: .postgresql(url: legacy.url + "?schema=\(legacy.schema)"),
                selection: .query("SELECT id, upper(name) AS name FROM customers WHERE id <= 4")), dir: dir)
        #expect(report.inserted == 4)

        func failure(_ selection: DatabaseSource.Selection) -> FerryError? {
            do {
                _ = try DatabaseRecordReader.open(
                    DatabaseSource(
                        database: .postgresql(url: legacy.url), selection: selection, selectionLocation: location))
                return nil
            } catch {
                return error as? FerryError
            }
        }
        let missing = try #require(failure(.table("\(legacy.schema).custmers")))
        #expect(missing.code == .invalidDefinition)
        #expect(missing.location == location)
        #expect(
            missing.message.contains(
                "has no table '\(legacy.schema).custmers'; did you mean '\(legacy.schema).customers'?"), "\(missing)")
        let bad = try #require(failure(.query("SELEC 1")))
        #expect(bad.message.contains("syntax error"), "\(bad)")
        #expect(bad.location == location)
        for writing in [
            "DELETE FROM \(legacy.schema).customers",
            "WITH d AS (DELETE FROM \(legacy.schema).customers RETURNING id) SELECT * FROM d",
            "SELECT setval('x', 1)",
        ] {
            #expect(failure(.query(writing)) != nil, "\(writing)")
        }
        #expect(try legacy.connection.execute("SELECT count(*) FROM \(legacy.schema).customers").rows[0].int(0) == 10)
    }

    @Test("an unreachable server: a clear message without the password")
    func unreachable() throws {
        let source = DatabaseSource(
            database: .postgresql(url: "postgresql://app:s3cret-pw@127.0.0.1:1/shop"), selection: .table("t"))
        #expect(source.label == "postgresql://app:***@127.0.0.1:1/shop (table t)")
        do {
            _ = try DatabaseRecordReader.open(source)
            Issue.record("connected to port 1")
        } catch {
            #expect("\(error)".contains("cannot connect to postgresql://app:***@127.0.0.1:1/shop"), "\(error)")
            #expect(!"\(error)".contains("s3cret-pw"))
        }
    }

    @Test(
        "a whole schema: the model from the catalog (keys, foreign keys, unique constraints, a composite key over foreign keys, indexes, defaults), referenced tables first, every row in"
    )
    func wholeSchema() throws {
        let url = try PostgresTestServer.requireURL()
        let connection = try PostgresConnection(url)
        let schema = "ferry_whole_" + UUID().uuidString.lowercased().replacing("-", with: "")
        defer { _ = try? connection.execute("DROP SCHEMA \(schema) CASCADE") }
        try connection.executeScript(
            """
            CREATE SCHEMA \(schema);
            CREATE TABLE \(schema).albums(id bigint PRIMARY KEY, title text, artist_id int NOT NULL, price numeric(8,2), released date);
            CREATE TABLE \(schema).artists(artist_id serial PRIMARY KEY, name text NOT NULL, code text, region text DEFAULT 'eu'::text, UNIQUE (code, region));
            ALTER TABLE \(schema).albums ADD FOREIGN KEY (artist_id) REFERENCES \(schema).artists(artist_id);
            CREATE INDEX ON \(schema).albums(released, title);
            CREATE TABLE \(schema).features(album_id bigint REFERENCES \(schema).albums(id), artist_id int REFERENCES \(schema).artists(artist_id), PRIMARY KEY (album_id, artist_id));
            CREATE TABLE \(schema).staff(id int PRIMARY KEY, boss int REFERENCES \(schema).staff(id));
            INSERT INTO \(schema).artists(name, code, region) VALUES ('AC/DC', 'acdc', 'au'), ('Accept', 'acc', 'de');
            INSERT INTO \(schema).albums VALUES (1, 'For Those', 1, 9.99, '1981-11-23'), (2, 'Balls', 2, NULL, NULL);
            INSERT INTO \(schema).staff VALUES (1, NULL), (2, 1);
            INSERT INTO \(schema).features VALUES (1, 2), (2, 1);
            """)
        let source = url + "?schema=\(schema)"
        let sourceSchema = try SourceSchema.postgres(url: source)
        #expect(sourceSchema.tables.map(\.name) == ["albums", "artists", "features", "staff"])
        #expect(sourceSchema.table(named: "albums")?.indexes == [["released", "title"]])
        #expect(sourceSchema.table(named: "artists")?.uniqueKeys == [["code", "region"]])
        #expect(sourceSchema.table(named: "albums")?.foreignKeys.first?.table == "artists")
        let plan = try DatabaseModelInference.plan(
            database: .postgresql(url: source), schema: sourceSchema, modelName: "music", sampleSize: 100)
        #expect(plan.tables == ["artists", "albums", "features", "staff"])
        #expect(plan.model.entity(named: "features")?.uniquenessConstraints == [["album", "artist"]])
        #expect(plan.model.entity(named: "albums")?.indexes.map(\.attributes) == [["released", "title"]])
        #expect(plan.model.entity(named: "artists")?.attribute(named: "region")?.defaultValue == .string("eu"))
        let albums = try #require(plan.model.entity(named: "albums"))
        #expect(albums.relationship(named: "artist")?.destination == "artists")
        #expect(albums.relationship(named: "artist")?.isOptional == false)
        #expect(albums.attribute(named: "price")?.type == .decimal)
        #expect(plan.model.entity(named: "artists")?.uniquenessConstraints == [["artist_id"], ["code", "region"]])
        #expect(plan.model.entity(named: "staff")?.attribute(named: "boss")?.type == .int32)
        #expect(plan.notes.count == 1 && plan.notes[0].contains("staff.boss → staff: the table references itself"))
        let dir = TemporaryDirectory()
        let store = try Store.open(at: dir.file("music.sqlite"), model: plan.model)
        for (index, step) in plan.steps.enumerated() {
            _ = try ImportStepRunner(step: step, store: store, index: index + 1).run()
        }
        let rows = try store.withConnection {
            try $0.rows(
                "SELECT a.title, r.name, a.price FROM albums a JOIN artists r ON r.ferry_pk = a.artist ORDER BY a.id"
            ).map { $0.map(\.description) }
        }
        #expect(rows == [["For Those", "AC/DC", "9.99"], ["Balls", "Accept", "NULL"]])
    }
}
