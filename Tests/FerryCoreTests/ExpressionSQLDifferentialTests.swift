import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore
@testable import FerryPostgresStore

/// Expressions compiled to SQL give, row for row, exactly what ferry's evaluator gives: over
/// hostile text (non-ASCII case mappings, combining marks, CR LF, NUL, empty text, whitespace of
/// every kind), NULLs and extreme integers, on a real SQLite database with ferry's functions.
@Suite("Expression SQL equals evaluation (differential)")
struct ExpressionSQLDifferentialTests {
    typealias M = ExpressionTestModel

    /// Text chosen to break byte-wise or ASCII-only implementations.
    static let hostileTexts: [String?] = [
        nil, "", " ", "a", "Ana María López", "ÀÉÎÕÜ àéîõü", "İstanbul", "ß straße", "ǅungla", "ﬁne ﬂow",
        "Σίσυφος ΣΊΣΥΦΟΣ", "e\u{301}cole e\u{301}", "cafe\u{301} au lait", " \u{301}x y", "a \u{200D}b", "\u{0600} x",
        "a\r\nb\nc", "a\0b c", "\t trimmed \n", "\u{00A0}nbsp\u{2003}", "\u{3000}全角\u{3000}", "👩‍👩‍👧 family 🇳🇿 flag",
        "ＡＢＣ ａｂｃ", "Ǆ ǆ ǅ", "ΐ ΰ", "ﬀ", "x  y   z", "  ", "a,b,,c", ",", "line\u{2028}sep", "MiXeD CaSe 123",
    ]

    static let integers: [Int64?] = [nil, 0, 1, -1, 39, 40, 41, Int64.max, Int64.min, 1 << 53, -(1 << 53) - 1]

    /// Random strings over an alphabet of troublemakers, reproducible.
    static func randomTexts(count: Int) -> [String?] {
        let alphabet: [String] = [
            "a", "Z", " ", ",", "\r", "\n", "\r\n", "\0", "É", "é", "e", "\u{301}", "ß", "İ", "ı", "Σ", "ς", "👍",
            "\u{1F3FB}",
            "\u{200D}", "\u{00A0}", "\t", "ﬁ", "-", "Ǆ", "\u{0600}",
        ]
        var generator = SeededGenerator(state: 0x5EED)
        return (0..<count).map { index in
            if index % 17 == 0 { return nil }
            let length = Int(generator.next() % 12)
            return (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }.joined()
        }
    }

    /// A table `t` with every test row (`first`, `last`, `visits`), a connection with ferry's
    /// functions, and the rows as evaluation contexts.
    private func fixture() throws -> (Connection, [(first: String?, last: String?, visits: Int64?)]) {
        let connection = try Connection(path: ":memory:", readOnly: false, create: true)
        try PredicateSupport.register(on: connection)
        try connection.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, first TEXT, last TEXT, visits INTEGER)")
        var rows: [(first: String?, last: String?, visits: Int64?)] = []
        let texts = Self.hostileTexts + Self.randomTexts(count: 400)
        for (index, text) in texts.enumerated() {
            rows.append((text, texts[(index * 7 + 3) % texts.count], Self.integers[index % Self.integers.count]))
        }
        let insert = try connection.prepare("INSERT INTO t (k, first, last, visits) VALUES (?, ?, ?, ?)")
        for (index, row) in rows.enumerated() {
            insert.reset()
            try insert.bind([
                .integer(Int64(index)), row.first.map { .text($0) } ?? .null, row.last.map { .text($0) } ?? .null,
                row.visits.map { .integer($0) } ?? .null,
            ])
            try insert.step()
        }
        return (connection, rows)
    }

    /// Checks that `text` compiles to SQL and that SQL and evaluation agree on every row.
    private func expectAgreement(_ text: String, type: AttributeType = .string) throws {
        let (connection, rows) = try fixture()
        let bound = try M.bind(text).fitted(to: AttributeDescription(name: "x", type: type))
        let sql = try #require(
            bound.sql { slot in "t.\"\(bound.keyPaths[slot].attribute.name)\"" }, "\(text) should compile to SQL")
        let coding = FerryValueCoding()
        let results = try connection.rows(
            "SELECT \(sql.text) FROM t ORDER BY k", sql.arguments.map { coding.encode($0) })
        #expect(results.count == rows.count)
        var mismatches = 0
        for (row, result) in zip(rows, results) {
            var values: [String: Value] = [:]
            values["first"] = row.first.map { .string($0) } ?? .null
            values["last"] = row.last.map { .string($0) } ?? .null
            values["visits"] = row.visits.map { .integer($0) } ?? .null
            let expected = try bound.evaluate(on: DictionaryExpressionContext(values, for: bound))
            let actual = coding.decode(result[0], as: type)
            if actual != expected {
                mismatches += 1
                Issue.record("\(text) on \(values): SQL gave \(actual), evaluation \(expected)")
                if mismatches > 5 { return }
            }
        }
    }

    @Test(
        "text functions through ferry's SQL functions",
        arguments: [
            "lowercase($source.first)", "uppercase($source.first)", "trim($source.first)",
            "lowercase(trim($source.last))", "split($source.first, ' ', 0)", "split($source.first, ' ', 1)",
            "split($source.first, ' ', -1)", "split($source.first, ',', 2)", "split($source.first, '\\n', 0)",
            "split($source.first, 'é', 0)", "split($source.last, ' ', $source.visits)",
            "coalesce(lowercase($source.first), uppercase($source.last), 'none')",
            "lowercase($source.first) + '|' + uppercase($source.last)",
        ])
    func textFunctions(_ text: String) throws {
        try expectAgreement(text)
    }

    @Test(
        "comparisons, logic and conditionals",
        arguments: [
            "if($source.visits >= 40, 'senior', 'junior')", "$source.visits > 40 ? $source.first : $source.last",
            "if($source.visits == nil, 'none', 'some')", "if($source.visits != 40, 'other', nil)",
            "if($source.visits < 0 and not ($source.visits == -1), 'neg', 'pos')",
            "if($source.visits <= 1 or $source.visits > 9007199254740992, split($source.first, ' ', 0), lowercase($source.last))",
            "if(not ($source.visits >= 40), 'a', 'b')",
        ])
    func conditionals(_ text: String) throws {
        try expectAgreement(text)
    }

    @Test("a comparison stored in a bool attribute is 1 or 0, never NULL")
    func booleans() throws {
        try expectAgreement("$source.visits >= 40", type: .bool)
        try expectAgreement("$source.visits == nil or $source.visits < 0", type: .bool)
        try expectAgreement("not ($source.visits != 39)", type: .bool)
    }

    @Test("what SQL cannot compute exactly stays in Swift; PostgreSQL gets no ferry functions")
    func notCompiled() throws {
        func compiles(
            _ text: String, _ type: AttributeType = .string, dialect: any SQLDialect = SQLiteDialect()
        ) throws -> Bool {
            let bound = try M.bind(text).fitted(to: AttributeDescription(name: "x", type: type))
            return bound.sql(column: { "c\($0)" }, dialect: dialect) != nil
        }
        // A separator that is not a literal could be empty (a runtime error).
        #expect(try !compiles("split($source.first, $source.last, 0)"))
        // Strings compare by canonical equivalence in Swift, byte-wise in SQLite.
        #expect(try !compiles("if($source.first == 'x', 'a', 'b')"))
        // Branches of different kinds are widened per value.
        #expect(try !compiles("if($source.visits > 1, $source.visits, 1.5)", .decimal))
        // A bool attribute as a condition may be NULL: `not` would be NULL in SQL.
        #expect(try !compiles("if(not $source.vip, 'a', 'b')"))
        #expect(try !compiles("length($source.first)", .int64))
        #expect(try !compiles("lowercase($source.first)", dialect: PostgreSQLDialect()))
        #expect(try !compiles("if($source.visits > 1, 'a', 'b')", dialect: PostgreSQLDialect()))
        #expect(try compiles("$source.first + ' ' + $source.last", dialect: PostgreSQLDialect()))
    }
}
