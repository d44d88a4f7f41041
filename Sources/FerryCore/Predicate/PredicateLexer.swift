/// A token of the predicate format syntax.
struct PredicateToken: Equatable {
    enum Kind: Equatable {
        /// A key name (or a reserved word escaped with `#`).
        case identifier(String)
        /// A reserved word, upper-cased: `AND`, `BEGINSWITH`, `NIL`, …
        case keyword(String)
        case string(String)
        case integer(Int64)
        case double(Double)
        /// `$NAME`.
        case variable(String)
        /// `%@`, `%K`, `%d`, …: the conversion letter(s) after `%`.
        case placeholder(String)
        /// `@count`, `@sum`, …: the name after `@`, lower-cased.
        case aggregate(String)
        /// Punctuation and operators: `==`, `(`, `{`, `[c]` is lexed as `[`, identifier, `]`.
        case symbol(String)
        case end
    }
    var kind: Kind
    /// Byte offset of the token's first byte in the format string.
    var offset: Int
    /// The token's source text, for messages.
    var text: String

    /// How the token is named in an error message: `'foo'`, `"text"`, `end of input`.
    var described: String {
        switch kind {
        case .end: return "end of input"
        case .string: return text
        default: return "'\(text)'"
        }
    }
}

/// Splits a predicate format string into tokens, reporting bad input with its column.
struct PredicateLexer {
    static let keywords: Set<String> = [
        "AND", "OR", "NOT", "IN", "LIKE", "MATCHES", "BEGINSWITH", "ENDSWITH", "CONTAINS", "BETWEEN",
        "ANY", "ALL", "NONE", "SOME", "TRUEPREDICATE", "FALSEPREDICATE", "NIL", "NULL", "YES", "NO",
        "TRUE", "FALSE", "SUBQUERY", "CAST",
    ]

    let bytes: [UInt8]
    let source: PredicateSource
    var position = 0

    init(_ source: PredicateSource) {
        self.source = source
        self.bytes = Array(source.text.utf8)
    }

    /// Every token, ending with `.end`; at most ``SyntaxLimits/maximumTokens`` of them.
    mutating func tokenize() throws(FerryError) -> [PredicateToken] {
        var tokens: [PredicateToken] = []
        while true {
            let token = try next()
            if tokens.count == SyntaxLimits.maximumTokens, token.kind != .end {
                throw source.error(SyntaxLimits.tooLong("predicate"), at: token.offset)
            }
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func text(from start: Int) -> String {
        String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private func peek(_ ahead: Int = 0) -> UInt8? {
        position + ahead < bytes.count ? bytes[position + ahead] : nil
    }

    private static func isIdentifierStart(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F || byte >= 0x80
    }

    private static func isIdentifierPart(_ byte: UInt8) -> Bool {
        isIdentifierStart(byte) || isDigit(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private mutating func next() throws(FerryError) -> PredicateToken {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
        let start = position
        guard let byte = peek() else { return PredicateToken(kind: .end, offset: start, text: "") }

        if Self.isIdentifierStart(byte) {
            while let b = peek(), Self.isIdentifierPart(b) { position += 1 }
            let word = text(from: start)
            let upper = word.uppercased()
            let kind: PredicateToken.Kind = Self.keywords.contains(upper) ? .keyword(upper) : .identifier(word)
            return PredicateToken(kind: kind, offset: start, text: word)
        }
        if Self.isDigit(byte) || (byte == UInt8(ascii: ".") && peek(1).map(Self.isDigit) == true) {
            return try number(start: start)
        }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return try string(quote: byte, start: start)
        case UInt8(ascii: "#"):
            position += 1
            guard let b = peek(), Self.isIdentifierStart(b) else {
                throw source.error("expected a key name after '#'", at: start)
            }
            let nameStart = position
            while let b = peek(), Self.isIdentifierPart(b) { position += 1 }
            return PredicateToken(kind: .identifier(text(from: nameStart)), offset: start, text: text(from: start))
        case UInt8(ascii: "$"):
            position += 1
            guard let b = peek(), Self.isIdentifierStart(b) else {
                throw source.error("expected a variable name after '$'", at: start)
            }
            let nameStart = position
            while let b = peek(), Self.isIdentifierPart(b) { position += 1 }
            return PredicateToken(kind: .variable(text(from: nameStart)), offset: start, text: text(from: start))
        case UInt8(ascii: "@"):
            position += 1
            let nameStart = position
            while let b = peek(), Self.isIdentifierPart(b) { position += 1 }
            let name = text(from: nameStart)
            guard AggregateFunction(rawValue: name.lowercased()) != nil else {
                throw source.error(
                    "unknown collection operator '@\(name)'; expected @count, @sum, @avg, @min or @max", at: start)
            }
            return PredicateToken(kind: .aggregate(name.lowercased()), offset: start, text: text(from: start))
        case UInt8(ascii: "%"):
            position += 1
            while peek() == UInt8(ascii: "l") || peek() == UInt8(ascii: "h") || peek() == UInt8(ascii: "q") { position += 1 }
            guard let b = peek(), "@KdiufFgeExXscDUoO".utf8.contains(b) else {
                if let b = peek(), Self.isIdentifierPart(b) { position += 1 }
                throw source.error("unknown placeholder '\(text(from: start))'; expected %@, %K, %d or %f", at: start)
            }
            position += 1
            let spec = text(from: start + 1)
            return PredicateToken(kind: .placeholder(spec), offset: start, text: "%" + spec)
        default:
            break
        }
        // Operators and punctuation, longest first.
        let two = peek(1).map { String(decoding: [byte, $0], as: UTF8.self) } ?? ""
        if ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"].contains(two) {
            position += 2
            return PredicateToken(kind: .symbol(two), offset: start, text: two)
        }
        let one = String(decoding: [byte], as: UTF8.self)
        if "=<>!(){},.[]-".contains(one) {
            position += 1
            return PredicateToken(kind: .symbol(one), offset: start, text: one)
        }
        // Report the whole character, not one byte of it.
        var end = position + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        let character = String(decoding: bytes[position..<end], as: UTF8.self)
        throw source.error("unexpected character '\(character)'", at: start)
    }

    private mutating func number(start: Int) throws(FerryError) -> PredicateToken {
        if peek() == UInt8(ascii: "0"), let x = peek(1), let radix = [UInt8(ascii: "x"): 16, UInt8(ascii: "X"): 16,
            UInt8(ascii: "o"): 8, UInt8(ascii: "O"): 8, UInt8(ascii: "b"): 2, UInt8(ascii: "B"): 2][x]
        {
            position += 2
            let digitsStart = position
            while let b = peek(), Self.isIdentifierPart(b) { position += 1 }
            let digits = String(decoding: bytes[digitsStart..<position], as: UTF8.self)
            guard !digits.isEmpty, let value = Int64(digits, radix: radix) else {
                throw source.error("invalid number '\(text(from: start))'", at: start)
            }
            return PredicateToken(kind: .integer(value), offset: start, text: text(from: start))
        }
        var isInteger = true
        while let b = peek(), Self.isDigit(b) { position += 1 }
        if peek() == UInt8(ascii: "."), let b = peek(1), Self.isDigit(b) {
            isInteger = false
            position += 1
            while let b = peek(), Self.isDigit(b) { position += 1 }
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            var ahead = 1
            if let sign = peek(1), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { ahead = 2 }
            if let d = peek(ahead), Self.isDigit(d) {
                isInteger = false
                position += ahead
                while let b = peek(), Self.isDigit(b) { position += 1 }
            }
        }
        if let b = peek(), Self.isIdentifierStart(b) {
            while let b = peek(), Self.isIdentifierPart(b) { position += 1 }
            throw source.error("invalid number '\(text(from: start))'", at: start)
        }
        let literal = text(from: start)
        if isInteger, let value = Int64(literal) {
            return PredicateToken(kind: .integer(value), offset: start, text: literal)
        }
        guard let value = Double(literal), value.isFinite else {
            throw source.error("invalid number '\(literal)'", at: start)
        }
        return PredicateToken(kind: .double(value), offset: start, text: literal)
    }

    private mutating func string(quote: UInt8, start: Int) throws(FerryError) -> PredicateToken {
        let source = self.source
        let value = try QuotedLiteral.scan(bytes, position: &position, quote: quote, start: start) { source.error($0, at: $1) }
        return PredicateToken(kind: .string(value), offset: start, text: text(from: start))
    }
}

/// The text being parsed and where it came from, to turn byte offsets into locations.
struct PredicateSource: Sendable {
    let text: String
    let base: InputLocation

    init(_ text: String, base: InputLocation?) {
        self.text = text
        self.base = base ?? InputLocation(file: "<predicate>", line: 1, column: 1)
    }

    /// The location of byte `offset`: columns count from the base column on the first line,
    /// from 1 on later lines.
    func location(at offset: Int) -> InputLocation {
        var line = max(base.line, 1)
        var column = max(base.column, 1)
        var index = 0
        for byte in text.utf8 {
            if index >= offset { break }
            if byte == 0x0A {
                line += 1
                column = 1
            } else {
                column += 1
            }
            index += 1
        }
        return InputLocation(file: base.file, line: line, column: column, record: base.record)
    }

    func mark(at offset: Int) -> SourceMark { SourceMark(location(at: offset)) }

    func error(_ message: String, at offset: Int) -> FerryError {
        FerryError(.invalidPredicate, message, at: location(at: offset))
    }
}
