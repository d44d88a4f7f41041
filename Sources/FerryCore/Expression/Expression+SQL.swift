/// The SQL form of an expression that SQLite computes exactly as ferry would.
indirect enum SQLTemplate: Sendable {
    case slot(Int)
    case literal(Value)
    /// `a || b || …` (nil when any operand is nil, as `+` on strings).
    case concatenate([SQLTemplate])
    case coalesce([SQLTemplate])
    /// A call of one of ferry's SQL functions: the Swift code the evaluator runs (SQLite only).
    case function(ExpressionSQLFunctions.Name, [SQLTemplate])
    /// Integers (or nil) compared as ferry compares them: 1 or 0, never NULL (SQLite only).
    case comparison(BinaryOperator, SQLTemplate, SQLTemplate)
    /// `and` / `or` of conditions, 1 or 0 (SQLite only).
    case logical(BinaryOperator, SQLTemplate, SQLTemplate)
    /// `not` of a condition, 1 or 0 (SQLite only).
    case not(SQLTemplate)
    /// `condition ? a : b`: a condition (1 or 0), two values of the result's kind (SQLite only).
    case conditional(SQLTemplate, SQLTemplate, SQLTemplate)

    /// True for the forms that give 1 or 0, never NULL (what `CASE WHEN`, `AND`, `OR` and `NOT`
    /// need to agree with ferry's two-valued conditions).
    var isCondition: Bool {
        switch self {
        case .comparison, .logical, .not: return true
        default: return false
        }
    }
}

/// SQL text with `?` placeholders and the values to bind to them, in order.
public struct ExpressionSQL: Sendable, Hashable {
    /// The SQL text, with `?` placeholders.
    public var text: String
    /// The values to bind to the placeholders, in order.
    public var arguments: [Value]

    /// SQL `text` with its `arguments`.
    public init(text: String, arguments: [Value]) {
        self.text = text
        self.arguments = arguments
    }
}

extension BoundExpression {
    /// The expression compiled to a SQLite expression over the source row, so that the engine can
    /// run `INSERT INTO … SELECT …` instead of evaluating per row; nil when SQLite would not give
    /// exactly the same values.
    ///
    /// Key paths, string and integer literals, `nil`, `+` on strings, `concat` of non-optional
    /// strings and `coalesce` of one kind qualify; so do `lowercase`, `uppercase`, `trim` and
    /// `split(text, "literal", index)` of strings, which become calls of ferry's own SQL functions
    /// (the Swift code evaluation runs: SQLite's `lower()`, `upper()` and `trim()` are ASCII-only),
    /// comparisons of integers, `and`, `or`, `not`, and conditionals (`if(c, a, b)`, `c ? a : b`)
    /// whose branches have the result's kind. The SQL runs on connections ferry opened (they have
    /// those functions). `substring`, `replace`, arithmetic and conversions do not qualify. Call it
    /// on the result of ``fitted(to:)`` so that the destination type is known.
    ///
    /// ```swift
    /// let sql = bound.sql { slot in "s.\"\(bound.keyPaths[slot].attribute.name)\"" }
    /// // sql?.text == #"s."first" || ? || s."last""#, sql?.arguments == [.string(" ")]
    /// ```
    ///
    /// - Parameter column: the SQL of the column holding key path number `slot` in the `SELECT`
    ///   (already quoted, with its table alias).
    public func sql(column: (Int) -> String) -> ExpressionSQL? {
        sql(column: column, dialect: SQLiteDialect())
    }

    /// The expression compiled to SQL of `dialect`: where the connection runs ferry's own SQL
    /// functions (``SQLDialect/runsFerryFunctions``, SQLite), also text functions (as calls of
    /// `ExpressionSQLFunctions`, registered on every connection ferry opens), integer
    /// comparisons, `and`, `or`, `not` and conditionals; elsewhere (PostgreSQL) only what
    /// ``sql(column:)`` documents for key paths, literals, `+` on strings, `concat` and `coalesce`.
    package func sql(column: (Int) -> String, dialect: any SQLDialect) -> ExpressionSQL? {
        guard let sqlTemplate else { return nil }
        var arguments: [Value] = []
        guard
            let text = render(
                sqlTemplate, column: column, ferryFunctions: dialect.runsFerryFunctions, arguments: &arguments)
        else { return nil }
        return ExpressionSQL(text: text, arguments: arguments)
    }

    private func render(
        _ template: SQLTemplate, column: (Int) -> String, ferryFunctions: Bool, arguments: inout [Value]
    ) -> String? {
        func render(_ part: SQLTemplate) -> String? {
            self.render(part, column: column, ferryFunctions: ferryFunctions, arguments: &arguments)
        }
        switch template {
        case .slot(let slot):
            guard slot < keyPaths.count, keyPaths[slot].components.count == 1 else { return nil }
            return column(slot)
        case .literal(let value):
            switch value {
            case .null: return "NULL"
            case .string, .integer:
                arguments.append(value)
                return "?"
            default: return nil
            }
        case .concatenate(let parts), .coalesce(let parts):
            var rendered: [String] = []
            for part in parts {
                guard let text = render(part) else { return nil }
                rendered.append(text)
            }
            if case .coalesce = template { return "COALESCE(" + rendered.joined(separator: ", ") + ")" }
            return "(" + rendered.joined(separator: " || ") + ")"
        case .function(let name, let parts):
            guard ferryFunctions else { return nil }
            var rendered: [String] = []
            for part in parts {
                guard let text = render(part) else { return nil }
                rendered.append(text)
            }
            return "\(name.rawValue)(" + rendered.joined(separator: ", ") + ")"
        case .comparison(let op, let lhs, let rhs):
            guard ferryFunctions, let a = render(lhs), let b = render(rhs) else { return nil }
            switch op {
            // ferry: nil equals only nil, which is SQL's IS.
            case .equal: return "(\(a) IS \(b))"
            case .notEqual: return "(\(a) IS NOT \(b))"
            // ferry: ordering with nil is false.
            case .less, .lessOrEqual, .greater, .greaterOrEqual: return "COALESCE(\(a) \(op.rawValue) \(b), 0)"
            default: return nil
            }
        case .logical(let op, let lhs, let rhs):
            guard ferryFunctions, lhs.isCondition, rhs.isCondition, op == .and || op == .or,
                let a = render(lhs), let b = render(rhs)
            else { return nil }
            return "(\(a) \(op == .and ? "AND" : "OR") \(b))"
        case .not(let operand):
            guard ferryFunctions, operand.isCondition, let a = render(operand) else { return nil }
            return "(NOT \(a))"
        case .conditional(let condition, let whenTrue, let whenFalse):
            guard ferryFunctions, condition.isCondition, let test = render(condition), let a = render(whenTrue),
                let b = render(whenFalse)
            else { return nil }
            return "(CASE WHEN \(test) THEN \(a) ELSE \(b) END)"
        }
    }
}

/// Checks an expression's result against a destination attribute and converts its values.
enum ExpressionFitting {
    /// True when SQLite storing the raw result in a column of `type` gives what ``fit(_:to:)`` gives.
    static func sqlFits(_ result: ExpressionType, _ type: AttributeType) -> Bool {
        switch (result.kind, type) {
        case (.string, .string), (.integer, .int64), (.decimal, .decimal), (.double, .double), (.bool, .bool),
            (.date, .date), (.uuid, .uuid), (.uri, .uri), (.json, .json), (.binary, .binary), (.null, _):
            return true
        default:
            return false
        }
    }

    /// The conversion function that makes a value of `type`, for hints.
    static func converter(for type: AttributeType) -> String? {
        switch type {
        case .int16, .int32, .int64: return "int"
        case .decimal: return "decimal"
        case .double, .float: return "double"
        case .string: return "string"
        case .bool: return "bool"
        case .date: return "date"
        case .uuid: return "uuid"
        case .binary, .uri, .json: return nil
        }
    }

    static func fit(
        _ bound: BoundExpression, to attribute: AttributeDescription
    ) throws(FerryError) -> ExpressionProgram {
        let result = bound.resultType
        let type = attribute.type
        let location = bound.source.base
        let run = bound.program
        if result.kind == .null {
            guard attribute.isOptional else {
                throw FerryError(
                    .invalidExpression,
                    "'\(bound.text)' is always nil, but attribute '\(attribute.name)' is not optional",
                    at: location)
            }
            return run
        }
        let accepted: Bool
        switch (result.kind, type) {
        case (.integer, .int16), (.integer, .int32), (.integer, .int64), (.integer, .decimal), (.integer, .double),
            (.integer, .float), (.decimal, .decimal), (.double, .double), (.double, .float), (.string, .string),
            (.string, .uri), (.string, .json), (.bool, .bool), (.date, .date), (.uuid, .uuid), (.uuid, .string),
            (.uri, .uri), (.uri, .string), (.json, .json), (.json, .string), (.binary, .binary):
            accepted = true
        default:
            accepted = false
        }
        guard accepted else {
            var message =
                "'\(bound.text)' is \(result.kind.rawValue), but attribute '\(attribute.name)' is \(type.rawValue)"
            if let function = converter(for: type) { message += "; convert it with \(function)(…)" }
            throw FerryError(.invalidExpression, message, at: location)
        }
        if sqlFits(result, type) { return run }
        let site = ExpressionSite(
            bound.source, ExpressionNode(kind: .literal(.null), range: 0..<bound.text.utf8.count, mark: 0))
        let name = attribute.name
        return { c throws(FerryError) in
            let value = try run(c)
            if value.isNull { return value }
            switch Coercion.convert(value, to: type) {
            case .success(let converted): return converted
            case .failure(let failure): throw site.fail("\(failure.reason) (attribute '\(name)')", c)
            }
        }
    }
}
