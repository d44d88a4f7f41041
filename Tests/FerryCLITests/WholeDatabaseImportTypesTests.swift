import FerryTestSupport
import Foundation
import Testing

/// `ferry import legacy.db --store new.sqlite` with a legacy database's type habits, through the
/// real binary: what each column holds is detected (not only what it declares), said in a note
/// and in the model, converted during the import; a value that does not fit is a located reject;
/// `--type TABLE.COLUMN=TYPE` overrides a column.
@Suite("ferry import of a whole SQLite database: legacy type habits")
struct WholeDatabaseImportTypesTests {
    /// Orders the way legacy applications wrote them: epoch milliseconds and seconds in
    /// `DATETIME`/`TIMESTAMP` columns, ISO text in several forms in a `DATE` column, booleans as
    /// 0/1 and as words, numbers as text, empty strings meaning NULL.
    static func legacy(_ dir: TemporaryDirectory) throws -> String {
        let path = dir.file("legacy.db")
        try StoreConnection(path, create: true).executeScript(
            """
            CREATE TABLE orders(id INTEGER PRIMARY KEY, placed_at DATETIME, shipped TIMESTAMP, due DATE,
                paid BOOLEAN, active BOOLEAN, amount TEXT, qty INTEGER, note TEXT, zip TEXT);
            INSERT INTO orders VALUES
                (1, 1700000000123, 1700000000, '2024-03-01', 1, 't', '12.50', 3, 'first', '01234'),
                (2, 1700000060000, 1700000060, '2024-03-01T10:00:00Z', 0, 'no', '3', '', '', '99999'),
                (3, NULL, NULL, '2024-03-01 10:00:00.250', NULL, 'Y', '0.99', 7, NULL, NULL),
                (4, 1700000120000, 1700000120, '2024-03-01T10:00:00+02:00', 1, 'False', '', NULL, 'x', '12345'),
                (5, 1700000180000, 1700000180, '', 0, 'n', '7', 1, 'y', '54321');
            """)
        return path
    }

    @Test(
        "each column's habit is detected over the whole table, named in a note and the model's user info, and converted"
    )
    func detectsAndConverts() throws {
        let dir = TemporaryDirectory()
        let legacy = try Self.legacy(dir)
        let store = dir.file("new.sqlite")
        let result = try runFerry(["import", legacy, "--store", store])
        #expect(result.exitCode == 0, "\(result)")
        for note in [
            "note: orders.placed_at: DATETIME holding epoch milliseconds → date",
            "note: orders.shipped: TIMESTAMP holding epoch seconds → date",
            "note: orders.due: DATE holding ISO 8601 text → date; empty text read as null",
            "note: orders.active: BOOLEAN holding words (t/f, yes/no, …) → bool",
            "note: orders.amount: TEXT holding numbers → decimal; empty text read as null",
            "note: orders.qty: INTEGER holding empty text → int64; empty text read as null",
        ] {
            #expect(result.stdout.contains(note), "\(note): \(result)")
        }
        // A column holding what it declares is not a habit: no note; text that only looks like
        // numbers with a leading zero (a code) stays text.
        #expect(!result.stdout.contains("orders.paid:"), "\(result)")
        #expect(!result.stdout.contains("orders.note:"), "\(result)")
        #expect(!result.stdout.contains("orders.zip:"), "\(result)")
        #expect(
            result.stdout.contains(
                "inferred orders: id int64, placed_at date, shipped date, due date, paid bool, active bool, amount decimal, qty int64, note string, zip string"
            ), "\(result)")
        #expect(
            try StoreSnapshot.texts(
                store, "SELECT placed_at, shipped, due, paid, active, amount, qty, note, zip FROM orders ORDER BY id")
                == [
                    [
                        "2023-11-14T22:13:20.123Z", "2023-11-14T22:13:20.000Z", "2024-03-01T00:00:00.000Z", "1", "1",
                        "12.5", "3", "first", "01234",
                    ],
                    [
                        "2023-11-14T22:14:20.000Z", "2023-11-14T22:14:20.000Z", "2024-03-01T10:00:00.000Z", "0", "0",
                        "3", nil, "", "99999",
                    ],
                    [nil, nil, "2024-03-01T10:00:00.250Z", nil, "1", "0.99", "7", nil, nil],
                    [
                        "2023-11-14T22:15:20.000Z", "2023-11-14T22:15:20.000Z", "2024-03-01T08:00:00.000Z", "1", "0",
                        nil, nil, "x", "12345",
                    ],
                    ["2023-11-14T22:16:20.000Z", "2023-11-14T22:16:20.000Z", nil, "0", "0", "7", "1", "y", "54321"],
                ])
        #expect(try runFerry(["verify", store, "--quiet"]).exitCode == 0)

        // The model the dry run prints says the same, attribute by attribute.
        let dry = try runFerry(["import", legacy, "--store", dir.file("dry.sqlite"), "--dry-run"])
        #expect(dry.exitCode == 0, "\(dry)")
        #expect(
            dry.stdout.contains("ferry.source: 'orders.placed_at: DATETIME holding epoch milliseconds → date'"),
            "\(dry)")
    }

    /// 200 events at epoch seconds, and `bad` rows of text that is not a time.
    static func events(_ dir: TemporaryDirectory, bad: [String]) throws -> String {
        let path = dir.file("events-\(bad.count).db")
        let rows = bad.enumerated().map { "(\(1000 + $0.offset), '\($0.element)')" }.joined(separator: ", ")
        try StoreConnection(path, create: true).executeScript(
            """
            CREATE TABLE events(id INTEGER PRIMARY KEY, at DATETIME);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
                INSERT INTO events SELECT i, 1700000000 + i FROM n;
            \(rows.isEmpty ? "" : "INSERT INTO events VALUES \(rows);")
            """)
        return path
    }

    @Test(
        "a value that does not fit the column's conversion is a located reject, never a silent null; --type TABLE.COLUMN=string keeps it; too many misfits keep the column as text"
    )
    func misfitsAreRejectsAndOverrides() throws {
        let dir = TemporaryDirectory()
        let events = try Self.events(dir, bad: ["soon"])
        let failing = try runFerry(["import", events, "--store", dir.file("none.sqlite")])
        #expect(failing.exitCode != 0, "\(failing)")
        #expect(
            failing.stdout.contains(
                "note: events.at: DATETIME holding epoch seconds → date; 1 value does not fit and is rejected (--type events.at=string keeps it)"
            ), "\(failing)")
        #expect(failing.stderr.contains("'soon'"), "the cause names the value: \(failing)")
        #expect(failing.stderr.contains("give --rejects DIR"), "\(failing)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("none.sqlite")))

        let store = dir.file("new.sqlite")
        let rejects = dir.file("rejects")
        let result = try runFerry(["import", events, "--store", store, "--rejects", rejects])
        #expect(result.exitCode == 0, "\(result)")
        let rejected = try lines(ofFile: rejects + "/events.rejects.ndjson").map { try jsonObject(text: $0) }
        #expect(rejected.count == 1, "\(rejected)")
        #expect(rejected.first?["line"] as? Int == 201, "the row: \(rejected)")
        #expect(rejected.first?["field"] as? String == "at", "the column: \(rejected)")
        #expect((rejected.first?["reason"] as? String)?.contains("'soon'") == true, "the cause: \(rejected)")
        #expect((rejected.first?["raw"] as? String)?.contains(#""id":1000"#) == true, "the row's key: \(rejected)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM events WHERE at IS NOT NULL") == [200])

        // The user's type: every value kept as text.
        let kept = dir.file("kept.sqlite")
        let overridden = try runFerry(["import", events, "--store", kept, "--type", "events.at=string"])
        #expect(overridden.exitCode == 0, "\(overridden)")
        #expect(overridden.stdout.contains("note: events.at: DATETIME → string (--type)"), "\(overridden)")
        #expect(
            try StoreSnapshot.texts(kept, "SELECT at FROM events WHERE id IN (1, 1000) ORDER BY id") == [
                ["1700000001"], ["soon"],
            ])

        // More than one value in a hundred does not fit: the column is kept as text, and says why.
        let mixed = try Self.events(dir, bad: ["soon", "later", "never"])
        let text = try runFerry(["import", mixed, "--store", dir.file("mixed.sqlite")])
        #expect(text.exitCode == 0, "\(text)")
        #expect(
            text.stdout.contains(
                "note: events.at: DATETIME holding values of several kinds (3 of 203 are not dates) → string"),
            "\(text)")

        // A name that is no column: a usage error naming the column it could be.
        let unknown = try runFerry(["import", events, "--store", dir.file("x.sqlite"), "--type", "events.att=string"])
        #expect(unknown.exitCode == 64, "\(unknown)")
        #expect(unknown.stderr.contains("--type events.att=string names no column"), "\(unknown)")
        #expect(unknown.stderr.contains("events.at"), "\(unknown)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.sqlite")))
    }
}

/// The same `--type TABLE.COLUMN=TYPE` for a PostgreSQL schema's tables: a typed server's columns
/// hold what they declare, so only the user's types convert (text to a date, empty text as
/// null), and a value that does not fit is a located reject.
@Suite(
    "ferry import of a whole PostgreSQL schema: the user's column types", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct WholeDatabaseImportPostgresTypesTests {
    @Test("--type converts a text column of a PostgreSQL table; a misfit is a located reject")
    func postgresColumnTypes() throws {
        let dir = TemporaryDirectory()
        let schema = "ferry_legacy_" + UUID().uuidString.lowercased().replacing("-", with: "")
        _ = try PostgresCopyCLITests.serverSQL(
            """
            CREATE SCHEMA \(schema);
            CREATE TABLE \(schema).orders(id integer PRIMARY KEY, placed text, qty text);
            INSERT INTO \(schema).orders VALUES (1, '2024-03-01 10:00:00', ''), (2, '2024-03-02', '5'), (3, 'soon', '6');
            """)
        let source = try PostgresTestServer.requireURL() + "?schema=" + schema
        defer { _ = try? PostgresCopyCLITests.serverSQL("DROP SCHEMA \(schema) CASCADE") }
        let store = dir.file("new.sqlite")
        let rejects = dir.file("rejects")
        let result = try runFerry([
            "import", source, "--store", store, "--type", "orders.placed=date", "--type", "orders.qty=int64",
            "--rejects", rejects,
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("inferred orders: id int32, placed date, qty int64"), "\(result)")
        #expect(result.stdout.contains("note: orders.placed: column → date (--type)"), "\(result)")
        let rejected = try lines(ofFile: rejects + "/orders.rejects.ndjson").map { try jsonObject(text: $0) }
        #expect(rejected.map { $0["field"] as? String } == ["placed"], "\(rejected)")
        #expect((rejected.first?["reason"] as? String)?.contains("'soon'") == true, "\(rejected)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT placed, qty FROM orders ORDER BY id") == [
                ["2024-03-01T10:00:00.000Z", nil], ["2024-03-02T00:00:00.000Z", "5"],
            ])
    }
}
