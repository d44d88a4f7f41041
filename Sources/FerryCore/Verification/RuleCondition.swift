/// An attribute's validation rule as an SQL condition over a value expression that holds when
/// the value breaks the rule: the one SQL form of each rule, used by `ferry verify` (over stored
/// columns, see ``Probe``) and by batch updates (over the new values). Each condition calls the
/// code import uses for the same rule:
///
/// | rule | condition | same as import's |
/// | --- | --- | --- |
/// | `min`, `max` on decimals | `ferry_decimal_cmp(v, ?)` | ``DecimalText/compare(_:_:)`` |
/// | `min`, `max` on other numbers, dates | `v < ?`, `v > ?` on the stored forms | ``AttributeValidator/compare(_:_:)`` (same order) |
/// | `min_length`, `max_length` | `ferry_rule_length(v)` | ``LengthRule`` |
/// | `pattern` | `ferry_matches(v, ?, 0)` | ``PatternRule`` |
package struct RuleCondition {
    package enum Rule {
        case minValue(Value)
        case maxValue(Value)
        case minLength(Int)
        case maxLength(Int)
        case pattern(String)
    }

    package var rule: Rule
    /// SQL that is true when the value breaks the rule (false or NULL for NULL values).
    package var violation: String
    package var arguments: [DatabaseValue]

    /// The conditions of every validation rule of `attribute`, over the SQL value `v`.
    package static func conditions(
        for attribute: AttributeDescription, value v: String, coding: any ValueCoding
    ) -> [RuleCondition] {
        let rules = attribute.validation
        var conditions: [RuleCondition] = []
        func bound(_ rule: Rule, _ value: Value, _ op: String) {
            switch (attribute.type, value) {
            case (.decimal, _):
                let text: String
                if case .decimal(let canonical) = value { text = canonical } else { text = value.description }
                conditions.append(
                    RuleCondition(
                        rule: rule, violation: "\(v) IS NOT NULL AND ferry_decimal_cmp(\(v), ?) \(op) 0",
                        arguments: [.text(text)]))
            case (.int16, _), (.int32, _), (.int64, _), (.double, _), (.float, _), (.date, _), (.bool, _):
                conditions.append(
                    RuleCondition(
                        rule: rule, violation: "\(v) IS NOT NULL AND \(v) \(op) ?", arguments: [coding.encode(value)]))
            default:
                break
            }
        }
        if let min = rules.minValue { bound(.minValue(min), min, "<") }
        if let max = rules.maxValue { bound(.maxValue(max), max, ">") }
        let hasLength = attribute.type == .string || attribute.type == .uri || attribute.type == .binary
        let length = "\(LengthRuleFunction.functionName)(\(v))"
        if hasLength, let min = rules.minLength {
            conditions.append(
                RuleCondition(
                    rule: .minLength(min), violation: "\(v) IS NOT NULL AND \(length) < ?",
                    arguments: [.integer(Int64(min))]))
        }
        if hasLength, let max = rules.maxLength {
            conditions.append(
                RuleCondition(
                    rule: .maxLength(max), violation: "\(v) IS NOT NULL AND \(length) > ?",
                    arguments: [.integer(Int64(max))]))
        }
        if let pattern = rules.pattern, attribute.type != .binary {
            conditions.append(
                RuleCondition(
                    rule: .pattern(pattern), violation: "\(v) IS NOT NULL AND ferry_matches(\(v), ?, 0) = 0",
                    arguments: [.text(pattern)]))
        }
        return conditions
    }
}
