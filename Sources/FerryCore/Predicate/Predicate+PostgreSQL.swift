/// A predicate compiled for a store: the SQL the engine filters with, and whether that filter is
/// the whole predicate (``Predicate/filter(for:model:layout:alias:)``). Where the dialect pushes
/// every predicate down (``StoreEngine/PredicatePushdown/exact``, SQLite with ferry's functions)
/// it always is; on PostgreSQL:
///
/// PostgreSQL cannot call ferry's Swift functions, and ferry registers nothing on the server, so
/// a comparison PostgreSQL does not compute exactly as ferry does (`[c]`/`[d]` folding, `LIKE`,
/// `MATCHES`, string operators on non-text values, JSON attributes) is not pushed down. The
/// server then filters with a superset of the matching rows (every other top-level comparison,
/// in negation normal form), and ferry evaluates the whole predicate on each candidate row
/// (``Predicate/evaluate(on:)``, the reference the SQL agrees with).
package struct PredicateFilter: Sendable {
    /// The server's filter: exactly the predicate when ``isExact``, a superset of it otherwise.
    package var sql: PredicateSQL
    /// True when the SQL is the predicate itself (nothing is left for ferry to evaluate).
    package var isExact: Bool
}

extension Predicate {
    /// The predicate compiled for a store in `layout` as its engine filters (see ``PredicateFilter``):
    /// the whole predicate where the dialect pushes every predicate down, else what the server
    /// computes as ferry does, and ferry evaluates the rest on the rows (`isExact` false).
    package func filter(
        for entity: EntityDescription, model: ObjectModel, layout: any StoreLayout, alias: String = "t0"
    ) throws(FerryError) -> PredicateFilter {
        switch layout.dialect.predicatePushdown {
        case .exact:
            return PredicateFilter(sql: try sql(for: entity, model: model, layout: layout, alias: alias), isExact: true)
        case .superset: return try postgresFilter(for: entity, model: model, layout: layout, alias: alias)
        }
    }

    /// The predicate compiled for a PostgreSQL store in `layout` (see ``PredicateFilter``).
    package func postgresFilter(
        for entity: EntityDescription, model: ObjectModel, layout: any StoreLayout, alias: String = "t0"
    ) throws(FerryError) -> PredicateFilter {
        let bound = try bound(to: entity, model: model)
        var compiler = PredicateSQLCompiler(binder: PredicateBinder(model: model), layout: layout)
        var isExact = true
        let text = try compiler.superset(
            bound, scope: SQLScope(entity: entity, alias: alias), negated: false, isExact: &isExact)
        let sql = layout.selection(
            of: entity, alias: alias, where: text ?? compiler.dialect.booleanConstant(true),
            arguments: compiler.arguments)
        return PredicateFilter(sql: sql, isExact: isExact)
    }
}

extension Predicate {
    /// For `AND` and `OR`: whether it is an `AND` once `negated` is pushed into it (De Morgan).
    func isConjunction(negated: Bool) -> Bool {
        if case .or = self { return negated }
        return !negated
    }
}

extension PredicateSQLCompiler {
    /// The SQL of `predicate` with every comparison that cannot be pushed down left out, so that
    /// it selects at least the matching rows; nil when nothing of it can be pushed down (it then
    /// reads as true). Clears `isExact` when anything was left out.
    mutating func superset(
        _ predicate: Predicate, scope: SQLScope, negated: Bool, isExact: inout Bool
    ) throws(FerryError) -> String? {
        let mark = arguments.count
        switch predicate {
        case .constant, .comparison:
            do throws(FerryError) {
                return try self.predicate(predicate, scope: scope, negated: negated)
            } catch {
                guard error.underlying is PredicatePushdownLimit else { throw error }
                arguments.removeLast(arguments.count - mark)
                isExact = false
                return nil
            }
        case .not(let operand):
            return try superset(operand, scope: scope, negated: !negated, isExact: &isExact)
        case .and(let operands), .or(let operands):
            let isAnd = predicate.isConjunction(negated: negated)
            if operands.isEmpty { return dialect.booleanConstant(isAnd) }
            var parts: [String] = []
            for operand in operands {
                if let part = try superset(operand, scope: scope, negated: negated, isExact: &isExact) {
                    parts.append(part)
                } else if !isAnd {
                    // One unknown alternative makes the whole OR unknown.
                    arguments.removeLast(arguments.count - mark)
                    return nil
                }
            }
            if parts.isEmpty { return nil }
            return parts.count == 1 ? parts[0] : "(" + parts.joined(separator: isAnd ? " AND " : " OR ") + ")"
        }
    }

    static func isTextColumn(_ kind: BoundKind) -> Bool {
        if case .typed(let type, _, _) = kind { return type == .string || type == .uri }
        return false
    }

    /// Throws a ``PredicatePushdownLimit`` when PostgreSQL would not compute `comparison`
    /// exactly as ferry does.
    func requirePushable(
        _ comparison: Comparison, lhsKind: BoundKind, rhsKind: BoundKind, options: StringOptions
    ) throws(FerryError) {
        func limit(_ reason: String) -> FerryError {
            FerryError(
                .usage, "this predicate cannot be compiled to PostgreSQL SQL: \(reason)", at: comparison.mark.location,
                underlying: PredicatePushdownLimit(reason: reason))
        }
        for kind in [lhsKind, rhsKind] {
            if case .typed(.json, _, _) = kind {
                throw limit("JSON attributes are compared as ferry stores their text, PostgreSQL's jsonb normalizes it")
            }
        }
        if !options.isEmpty { throw limit("[c] and [d] fold text with Foundation's Unicode rules") }
        switch comparison.op {
        case .like: throw limit("LIKE matches Unicode characters (grapheme clusters), PostgreSQL's LIKE code points")
        case .matches: throw limit("MATCHES is an ICU regular expression")
        case .beginsWith, .endsWith, .contains:
            var rhsIsText = Self.isTextColumn(rhsKind)
            if case .literal(.string) = rhsKind { rhsIsText = true }
            guard Self.isTextColumn(lhsKind), rhsIsText else {
                throw limit(
                    "\(comparison.op.rawValue) on values that are not text compares their text as ferry spells it")
            }
        default:
            return
        }
    }

    /// `BEGINSWITH`, `ENDSWITH` and `CONTAINS` of text in PostgreSQL's functions: by code point,
    /// which for valid UTF-8 is byte for byte, as ferry's functions compare. NULL gives NULL,
    /// which counts as false.
    mutating func postgresStringTest(
        _ lhs: String, _ comparison: Comparison, rhsKind: BoundKind, scope: SQLScope
    ) throws(FerryError) -> (String, Bool) {
        let rhs = "CAST(\(try operand(comparison.rhs, kind: rhsKind, scope: scope, options: [])) AS text)"
        switch comparison.op {
        case .beginsWith:
            return ("starts_with(\(lhs), \(rhs))", true)
        case .endsWith:
            let again = "CAST(\(try operand(comparison.rhs, kind: rhsKind, scope: scope, options: [])) AS text)"
            return ("right(\(lhs), char_length(\(rhs))) = \(again)", true)
        case .contains:
            return ("strpos(\(lhs), \(rhs)) > 0", true)
        default:
            throw FerryError(
                .internal, "\(comparison.op.rawValue) is not pushed down to PostgreSQL", at: comparison.mark.location)
        }
    }
}
