/// A typed value of an attribute, in the canonical form ferry stores.
///
/// Canonical forms make values lossless and comparable: decimals are exact decimal text
/// (`-12.5`, never rounded through `Double`), dates are exact instants (``Timestamp``: whole
/// milliseconds since 1970-01-01 UTC, or a Core Data store's seconds since 2001 bit for bit), UUIDs
/// are lowercase 8-4-4-4-12 text, JSON is valid JSON text.
public enum Value: Sendable, Hashable, Codable, CustomStringConvertible {
    /// No value (nil).
    case null
    /// An integer (`int16`, `int32`, `int64` attributes).
    case integer(Int64)
    /// A binary floating-point number (`double`, `float` attributes).
    case double(Double)
    /// Exact decimal in canonical text: optional `-`, digits, optional `.` and digits, no exponent,
    /// no leading zeros before other digits, no trailing fractional zeros (`1.50` → `1.5`).
    case decimal(String)
    /// Text.
    case string(String)
    /// A boolean.
    case bool(Bool)
    /// An instant (whole milliseconds, or a Core Data date's exact seconds since 2001).
    case date(Timestamp)
    /// Bytes.
    case binary([UInt8])
    /// Lowercase canonical 8-4-4-4-12 form.
    case uuid(String)
    /// A URI, as text.
    case uri(String)
    /// Valid JSON text.
    case json(String)

    /// The date `milliseconds` after 1970-01-01T00:00:00Z.
    public static func date(_ milliseconds: Int64) -> Value { .date(Timestamp(milliseconds: milliseconds)) }

    /// True for `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A readable rendering (used in messages about definitions, never for bulk data).
    public var description: String {
        switch self {
        case .null: return "nil"
        case .integer(let value): return String(value)
        case .double(let value): return String(value)
        case .decimal(let text), .uuid(let text), .uri(let text), .json(let text): return text
        case .string(let text): return text
        case .bool(let value): return value ? "true" : "false"
        case .date(let instant): return DateCoding.format(instant)
        case .binary(let bytes): return "<\(bytes.count) bytes>"
        }
    }
}
