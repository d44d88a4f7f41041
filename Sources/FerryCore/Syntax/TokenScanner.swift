/// The lexing both of ferry's small languages share, predicates (`--where`) and value
/// expressions (`--set`, mapping files): a cursor over the text's bytes that skips blanks and
/// scans names, numbers, quoted strings and operators. Each lexer decides what the pieces mean.
struct TokenScanner {
    let bytes: [UInt8]
    var position = 0

    init(_ text: String) {
        bytes = Array(text.utf8)
    }

    /// The byte `ahead` bytes on, or nil past the end.
    func peek(_ ahead: Int = 0) -> UInt8? {
        position + ahead < bytes.count ? bytes[position + ahead] : nil
    }

    /// The text from `start` to the current position.
    func text(from start: Int) -> String {
        String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// Moves past spaces, tabs and line breaks.
    mutating func skipBlanks() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
    }

    /// ASCII letters, `_`, and every non-ASCII byte (so names may hold any letter).
    static func isNameStart(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F || byte >= 0x80
    }

    static func isNamePart(_ byte: UInt8) -> Bool { isNameStart(byte) || isDigit(byte) }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// True when a name starts at the current position.
    var atName: Bool { peek().map(Self.isNameStart) == true }

    /// True when a number starts at the current position (`12`, `.5`).
    var atNumber: Bool {
        guard let byte = peek() else { return false }
        return Self.isDigit(byte) || (byte == UInt8(ascii: ".") && peek(1).map(Self.isDigit) == true)
    }

    /// Moves past a name's bytes and returns the name (empty when none starts here).
    mutating func scanName() -> String {
        let start = position
        while let byte = peek(), Self.isNamePart(byte) { position += 1 }
        return text(from: start)
    }

    /// A decimal number at the current position: digits, an optional fraction and exponent.
    /// `isInteger` is false when it has a fraction or an exponent. A name glued to the number
    /// (`12ab`) is consumed too and reported as `malformed`.
    mutating func scanNumber() -> (literal: String, isInteger: Bool, malformed: Bool) {
        let start = position
        var isInteger = true
        while let byte = peek(), Self.isDigit(byte) { position += 1 }
        if peek() == UInt8(ascii: "."), let byte = peek(1), Self.isDigit(byte) {
            isInteger = false
            position += 1
            while let byte = peek(), Self.isDigit(byte) { position += 1 }
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            var ahead = 1
            if let sign = peek(1), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { ahead = 2 }
            if let digit = peek(ahead), Self.isDigit(digit) {
                isInteger = false
                position += ahead
                while let byte = peek(), Self.isDigit(byte) { position += 1 }
            }
        }
        let malformed = atName
        if malformed { _ = scanName() }
        return (text(from: start), isInteger, malformed)
    }

    /// The value of a quoted string starting at the current position (`"…"` or `'…'`, with
    /// backslash escapes); `error` builds the error for a message and a byte offset.
    mutating func scanString(error: (String, Int) -> FerryError) throws(FerryError) -> String {
        let start = position
        let quote = bytes[position]
        return try QuotedLiteral.scan(bytes, position: &position, quote: quote, start: start, error: error)
    }

    /// The operator among `symbols` at the current position, longest first, moving past it.
    mutating func scanSymbol(_ symbols: [String]) -> String? {
        for length in [2, 1] {
            guard position + length <= bytes.count else { continue }
            let candidate = String(decoding: bytes[position..<position + length], as: UTF8.self)
            if symbols.contains(candidate) {
                position += length
                return candidate
            }
        }
        return nil
    }

    /// The whole character at the current position (not one byte of it), for "unexpected
    /// character" messages.
    var currentCharacter: String {
        var end = position + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        return String(decoding: bytes[position..<min(end, bytes.count)], as: UTF8.self)
    }
}
