/// The SQL form of an expression that SQLite computes exactly as ferry would.
indirect enum SQLTemplate: Sendable {
    case slot(Int)
    case literal(Value)
    /// `a || b || …` (nil when any operand is nil, as `+` on strings).
    case concatenate([SQLTemplate])
    case coalesce([SQLTemplate])
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
    /// Only key paths, string and integer literals, `nil`, `+` on strings, `concat` of non-optional
    /// strings and `coalesce` of one kind qualify. `lowercase`, `uppercase`, `trim`, `substring`
    /// and `replace` do not: SQLite's versions are ASCII-only or count code points rather than
    /// characters. Call it on the result of ``fitted(to:)`` so that the destination type is known.
    ///
    /// ```swift
    /// let sql = bound.sql { slot in "s.\"\(bound.keyPaths[slot].attribute.name)\"" }
    /// // sql?.text == #"s."first" || ? || s."last""#, sql?.arguments == [.string(" ")]
    /// ```
    ///
    /// - Parameter column: the SQL of the column holding key path number `slot` in the `SELECT`
    ///   (already quoted, with its table alias).
    public func sql(column: (Int) -> String) -> ExpressionSQL? {
        guard let sqlTemplate else { return nil }
        var arguments: [Value] = []
        guard let text = render(sqlTemplate, column: column, arguments: &arguments) else { return nil }
        return ExpressionSQL(text: text, arguments: arguments)
    }

    private func render(_ template: SQLTemplate, column: (Int) -> String, arguments: inout [Value]) -> String? {
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
                guard let text = render(part, column: column, arguments: &arguments) else { return nil }
                rendered.append(text)
            }
            if case .coalesce = template { return "COALESCE(" + rendered.joined(separator: ", ") + ")" }
            return "(" + rendered.joined(separator: " || ") + ")"
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
