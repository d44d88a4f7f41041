/// Validation rules checked in ferry over decoded values, for stores whose SQL has no ferry
/// functions (PostgreSQL): one streamed pass over an entity's rows counts the rows breaking each
/// rule and keeps the first offenders, in key order. Each rule is decided by the code the SQL
/// conditions call on SQLite (``RuleCondition``), so both backends report the same violations.
package struct RuleScan {
    let layout: any StoreLayout
    let maxOffending: Int

    /// The count of rows breaking each probe's rule (aligned with `probes`, which must all carry
    /// a ``Probe/rule``), and up to ``maxOffending`` offending records per probe.
    func run(
        _ probes: [Probe], of entity: EntityDescription, keyAttribute: String?, on connection: any DatabaseConnection
    ) throws -> [(count: Int, offending: [OffendingRecord])] {
        var results = Array(repeating: (count: 0, offending: [OffendingRecord]()), count: probes.count)
        let checked = probes.map { probe in
            probe.rule.map { (attribute: $0.attribute, rule: $0.rule, pattern: Self.pattern(of: $0.rule)) }
        }
        var attributes: [String] = []
        for case let item? in checked where !attributes.contains(item.attribute.name) {
            attributes.append(item.attribute.name)
        }
        guard !attributes.isEmpty else { return results }
        let key = layout.dialect.quote(layout.keyColumn)
        let keyColumn = keyAttribute.map { layout.quotedColumn(forAttribute: $0, in: entity) } ?? "NULL"
        let columns = attributes.map { layout.quotedColumn(forAttribute: $0, in: entity) }
        let sql =
            "SELECT \(key), \(keyColumn), \(columns.joined(separator: ", ")) FROM \(layout.quotedSource(for: entity)) ORDER BY \(key)"
        try connection.forEachRow(sql, []) { row in
            for (index, item) in checked.enumerated() {
                guard let item, let position = attributes.firstIndex(of: item.attribute.name) else { continue }
                let value = layout.valueCoding.decode(row[position + 2], as: item.attribute.type)
                guard !value.isNull, Self.breaks(value, item.rule, pattern: item.pattern) else { continue }
                results[index].count += 1
                if results[index].offending.count < maxOffending {
                    results[index].offending.append(
                        OffendingRecord(
                            entity: entity.name, primaryKey: row[0].int64, keyAttribute: keyAttribute,
                            keyValue: row[1].isNull ? nil : row[1].description,
                            problem: "\(probes[index].property) \(probes[index].problem)"))
                }
            }
        }
        return results
    }

    package static func pattern(of rule: RuleCondition.Rule) -> PatternRule? {
        if case .pattern(let pattern) = rule { return PatternRule(pattern) }
        return nil
    }

    /// True when a non-null value breaks the rule.
    package static func breaks(_ value: Value, _ rule: RuleCondition.Rule, pattern: PatternRule?) -> Bool {
        switch rule {
        case .minValue(let min): return AttributeValidator.compare(value, min).map { $0 < 0 } ?? false
        case .maxValue(let max): return AttributeValidator.compare(value, max).map { $0 > 0 } ?? false
        case .minLength(let min): return LengthRule.length(of: value).map { $0 < min } ?? false
        case .maxLength(let max): return LengthRule.length(of: value).map { $0 > max } ?? false
        case .pattern: return pattern.map { !$0.matches(value) } ?? false
        }
    }
}
