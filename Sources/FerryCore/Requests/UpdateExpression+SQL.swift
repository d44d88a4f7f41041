import Foundation

/// An ``UpdateExpression`` compiled to SQLite for one attribute: the value text over
/// `"Entity" AS t0` and its bound arguments.
struct CompiledUpdateValue {
    var sql: String
    var arguments: [DatabaseValue]
}

/// The static type of an update expression.
enum UpdateValueType: String {
    case integer, double, decimal, string, bool, date, uuid, uri, json, binary
    /// `nil`: fits every type.
    case null

    init(_ type: AttributeType) {
        switch type {
        case .int16, .int32, .int64: self = .integer
        case .double, .float: self = .double
        case .decimal: self = .decimal
        case .string: self = .string
        case .bool: self = .bool
        case .date: self = .date
        case .uuid: self = .uuid
        case .uri: self = .uri
        case .json: self = .json
        case .binary: self = .binary
        }
    }

    var isNumeric: Bool { self == .integer || self == .double || self == .decimal }

    /// `integer < decimal < double`: the type two numbers combine into.
    static func widest(_ a: UpdateValueType, _ b: UpdateValueType) -> UpdateValueType {
        if a == .null { return b }
        if b == .null { return a }
        if a == .double || b == .double { return .double }
        if a == .decimal || b == .decimal { return .decimal }
        return .integer
    }
}

/// Type-checks update expressions against an entity and compiles them to SQL.
struct UpdateExpressionCompiler {
    let entity: EntityDescription
    let layout: any StoreLayout
    let alias: String
    /// The value of `now()`: one instant for the whole request.
    let now: Int64
    var arguments: [DatabaseValue] = []

    init(entity: EntityDescription, layout: any StoreLayout, alias: String = "t0", now: Int64) {
        self.entity = entity
        self.layout = layout
        self.alias = alias
        self.now = now
    }

    /// Compiles `expression` as the new value of `attribute`, converted to its storage.
    mutating func compile(_ expression: UpdateExpression, for attribute: AttributeDescription) throws(FerryError) -> CompiledUpdateValue {
        arguments = []
        let target = UpdateValueType(attribute.type)
        let (sql, type) = try value(expression, expecting: attribute.type)
        let converted: String
        switch (type, target) {
        case (let a, let b) where a == b: converted = sql
        case (.null, _): converted = sql
        case (.integer, .double), (.decimal, .double): converted = "CAST(\(sql) AS REAL)"
        case (.integer, .decimal): converted = "CAST(\(sql) AS TEXT)"
        default:
            throw FerryError(
                .invalidExpression,
                "'\(entity.name).\(attribute.name)' is \(attribute.type.rawValue) but the expression is \(type.rawValue)"
                    + (type == .double && target == .decimal ? " (it would round through a double; use decimal literals and attributes)" : ""),
                at: expression.startMark.location)
        }
        return CompiledUpdateValue(sql: converted, arguments: arguments)
    }

    private mutating func bind(_ value: DatabaseValue) -> String {
        arguments.append(value)
        return "?"
    }

    /// SQL text and static type of an expression. `expecting` is the attribute type a string
    /// literal in this position is read as (`"2024-01-01"` for a date).
    private mutating func value(_ expression: UpdateExpression, expecting: AttributeType?) throws(FerryError) -> (String, UpdateValueType) {
        switch expression {
        case .literal(let value, let mark):
            return try literal(value, expecting: expecting, mark: mark)
        case .attribute(let name, let mark):
            guard let attribute = entity.attribute(named: name) else {
                if entity.relationship(named: name) != nil {
                    throw FerryError(.invalidExpression, "'\(name)' is a relationship of \(entity.name); update expressions read attributes only", at: mark.location)
                }
                throw FerryError(
                    .invalidExpression,
                    "\(entity.name) has no attribute '\(name)'\(Suggestions.didYouMean(name, in: entity.attributes.map(\.name)))",
                    at: mark.location)
            }
            return ("\(alias).\(layout.quotedColumn(forAttribute: attribute.name, in: entity))", UpdateValueType(attribute.type))
        case .negate(let operand, let mark):
            let (sql, type) = try value(operand, expecting: nil)
            switch type {
            case .integer, .double, .null: return ("(- \(sql))", type)
            case .decimal: return ("ferry_decimal_op('-', '0', \(sql))", .decimal)
            default: throw FerryError(.invalidExpression, "cannot negate a \(type.rawValue) value", at: mark.location)
            }
        case .binary(let op, let lhs, let rhs, let mark):
            let (left, leftType) = try value(lhs, expecting: nil)
            let (right, rightType) = try value(rhs, expecting: nil)
            if op == .add, leftType == .string || rightType == .string {
                guard leftType != .binary, rightType != .binary else {
                    throw FerryError(.invalidExpression, "cannot concatenate binary data with '+'", at: mark.location)
                }
                return ("(\(left) || \(right))", .string)
            }
            guard leftType.isNumeric || leftType == .null, rightType.isNumeric || rightType == .null else {
                throw FerryError(
                    .invalidExpression,
                    "cannot apply '\(op.rawValue)' to \(leftType.rawValue) and \(rightType.rawValue)"
                        + (op == .add ? " ('+' adds numbers or concatenates strings)" : ""),
                    at: mark.location)
            }
            let type = UpdateValueType.widest(leftType, rightType)
            switch type {
            case .double: return ("(CAST(\(left) AS REAL) \(op.rawValue) CAST(\(right) AS REAL))", .double)
            case .decimal: return ("ferry_decimal_op('\(op.rawValue)', \(left), \(right))", .decimal)
            default: return ("(\(left) \(op.rawValue) \(right))", type)
            }
        case .call(let function, let operands, let mark):
            switch function {
            case .now:
                return (bind(.text(DateCoding.format(now))), .date)
            case .lowercase, .uppercase, .trim:
                let (sql, type) = try value(operands[0], expecting: .string)
                guard type == .string || type == .null else {
                    throw FerryError(.invalidExpression, "\(function.rawValue)() takes a string, not \(type.rawValue)", at: operands[0].mark.location)
                }
                let name = function == .lowercase ? "ferry_lowercase" : function == .uppercase ? "ferry_uppercase" : "ferry_trim"
                return ("\(name)(\(sql))", .string)
            case .coalesce:
                var parts: [(String, UpdateValueType)] = []
                var type = UpdateValueType.null
                for operand in operands {
                    let part = try value(operand, expecting: expecting)
                    if part.1 != .null {
                        if type == .null || type == part.1 {
                            type = part.1
                        } else if type.isNumeric, part.1.isNumeric {
                            type = .widest(type, part.1)
                        } else {
                            throw FerryError(
                                .invalidExpression, "coalesce() mixes \(type.rawValue) and \(part.1.rawValue)", at: operand.mark.location)
                        }
                    }
                    parts.append(part)
                }
                let converted = parts.map { sql, partType -> String in
                    guard partType != type, partType != .null else { return sql }
                    return type == .double ? "CAST(\(sql) AS REAL)" : "CAST(\(sql) AS TEXT)"
                }
                _ = mark
                return ("COALESCE(\(converted.joined(separator: ", ")))", type)
            }
        }
    }

    private mutating func literal(_ value: Value, expecting: AttributeType?, mark: SourceMark) throws(FerryError) -> (String, UpdateValueType) {
        switch value {
        case .null: return ("NULL", .null)
        case .integer(let v): return (bind(.integer(v)), .integer)
        case .decimal(let text):
            if expecting == .double || expecting == .float { return (bind(.real(Double(text) ?? 0)), .double) }
            return (bind(.text(text)), .decimal)
        case .bool(let v): return (bind(.integer(v ? 1 : 0)), .bool)
        case .string(let text):
            guard let expecting, expecting != .string else { return (bind(.text(text)), .string) }
            switch Coercion.coerce(text, to: expecting) {
            case .success(let coerced): return (bind(layout.valueCoding.encode(coerced)), UpdateValueType(expecting))
            case .failure: return (bind(.text(text)), .string)
            }
        default:
            return (bind(layout.valueCoding.encode(value)), .string)
        }
    }
}

/// SQL functions update expressions call, registered on every store connection: Unicode-correct
/// case mapping and trimming (SQLite's `lower()`, `upper()` and `trim()` only know ASCII and
/// spaces) and exact decimal arithmetic on decimal text.
package enum UpdateFunctions {
    /// Registers every function on a connection.
    package static func register(on connection: Connection) throws {
        try connection.registerFunction("ferry_lowercase", argumentCount: 1) { arguments in
            guard case .text(let text) = arguments[0] else { return arguments[0] }
            return .text(text.lowercased())
        }
        try connection.registerFunction("ferry_uppercase", argumentCount: 1) { arguments in
            guard case .text(let text) = arguments[0] else { return arguments[0] }
            return .text(text.uppercased())
        }
        try connection.registerFunction("ferry_trim", argumentCount: 1) { arguments in
            guard case .text(let text) = arguments[0] else { return arguments[0] }
            return .text(text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        try connection.registerFunction("ferry_length", argumentCount: 1) { arguments in
            switch arguments[0] {
            case .text(let text): return .integer(Int64(text.count))  // characters, as the expression function counts
            case .blob(let bytes): return .integer(Int64(bytes.count))
            case .integer, .real: return .integer(Int64(arguments[0].description.count))
            case .null: return .null
            }
        }
        try connection.registerFunction("ferry_decimal_op", argumentCount: 3) { arguments in
            guard let op = arguments[0].text, let a = decimal(arguments[1]), let b = decimal(arguments[2]) else { return .null }
            return decimalOperation(op, a, b)
        }
    }

    /// `a op b` on exact decimals (Foundation's `Decimal`, 38 significant digits), as canonical
    /// decimal text; NULL when a side is NULL or the result is not a number (division by zero).
    static func decimalOperation(_ op: String, _ a: Decimal, _ b: Decimal) -> DatabaseValue {
        var result: Decimal
        switch op {
        case "+": result = a + b
        case "-": result = a - b
        case "*": result = a * b
        case "/":
            guard !b.isZero else { return .null }
            result = a / b
        default: return .null
        }
        guard !result.isNaN else { return .null }
        var rounded = Decimal()
        NSDecimalRound(&rounded, &result, 30, .plain)
        let text = "\(rounded)"
        return .text(DecimalText.canonical(text) ?? text)
    }

    static func decimal(_ value: DatabaseValue) -> Decimal? {
        switch value {
        case .integer(let v): return Decimal(v)
        case .real(let v): return v.isFinite ? Decimal(string: DecimalText.canonical(String(v)) ?? String(v)) : nil
        case .text(let text): return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        case .null, .blob: return nil
        }
    }
}
