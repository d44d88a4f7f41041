/// A small value expression over an object's own attributes, for batch updates: attribute
/// references, literals, `+ - * /`, string concatenation with `+`, `lowercase(x)`,
/// `uppercase(x)`, `trim(x)`, `coalesce(a, b, …)` and `now()`.
///
/// ```swift
/// let expression = try UpdateExpression(parsing: "lowercase(trim(email))")
/// let request = BatchUpdateRequest(entity: "Customer", predicate: .constant(true),
///                                  propertiesToUpdate: ["email": .expression(expression)])
/// ```
///
/// Expressions compile to SQL over `"Entity" AS t0` with every literal bound as a parameter,
/// and are type-checked against the model first (see docs/update-delete.md). This language is
/// deliberately minimal and self-contained so that it can later give way to the mapping
/// expression language.
public indirect enum UpdateExpression: Sendable, Hashable {
    /// A literal: an integer (`.integer`), a number with a fraction or exponent (`.decimal`, exact
    /// text), a string, `true`/`false` or `nil`.
    case literal(Value, SourceMark)
    /// An attribute of the updated object, read before the update.
    case attribute(String, SourceMark)
    /// `-x`.
    case negate(UpdateExpression, SourceMark)
    /// `a + b`, `a - b`, `a * b`, `a / b`; `+` concatenates when either side is a string.
    case binary(UpdateOperator, UpdateExpression, UpdateExpression, SourceMark)
    /// `lowercase(x)`, `uppercase(x)`, `trim(x)`, `coalesce(a, b, …)`, `now()`.
    case call(UpdateFunction, [UpdateExpression], SourceMark)

    /// Where the expression starts in the source.
    public var mark: SourceMark {
        switch self {
        case .literal(_, let mark), .attribute(_, let mark), .negate(_, let mark), .binary(_, _, _, let mark), .call(_, _, let mark):
            return mark
        }
    }

    /// Where the expression's leftmost token is (the left operand of a binary expression).
    var startMark: SourceMark {
        if case .binary(_, let lhs, _, _) = self { return lhs.startMark }
        return mark
    }
}

/// The arithmetic operators of ``UpdateExpression``.
public enum UpdateOperator: String, Sendable, Hashable {
    /// `+`, `-`, `*` and `/`.
    case add = "+", subtract = "-", multiply = "*", divide = "/"
}

/// The functions of ``UpdateExpression``.
public enum UpdateFunction: String, Sendable, Hashable, CaseIterable {
    /// `lowercase(x)`, `uppercase(x)`, `trim(x)`, `coalesce(x, y)` and `now()`.
    case lowercase, uppercase, trim, coalesce, now
}

// MARK: - Parsing

extension UpdateExpression {
    /// Parses an expression. `location` is where its first character is (a job file position or
    /// `--set`); errors (code `invalidExpression`) point at the offending column.
    public init(parsing text: String, location: InputLocation? = nil) throws(FerryError) {
        var parser = UpdateExpressionParser(text: text, location: location)
        self = try parser.parse()
    }
}

struct UpdateExpressionParser {
    enum Token: Equatable {
        case identifier(String)
        case integer(Int64)
        case number(String)
        case string(String)
        case symbol(Character)
        case end
    }

    let bytes: [UInt8]
    let location: InputLocation?
    var position = 0
    var token: Token = .end
    var tokenStart = 0
    var tokenCount = 0
    var depth = NestingDepth()

    init(text: String, location: InputLocation?) {
        self.bytes = Array(text.utf8)
        self.location = location
    }

    mutating func parse() throws(FerryError) -> UpdateExpression {
        try advance()
        if token == .end { throw error("expected an expression but found end of input") }
        let expression = try additive()
        guard token == .end else { throw error("expected an operator or end of input but found \(describe(token))") }
        return expression
    }

    // MARK: Grammar

    /// Enters one nesting level at the current token, or throws when that is one too many.
    private mutating func descend() throws(FerryError) {
        guard depth.enter() else { throw error(SyntaxLimits.tooDeep("expression", "parentheses, unary minus, function calls and chained operators")) }
    }

    private mutating func additive() throws(FerryError) -> UpdateExpression {
        var lhs = try multiplicative()
        var chained = 0
        defer { depth.leave(chained) }
        while case .symbol(let c) = token, c == "+" || c == "-" {
            try descend()
            chained += 1
            let mark = self.mark(tokenStart)
            try advance()
            let rhs = try multiplicative()
            lhs = .binary(c == "+" ? .add : .subtract, lhs, rhs, mark)
        }
        return lhs
    }

    private mutating func multiplicative() throws(FerryError) -> UpdateExpression {
        var lhs = try unary()
        var chained = 0
        defer { depth.leave(chained) }
        while case .symbol(let c) = token, c == "*" || c == "/" {
            try descend()
            chained += 1
            let mark = self.mark(tokenStart)
            try advance()
            let rhs = try unary()
            lhs = .binary(c == "*" ? .multiply : .divide, lhs, rhs, mark)
        }
        return lhs
    }

    private mutating func unary() throws(FerryError) -> UpdateExpression {
        if token == .symbol("-") {
            try descend()
            defer { depth.leave() }
            let mark = self.mark(tokenStart)
            try advance()
            let operand = try unary()
            // Fold negative number literals so that `-5` is a literal.
            switch operand {
            case .literal(.integer(let value), _) where value != Int64.min: return .literal(.integer(-value), mark)
            case .literal(.decimal(let text), _): return .literal(.decimal(DecimalText.canonical("-" + text) ?? text), mark)
            default: return .negate(operand, mark)
            }
        }
        return try primary()
    }

    private mutating func primary() throws(FerryError) -> UpdateExpression {
        let mark = self.mark(tokenStart)
        switch token {
        case .integer(let value):
            try advance()
            return .literal(.integer(value), mark)
        case .number(let text):
            try advance()
            return .literal(.decimal(text), mark)
        case .string(let text):
            try advance()
            return .literal(.string(text), mark)
        case .symbol("("):
            try descend()
            defer { depth.leave() }
            let open = tokenStart
            try advance()
            let inner = try additive()
            guard token == .symbol(")") else {
                throw error("expected ')' to close '(' at column \(column(open)) but found \(describe(token))")
            }
            try advance()
            return inner
        case .identifier(let name):
            try advance()
            switch name.lowercased() {
            case "nil", "null": if token != .symbol("(") { return .literal(.null, mark) }
            case "true", "yes": if token != .symbol("(") { return .literal(.bool(true), mark) }
            case "false", "no": if token != .symbol("(") { return .literal(.bool(false), mark) }
            default: break
            }
            guard token == .symbol("(") else { return .attribute(name, mark) }
            guard let function = UpdateFunction(rawValue: name.lowercased()) else {
                let names = UpdateFunction.allCases.map(\.rawValue)
                throw FerryError(
                    .invalidExpression,
                    "unknown function '\(name)' (one of \(names.joined(separator: ", ")))\(Suggestions.didYouMean(name, in: names))",
                    at: mark.location)
            }
            try descend()
            defer { depth.leave() }
            try advance()
            var arguments: [UpdateExpression] = []
            if token != .symbol(")") {
                arguments.append(try additive())
                while token == .symbol(",") {
                    guard arguments.count < SyntaxLimits.maximumArguments else {
                        throw error(SyntaxLimits.tooManyArguments(function.rawValue))
                    }
                    try advance()
                    arguments.append(try additive())
                }
            }
            guard token == .symbol(")") else {
                throw error("expected ',' or ')' in the arguments of \(function.rawValue)() but found \(describe(token))")
            }
            try advance()
            let expected: ClosedRange<Int>
            switch function {
            case .lowercase, .uppercase, .trim: expected = 1...1
            case .coalesce: expected = 2...Int.max
            case .now: expected = 0...0
            }
            guard expected.contains(arguments.count) else {
                let wanted = expected.upperBound == Int.max ? "at least \(expected.lowerBound) arguments" : "\(expected.lowerBound) argument\(expected.lowerBound == 1 ? "" : "s")"
                throw FerryError(.invalidExpression, "\(function.rawValue)() takes \(wanted), not \(arguments.count)", at: mark.location)
            }
            return .call(function, arguments, mark)
        case .end:
            throw error("expected a value but found end of input")
        default:
            throw error("expected a value but found \(describe(token))")
        }
    }

    // MARK: Lexing

    private mutating func advance() throws(FerryError) {
        while position < bytes.count, bytes[position] == 32 || bytes[position] == 9 || bytes[position] == 10 || bytes[position] == 13 {
            position += 1
        }
        tokenStart = position
        guard position < bytes.count else {
            token = .end
            return
        }
        tokenCount += 1
        guard tokenCount <= SyntaxLimits.maximumTokens else { throw error(SyntaxLimits.tooLong("expression")) }
        let byte = bytes[position]
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."):
            var end = position
            while end < bytes.count, Self.isNumberByte(bytes[end]) || ((bytes[end] == UInt8(ascii: "+") || bytes[end] == UInt8(ascii: "-")) && (bytes[end - 1] | 0x20) == UInt8(ascii: "e")) {
                end += 1
            }
            let text = String(decoding: bytes[position..<end], as: UTF8.self)
            position = end
            if let value = Int64(text) {
                token = .integer(value)
            } else if let canonical = DecimalText.canonical(text) {
                token = .number(canonical)
            } else {
                throw FerryError(.invalidExpression, "'\(text)' is not a number", at: mark(tokenStart).location)
            }
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            token = .string(try string(quote: byte))
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"):
            var end = position
            while end < bytes.count, Self.isIdentifierByte(bytes[end]) { end += 1 }
            token = .identifier(String(decoding: bytes[position..<end], as: UTF8.self))
            position = end
        case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "*"), UInt8(ascii: "/"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: ","):
            token = .symbol(Character(Unicode.Scalar(byte)))
            position += 1
        default:
            let scalar = String(decoding: bytes[position...].prefix(4), as: UTF8.self).first.map(String.init) ?? "?"
            throw FerryError(.invalidExpression, "unexpected character '\(scalar)'", at: mark(tokenStart).location)
        }
    }

    private mutating func string(quote: UInt8) throws(FerryError) -> String {
        let start = position
        position += 1
        var out: [UInt8] = []
        while position < bytes.count {
            let byte = bytes[position]
            if byte == quote {
                position += 1
                return String(decoding: out, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\"), position + 1 < bytes.count {
                let next = bytes[position + 1]
                switch next {
                case UInt8(ascii: "n"): out.append(10)
                case UInt8(ascii: "t"): out.append(9)
                case UInt8(ascii: "r"): out.append(13)
                case UInt8(ascii: "0"): out.append(0)
                default: out.append(next)
                }
                position += 2
                continue
            }
            out.append(byte)
            position += 1
        }
        throw FerryError(.invalidExpression, "unterminated string starting at column \(column(start))", at: mark(start).location)
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: ".") || byte | 0x20 == UInt8(ascii: "e")
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
    }

    // MARK: Locations

    private func column(_ offset: Int) -> Int { (location?.column ?? 1) + offset }

    private func mark(_ offset: Int) -> SourceMark {
        guard var location else { return SourceMark(InputLocation(file: "expression", line: 1, column: offset + 1)) }
        location.column += offset
        return SourceMark(location)
    }

    private func error(_ message: String) -> FerryError {
        FerryError(.invalidExpression, message, at: mark(tokenStart).location)
    }

    private func describe(_ token: Token) -> String {
        switch token {
        case .identifier(let name): return "'\(name)'"
        case .integer(let value): return "'\(value)'"
        case .number(let text): return "'\(text)'"
        case .string(let text): return "\"\(text)\""
        case .symbol(let c): return "'\(c)'"
        case .end: return "end of input"
        }
    }
}
