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
        let result = try importWhole(
            legacy, store: store,
            notes: [
                "orders.placed_at: DATETIME holding epoch milliseconds → date",
                "orders.shipped: TIMESTAMP holding epoch seconds → date",
                "orders.due: DATE holding ISO 8601 text → date; empty text read as null",
                "orders.active: BOOLEAN holding words (t/f, yes/no, …) → bool",
                "orders.amount: TEXT holding numbers → decimal; empty text read as null",
                "orders.qty: INTEGER holding empty text → int64; empty text read as null",
            ])
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

    @Test(
        "day/month text dates in the order the values prove, year-first dates, times with or without seconds; an open order stays text and says how to choose; --date-format settles it"
    )
    func textDates() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("dates.db")
        try StoreConnection(path, create: true).executeScript(
            """
            CREATE TABLE visits(id INTEGER PRIMARY KEY, eu DATE, us TEXT, ymd DATETIME, open DATE);
            INSERT INTO visits VALUES
                (1, '15.03.2021', '03/15/2021', '2021/03/15', '03/04/2021'),
                (2, '01.04.2021 14:05', '04/01/2021 14:05:09', '2021/04/01 14:05', '05/06/2021 10:00'),
                (3, '2.4.2021', '4/2/2021', '2021/4/2 9:05:30', '01/02/2021'),
                (4, '', '12/31/2021', NULL, NULL);
            """)
        let store = dir.file("new.sqlite")
        _ = try importWhole(
            path, store: store,
            notes: [
                "visits.eu: DATE holding dd/MM/yyyy text → date; empty text read as null",
                "visits.us: TEXT holding MM/dd/yyyy text → date",
                "visits.ymd: DATETIME holding yyyy/MM/dd text → date",
                "visits.open: DATE holding day/month text dates → string; the day/month order is open (every value reads both ways): give --date-format dd/MM/yyyy or --date-format MM/dd/yyyy",
            ])
        #expect(
            try StoreSnapshot.texts(store, "SELECT eu, us, ymd, open FROM visits ORDER BY id") == [
                ["2021-03-15T00:00:00.000Z", "2021-03-15T00:00:00.000Z", "2021-03-15T00:00:00.000Z", "03/04/2021"],
                [
                    "2021-04-01T14:05:00.000Z", "2021-04-01T14:05:09.000Z", "2021-04-01T14:05:00.000Z",
                    "05/06/2021 10:00",
                ],
                ["2021-04-02T00:00:00.000Z", "2021-04-02T00:00:00.000Z", "2021-04-02T09:05:30.000Z", "01/02/2021"],
                [nil, "2021-12-31T00:00:00.000Z", nil, nil],
            ])

        // The user says the order of the open column; the columns whose values prove it keep theirs.
        let settled = dir.file("settled.sqlite")
        let chosen = try runFerry([
            "import", path, "--store", settled, "--date-format", "dd/MM/yyyy HH:mm", "--date-format", "dd/MM/yyyy",
        ])
        #expect(chosen.exitCode == 0, "\(chosen)")
        #expect(
            chosen.stdout.contains(
                "note: visits.open: DATE holding day/month text (--date-format dd/MM/yyyy HH:mm, dd/MM/yyyy) → date"),
            "\(chosen)")
        #expect(
            try StoreSnapshot.texts(settled, "SELECT eu, open FROM visits ORDER BY id") == [
                ["2021-03-15T00:00:00.000Z", "2021-04-03T00:00:00.000Z"],
                ["2021-04-01T14:05:00.000Z", "2021-06-05T10:00:00.000Z"],
                ["2021-04-02T00:00:00.000Z", "2021-02-01T00:00:00.000Z"],
                [nil, nil],
            ])
        let bad = try runFerry(["import", path, "--store", dir.file("bad.sqlite"), "--date-format", "dd/QQ"])
        #expect(bad.exitCode == 64, "\(bad)")
        #expect(bad.stderr.contains("--date-format dd/QQ: unsupported letter 'Q'"), "\(bad)")
    }

    @Test("a day/month text date that does not fit is a located reject naming the value, the column and the row's key")
    func textDateMisfits() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("trips.db")
        try StoreConnection(path, create: true).executeScript(
            """
            CREATE TABLE trips(id INTEGER PRIMARY KEY, at DATE);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
                INSERT INTO trips SELECT i, printf('%02d/%02d/2021', (i % 28) + 1, (i % 12) + 1) FROM n;
            INSERT INTO trips VALUES (1000, '31/02/2021'), (1001, 'soon');
            """)
        let store = dir.file("new.sqlite")
        let rejects = dir.file("rejects")
        let result = try runFerry(["import", path, "--store", store, "--rejects", rejects])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.contains(
                "note: trips.at: DATE holding dd/MM/yyyy text → date; 1 value does not fit and is rejected (--type trips.at=string keeps it)"
            ), "\(result)")
        let rejected = try lines(ofFile: rejects + "/trips.rejects.ndjson").map { try jsonObject(text: $0) }
        #expect(rejected.map { $0["field"] as? String } == ["at", "at"], "\(rejected)")
        #expect((rejected.first?["reason"] as? String)?.contains("'31/02/2021'") == true, "\(rejected)")
        #expect((rejected.first?["raw"] as? String)?.contains(#""id":1000"#) == true, "\(rejected)")
        #expect((rejected.last?["reason"] as? String)?.contains("'soon'") == true, "\(rejected)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM trips WHERE at IS NOT NULL") == [200])
        #expect(
            try StoreSnapshot.texts(store, "SELECT at FROM trips WHERE id = 27") == [["2021-04-28T00:00:00.000Z"]])
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
        #expect(
            result.stdout.contains(
                "note: orders.placed: text → date (--type); 1 value does not fit and is rejected (--type orders.placed=string keeps it)"
            ), "\(result)")
        let rejected = try lines(ofFile: rejects + "/orders.rejects.ndjson").map { try jsonObject(text: $0) }
        #expect(rejected.map { $0["field"] as? String } == ["placed"], "\(rejected)")
        #expect((rejected.first?["reason"] as? String)?.contains("'soon'") == true, "\(rejected)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT placed, qty FROM orders ORDER BY id") == [
                ["2024-03-01T10:00:00.000Z", nil], ["2024-03-02T00:00:00.000Z", "5"],
            ])
    }

    @Test(
        "text and varchar columns are read for the dates, numbers and booleans they hold, with the notes and located rejects of a SQLite source; an integer column named like a date stays an integer"
    )
    func postgresColumnContents() throws {
        let dir = TemporaryDirectory()
        let schema = "ferry_habits_" + UUID().uuidString.lowercased().replacing("-", with: "")
        _ = try PostgresCopyCLITests.serverSQL(
            """
            CREATE SCHEMA \(schema);
            CREATE TABLE \(schema).legacy(id integer PRIMARY KEY, created_at bigint, placed text, eu varchar(20),
                amount text, active text, qty text, code text, open text, note text);
            INSERT INTO \(schema).legacy VALUES
                (1, 1700000000, '2024-03-01 10:00:00', '15.03.2021', '12.50', 't', '3', '01234', '03/04/2021', 'first'),
                (2, 1700000060, '2024-03-02', '01.04.2021 14:05', '3', 'no', '', '99999', '05/06/2021', ''),
                (3, NULL, '', '2.4.2021', '0.99', 'Y', '7', NULL, NULL, NULL),
                (4, 1700000120, '2024-03-04T08:00:00Z', '31.02.2021', '7', 'false', '8', '12345', '01/02/2021', 'x');
            """)
        let source = try PostgresTestServer.requireURL() + "?schema=" + schema
        defer { _ = try? PostgresCopyCLITests.serverSQL("DROP SCHEMA \(schema) CASCADE") }
        let store = dir.file("new.sqlite")
        let rejects = dir.file("rejects")
        let result = try importWhole(
            source, store: store, ["--rejects", rejects],
            notes: [
                "legacy.placed: text holding ISO 8601 dates → date; empty text read as null",
                "legacy.eu: character varying(20) holding dd/MM/yyyy text → date",
                "legacy.amount: text holding numbers → decimal",
                "legacy.active: text holding true/false words → bool",
                "legacy.qty: text holding integers → int64; empty text read as null",
                "legacy.open: text holding day/month text dates → string; the day/month order is open (every value reads both ways): give --date-format dd/MM/yyyy or --date-format MM/dd/yyyy",
            ])
        #expect(
            result.stdout.contains(
                "inferred legacy: id int32, created_at int64, placed date, eu date, amount decimal, active bool, qty int64, code string, open string, note string"
            ), "\(result)")
        #expect(!result.stdout.contains("legacy.created_at:"), "\(result)")
        #expect(!result.stdout.contains("legacy.code:"), "\(result)")
        #expect(!result.stdout.contains("legacy.note:"), "\(result)")
        // 31.02.2021 has the shape of a date but is none: a located reject naming it.
        let rejected = try lines(ofFile: rejects + "/legacy.rejects.ndjson").map { try jsonObject(text: $0) }
        #expect(rejected.map { $0["field"] as? String } == ["eu"], "\(rejected)")
        #expect((rejected.first?["reason"] as? String)?.contains("'31.02.2021'") == true, "\(rejected)")
        #expect((rejected.first?["raw"] as? String)?.contains(#""id":4"#) == true, "\(rejected)")
        #expect(
            try StoreSnapshot.texts(
                store, "SELECT created_at, placed, eu, amount, active, qty, code, open FROM legacy ORDER BY id")
                == [
                    [
                        "1700000000", "2024-03-01T10:00:00.000Z", "2021-03-15T00:00:00.000Z", "12.5", "1", "3", "01234",
                        "03/04/2021",
                    ],
                    [
                        "1700000060", "2024-03-02T00:00:00.000Z", "2021-04-01T14:05:00.000Z", "3", "0", nil, "99999",
                        "05/06/2021",
                    ],
                    [nil, nil, "2021-04-02T00:00:00.000Z", "0.99", "1", "7", nil, nil],
                ])

        // --date-format settles the open column; --type still overrides a column.
        let settled = dir.file("settled.sqlite")
        let chosen = try runFerry([
            "import", source, "--store", settled, "--rejects", dir.file("rejects2"), "--date-format", "MM/dd/yyyy",
            "--type", "legacy.amount=string",
        ])
        #expect(chosen.exitCode == 0, "\(chosen)")
        #expect(chosen.stdout.contains("note: legacy.amount: text → string (--type)"), "\(chosen)")
        #expect(
            try StoreSnapshot.texts(settled, "SELECT open, amount FROM legacy WHERE id IN (1, 2) ORDER BY id") == [
                ["2021-03-04T00:00:00.000Z", "12.50"], ["2021-05-06T00:00:00.000Z", "3"],
            ])
    }

    @Test(
        "char(n) columns, which PostgreSQL pads with blanks, are converted as they were scanned: trimmed, with no reject"
    )
    func postgresPaddedCharColumns() throws {
        let dir = TemporaryDirectory()
        let schema = "ferry_padded_" + UUID().uuidString.lowercased().replacing("-", with: "")
        _ = try PostgresCopyCLITests.serverSQL(
            """
            CREATE SCHEMA \(schema);
            CREATE TABLE \(schema).t(id integer PRIMARY KEY, d char(12), eu char(12), flag char(3), n char(8),
                label char(6));
            INSERT INTO \(schema).t VALUES (1, '2021-03-15', '15.03.2021', 'yes', '12', 'ab'),
                (2, '2021-04-01', '31.12.2020', 'no', '7.5', 'cd');
            """)
        let source = try PostgresTestServer.requireURL() + "?schema=" + schema
        defer { _ = try? PostgresCopyCLITests.serverSQL("DROP SCHEMA \(schema) CASCADE") }
        let store = dir.file("padded.sqlite")
        let result = try importWhole(
            source, store: store,
            notes: [
                "t.d: character(12) holding ISO 8601 dates → date",
                "t.eu: character(12) holding dd/MM/yyyy text → date",
                "t.flag: character(3) holding true/false words → bool",
                "t.n: character(8) holding numbers → decimal",
            ])
        #expect(result.stdout.contains("rejected 0"), "\(result)")
        // Text stays as the server stores it, blanks and all.
        #expect(
            try StoreSnapshot.texts(store, "SELECT d, eu, flag, n, label FROM t ORDER BY id") == [
                ["2021-03-15T00:00:00.000Z", "2021-03-15T00:00:00.000Z", "1", "12", "ab    "],
                ["2021-04-01T00:00:00.000Z", "2020-12-31T00:00:00.000Z", "0", "7.5", "cd    "],
            ])
    }
}

/// `ferry import SOURCE --store STORE ARGUMENTS…` of a whole database, which must succeed and
/// print every one of `notes` as a `note:` line.
func importWhole(
    _ source: String, store: String, _ arguments: [String] = [], notes: [String],
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> ProcessResult {
    let result = try runFerry(["import", source, "--store", store] + arguments)
    #expect(result.exitCode == 0, "\(result)", sourceLocation: sourceLocation)
    for note in notes {
        #expect(result.stdout.contains("note: " + note), "\(note): \(result)", sourceLocation: sourceLocation)
    }
    return result
}
