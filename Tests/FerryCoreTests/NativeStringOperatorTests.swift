import FerryCore
import FerryTestSupport
import Testing

/// Plain BEGINSWITH / ENDSWITH / CONTAINS with a literal compile to SQLite's substr/instr; they
/// must select exactly what in-memory evaluation selects.
@Suite("Native SQL string operators agree with evaluation")
struct NativeStringOperatorTests {
    static let model = ObjectModel(
        name: "S", version: "1",
        entities: [EntityDescription(name: "T", attributes: [AttributeDescription(name: "s", type: .string)])])

    static let texts: [String?] = [
        nil, "", "a", "abc", "ABC", "xabc", "abcx", "café", "cafe\u{301}", "\u{301}", "e\u{301}", "naïve", "🚢", "a🚢b",
        "🚢🚢",
        "100%", "a_b", "a%b", "x\u{0}y", "日本語テキスト", "語テ", "ab\nc", "example.com", "user@example.com", "user@example.co",
        "user@EXAMPLE.COM", "ß", "ss",
    ]

    static let literals = [
        "", "a", "abc", "c", "bc", "é", "\u{301}", "e\u{301}", "🚢", "%", "_", "a%", "a_b", "語テ", "ïve", "\n",
        "example.com", "ss", "y",
    ]

    @Test("every operator and literal", arguments: ["BEGINSWITH", "ENDSWITH", "CONTAINS"])
    func agreement(op: String) throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(at: directory.file("s.sqlite"), model: Self.model)
        try store.write { connection in
            for (index, text) in Self.texts.enumerated() {
                try connection.execute(
                    #"INSERT INTO "T"(ferry_pk, s) VALUES (?, ?)"#,
                    [.integer(Int64(index + 1)), text.map { .text($0) } ?? .null])
            }
        }
        guard let entity = Self.model.entity(named: "T") else { return }
        for literal in Self.literals {
            for negated in [false, true] {
                let format = (negated ? "NOT " : "") + "s \(op) %@"
                let predicate = try Predicate(format: format, arguments: [.value(.string(literal))])
                let compiled = try predicate.sql(for: entity, model: Self.model, layout: FerryLayout())
                #expect(!compiled.sql.contains("ferry_"), "\(format) should compile to native SQL: \(compiled.sql)")
                let selected = try store.read { connection in
                    try connection.rows(
                        "SELECT t0.ferry_pk FROM \(compiled.from) WHERE \(compiled.sql) ORDER BY 1", compiled.arguments
                    )
                    .compactMap { $0[0].int64 }
                }
                let bound = try predicate.bound(to: entity, model: Self.model)
                var expected: [Int64] = []
                for (index, text) in Self.texts.enumerated() {
                    let record = PredicateRecord(values: ["s": text.map { .string($0) } ?? .null])
                    if try bound.evaluate(on: record) { expected.append(Int64(index + 1)) }
                }
                #expect(
                    selected == expected,
                    "\(format) with '\(literal.unicodeScalars.map { String($0.value, radix: 16) })'")
            }
        }
    }

    @Test("options and key-path operands keep the Swift functions")
    func fallbacks() throws {
        guard let entity = Self.model.entity(named: "T") else { return }
        #expect(
            try Predicate(format: "s ENDSWITH[c] 'x'").sql(for: entity, model: Self.model, layout: FerryLayout()).sql
                == "ferry_endswith(t0.\"s\", ?, 1)")
        #expect(
            try Predicate(format: "s ENDSWITH s").sql(for: entity, model: Self.model, layout: FerryLayout()).sql
                == "ferry_endswith(t0.\"s\", t0.\"s\", 0)")
        #expect(
            try Predicate(format: "s ENDSWITH 'x'").sql(for: entity, model: Self.model, layout: FerryLayout()).sql
                == "substr(CAST(t0.\"s\" AS BLOB), -?) = ?")
    }
}
