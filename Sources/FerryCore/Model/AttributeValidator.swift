/// Checks values against an attribute's optionality and validation rules (Core Data's
/// `validateValue(_:forKey:)`), with compiled patterns reused for every value.
///
/// Not `Sendable`: each import or update step makes its own.
public final class AttributeValidator {
    public let attribute: AttributeDescription
    private let regex: Regex<AnyRegexOutput>?
    private let rules: ValidationRules

    /// Compiles the attribute's pattern; fails when the pattern is not a valid regular expression.
    public init(_ attribute: AttributeDescription) throws(CoercionFailure) {
        self.attribute = attribute
        self.rules = attribute.validation
        if let pattern = attribute.validation.pattern {
            do {
                regex = try Regex(pattern)
            } catch {
                throw CoercionFailure("invalid pattern '\(pattern)' for \(attribute.name): \(error)")
            }
        } else {
            regex = nil
        }
    }

    /// True when the attribute has validation rules beyond optionality.
    public var hasRules: Bool { !rules.isEmpty }

    /// Nil when the value is acceptable, else the reason it is not.
    public func problem(with value: Value) -> String? {
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
        if rules.minLength != nil || rules.maxLength != nil, let length = Self.length(of: value) {
            if let minLength = rules.minLength, length < minLength {
                return "\(attribute.name) is shorter than \(minLength) (\(length))"
            }
            if let maxLength = rules.maxLength, length > maxLength {
                return "\(attribute.name) is longer than \(maxLength) (\(length))"
            }
        }
        if let regex {
            let text: String
            switch value {
            case .string(let s), .uri(let s), .uuid(let s), .decimal(let s), .json(let s): text = s
            default: text = value.description
            }
            if (try? regex.wholeMatch(in: text)) == nil {
                return "\(attribute.name) does not match the pattern \(rules.pattern ?? "")"
            }
        }
        return nil
    }

    /// Orders two values of the same kind: numbers numerically (decimals exactly), dates in time,
    /// strings by Unicode scalars. Nil when they are not comparable.
    public static func compare(_ a: Value, _ b: Value) -> Int? {
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

    /// Length in characters for text, bytes for binary; nil for other values.
    static func length(of value: Value) -> Int? {
        switch value {
        case .string(let s), .uri(let s):
            let utf8 = s.utf8
            // ASCII fast path: the character count is the byte count.
            if utf8.allSatisfy({ $0 < 0x80 }) { return utf8.count }
            return s.count
        case .binary(let bytes): return bytes.count
        default: return nil
        }
    }
}
