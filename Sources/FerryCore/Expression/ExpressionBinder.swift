import Foundation

/// A compiled node: its static type, its program, its value when known at bind time, and its
/// SQL form when it has an exact one.
struct CompiledExpression {
    var type: ExpressionType
    var run: ExpressionProgram
    var constant: Value?
    var sql: SQLTemplate?

    static func constant(_ value: Value) -> CompiledExpression {
        CompiledExpression(
            type: ExpressionBinder.type(of: value), run: { _ throws(FerryError) in value }, constant: value,
            sql: SQLTemplate.literal(value))
    }
}

/// Where a node is, to build runtime errors that name the sub-expression and the source object.
struct ExpressionSite: Sendable {
    let source: ExpressionSource
    let range: Range<Int>
    let mark: Int

    init(_ source: ExpressionSource, _ node: ExpressionNode) {
        self.source = source
        self.range = node.range
        self.mark = node.mark
    }

    /// `cannot evaluate int($source.code) for Customer 42: 'abc' is not an integer`.
    func fail(_ reason: String, _ context: any ExpressionContext) -> FerryError {
        var message = "cannot evaluate \(source.slice(range))"
        if let object = context.objectDescription { message += " for \(object)" }
        return FerryError(.validation, message + ": " + reason, at: source.location(at: mark))
    }
}

/// Type-checks parsed expressions against a source entity and compiles them into closures.
struct ExpressionBinder {
    let source: ExpressionSource
    let entity: EntityDescription?
    let model: ObjectModel
    let parameters: [String: Value]
    let now: Int64
    /// Key paths in slot order.
    private(set) var keyPaths: [ExpressionKeyPath] = []

    init(
        source: ExpressionSource, entity: EntityDescription?, model: ObjectModel, parameters: [String: Value],
        now: Int64
    ) {
        self.source = source
        self.entity = entity
        self.model = model
        self.parameters = parameters
        self.now = now
    }

    func error(_ message: String, at offset: Int) -> FerryError { source.error(message, at: offset) }

    static func type(of value: Value) -> ExpressionType {
        switch value {
        case .null: return ExpressionType(.null)
        case .integer: return ExpressionType(.integer)
        case .double: return ExpressionType(.double)
        case .decimal: return ExpressionType(.decimal)
        case .string: return ExpressionType(.string)
        case .bool: return ExpressionType(.bool)
        case .date: return ExpressionType(.date)
        case .binary: return ExpressionType(.binary)
        case .uuid: return ExpressionType(.uuid)
        case .uri: return ExpressionType(.uri)
        case .json: return ExpressionType(.json)
        }
    }

    /// `$source.age (integer)` / `the string "x"` for messages.
    func describe(_ node: ExpressionNode, _ compiled: CompiledExpression) -> String {
        "\(source.slice(node.range)) (\(compiled.type.kind.rawValue))"
    }

    // MARK: - Nodes

    mutating func compile(_ node: ExpressionNode) throws(FerryError) -> CompiledExpression {
        let compiled = try compileNode(node)
        // Fold pure sub-expressions whose operands are all known at bind time.
        guard compiled.constant == nil, isFoldable(node) else { return compiled }
        do {
            let value = try compiled.run(ConstantContext())
            // A nil result keeps the type nil: it is statically known to be nil.
            return CompiledExpression.constant(value)
        } catch {
            throw FerryError(.invalidExpression, error.message, at: error.location)
        }
    }

    /// True when the node reads no key path and calls nothing random.
    private func isFoldable(_ node: ExpressionNode) -> Bool {
        switch node.kind {
        case .literal, .parameter: return true
        case .sourcePath: return false
        case .negate(let x), .not(let x): return isFoldable(x)
        case .binary(_, let a, let b): return isFoldable(a) && isFoldable(b)
        case .conditional(let a, let b, let c): return isFoldable(a) && isFoldable(b) && isFoldable(c)
        case .call(let name, let arguments):
            return name != "uuid" || !arguments.isEmpty ? arguments.allSatisfy(isFoldable) : false
        }
    }

    private mutating func compileNode(_ node: ExpressionNode) throws(FerryError) -> CompiledExpression {
        switch node.kind {
        case .literal(let value):
            return .constant(value)
        case .parameter(let name):
            guard let value = parameters[name] else {
                let names = parameters.keys.sorted()
                var message = "unknown parameter '$\(name)'"
                if let match = Suggestions.closest(to: name, in: names + ["source"]) {
                    message += "; did you mean '$\(match)'?"
                } else if names.isEmpty {
                    message += "; the job defines no parameters"
                }
                throw error(message, at: node.mark)
            }
            return .constant(value)
        case .sourcePath(let components, let offsets):
            return try compileKeyPath(components, offsets: offsets, node: node)
        case .negate(let operand):
            return try compileNegate(try compile(operand), operand, node)
        case .not(let operand):
            let compiled = try compile(operand)
            try requireCondition(compiled, operand, "not")
            let run = compiled.run
            return CompiledExpression(
                type: ExpressionType(.bool),
                run: { c throws(FerryError) in
                    .bool(!ExpressionRuntime.truth(try run(c)))
                }, sql: compiled.sql.flatMap { $0.isCondition ? .not($0) : nil })
        case .binary(let op, let lhs, let rhs):
            return try compileBinary(op, lhs, rhs, node)
        case .conditional(let condition, let whenTrue, let whenFalse):
            let test = try compile(condition)
            try requireCondition(test, condition, "the condition")
            let a = try compile(whenTrue)
            let b = try compile(whenFalse)
            let type = try unify(
                [a, b], [whenTrue, whenFalse], what: "the branches of the conditional", at: node.mark)
            let testRun = test.run
            let aRun = try convert(a, to: type, node: whenTrue)
            let bRun = try convert(b, to: type, node: whenFalse)
            // SQL when no branch needs widening and the condition is 1 or 0.
            var sql: SQLTemplate? = nil
            if let testSQL = test.sql, testSQL.isCondition, let aSQL = a.sql, let bSQL = b.sql,
                [a, b].allSatisfy({ $0.type.kind == type.kind || $0.type.kind == .null })
            {
                sql = .conditional(testSQL, aSQL, bSQL)
            }
            return CompiledExpression(
                type: type,
                run: { c throws(FerryError) in
                    ExpressionRuntime.truth(try testRun(c)) ? try aRun(c) : try bRun(c)
                }, sql: sql)
        case .call(let name, let arguments):
            return try compileCall(name, arguments, node)
        }
    }

    // MARK: - Key paths

    private mutating func compileKeyPath(
        _ components: [String], offsets: [Int], node: ExpressionNode
    ) throws(FerryError) -> CompiledExpression {
        guard var current = entity else {
            throw error("this mapping has no source entity, so '$source' cannot be used", at: node.mark)
        }
        var optional = false
        for (index, name) in components.enumerated() {
            let offset = offsets[index]
            let isLast = index == components.count - 1
            if let attribute = current.attribute(named: name) {
                guard isLast else {
                    throw error(
                        "'\(name)' of \(current.name) is an attribute, not a relationship, so '\(components[index + 1])' cannot follow it",
                        at: offsets[index + 1])
                }
                optional = optional || attribute.isOptional
                let path = ExpressionKeyPath(
                    components: components, attribute: attribute, entity: current.name, isOptional: optional)
                let slot: Int
                if let existing = keyPaths.firstIndex(where: { $0.components == components }) {
                    slot = existing
                } else {
                    slot = keyPaths.count
                    keyPaths.append(path)
                }
                return CompiledExpression(
                    type: ExpressionType(attributeType: attribute.type, optional: optional),
                    run: { c throws(FerryError) in c.value(atSlot: slot) }, sql: .slot(slot))
            }
            if let relationship = current.relationship(named: name) {
                guard !relationship.isToMany else {
                    throw error(
                        "'\(name)' of \(current.name) is a to-many relationship; value expressions can only follow to-one relationships",
                        at: offset)
                }
                guard !isLast else {
                    throw error(
                        "'\(name)' of \(current.name) is a relationship; name one of its attributes, as in $source.\((components + ["…"]).joined(separator: "."))",
                        at: offset)
                }
                guard let destination = model.entity(named: relationship.destination) else {
                    throw error(
                        "relationship '\(name)' of \(current.name) leads to \(relationship.destination), which the model lacks",
                        at: offset)
                }
                optional = optional || relationship.isOptional
                current = destination
                continue
            }
            let candidates = isLast ? current.propertyNames : current.relationships.map(\.name)
            throw error(
                "\(current.name) has no \(isLast ? "attribute" : "relationship") '\(name)'"
                    + Suggestions.didYouMean(name, in: candidates), at: offset)
        }
        throw error("expected an attribute name after '$source'", at: node.mark)
    }

    // MARK: - Types

    private func requireCondition(
        _ compiled: CompiledExpression, _ node: ExpressionNode, _ what: String
    ) throws(FerryError) {
        guard compiled.type.kind == .bool || compiled.type.kind == .null else {
            throw error(
                "\(what) must be a bool, but \(describe(node, compiled)) is not; compare it, as in x == 0",
                at: node.mark)
        }
    }

    /// The common type of several values (branches, coalesce and min/max arguments): equal kinds,
    /// or numbers widened integer → decimal → double; nil joins anything.
    func unify(
        _ items: [CompiledExpression], _ nodes: [ExpressionNode], what: String, at offset: Int
    ) throws(FerryError) -> ExpressionType {
        var kind: ExpressionType.Kind = .null
        var optional = false
        for (item, node) in zip(items, nodes) {
            optional = optional || item.type.isOptional
            let other = item.type.kind
            if other == .null || other == kind { continue }
            if kind == .null {
                kind = other
                continue
            }
            let numbers: [ExpressionType.Kind] = [.integer, .decimal, .double]
            if let a = numbers.firstIndex(of: kind), let b = numbers.firstIndex(of: other) {
                kind = numbers[max(a, b)]
                continue
            }
            throw error("\(what) have different types: \(kind.rawValue) and \(describe(node, item))", at: offset)
        }
        return ExpressionType(kind, optional: optional)
    }

    /// A program giving `compiled`'s value widened to `type` (only number widening is needed).
    func convert(
        _ compiled: CompiledExpression, to type: ExpressionType, node: ExpressionNode
    ) throws(FerryError) -> ExpressionProgram {
        let run = compiled.run
        guard compiled.type.kind != type.kind, compiled.type.kind != .null else { return run }
        let site = ExpressionSite(source, node)
        switch type.kind {
        case .decimal:
            return { c throws(FerryError) in
                let value = try run(c)
                if value.isNull { return .null }
                guard let text = ExpressionRuntime.decimalText(value) else {
                    throw site.fail("\(value.typeName) is not a number", c)
                }
                return .decimal(text)
            }
        case .double:
            return { c throws(FerryError) in
                let value = try run(c)
                if value.isNull { return .null }
                guard let number = ExpressionRuntime.doubleValue(value) else {
                    throw site.fail("\(value.typeName) is not a number", c)
                }
                return .double(number)
            }
        default:
            return run
        }
    }

    // MARK: - Operators

    private func compileNegate(
        _ operand: CompiledExpression, _ node: ExpressionNode, _ parent: ExpressionNode
    ) throws(FerryError) -> CompiledExpression {
        let run = operand.run
        let site = ExpressionSite(source, parent)
        switch operand.type.kind {
        case .integer:
            return CompiledExpression(
                type: operand.type,
                run: { c throws(FerryError) in
                    switch try run(c) {
                    case .integer(let v):
                        guard v != Int64.min else { throw site.fail("integer overflow", c) }
                        return .integer(-v)
                    case let other: return try ExpressionRuntime.nullOrFail(other, "an integer", site, c)
                    }
                })
        case .decimal:
            return CompiledExpression(
                type: operand.type,
                run: { c throws(FerryError) in
                    switch try run(c) {
                    case .decimal(let v): return .decimal(DecimalArithmetic.negate(v))
                    case let other: return try ExpressionRuntime.nullOrFail(other, "a decimal", site, c)
                    }
                })
        case .double:
            return CompiledExpression(
                type: operand.type,
                run: { c throws(FerryError) in
                    switch try run(c) {
                    case .double(let v): return .double(-v)
                    case let other: return try ExpressionRuntime.nullOrFail(other, "a double", site, c)
                    }
                })
        case .null:
            return operand
        default:
            throw error("'-' needs a number, but \(describe(node, operand)) is not one", at: parent.mark)
        }
    }

    private mutating func compileBinary(
        _ op: BinaryOperator, _ lhsNode: ExpressionNode, _ rhsNode: ExpressionNode, _ node: ExpressionNode
    ) throws(FerryError) -> CompiledExpression {
        let lhs = try compile(lhsNode)
        let rhs = try compile(rhsNode)
        let site = ExpressionSite(source, node)
        let l = lhs.run
        let r = rhs.run
        switch op {
        case .and, .or:
            try requireCondition(lhs, lhsNode, "'\(op.rawValue)'")
            try requireCondition(rhs, rhsNode, "'\(op.rawValue)'")
            var sql: SQLTemplate? = nil
            if let a = lhs.sql, let b = rhs.sql, a.isCondition, b.isCondition { sql = .logical(op, a, b) }
            if op == .and {
                return CompiledExpression(
                    type: ExpressionType(.bool),
                    run: { c throws(FerryError) in
                        guard ExpressionRuntime.truth(try l(c)) else { return .bool(false) }
                        return .bool(ExpressionRuntime.truth(try r(c)))
                    }, sql: sql)
            }
            return CompiledExpression(
                type: ExpressionType(.bool),
                run: { c throws(FerryError) in
                    if ExpressionRuntime.truth(try l(c)) { return .bool(true) }
                    return .bool(ExpressionRuntime.truth(try r(c)))
                }, sql: sql)
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            return try compileComparison(op, lhs, rhs, lhsNode, rhsNode, node)
        case .add where lhs.type.kind == .string || rhs.type.kind == .string:
            for (side, sideNode) in [(lhs, lhsNode), (rhs, rhsNode)]
            where side.type.kind != .string && side.type.kind != .null {
                throw error(
                    "'+' joins strings, but \(describe(sideNode, side)) is not a string; convert it with string(…) or use concat(…)",
                    at: node.mark)
            }
            let sql: SQLTemplate? = lhs.sql.flatMap { a in rhs.sql.map { b in .concatenate([a, b]) } }
            return CompiledExpression(
                type: ExpressionType(.string, optional: lhs.type.isOptional || rhs.type.isOptional),
                run: { c throws(FerryError) in
                    let a = try l(c)
                    let b = try r(c)
                    if case .string(let x) = a, case .string(let y) = b { return .string(x + y) }
                    if a.isNull || b.isNull { return .null }
                    throw site.fail("'+' needs two strings but found \(a.typeName) and \(b.typeName)", c)
                }, sql: sql)
        default:
            return try compileArithmetic(op, lhs, rhs, lhsNode, rhsNode, node)
        }
    }

    private func compileArithmetic(
        _ op: BinaryOperator, _ lhs: CompiledExpression, _ rhs: CompiledExpression,
        _ lhsNode: ExpressionNode, _ rhsNode: ExpressionNode, _ node: ExpressionNode
    ) throws(FerryError) -> CompiledExpression {
        for (side, sideNode) in [(lhs, lhsNode), (rhs, rhsNode)] where !side.type.isNumber && side.type.kind != .null {
            throw error(
                "'\(op.rawValue)' needs numbers, but \(describe(sideNode, side)) is not a number", at: node.mark)
        }
        let type = try unify([lhs, rhs], [lhsNode, rhsNode], what: "the operands of '\(op.rawValue)'", at: node.mark)
        let optional = lhs.type.isOptional || rhs.type.isOptional
        let site = ExpressionSite(source, node)
        let l = lhs.run
        let r = rhs.run
        switch type.kind {
        case .null:
            return CompiledExpression(type: ExpressionType(.null), run: { _ throws(FerryError) in .null })
        case .integer:
            return CompiledExpression(
                type: ExpressionType(.integer, optional: optional),
                run: { c throws(FerryError) in
                    let a = try l(c)
                    let b = try r(c)
                    guard case .integer(let x) = a, case .integer(let y) = b else {
                        if a.isNull || b.isNull { return .null }
                        throw site.fail("'\(op.rawValue)' needs numbers but found \(a.typeName) and \(b.typeName)", c)
                    }
                    let result: (Int64, Bool)
                    switch op {
                    case .add: result = x.addingReportingOverflow(y)
                    case .subtract: result = x.subtractingReportingOverflow(y)
                    case .multiply: result = x.multipliedReportingOverflow(by: y)
                    case .divide:
                        guard y != 0 else { throw site.fail("division by zero", c) }
                        result = x.dividedReportingOverflow(by: y)
                    default:
                        guard y != 0 else { throw site.fail("division by zero", c) }
                        result = x.remainderReportingOverflow(dividingBy: y)
                    }
                    guard !result.1 else { throw site.fail("integer overflow", c) }
                    return .integer(result.0)
                })
        case .decimal:
            return CompiledExpression(
                type: ExpressionType(.decimal, optional: optional),
                run: { c throws(FerryError) in
                    let a = try l(c)
                    let b = try r(c)
                    if a.isNull || b.isNull { return .null }
                    guard let x = ExpressionRuntime.decimalText(a), let y = ExpressionRuntime.decimalText(b) else {
                        throw site.fail("'\(op.rawValue)' needs numbers but found \(a.typeName) and \(b.typeName)", c)
                    }
                    switch op {
                    case .add: return .decimal(DecimalArithmetic.add(x, y))
                    case .subtract: return .decimal(DecimalArithmetic.subtract(x, y))
                    case .multiply: return .decimal(DecimalArithmetic.multiply(x, y))
                    case .divide:
                        guard let q = DecimalArithmetic.divide(x, y) else { throw site.fail("division by zero", c) }
                        return .decimal(q)
                    default:
                        guard let q = DecimalArithmetic.remainder(x, y) else { throw site.fail("division by zero", c) }
                        return .decimal(q)
                    }
                })
        default:
            return CompiledExpression(
                type: ExpressionType(.double, optional: optional),
                run: { c throws(FerryError) in
                    let a = try l(c)
                    let b = try r(c)
                    if a.isNull || b.isNull { return .null }
                    guard let x = ExpressionRuntime.doubleValue(a), let y = ExpressionRuntime.doubleValue(b) else {
                        throw site.fail("'\(op.rawValue)' needs numbers but found \(a.typeName) and \(b.typeName)", c)
                    }
                    let result: Double
                    switch op {
                    case .add: result = x + y
                    case .subtract: result = x - y
                    case .multiply: result = x * y
                    case .divide:
                        guard y != 0 else { throw site.fail("division by zero", c) }
                        result = x / y
                    default:
                        guard y != 0 else { throw site.fail("division by zero", c) }
                        result = x.truncatingRemainder(dividingBy: y)
                    }
                    guard result.isFinite else { throw site.fail("the result is not a finite number", c) }
                    return .double(result)
                })
        }
    }

    /// Which values can be compared with each other.
    private enum ComparisonClass: String { case number, text, bool, date, binary, null }

    private static func comparisonClass(_ kind: ExpressionType.Kind) -> ComparisonClass {
        switch kind {
        case .integer, .decimal, .double: return .number
        case .string, .uri, .uuid, .json: return .text
        case .bool: return .bool
        case .date: return .date
        case .binary: return .binary
        case .null: return .null
        }
    }

    private func compileComparison(
        _ op: BinaryOperator, _ lhs: CompiledExpression, _ rhs: CompiledExpression,
        _ lhsNode: ExpressionNode, _ rhsNode: ExpressionNode, _ node: ExpressionNode
    ) throws(FerryError) -> CompiledExpression {
        let a = Self.comparisonClass(lhs.type.kind)
        let b = Self.comparisonClass(rhs.type.kind)
        let ordering = op != .equal && op != .notEqual
        if a != b, a != .null, b != .null {
            throw error("cannot compare \(describe(lhsNode, lhs)) with \(describe(rhsNode, rhs))", at: node.mark)
        }
        if ordering {
            for (cls, side, sideNode) in [(a, lhs, lhsNode), (b, rhs, rhsNode)]
            where cls == .null || cls == .bool || cls == .binary {
                throw error("'\(op.rawValue)' cannot order \(describe(sideNode, side)); use == or !=", at: node.mark)
            }
        }
        let l = lhs.run
        let r = rhs.run
        let site = ExpressionSite(source, node)
        // SQL for integers (and nil): SQLite orders them exactly as ferry does.
        var sql: SQLTemplate? = nil
        let integerOrNil: Set<ExpressionType.Kind> = [.integer, .null]
        if integerOrNil.contains(lhs.type.kind), integerOrNil.contains(rhs.type.kind), let x = lhs.sql, let y = rhs.sql
        {
            sql = .comparison(op, x, y)
        }
        return CompiledExpression(
            type: ExpressionType(.bool),
            run: { c throws(FerryError) in
                let x = try l(c)
                let y = try r(c)
                if x.isNull || y.isNull {
                    switch op {
                    case .equal: return .bool(x.isNull && y.isNull)
                    case .notEqual: return .bool(x.isNull != y.isNull)
                    default: return .bool(false)
                    }
                }
                guard let order = ExpressionRuntime.compare(x, y) else {
                    throw site.fail("cannot compare \(x.typeName) with \(y.typeName)", c)
                }
                switch op {
                case .equal: return .bool(order == 0)
                case .notEqual: return .bool(order != 0)
                case .less: return .bool(order < 0)
                case .lessOrEqual: return .bool(order <= 0)
                case .greater: return .bool(order > 0)
                default: return .bool(order >= 0)
                }
            }, sql: sql)
    }
}

/// The context used to fold constant sub-expressions at bind time: it has no key paths.
struct ConstantContext: ExpressionContext {
    func value(atSlot slot: Int) -> Value { .null }
}
