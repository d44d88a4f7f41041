/// An attribute type change that lightweight migration performs because no value can be lost:
/// integer widenings, exact numeric widenings, and to-string conversions of types whose
/// canonical text is already their stored form.
///
/// | from | to |
/// | --- | --- |
/// | `int16` | `int32`, `int64`, `decimal`, `double`, `string` |
/// | `int32` | `int64`, `decimal`, `double`, `string` |
/// | `int64` | `decimal`, `string` (not `double`: above 2^53 it rounds) |
/// | `float` | `double` |
/// | `decimal`, `uuid`, `uri`, `json` | `string` |
///
/// Every other type change (narrowing, `string` → number, `date` ↔ anything, `bool` ↔ anything,
/// `double` → `decimal`) needs a mapping file.
///
/// For Xcode models (``MigrationRuleSet/coreData``) ferry also infers *checked* numeric
/// narrowings (ferry's extension; Apple documents no type change either way): each value is
/// converted only when it fits exactly, else the migration fails naming the record.
///
/// | from | to (checked) |
/// | --- | --- |
/// | `int32` | `int16` |
/// | `int64` | `int16`, `int32`, `double` (exact below 2^53) |
/// | `double`, `decimal` | `int16`, `int32`, `int64` (integral values in range) |
public struct TypeConversion: Sendable, Hashable, Codable {
    /// The source attribute's type.
    public var from: AttributeType
    /// The destination attribute's type.
    public var to: AttributeType
    /// True for a checked narrowing: a value may not fit (``convertedIfFits(_:)`` says so).
    @DecodedOrEmpty public var isChecked = false

    /// The conversion, or nil when `from` → `to` is not a lossless widening (or not a change).
    public init?(from: AttributeType, to: AttributeType) {
        guard from != to, Self.widenings[from]?.contains(to) == true else { return nil }
        self.from = from
        self.to = to
    }

    /// The conversion under `rules`: a lossless widening, or for Core Data's rules also a checked
    /// numeric narrowing; nil when neither (or not a change).
    public init?(from: AttributeType, to: AttributeType, rules: MigrationRuleSet) {
        if let widening = TypeConversion(from: from, to: to) {
            self = widening
            return
        }
        guard rules == .coreData, Self.checkedNarrowings[from]?.contains(to) == true else { return nil }
        self.from = from
        self.to = to
        self.isChecked = true
    }

    /// The numeric narrowings inferred for Xcode models, each value checked, by source type.
    public static let checkedNarrowings: [AttributeType: Set<AttributeType>] = [
        .int32: [.int16],
        .int64: [.int16, .int32, .double],
        .double: [.int16, .int32, .int64],
        .decimal: [.int16, .int32, .int64],
    ]

    /// The lossless widenings, by source type.
    public static let widenings: [AttributeType: Set<AttributeType>] = [
        .int16: [.int32, .int64, .decimal, .double, .string],
        .int32: [.int64, .decimal, .double, .string],
        .int64: [.decimal, .string],
        .float: [.double],
        .decimal: [.string],
        .uuid: [.string],
        .uri: [.string],
        .json: [.string],
    ]

    /// True when lightweight migration converts `from` to `to` without loss.
    public static func isLosslessWidening(from: AttributeType, to: AttributeType) -> Bool {
        TypeConversion(from: from, to: to) != nil
    }

    /// The stored value converted to the destination type (nil stays nil). A value that is not
    /// of the source type is returned unchanged (the store's own checks report it).
    public func apply(to value: Value) -> Value {
        switch (value, to) {
        case (.null, _): return .null
        case (.integer, .int16), (.integer, .int32), (.integer, .int64): return value
        case (.integer(let number), .decimal): return .decimal(String(number))
        case (.integer(let number), .double): return .double(Double(number))
        case (.integer(let number), .string): return .string(String(number))
        case (.double, .double): return value
        case (.decimal(let text), .string), (.uuid(let text), .string), (.uri(let text), .string),
            (.json(let text), .string):
            return .string(text)
        default: return value
        }
    }

    /// The stored value converted to the destination type, or nil when it does not fit exactly
    /// (out of the integer range, not integral, or not exactly representable as a double). A
    /// widening always fits.
    public func convertedIfFits(_ value: Value) -> Value? {
        guard isChecked else { return apply(to: value) }
        switch (value, to.integerRange) {
        case (.null, _):
            return .null
        case (.integer(let number), let range?):
            return range.contains(number) ? value : nil
        case (.integer(let number), nil):
            let double = Double(number)
            return Int64(exactly: double) == number ? .double(double) : nil
        case (.double(let double), let range?):
            guard let number = Int64(exactly: double), range.contains(number) else { return nil }
            return .integer(number)
        case (.decimal(let text), let range?):
            // Canonical decimal text: an integral value has no fraction and no exponent.
            guard let number = Int64(text), range.contains(number) else { return nil }
            return .integer(number)
        default:
            return apply(to: value)
        }
    }
}
