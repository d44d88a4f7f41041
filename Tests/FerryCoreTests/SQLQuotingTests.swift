import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// SQL literals and identifiers built from user text (model defaults, names) must stay one
/// literal, whatever the text: quotes behind combining or prepending scalars, NUL bytes,
/// statement separators. Random texts from a seeded generator, checked against SQLite itself.
@Suite("SQL quoting")
struct SQLQuotingTests {
    /// Scalars that like to hide a quote inside a `Character` or end a C string.
    static let alphabet: [Unicode.Scalar] = [
        "'", "\"", ";", "-", "/", "*", " ", "a", "Z", "(", ")", "\\", "\0", "\n",
        "\u{0600}", "\u{0301}", "\u{200D}", "\u{FE0F}", "\u{1F600}", "\u{0E33}", "\u{1100}", "\u{AC00}",
    ]

    static func randomText(_ generator: inout SeededGenerator) -> String {
        var text = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...12, using: &generator) {
            text.append(alphabet.randomElement(using: &generator)!)
        }
        return String(text)
    }

    @Test("a string literal reads back as exactly its text, in a DDL default and in a SELECT")
    func literalsRoundTrip() throws {
        var generator = SeededGenerator(state: 20_261_123)
        let connection = try Connection(path: ":memory:")
        for round in 0..<2_000 {
            let text = Self.randomText(&generator)
            let literal = SQL.stringLiteral(text)
            // Byte for byte: `String ==` would accept a canonically equivalent text.
            let read = try connection.scalar("SELECT \(literal)")?.text.map { Array($0.utf8) }
            #expect(
                read == Array(text.utf8), "round \(round): \(text.unicodeScalars.map { String($0.value, radix: 16) })")
            try connection.execute("CREATE TABLE t\(round) (x TEXT DEFAULT \(literal), y INTEGER)")
            try connection.execute("INSERT INTO t\(round) (y) VALUES (1)")
            #expect(
                try connection.scalar("SELECT x FROM t\(round)")?.text.map { Array($0.utf8) } == Array(text.utf8),
                "round \(round)")
        }
        // Nothing but the tables made above exists: no literal started a statement of its own.
        #expect(try connection.scalar("SELECT count(*) FROM sqlite_schema") == .integer(2_000))
    }

    @Test("a quoted identifier names exactly its text")
    func identifiersRoundTrip() throws {
        var generator = SeededGenerator(state: 7)
        let connection = try Connection(path: ":memory:")
        var made = 0
        for round in 0..<1_000 {
            let name =
                "c" + String(String.UnicodeScalarView(Self.randomText(&generator).unicodeScalars.filter { $0 != "\0" }))
            try connection.execute("CREATE TABLE \(SQL.quote("t\(round)")) (\(SQL.quote(name)) TEXT)")
            made += 1
            let columns = try connection.rows("SELECT name FROM pragma_table_info('t\(round)')")
            #expect(columns.map { $0.map { $0.text.map { Array($0.utf8) } } } == [[Array(name.utf8)]], "round \(round)")
        }
        #expect(try connection.scalar("SELECT count(*) FROM sqlite_schema") == .integer(Int64(made)))
    }

    @Test("SQL text with a second statement is refused, not run")
    func oneStatement() throws {
        let connection = try Connection(path: ":memory:")
        #expect(throws: FerryError.self) { try connection.execute("CREATE TABLE a (x); CREATE TABLE pwned (x)") }
        #expect(try connection.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'pwned'") == .integer(0))
        try connection.execute("CREATE TABLE b (x);  \n")
    }
}
