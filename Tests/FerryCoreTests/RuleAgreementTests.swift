import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// One implementation per rule (issue 12): import's checks (``Coercion``, ``AttributeValidator``)
/// and verify's SQL functions (`ferry_well_typed`, `ferry_rule_length`, `ferry_matches`) give
/// the same answer for the same value, because they call the same code.
@Suite(
    "import and verify decide every rule with the same function",
    .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
struct RuleAgreementTests {
    let dir = TemporaryDirectory("ferry-rules")
    let connection: Connection

    init() throws {
        connection = try Connection(path: dir.file("rules.sqlite"))
        try Verifier.registerFunctions(on: connection)
        try PredicateFunctions.register(on: connection)
    }

    // MARK: - JSON

    static func suiteFiles(_ prefix: String) throws -> [URL] {
        let data = try #require(TestPaths.sharedData, "../shared/data is missing")
        let folder = data.appendingPathComponent("JSONTestSuite/test_parsing")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }.sorted()
            .map { folder.appendingPathComponent($0) }
    }

    /// JSONSyntax's answer for the bytes, and the types check's for the same bytes stored as TEXT.
    func answers(_ bytes: [UInt8]) throws -> (core: Bool, verify: Bool) {
        let core = bytes.withUnsafeBufferPointer { JSONSyntax.isValue($0) }
        let stored = try connection.scalar("SELECT ferry_well_typed('j', CAST(? AS TEXT))", [.blob(bytes)])?.int64
        return (core, stored == 1)
    }

    @Test("JSONTestSuite: every y_ file is valid JSON and every n_ file is not, for import and for verify alike")
    func jsonTestSuite() throws {
        let accepted = try Self.suiteFiles("y_")
        let rejected = try Self.suiteFiles("n_")
        #expect(accepted.count == 95 && rejected.count == 188)
        for (files, expected) in [(accepted, true), (rejected, false)] {
            for file in files {
                let bytes = [UInt8](try Data(contentsOf: file))
                let (core, verify) = try answers(bytes)
                #expect(core == expected, "\(file.lastPathComponent)")
                #expect(verify == expected, "\(file.lastPathComponent)")
                // Import coercion decides the same whenever the bytes are text at all.
                if let text = String(validating: bytes, as: UTF8.self) {
                    let imported = (try? Coercion.coerce(text, to: .json).get()) != nil
                    #expect(imported == expected, "\(file.lastPathComponent)")
                }
            }
        }
    }

    @Test("JSONTestSuite i_ files: import and verify agree on each, whichever way it goes")
    func implementationDefined() throws {
        let files = try Self.suiteFiles("i_")
        #expect(files.count > 30)
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            let (core, verify) = try answers(bytes)
            #expect(core == verify, "\(file.lastPathComponent)")
        }
    }

    @Test(
        "strict RFC 8259: what lenient parsers take is refused",
        arguments: [
            "[1,]", "{\"a\":1,}", "[01]", "+1", "NaN", "[1 2]", "'a'", "{a:1}", "[1]//", "\u{FEFF}[1]", "[\"\u{1}\"]",
            "", " ", "[\"\\x\"]", "1.", ".5", "[1]]",
        ])
    func refused(text: String) throws {
        #expect(!JSONSyntax.isValue(text))
        #expect(try answers(Array(text.utf8)).verify == false)
        #expect((try? Coercion.coerce(text, to: .json).get()) == nil)
    }

    @Test(
        "invalid UTF-8 inside a string, overlong forms and surrogates are refused; well-formed multi-byte text is valid"
    )
    func utf8() throws {
        #expect(try answers(Array("[\"é😀中\"]".utf8)) == (true, true))
        for bad: [UInt8] in [
            [0xFF], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC3],
        ] {
            #expect(try answers([34] + bad + [34]) == (false, false), "\(bad)")
        }
        let deep =
            String(repeating: "[", count: JSONSyntax.maxDepth) + String(repeating: "]", count: JSONSyntax.maxDepth)
        #expect(JSONSyntax.isValue(deep))
        #expect(!JSONSyntax.isValue("[" + deep + "]"))
    }

    // MARK: - Lengths

    static let texts = [
        "", "abc", "\u{E9}", "e\u{301}", "\u{1F600}", "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}", "中文", "a\u{0}b",
        "🇫🇷",
    ]

    @Test("min_length / max_length count UTF-16 code units (Core Data's NSString length), in import and verify")
    func lengths() throws {
        for text in Self.texts {
            let imported = try #require(LengthRule.length(of: .string(text)))
            #expect(imported == text.utf16.count, "\(text.unicodeScalars.map { $0.value })")
            let verified = try connection.scalar("SELECT ferry_rule_length(?)", [.text(text)])?.int64
            #expect(verified == Int64(imported), "\(text.unicodeScalars.map { $0.value })")
        }
        #expect(LengthRule.length(of: .string("e\u{301}")) == 2)
        #expect(LengthRule.length(of: .string("\u{1F600}")) == 2)
        #expect(LengthRule.length(of: .binary([1, 2, 3])) == 3)
        #expect(try connection.scalar("SELECT ferry_rule_length(?)", [.blob([1, 2, 3])])?.int64 == 3)
        #expect(try connection.scalar("SELECT ferry_rule_length(NULL)")?.isNull == true)
        #expect(LengthRule.length(of: .integer(12)) == nil)
    }

    // MARK: - Patterns

    static let patterns = [
        ".", "..", "\\w+", "[a-z]+", "\\p{L}", "e\\u0301", "(?i)ABC", "\\d{3}-\\d{4}", "[^@ ]+@[^@ ]+",
    ]
    static let subjects = Self.texts + ["abc", "ABC", "123-4567", "a@b", "Ana María", "x"]

    @Test("patterns match code points with ICU on the whole text, in import and verify")
    func patterns() throws {
        for pattern in Self.patterns {
            let rule = try #require(PatternRule(pattern))
            for subject in Self.subjects {
                let imported = rule.matches(.string(subject))
                let verified =
                    try connection.scalar("SELECT ferry_matches(?, ?, 0)", [.text(subject), .text(pattern)])?.int64 == 1
                #expect(imported == verified, "'\(pattern)' on \(subject.unicodeScalars.map { $0.value })")
            }
        }
        let one = try #require(PatternRule("."))
        #expect(one.matches(.string("\u{E9}")))
        #expect(!one.matches(.string("e\u{301}")))
        #expect(one.matches(.string("\u{1F600}")))
        #expect(!one.matches(.string("ab")))
    }

    @Test("the pattern tests a value's stored text: dates in ISO form, booleans as 0/1, decimals canonical")
    func storedForms() throws {
        let date = try #require(PatternRule("\\d{4}-\\d{2}-\\d{2}T.*Z"))
        #expect(date.matches(.date(0)))
        let bool = try #require(PatternRule("[01]"))
        #expect(bool.matches(.bool(true)))
        let decimal = try #require(PatternRule("\\d+\\.5"))
        #expect(decimal.matches(.decimal("12.5")))
        #expect(try #require(PatternRule("x")).matches(.binary([1])))  // no text form: the rule does not apply
    }

    @Test("a pattern that only compiles once wrapped is invalid for import, verify and the model check alike")
    func invalidPatterns() throws {
        for pattern in ["a)(b", "(", "[a-", "a{2,1}"] {
            #expect(PatternRule(pattern) == nil, "\(pattern)")
            let attribute = AttributeDescription(
                name: "code", type: .string, validation: ValidationRules(pattern: pattern))
            #expect(throws: CoercionFailure.self) { try AttributeValidator(attribute) }
            #expect(try connection.scalar("SELECT ferry_matches('a)(b', ?, 0)", [.text(pattern)])?.int64 == 0)
        }
    }
}

/// Dates: the types check accepts the fixed-width stored form of the years 0000–9999 only, so
/// coercion refuses dates outside them (they used to crash the formatter).
@Suite("dates outside the years 0000–9999 are refused, never stored or crashed on")
struct StorableDateTests {
    @Test("the edges of the storable range, offsets and Unix times beyond it")
    func edges() throws {
        #expect(
            try Coercion.coerce("0000-01-01T00:00:00Z", to: .date).get()
                == .date(DateCoding.storableMilliseconds.lowerBound))
        #expect(
            try Coercion.coerce("9999-12-31T23:59:59.999Z", to: .date).get()
                == .date(DateCoding.storableMilliseconds.upperBound))
        for (text, format, year) in [
            ("9999-12-31T23:00:00-05:00", DateFormat.iso8601, 10000), ("0000-01-01T00:00:00+05:00", .iso8601, -1),
            ("300000000000", .unixSeconds, 11476), ("9223372036854775807", .unixMilliseconds, 292_278_994),
        ] {
            let result = Coercion.coerce(text, to: .date, options: CoercionOptions(dateFormat: format))
            #expect(
                throws: CoercionFailure("a date in the year \(year) is outside the years 0000–9999 that a store holds")
            ) { try result.get() }
        }
        #expect(throws: CoercionFailure.self) {
            try Coercion.convert(.date(DateCoding.storableMilliseconds.upperBound + 1), to: .date).get()
        }
    }

    @Test("formatting a date outside the range gives the extended ±YYYYYY form instead of recursing")
    func extendedForm() {
        #expect(DateCoding.format(DateCoding.storableMilliseconds.upperBound + 1) == "+010000-01-01T00:00:00.000Z")
        #expect(DateCoding.format(DateCoding.storableMilliseconds.lowerBound - 1) == "-000001-12-31T23:59:59.999Z")
    }
}

/// Batch updates check the new values with the conditions verify uses, so an update never
/// leaves what verify rejects: lengths in UTF-16 code units, decimals compared exactly.
@Suite("batch updates apply the rules as verify does")
struct UpdateRuleAgreementTests {
    static let model = ObjectModel(
        name: "Rules", version: "1",
        entities: [
            EntityDescription(
                name: "Item",
                attributes: [
                    AttributeDescription(name: "id", type: .int64, isOptional: false),
                    AttributeDescription(name: "text", type: .string),
                    AttributeDescription(name: "code", type: .string, validation: ValidationRules(maxLength: 1)),
                    AttributeDescription(name: "wide", type: .decimal),
                    AttributeDescription(
                        name: "capped", type: .decimal, validation: ValidationRules(maxValue: .decimal("0.1"))),
                ])
        ])

    let directory = TemporaryDirectory("ferry-update-rules")
    let store: Store

    init() throws {
        store = try Store.open(at: directory.file("rules.sqlite"), model: Self.model)
        try store.write { connection in
            try connection.execute(
                "INSERT INTO Item(ferry_pk, id, text, code, wide, capped) VALUES (1, 1, char(128512), 'a', '0.10000000000000000001', '0.1')"
            )
        }
    }

    func update(_ attribute: String, _ expression: String) -> String? {
        errorText {
            let request = BatchUpdateRequest(
                entity: "Item", predicate: try Predicate(format: "TRUEPREDICATE"),
                propertiesToUpdate: [
                    attribute: .expression(try Expression.parse(expression, bareNamesAreAttributes: true))
                ])
            _ = try store.execute(request)
        }
    }

    @Test("😀 is two UTF-16 code units: too long for max_length 1, as import and verify say")
    func lengthInCodeUnits() throws {
        #expect(
            update("code", "trim(text)")
                == "error: the new value of Item.code breaks 'max_length: 1' for 1 record (ferry_pk 1); nothing was changed"
        )
    }

    @Test("0.10000000000000000001 is above max 0.1 (exact decimals, not doubles)")
    func exactDecimals() throws {
        #expect(
            update("capped", "wide")
                == "error: the new value of Item.capped breaks 'max: 0.1' for 1 record (ferry_pk 1); nothing was changed"
        )
        // What the update refused is what verify reports, on the same values.
        try store.write { try $0.execute("UPDATE Item SET capped = wide") }
        let results = try store.withConnection {
            Verifier(model: Self.model).run([.validationRules(entity: "Item")], on: $0, layout: store.layout)
        }
        #expect(results.map(\.outcome) == [.failed])
    }
}
