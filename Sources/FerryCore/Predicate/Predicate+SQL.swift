/// A predicate compiled to SQLite: a boolean expression over `"Entity" AS alias`.
///
/// Relationships are compiled to correlated subqueries, never joins, so the expression fits
/// `SELECT … FROM "Order" AS t0 WHERE …` as well as `UPDATE "Order" AS t0 SET … WHERE …` and
/// `DELETE FROM "Order" AS t0 WHERE …`: to-one key paths read through scalar subqueries,
/// to-many key paths through `EXISTS` and aggregate subqueries.
package struct PredicateSQL: Sendable, Hashable {
    /// The boolean expression, with `?` for every literal.
    package var sql: String
    /// The values for the `?` parameters, in order.
    package var arguments: [DatabaseValue]
    /// The table and alias the expression is written against: `"Order" AS t0`.
    package var from: String
    /// Joins the caller must add: always empty, since relationships compile to subqueries.
    package var joins: [String] { [] }

    package init(sql: String, arguments: [DatabaseValue], from: String) {
        self.sql = sql
        self.arguments = arguments
        self.from = from
    }
}

extension Predicate {
    /// Binds the predicate to `entity` (see ``bound(to:model:)``) and compiles it to SQL for a
    /// store in ferry's layout (``FerryLayout``).
    ///
    /// ```swift
    /// let compiled = try predicate.sql(for: order, model: model)
    /// let rows = try connection.rows("SELECT t0.ferry_pk FROM \(compiled.from) WHERE \(compiled.sql)", compiled.arguments)
    /// ```
    ///
    /// The SQL calls the functions of ``PredicateFunctions``; register them on the connection.
    /// Results equal those of ``evaluate(on:)`` on the same rows: `nil` never equals a value,
    /// `nil == nil` holds, and `NOT` of a comparison with `nil` is true, as in memory.
    package func sql(
        for entity: EntityDescription, model: ObjectModel, alias: String = "t0"
    ) throws(FerryError) -> PredicateSQL {
        try sql(for: entity, model: model, layout: FerryLayout(), alias: alias)
    }

    /// The predicate compiled for a store in `layout` (its tables, columns and value forms).
    package func sql(
        for entity: EntityDescription, model: ObjectModel, layout: any StoreLayout, alias: String = "t0"
    ) throws(FerryError) -> PredicateSQL {
        let bound = try bound(to: entity, model: model)
        var compiler = PredicateSQLCompiler(binder: PredicateBinder(model: model), layout: layout)
        let scope = SQLScope(entity: entity, alias: alias)
        let text = try compiler.predicate(bound, scope: scope, negated: false)
        return layout.selection(of: entity, alias: alias, where: text, arguments: compiler.arguments)
    }
}

/// The entity and alias a predicate (or a SUBQUERY's inner predicate) is written against.
struct SQLScope {
    var entity: EntityDescription
    var alias: String
    var variables: [String: (entity: EntityDescription, alias: String)] = [:]

    var binderScope: PredicateScope {
        PredicateScope(entity: entity, variables: variables.mapValues(\.entity))
    }
}

struct PredicateSQLCompiler {
    let binder: PredicateBinder
    let layout: any StoreLayout
    var arguments: [DatabaseValue] = []
    private var aliasCount = 0
    /// The key column, quoted.
    private let key: String
    /// The SQL of the store's engine: what differs between engines is the dialect's to write.
    let dialect: any SQLDialect

    init(binder: PredicateBinder, layout: any StoreLayout) {
        self.binder = binder
        self.layout = layout
        self.key = layout.dialect.quote(layout.keyColumn)
        self.dialect = layout.dialect
    }

    private func quote(_ identifier: String) -> String { layout.dialect.quote(identifier) }

    /// The quoted column of `attribute` of `entity` on `alias`, or the key column without one.
    private func column(_ attribute: AttributeDescription?, of entity: EntityDescription, on alias: String) -> String {
        "\(alias)." + (attribute.map { layout.quotedColumn(forAttribute: $0.name, in: entity) } ?? key)
    }

    private var model: ObjectModel { binder.model }

    private mutating func newAlias(_ prefix: String = "t") -> String {
        aliasCount += 1
        return "\(prefix)\(aliasCount)"
    }

    mutating func bind(_ value: DatabaseValue) -> String {
        arguments.append(value)
        return "?"
    }

    // MARK: - Predicates (in negation normal form)

    mutating func predicate(_ predicate: Predicate, scope: SQLScope, negated: Bool) throws(FerryError) -> String {
        switch predicate {
        case .constant(let flag):
            return dialect.booleanConstant(flag != negated)
        case .and(let operands), .or(let operands):
            let isAnd = predicate.isConjunction(negated: negated)
            if operands.isEmpty { return dialect.booleanConstant(isAnd) }
            var parts: [String] = []
            for operand in operands { parts.append(try self.predicate(operand, scope: scope, negated: negated)) }
            return parts.count == 1 ? parts[0] : "(" + parts.joined(separator: isAnd ? " AND " : " OR ") + ")"
        case .not(let operand):
            return try self.predicate(operand, scope: scope, negated: !negated)
        case .comparison(let comparison):
            return try self.comparison(comparison, scope: scope, negated: negated)
        }
    }

    /// `P` when positive; when negated, `NOT P` for never-NULL tests, or `(P) IS NOT 1` so that a
    /// comparison with NULL counts as false before negation, as in memory.
    private func negate(_ sql: String, negated: Bool, nullable: Bool) -> String {
        guard negated else { return sql }
        return nullable ? dialect.isNotTrue(sql) : "NOT \(sql)"
    }

    // MARK: - Comparisons

    private mutating func comparison(
        _ comparison: Comparison, scope: SQLScope, negated: Bool
    ) throws(FerryError) -> String {
        let lhsKind = try binder.kind(of: comparison.lhs, scope: scope.binderScope)
        let rhsKind = try binder.kind(of: comparison.rhs, scope: scope.binderScope)
        let isText = Self.isText(lhsKind) || Self.isText(rhsKind)
        let options = isText ? comparison.options : []
        if dialect.predicatePushdown == .superset {
            try requirePushable(comparison, lhsKind: lhsKind, rhsKind: rhsKind, options: options)
        }

        guard lhsKind.isMany else {
            let lhs = try operand(comparison.lhs, kind: lhsKind, scope: scope, options: options)
            let (sql, nullable) = try test(
                lhs, comparison, lhsKind: lhsKind, rhsKind: rhsKind, scope: scope, options: options)
            return negate(sql, negated: negated, nullable: nullable)
        }
        // A to-many key path: EXISTS over its elements.
        guard case .keyPath(let path) = comparison.lhs else {
            throw FerryError(.internal, "to-many operand is not a key path", at: comparison.mark.location)
        }
        let resolved = try binder.resolve(path, scope: scope.binderScope)
        let source = try chain(resolved, from: alias(of: resolved, scope: scope))
        var element = column(resolved.attribute, of: resolved.endEntity, on: source.last)
        if resolved.attribute?.type == .decimal { element = dialect.float64(element) }
        if !options.isEmpty { element = "ferry_fold(\(element), \(options.rawValue))" }
        let (test, nullable) = try test(
            element, comparison, lhsKind: lhsKind, rhsKind: rhsKind, scope: scope, options: options)
        let exists: String
        switch comparison.modifier {
        case .direct, .any, .none:
            exists = "EXISTS (SELECT 1 \(source.from) WHERE \(source.condition) AND \(test))"
        case .all:
            exists =
                "NOT EXISTS (SELECT 1 \(source.from) WHERE \(source.condition) AND \(negate(test, negated: true, nullable: nullable)))"
        }
        let isNone = comparison.modifier == .none
        return isNone != negated ? "NOT \(exists)" : exists
    }

    /// True for a date operand: compared in the instants' order (``ValueCoding/orderedDate(_:)``).
    private static func isDate(_ kind: BoundKind) -> Bool {
        switch kind {
        case .typed(let type, _, _): return type == .date
        case .literal(.date): return true
        default: return false
        }
    }

    private static func isText(_ kind: BoundKind) -> Bool {
        switch kind {
        case .typed(let type, _, _): return [.string, .uuid, .uri, .json].contains(type)
        case .literal(let value): return PredicateSemantics.text(value) != nil
        case .list(let values): return values.contains { PredicateSemantics.text($0) != nil }
        case .object: return false
        }
    }

    /// The SQL test of `lhs` against the comparison's right side, and whether it can be NULL.
    private mutating func test(
        _ lhs: String, _ comparison: Comparison, lhsKind: BoundKind, rhsKind: BoundKind, scope: SQLScope,
        options: StringOptions
    ) throws(FerryError) -> (String, Bool) {
        let falseSQL = dialect.booleanConstant(false)
        // Text compared by order: byte-wise, as SQLite does, on the side that is a text column.
        let orderedLHS = Self.isTextColumn(lhsKind) ? dialect.byteOrdered(lhs) : lhs
        let rhsIsNull: Bool = { if case .literal(.null) = rhsKind { return true } else { return false } }()
        let rhsIsLiteral: Bool = { if case .literal = rhsKind { return true } else { return false } }()
        switch comparison.op {
        case .in:
            guard case .list(let values) = rhsKind else { return (falseSQL, false) }
            let present = values.filter { !$0.isNull }
            var parts: [String] = []
            if !present.isEmpty {
                let items = present.map { bind(storage($0, options: options)) }
                parts.append("\(lhs) IN (\(items.joined(separator: ", ")))")
            }
            if present.count < values.count { parts.append("\(lhs) IS NULL") }
            if parts.isEmpty { return (falseSQL, false) }
            return parts.count == 1
                ? (parts[0], !parts[0].hasSuffix("IS NULL")) : ("(" + parts.joined(separator: " OR ") + ")", true)
        case .between:
            guard case .list(let values) = rhsKind, values.count == 2 else { return (falseSQL, false) }
            let low = bind(storage(values[0], options: options))
            let high = bind(storage(values[1], options: options))
            guard Self.isDate(lhsKind) else { return ("\(orderedLHS) BETWEEN \(low) AND \(high)", true) }
            let coding = layout.valueCoding
            return (
                "\(coding.orderedDate(lhs)) BETWEEN \(coding.orderedDate(low)) AND \(coding.orderedDate(high))", true
            )
        case .beginsWith, .endsWith, .contains, .like, .matches:
            if !dialect.runsFerryFunctions {
                return try postgresStringTest(lhs, comparison, rhsKind: rhsKind, scope: scope)
            }
            if let native = nativeStringTest(lhs, comparison, options: options) { return native }
            let rhs = try operand(comparison.rhs, kind: rhsKind, scope: scope, options: [])
            let name: String
            switch comparison.op {
            case .beginsWith: name = "ferry_beginswith"
            case .endsWith: name = "ferry_endswith"
            case .contains: name = "ferry_contains"
            case .like: name = "ferry_like"
            default: name = "ferry_matches"
            }
            // The functions fold both sides themselves; pass the raw operands.
            return ("\(name)(\(Self.unfolded(lhs)), \(rhs), \(options.rawValue))", false)
        case .equal:
            if rhsIsNull { return ("\(lhs) IS NULL", false) }
            let rhs = try operand(comparison.rhs, kind: rhsKind, scope: scope, options: options)
            if lhs == "NULL" { return ("\(rhs) IS NULL", false) }
            return rhsIsLiteral
                ? ("\(lhs) = \(rhs)", true) : (dialect.nullSafeEquality(lhs, rhs, negated: false), false)
        case .notEqual:
            if rhsIsNull { return ("\(lhs) IS NOT NULL", false) }
            let rhs = try operand(comparison.rhs, kind: rhsKind, scope: scope, options: options)
            if lhs == "NULL" { return ("\(rhs) IS NOT NULL", false) }
            return (dialect.nullSafeEquality(lhs, rhs, negated: true), false)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            var rhs = try operand(comparison.rhs, kind: rhsKind, scope: scope, options: options)
            if Self.isDate(lhsKind) || Self.isDate(rhsKind) {
                let coding = layout.valueCoding
                return ("\(coding.orderedDate(lhs)) \(comparison.op.rawValue) \(coding.orderedDate(rhs))", true)
            }
            if orderedLHS == lhs, Self.isTextColumn(rhsKind) { rhs = dialect.byteOrdered(rhs) }
            return ("\(orderedLHS) \(comparison.op.rawValue) \(rhs)", true)
        }
    }

    /// Plain (no `[c]`/`[d]`) `BEGINSWITH`, `ENDSWITH` and `CONTAINS` with a literal string,
    /// in SQLite's own functions, which run several times faster than a Swift function per row.
    /// They compare bytes, exactly as the Swift functions do: the text is read as a BLOB (so
    /// `substr` and `instr` count bytes and do not stop at a NUL character) and compared with the
    /// literal's UTF-8 bytes bound as a BLOB. A NULL text gives NULL, which counts as false.
    /// (SQLite's `LIKE` is never used: it ignores ASCII case and treats `%` and `_` as wildcards.)
    private mutating func nativeStringTest(
        _ lhs: String, _ comparison: Comparison, options: StringOptions
    ) -> (String, Bool)? {
        guard options.isEmpty, case .constant(.string(let text), _) = comparison.rhs else { return nil }
        let bytes = Array(text.utf8)
        switch comparison.op {
        case .beginsWith:
            if bytes.isEmpty { return ("\(lhs) IS NOT NULL", false) }
            return (
                "substr(CAST(\(lhs) AS BLOB), 1, \(bind(.integer(Int64(bytes.count))))) = \(bind(.blob(bytes)))", true
            )
        case .endsWith:
            if bytes.isEmpty { return ("\(lhs) IS NOT NULL", false) }
            return (
                "substr(CAST(\(lhs) AS BLOB), -\(bind(.integer(Int64(bytes.count))))) = \(bind(.blob(bytes)))", true
            )
        case .contains:
            if bytes.isEmpty { return ("\(lhs) IS NOT NULL", false) }
            return ("instr(CAST(\(lhs) AS BLOB), \(bind(.blob(bytes)))) > 0", true)
        default:
            return nil
        }
    }

    /// Strips the `ferry_fold(…, n)` wrapper the string functions do not need.
    private static func unfolded(_ sql: String) -> String {
        guard sql.hasPrefix("ferry_fold("), let comma = sql.lastIndex(of: ",") else { return sql }
        return String(sql[sql.index(sql.startIndex, offsetBy: 11)..<comma])
    }

    /// A literal in the store's form (its layout's value coding: in ferry's, dates as fixed-width
    /// UTC text, booleans as 0/1), except decimals, as REAL (decimal columns are compared through
    /// `CAST(… AS REAL)`), and text, folded for `[c]`/`[d]`.
    private func storage(_ value: Value, options: StringOptions) -> DatabaseValue {
        switch value {
        case .decimal(let text): return Double(text).map(DatabaseValue.real) ?? .text(text)
        case .string(let text), .uri(let text), .json(let text): return .text(PredicateFunctions.fold(text, options))
        default:
            let stored = layout.valueCoding.encode(value)
            guard case .uuid = value, case .text(let text) = stored else { return stored }
            return .text(PredicateFunctions.fold(text, options))
        }
    }

    // MARK: - Operands

    mutating func operand(
        _ expression: PredicateExpression, kind: BoundKind, scope: SQLScope, options: StringOptions
    ) throws(FerryError) -> String {
        switch expression {
        case .constant(let value, _):
            if case .null = value { return "NULL" }
            return bind(storage(value, options: options))
        case .list(let items, _):
            var parts: [String] = []
            for item in items { parts.append(try operand(item, kind: kind, scope: scope, options: options)) }
            return "(" + parts.joined(separator: ", ") + ")"
        case .variable(let name, let mark):
            guard let variable = scope.variables[name] else {
                throw FerryError(.invalidPredicate, "variable '$\(name)' has no value", at: mark.location)
            }
            return "\(variable.alias).\(key)"
        case .keyPath(let path):
            let resolved = try binder.resolve(path, scope: scope.binderScope)
            let base = alias(of: resolved, scope: scope)
            var column: String
            if resolved.steps.isEmpty {
                column = self.column(resolved.attribute, of: resolved.endEntity, on: base)
            } else if resolved.attribute == nil, resolved.steps.count == 1,
                case .foreignKey(let fk) = layout.storage(
                    of: resolved.steps[0].relationship, in: resolved.steps[0].source, model: model)
            {
                column = "\(base).\(quote(fk))"
            } else {
                let source = try chain(resolved, from: base)
                let selected = self.column(resolved.attribute, of: resolved.endEntity, on: source.last)
                column = "(SELECT \(selected) \(source.from) WHERE \(source.condition) LIMIT 1)"
            }
            if resolved.attribute?.type == .decimal { column = dialect.float64(column) }
            if !options.isEmpty { column = "ferry_fold(\(column), \(options.rawValue))" }
            return column
        case .aggregate(let function, let collection, let property, let mark):
            var sql = try aggregate(function, collection, property, mark, scope: scope)
            if !options.isEmpty { sql = "ferry_fold(\(sql), \(options.rawValue))" }
            return sql
        case .subquery(let subquery):
            throw FerryError(
                .invalidPredicate, "SUBQUERY must be followed by a collection operator", at: subquery.mark.location)
        }
    }

    private func alias(of resolved: ResolvedKeyPath, scope: SQLScope) -> String {
        if let variable = resolved.variable, let bound = scope.variables[variable] { return bound.alias }
        return scope.alias
    }

    private mutating func aggregate(
        _ function: AggregateFunction, _ collection: PredicateExpression, _ property: [String], _ mark: SourceMark,
        scope: SQLScope
    ) throws(FerryError) -> String {
        let (resolved, subquery) = try binder.collectionSource(
            collection, scope: scope.binderScope, operatorName: "@" + function.rawValue, mark: mark)
        let source = try chain(resolved, from: alias(of: resolved, scope: scope))
        var condition = source.condition
        if let subquery {
            var inner = scope
            inner.variables[subquery.variable] = (resolved.endEntity, source.last)
            condition += " AND " + (try predicate(subquery.predicate, scope: inner, negated: false))
        }
        var attribute = resolved.attribute
        if let name = property.first { attribute = resolved.endEntity.attribute(named: name) }
        var value = column(attribute, of: resolved.endEntity, on: source.last)
        if attribute?.type == .decimal { value = dialect.float64(value) }
        let ordered = attribute.map { [.string, .uri].contains($0.type) } == true ? dialect.byteOrdered(value) : value
        let selected: String
        switch function {
        case .count: selected = "COUNT(\(value))"
        case .sum: selected = "COALESCE(SUM(\(value)), 0)"
        // SQLite averages in 64-bit floats; so does PostgreSQL over float8.
        case .avg: selected = dialect.average(value)
        case .min: selected = "MIN(\(ordered))"
        case .max: selected = "MAX(\(ordered))"
        }
        return "(SELECT \(selected) \(source.from) WHERE \(condition))"
    }

    // MARK: - Relationship chains

    /// `FROM … JOIN …` over a key path's relationships, the condition tying its first table to
    /// `alias`, and the alias of the last table. To-one steps are LEFT JOINs (a nil relationship
    /// reads as nil), to-many steps inner joins (an empty collection has no elements).
    private mutating func chain(
        _ resolved: ResolvedKeyPath, from alias: String
    ) throws(FerryError) -> (from: String, condition: String, last: String) {
        var from = ""
        var condition = ""
        var previous = alias
        for (index, step) in resolved.steps.enumerated() {
            let storage = layout.storage(of: step.relationship, in: step.source, model: model)
            let table = layout.quotedSource(for: step.destination)
            let next = newAlias()
            let pk = key
            let join = step.relationship.isToMany ? "JOIN" : "LEFT JOIN"
            switch storage {
            case .foreignKey(let column):
                let on = "\(next).\(pk) = \(previous).\(quote(column))"
                if index == 0 {
                    from = "FROM \(table) AS \(next)"
                    condition = on
                } else {
                    from += " \(join) \(table) AS \(next) ON \(on)"
                }
            case .inverseForeignKey(_, let column):
                let on = "\(next).\(quote(column)) = \(previous).\(pk)"
                if index == 0 {
                    from = "FROM \(table) AS \(next)"
                    condition = on
                } else {
                    from += " \(join) \(table) AS \(next) ON \(on)"
                }
            case .joinTable(let linkTable, let sourceColumn, let targetColumn):
                let link = newAlias("l")
                let linkOn = "\(link).\(quote(sourceColumn)) = \(previous).\(pk)"
                let targetOn = "\(next).\(pk) = \(link).\(quote(targetColumn))"
                if index == 0 {
                    from = "FROM \(quote(linkTable)) AS \(link) JOIN \(table) AS \(next) ON \(targetOn)"
                    condition = linkOn
                } else {
                    from += " JOIN \(quote(linkTable)) AS \(link) ON \(linkOn) JOIN \(table) AS \(next) ON \(targetOn)"
                }
            }
            previous = next
        }
        return (from, condition, previous)
    }
}
