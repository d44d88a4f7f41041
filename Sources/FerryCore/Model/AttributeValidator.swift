/// Checks values against an attribute's optionality and validation rules (Core Data's
/// `validateValue(_:forKey:)`), with compiled patterns reused for every value.
///
/// Each rule has one definition that `ferry verify` applies too: lengths are ``LengthRule``'s
/// (UTF-16 code units), patterns ``PatternRule``'s (ICU, whole stored text), bounds
/// ``compare(_:_:)`` (decimals through ``DecimalText/compare(_:_:)``, as verify's
/// `ferry_decimal_cmp`; integers, doubles, booleans and dates in the order SQLite compares their
/// stored forms).
///
/// Not `Sendable`: each import or update step makes its own.
package final class AttributeValidator {
    package let attribute: AttributeDescription
    private let patternRule: PatternRule?
    private let rules: ValidationRules

    /// Compiles the attribute's pattern; fails when the pattern is not a valid regular expression.
    package init(_ attribute: AttributeDescription) throws(CoercionFailure) {
        self.attribute = attribute
        self.rules = attribute.validation
        if let pattern = attribute.validation.pattern {
            guard let rule = PatternRule(pattern) else {
                throw CoercionFailure(
                    "invalid pattern '\(pattern)' for \(attribute.name): not a valid ICU regular expression")
            }
            patternRule = rule
        } else {
            patternRule = nil
        }
    }

    /// True when the attribute has validation rules beyond optionality.
    package var hasRules: Bool { !rules.isEmpty }

    /// Nil when the value is acceptable, else the reason it is not.
    package func problem(with value: Value) -> String? {
        if case .null = value {
            return attribute.isOptional ? nil : "\(attribute.name) is required"
        }
        if rules.isEmpty { return nil }
        if let min = rules.minValue, let order = Self.compare(value, min), order < 0 {
            return "\(attribute.name) \(value) is less than the minimum \(min)"
        }
        if let max = rules.maxValue, let order = Self.compare(value, max), order > 0 {
            return "\(attribute.name) \(value) is greater than the maximum \(max)"
        }
        if rules.minLength != nil || rules.maxLength != nil, let length = LengthRule.length(of: value) {
            if let minLength = rules.minLength, length < minLength {
                return "\(attribute.name) is shorter than \(minLength) (\(length))"
            }
            if let maxLength = rules.maxLength, length > maxLength {
                return "\(attribute.name) is longer than \(maxLength) (\(length))"
            }
        }
        if let patternRule, !patternRule.matches(value) {
            return "\(attribute.name) does not match the pattern \(patternRule.pattern)"
        }
        return nil
    }

    /// Orders two values of the same kind: numbers numerically (decimals exactly), dates in time,
    /// strings by Unicode scalars. Nil when they are not comparable.
    package static func compare(_ a: Value, _ b: Value) -> Int? {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.double(let x), .double(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.integer(let x), .double(let y)): return Double(x) < y ? -1 : (Double(x) == y ? 0 : 1)
        case (.double(let x), .integer(let y)): return x < Double(y) ? -1 : (x == Double(y) ? 0 : 1)
        case (.decimal(let x), .decimal(let y)): return DecimalText.compare(x, y)
        case (.decimal(let x), .integer(let y)): return DecimalText.compare(x, String(y))
        case (.integer(let x), .decimal(let y)): return DecimalText.compare(String(x), y)
        case (.decimal(let x), .double(let y)): return (Double(x) ?? 0) < y ? -1 : ((Double(x) ?? 0) == y ? 0 : 1)
        case (.double(let x), .decimal(let y)): return x < (Double(y) ?? 0) ? -1 : (x == (Double(y) ?? 0) ? 0 : 1)
        case (.date(let x), .date(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.string(let x), .string(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (x ? 1 : -1)
        default: return nil
        }
    }
}
