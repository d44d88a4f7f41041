import FerryTestSupport
import Foundation
import Testing

/// Databases as import sources, through the real binary: tables and queries of real SQLite
/// files (`ferry import DB --table/--query` and `source: {sqlite: …}` in jobs), entities of a
/// real Core Data store, and the bad paths (a missing table, bad SQL, a query that writes).
@Suite("ferry import from databases: SQLite tables and queries, Core Data entities")
struct DatabaseSourceCLITests {
    /// A legacy SQLite database with typed columns, a column without a type and a foreign key.
    static func legacy(_ dir: TemporaryDirectory) throws -> String {
        let path = dir.file("legacy.db")
        let database = try StoreConnection(path, create: true)
        try database.executeScript(
            """
            CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email VARCHAR(80) UNIQUE, balance DECIMAL(10,2),
                joined DATETIME, active BOOLEAN, photo BLOB, note);
            INSERT INTO customers VALUES (1, 'Ann', 'ann@example.org', '12.50', '2024-01-02 10:00:00', 1, x'0102', 'hi'),
                (2, 'Bob', NULL, 3, '2023-05-06T07:08:09Z', 0, NULL, 7),
                (3, 'Cy', 'cy@example.org', NULL, NULL, NULL, NULL, NULL);
            CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), total REAL);
            INSERT INTO orders VALUES (1, 1, 9.5), (2, 1, 1.25), (3, 2, 100);
            """)
        return path
    }

    @Test("ferry import DB --table: the model comes from the declared column types, values keep their types")
    func tableWithInferredModel() throws {
        let dir = TemporaryDirectory()
        let legacy = try Self.legacy(dir)
        let store = dir.file("new.sqlite")
        let before = try FileFingerprint.of(legacy)
        let result = try runFerry(["import", legacy, "--table", "customers", "--store", store])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.contains(
                "inferred customers: id int64, name string, email string, balance decimal, joined date, active bool, photo binary, note string"
            ), "\(result)")
        #expect(result.stdout.contains("from \(legacy) (table customers): read 3, inserted 3"), "\(result)")
        let export = try runFerry([
            "export", "--store", store, "--entity", "customers", "--format", "ndjson", "--output", "-", "--quiet",
        ])
        #expect(export.exitCode == 0, "\(export)")
        let rows = export.stdout.split(separator: "\n").map(String.init)
        #expect(rows.count == 3)
        #expect(
            rows.first
                == #"{"id":1,"name":"Ann","email":"ann@example.org","balance":12.5,"joined":"2024-01-02T10:00:00.000Z","active":true,"photo":"AQI=","note":"hi"}"#
        )
        #expect(
            rows.dropFirst().first
                == #"{"id":2,"name":"Bob","email":null,"balance":3,"joined":"2023-05-06T07:08:09.000Z","active":false,"photo":null,"note":"7"}"#
        )
        #expect(try FileFingerprint.of(legacy) == before, "the source database is never written")
    }

    @Test("ferry import DB --query: the rows of a read-only query, named by --entity")
    func query() throws {
        let dir = TemporaryDirectory()
        let legacy = try Self.legacy(dir)
        let store = dir.file("new.sqlite")
        let result = try runFerry([
            "import", legacy, "--query",
            "SELECT o.id, c.name AS customer, o.total * 2 AS doubled FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.total > 1.5",
            "--entity", "BigOrder", "--store", store,
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("inferred BigOrder: id int64, customer string, doubled double"), "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, customer, doubled FROM BigOrder ORDER BY id") == [
                ["1", "Ann", "19.0"], ["3", "Bob", "200.0"],
            ])
        let missingEntity = try runFerry(["import", legacy, "--query", "SELECT 1 AS x", "--store", store])
        #expect(missingEntity.exitCode == 64)
        #expect(missingEntity.stderr.contains("--query needs --entity"), "\(missingEntity)")
    }

    @Test(
        "bad paths: a missing table suggests the close name, bad SQL gives SQLite's message, a writing query is refused and nothing changes"
    )
    func badPaths() throws {
        let dir = TemporaryDirectory()
        let legacy = try Self.legacy(dir)
        let store = dir.file("new.sqlite")
        let before = try FileFingerprint.of(legacy)
        let missing = try runFerry(["import", legacy, "--table", "custmers", "--store", store])
        #expect(missing.exitCode == 64, "\(missing)")
        #expect(missing.stderr.contains("has no table 'custmers'; did you mean 'customers'?"), "\(missing)")
        #expect(missing.stderr.contains("its tables: customers, orders"), "\(missing)")
        let bad = try runFerry(["import", legacy, "--query", "SELEC id FROM orders", "--entity", "X", "--store", store])
        #expect(bad.exitCode == 64, "\(bad)")
        #expect(bad.stderr.contains(#"near "SELEC": syntax error"#), "\(bad)")
        for writing in [
            "DELETE FROM orders", "UPDATE orders SET total = 0 RETURNING id", "SELECT 1 AS x; DELETE FROM orders",
        ] {
            let result = try runFerry(["import", legacy, "--query", writing, "--entity", "X", "--store", store])
            #expect(result.exitCode == 64, "\(writing): \(result)")
            #expect(
                result.stderr.contains("read-only query") || result.stderr.contains("more than one statement"),
                "\(writing): \(result)")
        }
        let absent = try runFerry(["import", dir.file("absent.db"), "--table", "t", "--store", store])
        #expect(absent.exitCode == 66, "\(absent)")
        #expect(absent.stderr.contains("does not exist"), "\(absent)")
        let csvFlag = try runFerry(["import", legacy, "--table", "orders", "--delimiter", ";", "--store", store])
        #expect(csvFlag.exitCode == 64, "\(csvFlag)")
        #expect(try FileFingerprint.of(legacy) == before)
        #expect(!FileManager.default.fileExists(atPath: store), "no failed import created the store")
    }

    @Test(
        "a job reads a table with field mappings, on_conflict and rejects; a reject's location names the table and the row"
    )
    func jobWithMappingsConflictsAndRejects() throws {
        let dir = TemporaryDirectory()
        _ = try Self.legacy(dir)
        _ = try dir.write(
            "model.yml",
            """
            name: Shop
            version: "1"
            entities:
              Customer:
                attributes:
                  code: {type: int64, optional: false, unique: true}
                  fullName: string
                  balance: {type: decimal, min: 0, max: 10}
                  joined: date
            """)
        let job = try dir.write(
            "job.yml",
            """
            job: legacy
            store: shop.sqlite
            model: model.yml
            steps:
              - import:
                  source: {sqlite: legacy.db, table: customers}
                  entity: Customer
                  fields:
                    code: id
                    fullName: name
                  rejects: rejects.ndjson
                  max_rejects: 5
              - import:
                  source:
                    sqlite: legacy.db
                    query: SELECT id, upper(name) AS name FROM customers WHERE id < 3
                  entity: Customer
                  fields: {code: id, fullName: name}
                  on_conflict: update
            """)
        let result = try runFerry(["run", job])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(
                dir.file("shop.sqlite"), "SELECT code, fullName, balance, joined FROM Customer ORDER BY code") == [
                    ["1", "ANN", nil, nil], ["2", "BOB", "3", "2023-05-06T07:08:09.000Z"], ["3", "Cy", nil, nil],
                ], "Ann's row is rejected (balance over 10), then inserted by the query step; Bob's is updated")
        let rejects = try lines(ofFile: dir.file("rejects.ndjson")).map { try jsonObject(text: $0) }
        #expect(rejects.count == 1)
        let reject = try #require(rejects.first)
        #expect(reject["record"] as? Int == 1)
        #expect(reject["line"] as? Int == 1, "the row number")
        #expect(reject["column"] as? Int == 4, "balance is the 4th column of the table")
        #expect(reject["field"] as? String == "balance")
        #expect(
            (reject["raw"] as? String)?.hasPrefix(#"{"id":1,"name":"Ann","email":"ann@example.org","balance":12.5,"#)
                == true, "\(reject)")
        let report = try runFerry(["run", job, "--dry-run"])
        #expect(report.stdout.contains("(table customers)"), "\(report)")
    }

    @Test("job bad paths: the query's own line in the job file, a missing table's suggestion, file keys refused")
    func jobBadPaths() throws {
        let dir = TemporaryDirectory()
        _ = try Self.legacy(dir)
        _ = try dir.write(
            "model.yml", "name: M\nversion: \"1\"\nentities:\n  Order:\n    attributes:\n      id: int64\n")
        let badSQL = try dir.write(
            "bad.yml",
            """
            job: bad
            store: s.sqlite
            model: model.yml
            steps:
              - import:
                  source:
                    sqlite: legacy.db
                    query: SELECT id FROM ordrs
                  entity: Order
            """)
        let result = try runFerry(["run", badSQL])
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.contains("bad.yml:8:"), "the location of the query: \(result)")
        #expect(result.stderr.contains("no such table: ordrs"), "\(result)")
        let both = try dir.write(
            "both.yml",
            """
            job: both
            store: s.sqlite
            model: model.yml
            steps:
              - import:
                  source: {sqlite: legacy.db, table: orders, query: SELECT 1}
                  format: csv
                  entity: Order
            """)
        let refused = try runFerry(["validate", both])
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(refused.stderr.contains("a database source reads one thing"), "\(refused)")
        #expect(refused.stderr.contains("'format' applies to files, not to a database source"), "\(refused)")
        let missingFile = try dir.write(
            "missing.yml",
            """
            job: missing
            store: s.sqlite
            model: model.yml
            steps:
              - import:
                  source: {sqlite: nowhere.db, table: orders}
                  entity: Order
            """)
        let validation = try runFerry(["validate", missingFile])
        #expect(validation.exitCode != 0, "\(validation)")
        #expect(validation.stderr.contains("nowhere.db"), "\(validation)")
    }

    @Test(
        "a Core Data store's entity as a source (a private copy, values decoded as export decodes them)",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
    func coreDataEntity() throws {
        let dir = TemporaryDirectory()
        let original = CoreDataStoreCLITests.store(CoreDataStoreCLITests.revised, "CoreDataMigration_Example_3.sqlite")
        let app = try CoreDataStoreCLITests.copy(original, into: dir, name: "App.sqlite")
        let before = try FileFingerprint.of(app)
        let store = dir.file("posts.sqlite")
        let result = try runFerry(["import", app, "--table", "Post", "--store", store])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("(entity Post): read 12, inserted 12"), "\(result)")
        #expect(result.stdout.contains("inferred Post: date date, hexColor string, postID string"), "\(result)")
        #expect(
            try StoreSnapshot.texts(
                store,
                "SELECT date, hexColor FROM Post WHERE postID = '7BC43935-3209-404E-836A-06F3C6518CB1' COLLATE NOCASE")
                == [["2019-01-17T22:26:55.200076Z", "BAEFB6"]], "the Core Data date with every digit it has")
        #expect(try FileFingerprint.of(app) == before, "the Core Data store is read through a private copy")
        let missing = try runFerry(["import", app, "--table", "Pots", "--store", store])
        #expect(missing.exitCode == 64, "\(missing)")
        #expect(missing.stderr.contains("no entity 'Pots'; did you mean 'Post'?"), "\(missing)")
    }
}
