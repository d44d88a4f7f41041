import FerryCore
import FerryPostgres

/// A batch update with `set:` expressions on PostgreSQL, whose SQL has none of ferry's
/// expression functions: ferry evaluates every expression per selected object, with the
/// evaluator SQLite's per-object path uses (`EvaluatedSetValues`), checks each new value against
/// the attribute's rules with the code `verify` uses on PostgreSQL (`RuleScan`), and writes all
/// of them with one `COPY` into a temporary table and one `UPDATE … FROM`.
///
/// The messages and counts are SQLite's: the first value that cannot be computed throws
/// `.validation` naming the object; a rule broken by new values throws `.validation` naming the
/// attribute, the rule, how many records break it and the first primary keys; either way before
/// anything is written. The new values are held in memory until the update.
///
/// The update itself (``EvaluatedUpdate``) is the engine's to run; this is PostgreSQL's way.
extension EvaluatedUpdate {
    /// How many offending primary keys a rule's message lists.
    private static let shownKeys = 5

    /// Evaluates, checks and writes the update `plan` describes; returns how many objects changed.
    func run(_ plan: BatchUpdatePlan, on database: PostgresDatabase) throws -> BatchUpdateResult {
        let layout = plan.layout
        let entity = plan.entity
        let key = plan.key
        var selection = plan.predicate.sql
        var arguments = plan.predicate.arguments
        if let residual = plan.residual {
            let keys = try PostgresFetchRows.keys(
                of: entity, matching: residual, database: database, model: plan.model, layout: layout)
            selection = "t0.\(key) = ANY (CAST(? AS bigint[]))"
            arguments = [.text("{" + keys.map(String.init).joined(separator: ",") + "}")]
        }
        let selected = values.flatMap(\.expression.keyPathSQL)
        let select =
            "SELECT t0.\(key)\(selected.map { ", " + $0 }.joined()) FROM \(plan.predicate.from) WHERE \(selection) ORDER BY t0.\(key)"
        let checks =
            validate
            ? values.map { Self.checks(for: $0.expression.attribute, coding: layout.valueCoding) }
            : values.map { _ in [] }
        var broken = checks.map { $0.map { _ in (count: 0, keys: [Int64]()) } }
        var rows: [[DatabaseValue]] = []
        try database.forEachRow(select, arguments) { row in
            var output: [DatabaseValue] = [row[0]]
            var next = 1
            for (index, value) in values.enumerated() {
                let keyPaths = value.expression.bound.keyPaths
                let decoded = keyPaths.indices.map {
                    layout.valueCoding.decode(row[next + $0], as: keyPaths[$0].attribute.type)
                }
                next += keyPaths.count
                let context = SetExpressionRow(
                    values: decoded, objectDescription: "\(entity.name) \(layout.keyColumn) \(row[0])")
                let newValue = try value.expression.bound.evaluate(on: context)
                for (rule, check) in checks[index].enumerated() where check.breaks(newValue) {
                    broken[index][rule].count += 1
                    if broken[index][rule].keys.count < Self.shownKeys, let primaryKey = row[0].int64 {
                        broken[index][rule].keys.append(primaryKey)
                    }
                }
                output.append(layout.valueCoding.encode(newValue))
            }
            rows.append(output)
        }
        for (index, value) in values.enumerated() {
            for (rule, found) in broken[index].enumerated() where found.count > 0 {
                let shown =
                    found.keys.map(String.init).joined(separator: ", ") + (found.count > found.keys.count ? ", …" : "")
                throw FerryError(
                    .validation,
                    "the new value of \(entity.name).\(value.expression.attribute.name) breaks '\(checks[index][rule].label)' for \(found.count) record\(found.count == 1 ? "" : "s") (ferry_pk \(shown)); nothing was changed",
                    at: plan.location)
            }
        }
        guard !rows.isEmpty else { return BatchUpdateResult(updated: 0) }
        return try write(rows, plan: plan, on: database)
    }

    /// Copies the new values into a temporary table (typed like the columns they go to) and
    /// updates the objects from it.
    private func write(
        _ rows: [[DatabaseValue]], plan: BatchUpdatePlan, on database: PostgresDatabase
    ) throws
        -> BatchUpdateResult
    {
        let name = database.uniqueTemporaryName("ferry_set_values")
        let table = "pg_temp." + PostgresIdentifier.quote(name)
        let names = values.indices.map { "v\($0)" }
        let typed = values.enumerated().map { "t0.\($0.element.column) AS v\($0.offset)" }
        try database.execute(
            "CREATE TEMPORARY TABLE \(table) ON COMMIT DROP AS SELECT t0.\(plan.key) AS k\(typed.map { ", " + $0 }.joined()) FROM \(plan.table) AS t0 WITH NO DATA"
        )
        do {
            try database.connection.copy(into: name, schema: "pg_temp", columns: ["k"] + names) { writer in
                for row in rows { try writer.append(row.map(PostgresStagedInserter.copyValue)) }
            }
        } catch let error as PostgresError {
            throw FerryError(
                .store,
                "update of \(plan.entity.name) on PostgreSQL store \(database.location) failed: \(error.description)",
                at: plan.location)
        }
        var assignments =
            constantAssignments + values.enumerated().map { "\($0.element.column) = s.v\($0.offset)" }
        if let increment = plan.layout.versionIncrement { assignments.append(increment) }
        do {
            try database.execute(
                "UPDATE \(plan.table) AS t0 SET \(assignments.joined(separator: ", ")) FROM \(table) AS s WHERE t0.\(plan.key) = s.k",
                constantArguments)
        } catch let error as FerryError {
            throw plan.translate(error)
        }
        let updated = database.changes
        try database.execute("DROP TABLE \(table)")
        return BatchUpdateResult(updated: updated)
    }

    /// One rule of an attribute checked in ferry over a new value: its name in messages and
    /// whether a value breaks it, in the order SQLite's set-based check reports them
    /// (`BatchUpdatePlan.rules(for:column:layout:)`).
    private struct Check {
        var label: String
        var breaks: (Value) -> Bool
    }

    private static func checks(for attribute: AttributeDescription, coding: any ValueCoding) -> [Check] {
        var checks: [Check] = []
        if !attribute.isOptional { checks.append(Check(label: "optional: false") { $0.isNull }) }
        if let range = attribute.type.integerRange {
            checks.append(
                Check(label: "type: \(attribute.type.rawValue)") { value in
                    if value.isNull { return false }
                    guard case .integer(let number) = value else { return true }
                    return !range.contains(number)
                })
        }
        // The validation rules, decided by the code verify uses on PostgreSQL.
        for condition in RuleCondition.conditions(for: attribute, value: "v", coding: coding) {
            let rule = condition.rule
            let pattern = RuleScan.pattern(of: rule)
            checks.append(
                Check(label: BatchUpdatePlan.label(of: rule)) { value in
                    !value.isNull && RuleScan.breaks(value, rule, pattern: pattern)
                })
        }
        return checks
    }
}
