/// A token of the value-expression syntax.
struct ExpressionToken: Equatable {
    enum Kind: Equatable {
        /// A function name or a word (`and`, `or`, `not`, `true`, `false`, `nil`).
        case identifier(String)
        /// `$name`; `$source` is the source object.
        case variable(String)
        case string(String)
        case integer(Int64)
        /// A number with a fraction or exponent, or an integer too large for 64 bits, as canonical decimal text.
        case decimal(String)
        case symbol(String)
        case end
    }
    var kind: Kind
    /// Byte offset of the token's first byte.
    var offset: Int
    /// The token's source text.
    var text: String

    /// How the token is named in a message: `'foo'`, `"text"`, `end of input`.
    var described: String {
        switch kind {
        case .end: return "end of input"
        case .string: return text
        default: return "'\(text)'"
        }
    }

    var end: Int { offset + text.utf8.count }
}

/// Splits an expression into tokens, reporting bad input at its column.
struct ExpressionLexer {
    let bytes: [UInt8]
    let source: ExpressionSource
    var position = 0

    init(_ source: ExpressionSource) {
        self.source = source
        self.bytes = Array(source.text.utf8)
    }

    mutating func tokenize() throws(FerryError) -> [ExpressionToken] {
        var tokens: [ExpressionToken] = []
        while true {
            let token = try next()
            if tokens.count == SyntaxLimits.maximumTokens, token.kind != .end {
                throw source.error(SyntaxLimits.tooLong("expression"), at: token.offset)
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

    static func isIdentifierStart(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F || byte >= 0x80
    }

    static func isIdentifierPart(_ byte: UInt8) -> Bool { isIdentifierStart(byte) || isDigit(byte) }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private mutating func next() throws(FerryError) -> ExpressionToken {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
        let start = position
        guard let byte = peek() else { return ExpressionToken(kind: .end, offset: start, text: "") }

        if Self.isIdentifierStart(byte) {
            while let b = peek(), Self.isIdentifierPart(b) { position += 1 }
            return ExpressionToken(kind: .identifier(text(from: start)), offset: start, text: text(from: start))
        }
        if Self.isDigit(byte) || (byte == UInt8(ascii: ".") && peek(1).map(Self.isDigit) == true) {
            return try number(start: start)
        }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return try string(quote: byte, start: start)
        case UInt8(ascii: "$"):
            position += 1
            guard let b = peek(), Self.isIdentifierStart(b) else {
                throw source.error("expected a name after '$', such as $source.name or a parameter", at: start)
            }
            let nameStart = position
            while let b = peek(), Self.isIdentifierPart(b) { position += 1 }
            return ExpressionToken(kind: .variable(text(from: nameStart)), offset: start, text: text(from: start))
        default:
            break
        }
        let two = peek(1).map { String(decoding: [byte, $0], as: UTF8.self) } ?? ""
        switch two {
        case "==", "!=", "<=", ">=":
            position += 2
            return ExpressionToken(kind: .symbol(two), offset: start, text: two)
        case "&&": throw source.error("unexpected '&&'; write 'and'", at: start)
        case "||": throw source.error("unexpected '||'; write 'or' for logic, or join strings with '+' or concat(…)", at: start)
        case "<>": throw source.error("unexpected '<>'; write '!='", at: start)
        default: break
        }
        let one = String(decoding: [byte], as: UTF8.self)
        if "<>+-*/%(),.?:".contains(one) {
            position += 1
            return ExpressionToken(kind: .symbol(one), offset: start, text: one)
        }
        if one == "=" { throw source.error("unexpected '='; write '==' to compare", at: start) }
        if one == "!" { throw source.error("unexpected '!'; write 'not'", at: start) }
        var end = position + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        let character = String(decoding: bytes[position..<end], as: UTF8.self)
        throw source.error("unexpected character '\(character)'", at: start)
    }

    private mutating func number(start: Int) throws(FerryError) -> ExpressionToken {
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
            return ExpressionToken(kind: .integer(value), offset: start, text: literal)
        }
        guard let canonical = DecimalText.canonical(literal) else {
            throw source.error("invalid number '\(literal)'", at: start)
        }
        return ExpressionToken(kind: .decimal(canonical), offset: start, text: literal)
    }

    private mutating func string(quote: UInt8, start: Int) throws(FerryError) -> ExpressionToken {
        let source = self.source
        let value = try QuotedLiteral.scan(bytes, position: &position, quote: quote, start: start) { source.error($0, at: $1) }
        return ExpressionToken(kind: .string(value), offset: start, text: text(from: start))
    }
}

/// The text of an expression and where it came from, to turn byte offsets into locations.
struct ExpressionSource: Sendable {
    let text: String
    let base: InputLocation

    init(_ text: String, base: InputLocation?) {
        self.text = text
        self.base = base ?? InputLocation(file: "<expression>", line: 1, column: 1)
    }

    /// The location of byte `offset` (columns count from the base column on the first line).
    func location(at offset: Int) -> InputLocation {
        PredicateSource(text, base: base).location(at: offset)
    }

    func error(_ message: String, at offset: Int) -> FerryError {
        FerryError(.invalidExpression, message, at: location(at: offset))
    }

    /// The source text of a byte range, for naming a sub-expression in messages.
    func slice(_ range: Range<Int>) -> String {
        let bytes = Array(text.utf8)
        let lower = min(max(range.lowerBound, 0), bytes.count)
        let upper = min(max(range.upperBound, lower), bytes.count)
        return String(decoding: bytes[lower..<upper], as: UTF8.self)
    }
}
