import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore
@testable import FerryPostgresStore

/// Fetches on a PostgreSQL store stream through `COPY (SELECT …) TO STDOUT` when the server
/// evaluates the whole predicate: every attribute type, nulls and hostile values come out in the
/// stored forms a SQLite store gives and the cursor path gave.
@Suite(
    "PostgreSQL fetches through COPY TO STDOUT", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresCopyRowsTests {
    static func rows(_ store: Store, _ request: FetchRequest) throws -> [[Value]] {
        try store.fetch(request) { cursor in
            var rows: [[Value]] = []
            while let row = try cursor.next() { rows.append(row) }
            return rows
        }
    }

    /// The stored forms the cursor hands the writers, column by column (class and bytes).
    static func storedRows(_ store: Store, _ request: FetchRequest) throws -> [[String]] {
        try store.fetch(request) { cursor in
            var rows: [[String]] = []
            while try cursor.advance() {
                rows.append(
                    cursor.columns.indices.map { index in
                        switch cursor.storageClass(at: index) {
                        case .null: "null"
                        case .integer: "integer \(cursor.int64(at: index))"
                        case .real: "real \(cursor.double(at: index).bitPattern)"
                        case .text: "text " + cursor.withTextBytes(at: index) { String(decoding: $0, as: UTF8.self) }
                        case .blob: "blob " + cursor.withBlobBytes(at: index) { Array($0).description }
                        }
                    })
            }
            return rows
        }
    }

    @Test("every attribute type, null and hostile value fetches as from SQLite, in the same stored forms")
    func agreesWithSQLite() throws {
        let directory = TemporaryDirectory()
        let sqlite = try Store.open(at: directory.file("types.sqlite"), model: EveryTypeSample.model)
        let scratch = try PostgresStoreScratch()
        let postgres = try Store.open(at: scratch.url, model: EveryTypeSample.model)
        try EveryTypeSample.fill(sqlite)
        try EveryTypeSample.fill(postgres)
        let requests: [FetchRequest] = [
            FetchRequest(entity: "Item"),
            FetchRequest(
                entity: "Item", sortDescriptors: [SortDescriptor("text", ascending: false)], limit: 7, offset: 3),
            FetchRequest(
                entity: "Item",
                predicate: try Predicate(format: "text == 'back\\\\slash' OR text == \"quote \\\" and ' apostrophe\"")),
            FetchRequest(entity: "Item", predicate: try Predicate(format: "real > 0.05 AND amount != nil")),
            FetchRequest(entity: "Item", properties: ["owner", "tag", "text"]),
            FetchRequest(entity: "Item", properties: []),
            FetchRequest(entity: "Owner"),
        ]
        for (index, request) in requests.enumerated() {
            // SQLite keeps JSON as written; jsonb normalizes it: compare JSON by value.
            let expected = try Self.rows(sqlite, request)
            let actual = try Self.rows(postgres, request)
            #expect(expected.count == actual.count, "request \(index)")
            for (left, right) in zip(expected, actual) where left != right {
                #expect(Self.normalizingJSON(left) == Self.normalizingJSON(right), "request \(index)")
            }
        }
        let all = try Self.storedRows(postgres, FetchRequest(entity: "Item"))
        #expect(all.count == EveryTypeSample.items.count)
        #expect(all.flatMap { $0 }.contains("text 2023-11-14T22:13:20.120Z"))
        #expect(all.flatMap { $0 }.contains("text 2019-01-13T18:49:10.058821Z"))
    }

    @Test("the COPY path and the cursor path (a predicate ferry evaluates) hand out the same stored forms")
    func agreesWithCursorPath() throws {
        let scratch = try PostgresStoreScratch()
        let postgres = try Store.open(at: scratch.url, model: EveryTypeSample.model)
        try EveryTypeSample.fill(postgres)
        // LIKE is evaluated by ferry: the server selects a superset through a cursor.
        let evaluated = FetchRequest(entity: "Item", predicate: try Predicate(format: "text LIKE '*' OR text == nil"))
        let copied = FetchRequest(entity: "Item", predicate: try Predicate(format: "number != nil"))
        let model = EveryTypeSample.model
        let layout = postgres.layout
        #expect(try !evaluated.compile(model: model, layout: layout).predicateIsExact)
        #expect(try copied.compile(model: model, layout: layout).predicateIsExact)
        let viaCursor = try Self.storedRows(postgres, evaluated)
        let viaCopy = try Self.storedRows(postgres, copied)
        #expect(viaCursor.count == EveryTypeSample.items.count)
        for (left, right) in zip(viaCursor, viaCopy) { #expect(left == right) }
    }

    @Test("a failed reader cancels the COPY, an abandoned one is drained: the store stays usable")
    func failures() throws {
        let scratch = try PostgresStoreScratch()
        let postgres = try Store.open(at: scratch.url, model: EveryTypeSample.model)
        try EveryTypeSample.fill(postgres)
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try postgres.fetch(FetchRequest(entity: "Item")) { cursor in
                _ = try cursor.advance()
                throw Stop()
            }
        }
        // Abandoned after one row without an error: the next statement drains the rest.
        let first = try postgres.fetch(FetchRequest(entity: "Item")) { try $0.next() }
        #expect(first?.first == .integer(0))
        #expect(try Self.rows(postgres, FetchRequest(entity: "Item")).count == EveryTypeSample.items.count)
        #expect(try Self.rows(postgres, FetchRequest(entity: "Owner")).count == 2)
    }

    @Test("arguments become literals typed as parameters would be; text with NUL has none")
    func inlinedArguments() {
        #expect(
            PostgresDatabase.inliningArguments(
                "SELECT ? , ?2, '?', \"a?\", ?", [.text("it's \\ back"), .integer(-5), .real(0.1)])
                == "SELECT E'it''s \\\\ back' , E'-5', '?', \"a?\", E'0.1'::float8")
        #expect(
            PostgresDatabase.inliningArguments("SELECT ?, ?, ?", [.blob([0, 255]), .null, .real(-.infinity)])
                == "SELECT E'\\\\x00ff'::bytea, NULL, E'-Infinity'::float8")
        #expect(PostgresDatabase.inliningArguments("SELECT ?", [.text("a\u{0}b")]) == nil)
        #expect(PostgresDatabase.inliningArguments("SELECT ?, ?", [.integer(1)]) == nil)
        #expect(PostgresDatabase.inliningArguments("SELECT 1", []) == "SELECT 1")
    }

    @Test("timestamps with whole milliseconds are rewritten directly, exactly as the general path does")
    func dates() {
        var generator = SeededGenerator(state: 10)
        var samples: [String] = [
            "2024-05-01 12:30:00+00", "2024-05-01 12:30:00.2+00", "2024-05-01 12:30:00.25+00",
            "2024-05-01 12:30:00.123+00", "0001-01-01 00:00:00+00", "9999-12-31 23:59:59.999+00",
            "1969-12-31 23:59:59.999+00",
        ]
        for _ in 0..<2000 {
            let millis = Int64.random(in: DateCoding.storableMilliseconds, using: &generator)
            var text = DateCoding.format(millis)  // YYYY-MM-DDTHH:MM:SS.sssZ
            text = text.replacing("T", with: " ").replacing("Z", with: "+00")
            while text.hasSuffix("0+00") || text.hasSuffix(".+00") {
                text = String(text.dropLast(4)) + "+00"
            }
            samples.append(text)
        }
        for sample in samples where !sample.hasPrefix("0000") {
            var fast: [UInt8] = []
            let matched = Array(sample.utf8).withUnsafeBufferPointer {
                PostgresCopyRows.appendStoredDate($0, to: &fast)
            }
            let general = PostgresValueCoding().storedForm(.text(sample), as: .date)
            #expect(matched, "\(sample)")
            #expect(general == .text(String(decoding: fast, as: UTF8.self)), "\(sample)")
        }
        for other in [
            "2024-05-01 12:30:00.1234+00", "infinity", "-infinity", "0044-03-15 12:00:00+00 BC",
            "12024-05-01 12:30:00+00", "2024-05-01 12:30:00+02", "2024-05-01T12:30:00+00", "2024-05-01 12:30:0x+00",
        ] {
            var bytes: [UInt8] = []
            #expect(!Array(other.utf8).withUnsafeBufferPointer { PostgresCopyRows.appendStoredDate($0, to: &bytes) })
            #expect(bytes.isEmpty)
        }
    }

    @Test("integers parse as PostgreSQL writes them, with overflow refused")
    func integers() {
        func parse(_ text: String) -> Int64? {
            Array(text.utf8).withUnsafeBufferPointer { PostgresCopyRows.integer($0) }
        }
        #expect(parse("0") == 0)
        #expect(parse("-9223372036854775808") == .min)
        #expect(parse("9223372036854775807") == .max)
        #expect(parse("9223372036854775808") == nil)
        #expect(parse("-9223372036854775809") == nil)
        #expect(parse("-") == nil)
        #expect(parse("") == nil)
        #expect(parse("12a") == nil)
        #expect(parse("+1") == nil)
    }

    static func normalizingJSON(_ row: [Value]) -> [Value] {
        row.map { value in
            guard case .json(let text) = value, let data = text.data(using: .utf8),
                let object = try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed),
                let normal = try? JSONSerialization.data(
                    withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
            else { return value }
            return .json(String(decoding: normal, as: UTF8.self))
        }
    }
}
