import FerryPostgres
import Testing

/// The bytes of COPY's text format as `PostgresCopyText` builds them (no server needed): the
/// server tests in `PostgresCopyTests` prove the server reads them back identically.
@Suite("PostgreSQL COPY text encoding")
struct PostgresCopyTextTests {
    private func encoded(_ rows: [[PostgresValue]], columns: [String] = ["a", "b"]) throws -> String {
        var text = PostgresCopyText(columns: columns)
        for row in rows { try text.append(row) }
        return String(decoding: text.bytes, as: UTF8.self)
    }

    @Test("integers are written digit by digit, the extremes included")
    func integers() throws {
        let numbers: [Int64] = [0, 7, -7, 10, 99, -100, 1_234_567_890, .max, .min, .max - 1, .min + 1]
        let text = try encoded(numbers.map { [.integer($0), .null] })
        #expect(text == numbers.map { "\($0)\t\\N\n" }.joined())
    }

    @Test("text is escaped: backslash, tab, newline, carriage return; other bytes, UTF-8 included, are kept")
    func escapes() throws {
        let text = try encoded([
            [.text("tab\there\\N"), .text("line\nbreak\r\n")],
            [.text(""), .text("Ünï 日本 \u{1F680} \"q\" ,")],
            [.text("\\"), .bool(true)],
        ])
        #expect(
            text
                == "tab\\there\\\\N\tline\\nbreak\\r\\n\n"
                + "\tÜnï 日本 \u{1F680} \"q\" ,\n"
                + "\\\\\tt\n")
    }

    @Test("booleans, doubles and bytea take PostgreSQL's text input forms")
    func otherTypes() throws {
        let text = try encoded([
            [.bool(false), .real(1.5)], [.real(.infinity), .real(-.infinity)], [.real(.nan), .bytes([0, 0x5C, 0xFF])],
        ])
        #expect(text == "f\t1.5\nInfinity\t-Infinity\nNaN\t\\\\x005cff\n")
    }

    @Test("a NUL in text refuses the row, naming row and column, and leaves the rows before intact")
    func nulRefused() throws {
        var text = PostgresCopyText(columns: ["id", "note"])
        try text.append([.integer(1), .text("fine")])
        let error = try #require(throws: PostgresError.self) {
            try text.append([.integer(2), .text("bad\u{0}byte")])
        }
        #expect(error.kind == .invalidValue)
        #expect(error.copyLine == 2)
        #expect(error.copyColumn == "note")
        #expect(text.rowCount == 1)
        #expect(String(decoding: text.bytes, as: UTF8.self) == "1\tfine\n")
        // The buffer goes on after the refused row.
        try text.append([.integer(3), .null])
        #expect(String(decoding: text.bytes, as: UTF8.self) == "1\tfine\n3\t\\N\n")
    }

    @Test("a row with the wrong number of values is refused; field by field, a row can be discarded")
    func rowShape() throws {
        var text = PostgresCopyText(columns: ["id", "note"])
        let error = try #require(throws: PostgresError.self) { try text.append([.integer(1)]) }
        #expect(error.kind == .invalidValue)
        #expect(error.message.contains("1 values for 2 columns"))
        try text.appendField(.integer(5))
        text.discardRow()
        try text.appendField(.integer(6))
        try text.appendField(.text("x"))
        text.endRow()
        #expect(String(decoding: text.bytes, as: UTF8.self) == "6\tx\n")
        text.removeAll()
        #expect(text.bytes.isEmpty && text.rowCount == 0)
    }
}
