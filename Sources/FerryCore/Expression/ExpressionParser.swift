/// A parsed expression node, with the byte range it covers and the offset errors about it point at.
struct ExpressionNode: Sendable {
    indirect enum Kind: Sendable {
        case literal(Value)
        /// `$source.a.b`: the components and the offset of each.
        case sourcePath([String], offsets: [Int])
        /// `$name`.
        case parameter(String)
        /// `-x`.
        case negate(ExpressionNode)
        /// `not x`.
        case not(ExpressionNode)
        case binary(BinaryOperator, ExpressionNode, ExpressionNode)
        /// `if(c, a, b)` or `c ? a : b`.
        case conditional(ExpressionNode, ExpressionNode, ExpressionNode)
        case call(String, [ExpressionNode])
    }

    var kind: Kind
    /// The bytes of the source this node was parsed from.
    var range: Range<Int>
    /// Where errors about this node point: the operator of a binary node, a function's name, the node's start otherwise.
    var mark: Int
}

enum BinaryOperator: String, Sendable {
    case add = "+"
    case subtract = "-"
    case multiply = "*"
    case divide = "/"
    case remainder = "%"
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case and, or

    var isComparison: Bool {
        switch self {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual: return true
        default: return false
        }
    }
}

/// A recursive-descent parser. Precedence, loosest first: `? :`, `or`, `and`, `not`, comparisons
/// (non-associative), `+ -`, `* / %`, unary `-`.
struct ExpressionParser {
    let source: ExpressionSource
    let tokens: [ExpressionToken]
    /// True when a bare name that is not a call (`email`, `customer.name`) is a key path of the
    /// source object, as in batch updates' `set:` values; otherwise it is an error.
    let bareNamesAreAttributes: Bool
    var index = 0
    var depth = NestingDepth()

    init(_ source: ExpressionSource, bareNamesAreAttributes: Bool = false) throws(FerryError) {
        var lexer = ExpressionLexer(source)
        self.tokens = try lexer.tokenize()
        self.source = source
        self.bareNamesAreAttributes = bareNamesAreAttributes
    }

    private var current: ExpressionToken { tokens[index] }
    private var previous: ExpressionToken? { index > 0 ? tokens[index - 1] : nil }

    private mutating func advance() -> ExpressionToken {
        let token = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    private func isSymbol(_ symbols: String...) -> Bool {
        if case .symbol(let symbol) = current.kind { return symbols.contains(symbol) }
        return false
    }

    private func isWord(_ word: String) -> Bool {
        if case .identifier(let name) = current.kind { return name == word }
        return false
    }

    private func expected(_ what: String) -> FerryError {
        var message = "expected \(what)"
        if let previous { message += " after '\(previous.text)'" }
        message += " but found \(current.described)"
        return source.error(message, at: current.offset)
    }

    private var lastEnd: Int { previous?.end ?? 0 }

    /// Enters one nesting level at `offset`, or throws when that is one too many.
    private mutating func descend(at offset: Int) throws(FerryError) {
        guard depth.enter() else {
            throw source.error(
                SyntaxLimits.tooDeep("expression", "parentheses, not, ? :, function calls and chained operators"),
                at: offset)
        }
    }

    mutating func parse() throws(FerryError) -> ExpressionNode {
        if current.kind == .end {
            throw source.error("expected an expression but found end of input", at: current.offset)
        }
        let node = try parseConditional()
        guard current.kind == .end else {
            throw source.error(
                "expected an operator or end of input but found \(current.described)", at: current.offset)
        }
        return node
    }

    private mutating func parseConditional() throws(FerryError) -> ExpressionNode {
        let condition = try parseOr()
        guard isSymbol("?") else { return condition }
        try descend(at: current.offset)
        defer { depth.leave() }
        let question = advance()
        let whenTrue = try parseConditional()
        guard isSymbol(":") else {
            let column = source.location(at: question.offset).column
            throw expected("':' to match '?' at column \(column)")
        }
        _ = advance()
        let whenFalse = try parseConditional()
        return ExpressionNode(
            kind: .conditional(condition, whenTrue, whenFalse),
            range: condition.range.lowerBound..<whenFalse.range.upperBound,
            mark: question.offset)
    }

    private mutating func parseOr() throws(FerryError) -> ExpressionNode {
        var lhs = try parseAnd()
        var chained = 0
        defer { depth.leave(chained) }
        while isWord("or") {
            try descend(at: current.offset)
            chained += 1
            let op = advance()
            let rhs = try parseAnd()
            lhs = ExpressionNode(
                kind: .binary(.or, lhs, rhs), range: lhs.range.lowerBound..<rhs.range.upperBound, mark: op.offset)
        }
        return lhs
    }

    private mutating func parseAnd() throws(FerryError) -> ExpressionNode {
        var lhs = try parseNot()
        var chained = 0
        defer { depth.leave(chained) }
        while isWord("and") {
            try descend(at: current.offset)
            chained += 1
            let op = advance()
            let rhs = try parseNot()
            lhs = ExpressionNode(
                kind: .binary(.and, lhs, rhs), range: lhs.range.lowerBound..<rhs.range.upperBound, mark: op.offset)
        }
        return lhs
    }

    private mutating func parseNot() throws(FerryError) -> ExpressionNode {
        guard isWord("not") else { return try parseComparison() }
        try descend(at: current.offset)
        defer { depth.leave() }
        let op = advance()
        let operand = try parseNot()
        return ExpressionNode(kind: .not(operand), range: op.offset..<operand.range.upperBound, mark: op.offset)
    }

    private mutating func parseComparison() throws(FerryError) -> ExpressionNode {
        let lhs = try parseAdditive()
        guard case .symbol(let symbol) = current.kind, let op = BinaryOperator(rawValue: symbol), op.isComparison else {
            return lhs
        }
        try descend(at: current.offset)
        defer { depth.leave() }
        let token = advance()
        let rhs = try parseAdditive()
        if case .symbol(let next) = current.kind, let nextOp = BinaryOperator(rawValue: next), nextOp.isComparison {
            throw source.error(
                "comparisons cannot be chained; write 'a \(op.rawValue) b and b \(nextOp.rawValue) c'",
                at: current.offset)
        }
        return ExpressionNode(
            kind: .binary(op, lhs, rhs), range: lhs.range.lowerBound..<rhs.range.upperBound, mark: token.offset)
    }

    private mutating func parseAdditive() throws(FerryError) -> ExpressionNode {
        var lhs = try parseMultiplicative()
        var chained = 0
        defer { depth.leave(chained) }
        while isSymbol("+", "-") {
            try descend(at: current.offset)
            chained += 1
            let token = advance()
            let op: BinaryOperator = token.text == "+" ? .add : .subtract
            let rhs = try parseMultiplicative()
            lhs = ExpressionNode(
                kind: .binary(op, lhs, rhs), range: lhs.range.lowerBound..<rhs.range.upperBound, mark: token.offset)
        }
        return lhs
    }

    private mutating func parseMultiplicative() throws(FerryError) -> ExpressionNode {
        var lhs = try parseUnary()
        var chained = 0
        defer { depth.leave(chained) }
        while isSymbol("*", "/", "%") {
            try descend(at: current.offset)
            chained += 1
            let token = advance()
            let op: BinaryOperator = token.text == "*" ? .multiply : token.text == "/" ? .divide : .remainder
            let rhs = try parseUnary()
            lhs = ExpressionNode(
                kind: .binary(op, lhs, rhs), range: lhs.range.lowerBound..<rhs.range.upperBound, mark: token.offset)
        }
        return lhs
    }

    private mutating func parseUnary() throws(FerryError) -> ExpressionNode {
        guard isSymbol("-") else { return try parsePrimary() }
        try descend(at: current.offset)
        defer { depth.leave() }
        let token = advance()
        let operand = try parseUnary()
        let range = token.offset..<operand.range.upperBound
        // Fold `-5` and `-1.5` into literals so that Int64.min can be written.
        if case .literal(.integer(let value)) = operand.kind {
            if value == Int64.min {
                return ExpressionNode(kind: .literal(.decimal("9223372036854775808")), range: range, mark: token.offset)
            }
            return ExpressionNode(kind: .literal(.integer(-value)), range: range, mark: token.offset)
        }
        if case .literal(.decimal(let text)) = operand.kind {
            if text == "9223372036854775808" {
                return ExpressionNode(kind: .literal(.integer(Int64.min)), range: range, mark: token.offset)
            }
            return ExpressionNode(
                kind: .literal(.decimal(DecimalArithmetic.negate(text))), range: range, mark: token.offset)
        }
        return ExpressionNode(kind: .negate(operand), range: range, mark: token.offset)
    }

    /// `.name` components of a key path, each with its offset.
    private mutating func parsePathComponents(into components: inout [String], offsets: inout [Int]) throws(FerryError)
    {
        while isSymbol(".") {
            _ = advance()
            guard case .identifier(let component) = current.kind else { throw expected("an attribute name") }
            offsets.append(current.offset)
            components.append(component)
            _ = advance()
        }
    }

    private mutating func parsePrimary() throws(FerryError) -> ExpressionNode {
        let token = current
        switch token.kind {
        case .integer(let value):
            _ = advance()
            return ExpressionNode(kind: .literal(.integer(value)), range: token.offset..<token.end, mark: token.offset)
        case .decimal(let text):
            _ = advance()
            return ExpressionNode(kind: .literal(.decimal(text)), range: token.offset..<token.end, mark: token.offset)
        case .string(let text):
            _ = advance()
            return ExpressionNode(kind: .literal(.string(text)), range: token.offset..<token.end, mark: token.offset)
        case .variable(let name):
            _ = advance()
            guard name == "source" else {
                if isSymbol("."), tokens[index + 1].kind != .end {
                    throw source.error(
                        "parameter '$\(name)' has no properties; only $source has key paths", at: current.offset)
                }
                return ExpressionNode(kind: .parameter(name), range: token.offset..<token.end, mark: token.offset)
            }
            var components: [String] = []
            var offsets: [Int] = []
            try parsePathComponents(into: &components, offsets: &offsets)
            guard !components.isEmpty else {
                throw source.error(
                    "expected '.' and an attribute name after '$source', as in $source.name", at: current.offset)
            }
            return ExpressionNode(
                kind: .sourcePath(components, offsets: offsets), range: token.offset..<lastEnd, mark: token.offset)
        case .identifier(let name):
            _ = advance()
            switch name {
            case "true", "false":
                return ExpressionNode(
                    kind: .literal(.bool(name == "true")), range: token.offset..<token.end, mark: token.offset)
            case "nil":
                return ExpressionNode(kind: .literal(.null), range: token.offset..<token.end, mark: token.offset)
            case "and", "or", "not":
                throw source.error("expected a value before '\(name)'", at: token.offset)
            default:
                break
            }
            if bareNamesAreAttributes, !isSymbol("(") {
                var components = [name]
                var offsets = [token.offset]
                try parsePathComponents(into: &components, offsets: &offsets)
                return ExpressionNode(
                    kind: .sourcePath(components, offsets: offsets), range: token.offset..<lastEnd, mark: token.offset)
            }
            guard isSymbol("(") else {
                throw source.error(
                    "unknown name '\(name)'; source attributes are written $source.\(name), parameters $\(name), and functions are called as \(name)(…)",
                    at: token.offset)
            }
            try descend(at: token.offset)
            defer { depth.leave() }
            let open = advance()
            var arguments: [ExpressionNode] = []
            if !isSymbol(")") {
                while true {
                    guard arguments.count < SyntaxLimits.maximumArguments else {
                        throw source.error(SyntaxLimits.tooManyArguments(name), at: current.offset)
                    }
                    arguments.append(try parseConditional())
                    if isSymbol(",") {
                        _ = advance()
                        continue
                    }
                    guard isSymbol(")") else {
                        let column = source.location(at: open.offset).column
                        throw expected("',' or ')' to close '\(name)(' at column \(column)")
                    }
                    break
                }
            }
            _ = advance()
            let range = token.offset..<lastEnd
            if name == "if" {
                guard arguments.count == 3 else {
                    throw source.error(
                        "if(condition, then, else) takes 3 arguments but was given \(arguments.count)", at: token.offset
                    )
                }
                return ExpressionNode(
                    kind: .conditional(arguments[0], arguments[1], arguments[2]), range: range, mark: token.offset)
            }
            return ExpressionNode(kind: .call(name, arguments), range: range, mark: token.offset)
        case .symbol("("):
            try descend(at: token.offset)
            defer { depth.leave() }
            let open = advance()
            let inner = try parseConditional()
            guard isSymbol(")") else {
                let column = source.location(at: open.offset).column
                throw expected("')' to close '(' at column \(column)")
            }
            _ = advance()
            return ExpressionNode(kind: inner.kind, range: open.offset..<lastEnd, mark: inner.mark)
        default:
            throw expected("a value")
        }
    }
}
