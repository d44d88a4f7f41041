extension Predicate {
    /// Parses a predicate in `NSPredicate` format syntax.
    ///
    /// ```swift
    /// let p = try Predicate(format: "ANY items.sku BEGINSWITH[c] %@ AND total > %d", arguments: ["ab", 100])
    /// ```
    ///
    /// - Parameters:
    ///   - format: the format string; `%@` (and `%d`, `%f`, …) take values, `%K` takes key paths.
    ///   - arguments: the placeholder arguments, in order; every one must be used.
    ///   - location: where the format string's first character is (a job file position, or
    ///     `--where`); errors point at the offending token's line and column from there.
    /// - Throws: `FerryError` with code `.invalidPredicate`, located at the offending token.
    public init(format: String, arguments: [PredicateArgument] = [], location: InputLocation? = nil) throws(FerryError)
    {
        var parser = try PredicateParser(PredicateSource(format, base: location), arguments: arguments)
        self = try parser.parse()
    }
}

/// A recursive-descent parser for the predicate format syntax, with NSPredicate's precedence:
/// `NOT` binds tighter than `AND`, which binds tighter than `OR`.
struct PredicateParser {
    let source: PredicateSource
    let tokens: [PredicateToken]
    let arguments: [PredicateArgument]
    var index = 0
    var argumentIndex = 0
    var depth = NestingDepth()
    var comparisons = 0

    init(_ source: PredicateSource, arguments: [PredicateArgument]) throws(FerryError) {
        var lexer = PredicateLexer(source)
        self.tokens = try lexer.tokenize()
        self.source = source
        self.arguments = arguments
    }

    // MARK: - Token helpers

    private var current: PredicateToken { tokens[index] }
    private var previous: PredicateToken? { index > 0 ? tokens[index - 1] : nil }

    private mutating func advance() -> PredicateToken {
        let token = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    private func isKeyword(_ words: String...) -> Bool {
        if case .keyword(let word) = current.kind { return words.contains(word) }
        return false
    }

    private func isSymbol(_ symbols: String...) -> Bool {
        if case .symbol(let symbol) = current.kind { return symbols.contains(symbol) }
        return false
    }

    /// `expected X after 'previous' but found 'current'`.
    private func expected(_ what: String, after: String? = nil, showingPrevious: Bool = true) -> FerryError {
        let after = after ?? (showingPrevious ? previous.map { $0.text } : nil)
        var message = "expected \(what)"
        if let after { message += " after '\(after)'" }
        message += " but found \(current.described)"
        return source.error(message, at: current.offset)
    }

    private func sourceText(from start: Int) -> String {
        let end = previous.map { $0.offset + $0.text.utf8.count } ?? start
        let bytes = Array(source.text.utf8)
        guard start < end, end <= bytes.count else { return "" }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// Enters one nesting level at the current token, or throws when that is one too many.
    private mutating func descend(_ levels: Int = 1) throws(FerryError) {
        guard depth.enter(levels) else {
            throw source.error(
                SyntaxLimits.tooDeep("predicate", "parentheses, NOT, SUBQUERY, CAST and lists"), at: current.offset)
        }
    }

    // MARK: - Predicates

    mutating func parse() throws(FerryError) -> Predicate {
        if current.kind == .end { throw expected("a predicate") }
        let predicate = try parseOr()
        guard current.kind == .end else { throw expected("AND, OR or end of input", showingPrevious: false) }
        if argumentIndex < arguments.count {
            throw source.error(
                "too many arguments: \(arguments.count) given but the format uses \(argumentIndex)", at: 0)
        }
        return predicate
    }

    private mutating func parseOr() throws(FerryError) -> Predicate {
        var operands = [try parseAnd()]
        while isKeyword("OR") || isSymbol("||") {
            _ = advance()
            operands.append(try parseAnd())
        }
        return operands.count == 1 ? operands[0] : .or(operands)
    }

    private mutating func parseAnd() throws(FerryError) -> Predicate {
        var operands = [try parseNot()]
        while isKeyword("AND") || isSymbol("&&") {
            _ = advance()
            operands.append(try parseNot())
        }
        return operands.count == 1 ? operands[0] : .and(operands)
    }

    private mutating func parseNot() throws(FerryError) -> Predicate {
        if isKeyword("NOT") || isSymbol("!") {
            try descend()
            defer { depth.leave() }
            _ = advance()
            return .not(try parseNot())
        }
        return try parsePrimary()
    }

    /// Counts one more comparison at the current token, or throws when that is one too many.
    private mutating func countComparison() throws(FerryError) {
        comparisons += 1
        guard comparisons <= SyntaxLimits.maximumComparisons else {
            throw source.error(SyntaxLimits.tooManyComparisons, at: current.offset)
        }
    }

    private mutating func parsePrimary() throws(FerryError) -> Predicate {
        if isSymbol("(") {
            try descend()
            defer { depth.leave() }
            let open = advance()
            let inner = try parseOr()
            guard isSymbol(")") else {
                let column = source.location(at: open.offset).column
                throw expected("')' to close '(' at column \(column)", showingPrevious: false)
            }
            _ = advance()
            return inner
        }
        try countComparison()
        if isKeyword("TRUEPREDICATE") {
            _ = advance()
            return .constant(true)
        }
        if isKeyword("FALSEPREDICATE") {
            _ = advance()
            return .constant(false)
        }
        return try parseComparison()
    }

    private mutating func parseComparison() throws(FerryError) -> Predicate {
        var modifier = ComparisonModifier.direct
        if case .keyword(let word) = current.kind {
            switch word {
            case "ANY", "SOME": modifier = .any
            case "ALL": modifier = .all
            case "NONE": modifier = .none
            default: break
            }
            if modifier != .direct { _ = advance() }
        }
        let lhsStart = current.offset
        guard let lhs = try parseExpression() else { throw expected("a predicate") }
        let lhsText = sourceText(from: lhsStart)
        let operatorToken = current
        guard let op = parseOperator() else {
            throw expected("a comparison operator", after: lhsText)
        }
        var options: StringOptions = []
        if isSymbol("[") {
            _ = advance()
            guard case .identifier(let letters) = current.kind else {
                throw expected("comparison options such as c, d or cd", after: "[")
            }
            for letter in letters {
                switch letter {
                case "c", "C": options.insert(.caseInsensitive)
                case "d", "D": options.insert(.diacriticInsensitive)
                case "n", "N": options.formUnion([.caseInsensitive, .diacriticInsensitive])
                default:
                    throw source.error(
                        "unknown comparison option '\(letter)' in '[\(letters)]'; expected c, d or n",
                        at: current.offset)
                }
            }
            _ = advance()
            guard isSymbol("]") else { throw expected("']'") }
            _ = advance()
        }
        let operatorText = sourceText(from: operatorToken.offset)
        let rhsStart = current
        guard let rhs = try parseExpression() else { throw expected("a value", after: operatorText) }
        if op == .between {
            if case .list(let items, _) = rhs, items.count != 2 {
                throw source.error(
                    "BETWEEN needs a list of two values, like {1, 10}, but found \(items.count)", at: rhsStart.offset)
            }
            if case .constant = rhs {
                throw source.error("BETWEEN needs a list of two values, like {1, 10}", at: rhsStart.offset)
            }
        }
        return .comparison(
            Comparison(lhs, op, rhs, modifier: modifier, options: options, mark: source.mark(at: operatorToken.offset)))
    }

    private mutating func parseOperator() -> ComparisonOperator? {
        let op: ComparisonOperator?
        switch current.kind {
        case .symbol(let symbol):
            switch symbol {
            case "==", "=": op = .equal
            case "!=", "<>": op = .notEqual
            case "<": op = .less
            case "<=", "=<": op = .lessOrEqual
            case ">": op = .greater
            case ">=", "=>": op = .greaterOrEqual
            default: op = nil
            }
        case .keyword(let word):
            switch word {
            case "BETWEEN": op = .between
            case "IN": op = .in
            case "BEGINSWITH": op = .beginsWith
            case "ENDSWITH": op = .endsWith
            case "CONTAINS": op = .contains
            case "LIKE": op = .like
            case "MATCHES": op = .matches
            default: op = nil
            }
        default:
            op = nil
        }
        if op != nil { _ = advance() }
        return op
    }

    // MARK: - Expressions

    /// An expression, or nil when the current token cannot start one (nothing consumed).
    private mutating func parseExpression() throws(FerryError) -> PredicateExpression? {
        let token = current
        let mark = source.mark(at: token.offset)
        switch token.kind {
        case .string(let text):
            _ = advance()
            return .constant(.string(text), mark)
        case .integer(let value):
            _ = advance()
            return .constant(.integer(value), mark)
        case .double(let value):
            _ = advance()
            return .constant(.double(value), mark)
        case .symbol("-"):
            _ = advance()
            switch current.kind {
            case .integer(let value):
                _ = advance()
                return .constant(.integer(-value), mark)
            case .double(let value):
                _ = advance()
                return .constant(.double(-value), mark)
            default:
                throw expected("a number")
            }
        case .keyword("NIL"), .keyword("NULL"):
            _ = advance()
            return .constant(.null, mark)
        case .keyword("YES"), .keyword("TRUE"):
            _ = advance()
            return .constant(.bool(true), mark)
        case .keyword("NO"), .keyword("FALSE"):
            _ = advance()
            return .constant(.bool(false), mark)
        case .identifier(let name):
            _ = advance()
            return try parsePostfix(root: .object, components: [name], marks: [mark])
        case .variable(let name):
            _ = advance()
            return try parsePostfix(root: .variable(name), components: [], marks: [mark])
        case .placeholder(let spec):
            _ = advance()
            return try placeholder(spec, token: token)
        case .symbol("{"):
            try descend()
            defer { depth.leave() }
            _ = advance()
            var items: [PredicateExpression] = []
            if isSymbol("}") {
                _ = advance()
                return .list(items, mark)
            }
            while true {
                guard let item = try parseExpression() else { throw expected("a value") }
                items.append(item)
                if isSymbol(",") {
                    _ = advance()
                    continue
                }
                guard isSymbol("}") else { throw expected("',' or '}'") }
                _ = advance()
                return .list(items, mark)
            }
        case .keyword("SUBQUERY"):
            try descend(SyntaxLimits.subqueryWeight)
            defer { depth.leave(SyntaxLimits.subqueryWeight) }
            _ = advance()
            return try parseSubquery(mark: mark)
        case .keyword("CAST"):
            try descend()
            defer { depth.leave() }
            _ = advance()
            return try parseCast(mark: mark)
        default:
            return nil
        }
    }

    private mutating func placeholder(_ spec: String, token: PredicateToken) throws(FerryError) -> PredicateExpression {
        let mark = source.mark(at: token.offset)
        guard argumentIndex < arguments.count else {
            throw source.error(
                "missing argument for '\(token.text)': it is placeholder \(argumentIndex + 1) but \(arguments.count) \(arguments.count == 1 ? "argument was" : "arguments were") given",
                at: token.offset)
        }
        let argument = arguments[argumentIndex]
        argumentIndex += 1
        if spec == "K" {
            let path: String
            switch argument {
            case .keyPath(let text), .value(.string(let text)): path = text
            case .value(let value):
                throw source.error(
                    "'%K' needs a key path argument, but argument \(argumentIndex) is the value \(value)",
                    at: token.offset)
            case .list:
                throw source.error(
                    "'%K' needs a key path argument, but argument \(argumentIndex) is a list", at: token.offset)
            }
            let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !components.contains(where: \.isEmpty) else {
                throw source.error("'%K' argument \(argumentIndex) is not a key path: '\(path)'", at: token.offset)
            }
            return try parsePostfix(root: .object, components: components, marks: components.map { _ in mark })
        }
        switch argument {
        case .value(let value): return .constant(value, mark)
        case .list(let values): return .list(values.map { .constant($0, mark) }, mark)
        case .keyPath(let path):
            throw source.error(
                "'\(token.text)' needs a value, but argument \(argumentIndex) is the key path '\(path)'; use %K for key paths",
                at: token.offset)
        }
    }

    /// `.name`, `.@count`, `.@sum.name` after a key path, variable or subquery.
    private mutating func parsePostfix(
        root: PredicateKeyPath.Root, components: [String], marks: [SourceMark]
    ) throws(FerryError) -> PredicateExpression {
        var components = components
        var marks = marks
        while isSymbol(".") {
            _ = advance()
            let token = current
            switch token.kind {
            case .identifier(let name):
                _ = advance()
                components.append(name)
                marks.append(source.mark(at: token.offset))
            case .aggregate(let name):
                _ = advance()
                let base: PredicateExpression
                if components.isEmpty, case .variable(let variable) = root {
                    base = .variable(variable, marks.first ?? SourceMark())
                } else {
                    base = .keyPath(PredicateKeyPath(root: root, components, marks: marks))
                }
                return try parseAggregate(name, collection: base, mark: marks.first ?? source.mark(at: token.offset))
            default:
                throw expected("a key name")
            }
        }
        if components.isEmpty, case .variable(let variable) = root {
            return .variable(variable, marks.first ?? SourceMark())
        }
        return .keyPath(PredicateKeyPath(root: root, components, marks: marks))
    }

    private mutating func parseAggregate(
        _ name: String, collection: PredicateExpression, mark: SourceMark
    ) throws(FerryError) -> PredicateExpression {
        let function = AggregateFunction(rawValue: name) ?? .count
        var property: [String] = []
        while isSymbol(".") {
            _ = advance()
            guard case .identifier(let component) = current.kind else { throw expected("a key name") }
            _ = advance()
            property.append(component)
        }
        return .aggregate(function, collection: collection, property: property, mark)
    }

    private mutating func parseSubquery(mark: SourceMark) throws(FerryError) -> PredicateExpression {
        guard isSymbol("(") else { throw expected("'('") }
        _ = advance()
        guard let collection = try parseExpression() else { throw expected("a to-many key path") }
        guard isSymbol(",") else { throw expected("','") }
        _ = advance()
        guard case .variable(let variable) = current.kind else { throw expected("a variable such as $x") }
        _ = advance()
        guard isSymbol(",") else { throw expected("','") }
        _ = advance()
        if current.kind == .end { throw expected("a predicate") }
        let predicate = try parseOr()
        guard isSymbol(")") else { throw expected("')' to close SUBQUERY", showingPrevious: false) }
        _ = advance()
        let subquery = PredicateExpression.subquery(
            Subquery(collection: collection, variable: variable, predicate: predicate, mark: mark))
        if isSymbol(".") {
            _ = advance()
            guard case .aggregate(let name) = current.kind else {
                throw expected("a collection operator such as @count")
            }
            _ = advance()
            return try parseAggregate(name, collection: subquery, mark: mark)
        }
        return subquery
    }

    private mutating func parseCast(mark: SourceMark) throws(FerryError) -> PredicateExpression {
        guard isSymbol("(") else { throw expected("'('") }
        _ = advance()
        let valueToken = current
        guard let operand = try parseExpression() else { throw expected("a value") }
        guard case .constant(let value, _) = operand else {
            throw source.error("CAST needs a literal value, such as a string or a number", at: valueToken.offset)
        }
        guard isSymbol(",") else { throw expected("','") }
        _ = advance()
        let typeToken = current
        guard case .string(let typeName) = typeToken.kind else { throw expected("a type name such as \"NSDate\"") }
        _ = advance()
        guard isSymbol(")") else { throw expected("')' to close CAST", showingPrevious: false) }
        _ = advance()
        let result: Value
        switch (typeName, value) {
        case ("NSDate", .string(let text)):
            guard let instant = DateCoding.parseISO8601Instant(text) else {
                throw source.error("'\(text)' is not an ISO-8601 date", at: valueToken.offset)
            }
            result = .date(instant)
        case ("NSDate", .integer(let seconds)):
            let (shifted, overflow1) = seconds.addingReportingOverflow(Self.referenceDateOffset)
            let (millis, overflow2) = shifted.multipliedReportingOverflow(by: 1000)
            guard !overflow1, !overflow2 else {
                throw source.error("\(seconds) is out of range for a date", at: valueToken.offset)
            }
            result = .date(millis)
        case ("NSDate", .double(let seconds)):
            // Core Data's own form, kept exactly (a store's dates carry sub-millisecond digits).
            guard let instant = Timestamp(referenceSeconds: seconds) else {
                throw source.error("\(seconds) is out of range for a date", at: valueToken.offset)
            }
            result = .date(instant)
        case ("NSDate", .date):
            result = value
        case ("NSNumber", .string(let text)):
            if let integer = Int64(text) {
                result = .integer(integer)
            } else if let double = Double(text), double.isFinite {
                result = .double(double)
            } else {
                throw source.error("'\(text)' is not a number", at: valueToken.offset)
            }
        case ("NSNumber", .integer), ("NSNumber", .double):
            result = value
        case ("NSNumber", .bool(let flag)):
            result = .integer(flag ? 1 : 0)
        case ("NSString", .integer), ("NSString", .double), ("NSString", .string):
            result = .string(value.description)
        case ("NSDate", _), ("NSNumber", _), ("NSString", _):
            throw source.error("cannot CAST \(value.description) to \"\(typeName)\"", at: valueToken.offset)
        default:
            throw source.error(
                "CAST to \"\(typeName)\" is not supported; use \"NSDate\", \"NSNumber\" or \"NSString\"",
                at: typeToken.offset)
        }
        return .constant(result, mark)
    }

    /// Seconds from 1970-01-01 to Core Data's reference date 2001-01-01 (UTC).
    static let referenceDateOffset: Int64 = 978_307_200
}
