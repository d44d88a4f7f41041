@testable import FerryCore
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// Fetches on a PostgreSQL store stream through `COPY (SELECT …) TO STDOUT` when the server
/// evaluates the whole predicate: every attribute type, nulls and hostile values come out in the
/// stored forms a SQLite store gives and the cursor path gave.
@Suite(
    "PostgreSQL fetches through COPY TO STDOUT", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresCopyRowsTests {
    /// One attribute of every type, a to-one relationship to an owner with a unique key and one
    /// to a tag without one (fetched as its `ferry_pk`).
    static let model = ObjectModel(
        name: "Types", version: "1",
        entities: [
            EntityDescription(
                name: "Item",
                attributes: [
                    AttributeDescription(name: "number", type: .int64, isOptional: false),
                    AttributeDescription(name: "small", type: .int16),
                    AttributeDescription(name: "medium", type: .int32),
                    AttributeDescription(name: "flag", type: .bool),
                    AttributeDescription(name: "real", type: .double),
                    AttributeDescription(name: "single", type: .float),
                    AttributeDescription(name: "amount", type: .decimal),
                    AttributeDescription(name: "text", type: .string),
                    AttributeDescription(name: "moment", type: .date),
                    AttributeDescription(name: "identifier", type: .uuid),
                    AttributeDescription(name: "link", type: .uri),
                    AttributeDescription(name: "document", type: .json),
                    AttributeDescription(name: "payload", type: .binary),
                ],
                relationships: [
                    RelationshipDescription(name: "owner", destination: "Owner", inverse: "items"),
                    RelationshipDescription(name: "tag", destination: "Tag", inverse: "items"),
                ],
                uniquenessConstraints: [["number"]]),
            EntityDescription(
                name: "Owner",
                attributes: [AttributeDescription(name: "code", type: .string, isOptional: false)],
                relationships: [
                    RelationshipDescription(name: "items", destination: "Item", isToMany: true, inverse: "owner")
                ],
                uniquenessConstraints: [["code"]]),
            EntityDescription(
                name: "Tag",
                attributes: [AttributeDescription(name: "label", type: .string)],
                relationships: [
                    RelationshipDescription(name: "items", destination: "Item", isToMany: true, inverse: "tag")
                ]),
        ])

    static let hostileTexts: [String] = [
        "", " ", "plain", "tab\there", "new\nline", "cr\rlf\r\n", "back\\slash", "\\N", "\\", "quote \" and ' apostrophe",
        "comma, semicolon; pipe|", "Zoë 🚢 日本語 \u{200B}", "\u{1}\u{7}\u{8}\u{B}\u{C}\u{1B}\u{7F}", "trailing\\",
        "\\x41\\101", "NULL", "null", "=1+2", "  padded  ",
    ]

    /// Items with every type's edge values; row 0 is all nulls.
    static var items: [[Value]] {
        var rows: [[Value]] = []
        rows.append([.integer(0)] + Array(repeating: .null, count: 12) + [.null, .null])
        let dates: [Value] = [
            .date(Timestamp(milliseconds: 0)), .date(Timestamp(milliseconds: -1)),
            .date(Timestamp(milliseconds: 1_700_000_000_120)), .date(Timestamp(milliseconds: 1_700_000_000_100)),
            .date(Timestamp(milliseconds: 1_700_000_000_000)), .date(Timestamp(milliseconds: 253_402_300_799_999)),
            .date(Timestamp(milliseconds: -62_135_596_800_000)),  // 0001-01-01
            .date(Timestamp(milliseconds: -14_182_939_877)),
            Timestamp(referenceSeconds: 569_098_150.058821).map(Value.date) ?? .null,
            Timestamp(referenceSeconds: -0.000125).map(Value.date) ?? .null,
        ]
        let reals: [Double] = [0.1, -0.0, 1e308, .leastNonzeroMagnitude, .infinity, -.infinity, 123_456.789, -1.5e-7, 1, 0]
        let singles: [Double] = [0.5, -2.25, 1e-3, 0, 16_777_216]
        let numbers: [Int64] = [.min, .max, -1, 9_007_199_254_740_993, -42, 1_000_000, 4_294_967_296]
        let smalls: [Int64] = [-32768, 32767, 0, -1, 7]
        let decimals = [
            "123456789012345678901234567890.50", "-0.1", "0", "7", "1000000000000000000000.000001", "-3", "12.50",
            "0.000000000000000000001",
        ]
        let jsons = [
            "{\"a\": 1, \"bb\": [true, null, \"x\\ty\\\"z\\\\\"]}", "[]", "\"text\"", "12.5", "null", "{\"é\": \"🚢\"}",
        ]
        let blobs: [[UInt8]] = [[], Array(0...255), [0], [92, 78], Array("\\x41".utf8)]
        for index in 0..<max(hostileTexts.count, dates.count) {
            let text = hostileTexts[index % hostileTexts.count]
            rows.append([
                .integer(Int64(index + 1)),
                .integer(smalls[index % smalls.count]),
                .integer(Int64(Int32.min) + Int64(index)),
                index % 3 == 2 ? .null : .bool(index % 2 == 0),
                .double(reals[index % reals.count]),
                .double(singles[index % singles.count]),
                .decimal(decimals[index % decimals.count]),
                .string(text),
                dates[index % dates.count],
                .uuid(UUID(uuid: (UInt8(index), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)).uuidString.lowercased()),
                .uri("https://example.com/\(index)?q=a%20b&t=\\"),
                .json(jsons[index % jsons.count]),
                .binary(blobs[index % blobs.count]),
                index % 4 == 3 ? .null : .integer(Int64(index % 2 + 1)),
                index % 5 == 4 ? .null : .integer(Int64(index % 2 + 1)),
            ])
        }
        for number in numbers {
            rows.append([.integer(number)] + Array(repeating: .null, count: 14))
        }
        return rows
    }

    static let itemColumns: [InsertColumn] =
        [
            "number", "small", "medium", "flag", "real", "single", "amount", "text", "moment", "identifier", "link",
            "document", "payload",
        ].map { .attribute($0) } + [.relationship("owner"), .relationship("tag")]

    static func fill(_ store: Store) throws {
        _ = try store.execute(BatchInsertRequest(entity: "Owner", columns: [.attribute("code")], rows: [
            [.string("owner\ttab")], [.string("owner \\ back")],
        ]))
        _ = try store.execute(BatchInsertRequest(entity: "Tag", columns: [.attribute("label")], rows: [
            [.string("first")], [.null],
        ]))
        let result = try store.execute(BatchInsertRequest(entity: "Item", columns: itemColumns, rows: items))
        #expect(result.rejected == 0)
    }

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
        let sqlite = try Store.open(at: directory.file("types.sqlite"), model: Self.model)
        let scratch = try PostgresStoreScratch()
        let postgres = try Store.open(at: scratch.url, model: Self.model)
        try Self.fill(sqlite)
        try Self.fill(postgres)
        let requests: [FetchRequest] = [
            FetchRequest(entity: "Item"),
            FetchRequest(entity: "Item", sortDescriptors: [SortDescriptor("text", ascending: false)], limit: 7, offset: 3),
            FetchRequest(entity: "Item", predicate: try Predicate(format: "text == 'back\\\\slash' OR text == \"quote \\\" and ' apostrophe\"")),
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
        #expect(all.count == Self.items.count)
        #expect(all.flatMap { $0 }.contains("text 2023-11-14T22:13:20.120Z"))
        #expect(all.flatMap { $0 }.contains("text 2019-01-13T18:49:10.058821Z"))
    }

    @Test("the COPY path and the cursor path (a predicate ferry evaluates) hand out the same stored forms")
    func agreesWithCursorPath() throws {
        let scratch = try PostgresStoreScratch()
        let postgres = try Store.open(at: scratch.url, model: Self.model)
        try Self.fill(postgres)
        // LIKE is evaluated by ferry: the server selects a superset through a cursor.
        let evaluated = FetchRequest(entity: "Item", predicate: try Predicate(format: "text LIKE '*' OR text == nil"))
        let copied = FetchRequest(entity: "Item", predicate: try Predicate(format: "number != nil"))
        let model = Self.model
        let layout = postgres.layout
        #expect(try !evaluated.compile(model: model, layout: layout).predicateIsExact)
        #expect(try copied.compile(model: model, layout: layout).predicateIsExact)
        let viaCursor = try Self.storedRows(postgres, evaluated)
        let viaCopy = try Self.storedRows(postgres, copied)
        #expect(viaCursor.count == Self.items.count)
        for (left, right) in zip(viaCursor, viaCopy) { #expect(left == right) }
    }

    @Test("a failed reader cancels the COPY, an abandoned one is drained: the store stays usable")
    func failures() throws {
        let scratch = try PostgresStoreScratch()
        let postgres = try Store.open(at: scratch.url, model: Self.model)
        try Self.fill(postgres)
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
        #expect(try Self.rows(postgres, FetchRequest(entity: "Item")).count == Self.items.count)
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
                let normal = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
            else { return value }
            return .json(String(decoding: normal, as: UTF8.self))
        }
    }
}
