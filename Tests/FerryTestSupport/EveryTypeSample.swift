import FerryCore
import Foundation

/// A model with one attribute of every type and the same objects for every backend: edge values
/// of each type, nulls, and text that CSV, JSON and PostgreSQL's COPY must all escape. For tests
/// that compare what SQLite and PostgreSQL stores give back.
public enum EveryTypeSample {
    /// One attribute of every type, a to-one relationship to an owner with a unique key and one
    /// to a tag without one (fetched as its `ferry_pk`).
    public static let model = ObjectModel(
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

    public static let hostileTexts: [String] = [
        "", " ", "plain", "tab\there", "new\nline", "cr\rlf\r\n", "back\\slash", "\\N", "\\",
        "quote \" and ' apostrophe",
        "comma, semicolon; pipe|", "Zoë 🚢 日本語 \u{200B}", "\u{1}\u{7}\u{8}\u{B}\u{C}\u{1B}\u{7F}", "trailing\\",
        "\\x41\\101", "NULL", "null", "=1+2", "  padded  ",
    ]

    /// Items with every type's edge values; row 0 is all nulls.
    public static var items: [[Value]] {
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
        // No -0.0: SQLite stores it as 0 (docs/export.md), so the backends would differ on the way in.
        let reals: [Double] = [
            0.1, -2.5, 1e308, .leastNonzeroMagnitude, .infinity, -.infinity, 123_456.789, -1.5e-7, 1, 0,
        ]
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
                .uuid(
                    UUID(uuid: (UInt8(index), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)).uuidString
                        .lowercased()),
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

    public static let itemColumns: [InsertColumn] =
        [
            "number", "small", "medium", "flag", "real", "single", "amount", "text", "moment", "identifier", "link",
            "document", "payload",
        ].map { .attribute($0) } + [.relationship("owner"), .relationship("tag")]

    public static func fill(_ store: Store) throws {
        _ = try store.execute(
            BatchInsertRequest(
                entity: "Owner", columns: [.attribute("code")],
                rows: [
                    [.string("owner\ttab")], [.string("owner \\ back")],
                ]))
        _ = try store.execute(
            BatchInsertRequest(
                entity: "Tag", columns: [.attribute("label")],
                rows: [
                    [.string("first")], [.null],
                ]))
        let result = try store.execute(BatchInsertRequest(entity: "Item", columns: itemColumns, rows: items))
        guard result.rejected == 0 else {
            throw FerryError(.internal, "\(result.rejected) sample items were rejected")
        }
    }
}
