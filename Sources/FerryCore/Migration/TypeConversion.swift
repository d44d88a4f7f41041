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
public struct TypeConversion: Sendable, Hashable, Codable {
    public var from: AttributeType
    public var to: AttributeType

    /// The conversion, or nil when `from` → `to` is not a lossless widening (or not a change).
    public init?(from: AttributeType, to: AttributeType) {
        guard from != to, Self.widenings[from]?.contains(to) == true else { return nil }
        self.from = from
        self.to = to
    }

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
        case (.decimal(let text), .string), (.uuid(let text), .string), (.uri(let text), .string), (.json(let text), .string):
            return .string(text)
        default: return value
        }
    }
}
