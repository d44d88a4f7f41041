/// A token of the predicate format syntax.
struct PredicateToken: Equatable, SyntaxToken {
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

    var isEnd: Bool { kind == .end }

    var isString: Bool {
        if case .string = kind { return true }
        return false
    }
}

/// Splits a predicate format string into tokens, reporting bad input with its column.
struct PredicateLexer: SyntaxLexer {
    static let language = "predicate"

    static let keywords: Set<String> = [
        "AND", "OR", "NOT", "IN", "LIKE", "MATCHES", "BEGINSWITH", "ENDSWITH", "CONTAINS", "BETWEEN",
        "ANY", "ALL", "NONE", "SOME", "TRUEPREDICATE", "FALSEPREDICATE", "NIL", "NULL", "YES", "NO",
        "TRUE", "FALSE", "SUBQUERY", "CAST",
    ]
    static let symbols = [
        "==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", "=", "<", ">", "!", "(", ")", "{", "}", ",", ".", "[",
        "]", "-",
    ]

    let source: PredicateSource
    var scanner: TokenScanner

    init(_ source: PredicateSource) {
        self.source = source
        self.scanner = TokenScanner(source.text)
    }

    func error(_ message: String, at offset: Int) -> FerryError { source.error(message, at: offset) }

    mutating func next() throws(FerryError) -> PredicateToken {
        scanner.skipBlanks()
        let start = scanner.position
        guard let byte = scanner.peek() else { return PredicateToken(kind: .end, offset: start, text: "") }

        if scanner.atName {
            let word = scanner.scanName()
            let upper = word.uppercased()
            let kind: PredicateToken.Kind = Self.keywords.contains(upper) ? .keyword(upper) : .identifier(word)
            return PredicateToken(kind: kind, offset: start, text: word)
        }
        if scanner.atNumber {
            return try number(start: start)
        }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            let source = self.source
            let value = try scanner.scanString { source.error($0, at: $1) }
            return PredicateToken(kind: .string(value), offset: start, text: scanner.text(from: start))
        case UInt8(ascii: "#"), UInt8(ascii: "$"):
            scanner.position += 1
            guard scanner.atName else {
                throw source.error(
                    byte == UInt8(ascii: "#") ? "expected a key name after '#'" : "expected a variable name after '$'",
                    at: start)
            }
            let name = scanner.scanName()
            let kind: PredicateToken.Kind = byte == UInt8(ascii: "#") ? .identifier(name) : .variable(name)
            return PredicateToken(kind: kind, offset: start, text: scanner.text(from: start))
        case UInt8(ascii: "@"):
            scanner.position += 1
            let name = scanner.scanName()
            guard AggregateFunction(rawValue: name.lowercased()) != nil else {
                throw source.error(
                    "unknown collection operator '@\(name)'; expected @count, @sum, @avg, @min or @max", at: start)
            }
            return PredicateToken(kind: .aggregate(name.lowercased()), offset: start, text: scanner.text(from: start))
        case UInt8(ascii: "%"):
            scanner.position += 1
            while let b = scanner.peek(), b == UInt8(ascii: "l") || b == UInt8(ascii: "h") || b == UInt8(ascii: "q") {
                scanner.position += 1
            }
            guard let b = scanner.peek(), "@KdiufFgeExXscDUoO".utf8.contains(b) else {
                if let b = scanner.peek(), TokenScanner.isNamePart(b) { scanner.position += 1 }
                throw source.error(
                    "unknown placeholder '\(scanner.text(from: start))'; expected %@, %K, %d or %f", at: start)
            }
            scanner.position += 1
            let spec = scanner.text(from: start + 1)
            return PredicateToken(kind: .placeholder(spec), offset: start, text: "%" + spec)
        default:
            break
        }
        if let symbol = scanner.scanSymbol(Self.symbols) {
            return PredicateToken(kind: .symbol(symbol), offset: start, text: symbol)
        }
        throw source.error("unexpected character '\(scanner.currentCharacter)'", at: start)
    }

    private mutating func number(start: Int) throws(FerryError) -> PredicateToken {
        if scanner.peek() == UInt8(ascii: "0"), let x = scanner.peek(1),
            let radix = [
                UInt8(ascii: "x"): 16, UInt8(ascii: "X"): 16,
                UInt8(ascii: "o"): 8, UInt8(ascii: "O"): 8, UInt8(ascii: "b"): 2, UInt8(ascii: "B"): 2,
            ][x]
        {
            scanner.position += 2
            let digits = scanner.scanName()
            guard !digits.isEmpty, let value = Int64(digits, radix: radix) else {
                throw source.error("invalid number '\(scanner.text(from: start))'", at: start)
            }
            return PredicateToken(kind: .integer(value), offset: start, text: scanner.text(from: start))
        }
        let (literal, isInteger, malformed) = scanner.scanNumber()
        if malformed {
            throw source.error("invalid number '\(literal)'", at: start)
        }
        if isInteger, let value = Int64(literal) {
            return PredicateToken(kind: .integer(value), offset: start, text: literal)
        }
        guard let value = Double(literal), value.isFinite else {
            throw source.error("invalid number '\(literal)'", at: start)
        }
        return PredicateToken(kind: .double(value), offset: start, text: literal)
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
