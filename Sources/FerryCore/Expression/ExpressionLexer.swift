/// A token of the value-expression syntax.
struct ExpressionToken: Equatable, SyntaxToken {
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

    var isEnd: Bool { kind == .end }

    var isString: Bool {
        if case .string = kind { return true }
        return false
    }

    var end: Int { offset + text.utf8.count }
}

/// Splits an expression into tokens, reporting bad input at its column.
struct ExpressionLexer: SyntaxLexer {
    static let language = "expression"

    static let symbols = ["==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "(", ")", ",", ".", "?", ":"]
    /// Operators of other languages, each with what to write instead.
    static let foreignSymbols: [(symbol: String, message: String)] = [
        ("&&", "unexpected '&&'; write 'and'"),
        ("||", "unexpected '||'; write 'or' for logic, or join strings with '+' or concat(…)"),
        ("<>", "unexpected '<>'; write '!='"),
        ("=", "unexpected '='; write '==' to compare"),
        ("!", "unexpected '!'; write 'not'"),
    ]

    let source: ExpressionSource
    var scanner: TokenScanner

    init(_ source: ExpressionSource) {
        self.source = source
        self.scanner = TokenScanner(source.text)
    }

    func error(_ message: String, at offset: Int) -> FerryError { source.error(message, at: offset) }

    mutating func next() throws(FerryError) -> ExpressionToken {
        scanner.skipBlanks()
        let start = scanner.position
        guard let byte = scanner.peek() else { return ExpressionToken(kind: .end, offset: start, text: "") }

        if scanner.atName {
            let name = scanner.scanName()
            return ExpressionToken(kind: .identifier(name), offset: start, text: name)
        }
        if scanner.atNumber {
            return try number(start: start)
        }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            let source = self.source
            let value = try scanner.scanString { source.error($0, at: $1) }
            return ExpressionToken(kind: .string(value), offset: start, text: scanner.text(from: start))
        case UInt8(ascii: "$"):
            scanner.position += 1
            guard scanner.atName else {
                throw source.error("expected a name after '$', such as $source.name or a parameter", at: start)
            }
            let name = scanner.scanName()
            return ExpressionToken(kind: .variable(name), offset: start, text: scanner.text(from: start))
        default:
            break
        }
        for (symbol, message) in Self.foreignSymbols where symbol.count == 2 && scanner.scanSymbol([symbol]) != nil {
            throw source.error(message, at: start)
        }
        if let symbol = scanner.scanSymbol(Self.symbols) {
            return ExpressionToken(kind: .symbol(symbol), offset: start, text: symbol)
        }
        if let foreign = Self.foreignSymbols.first(where: { scanner.scanSymbol([$0.symbol]) != nil }) {
            throw source.error(foreign.message, at: start)
        }
        throw source.error("unexpected character '\(scanner.currentCharacter)'", at: start)
    }

    private mutating func number(start: Int) throws(FerryError) -> ExpressionToken {
        let (literal, isInteger, malformed) = scanner.scanNumber()
        if malformed {
            throw source.error("invalid number '\(literal)'", at: start)
        }
        if isInteger, let value = Int64(literal) {
            return ExpressionToken(kind: .integer(value), offset: start, text: literal)
        }
        guard let canonical = DecimalText.canonical(literal) else {
            throw source.error("invalid number '\(literal)'", at: start)
        }
        return ExpressionToken(kind: .decimal(canonical), offset: start, text: literal)
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
