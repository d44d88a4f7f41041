/// The type of an attribute: Core Data's attribute types plus `json`.
public enum AttributeType: String, Sendable, Hashable, Codable, CaseIterable {
    /// Integers, exact decimals, binary floating point, text, booleans, dates, bytes, UUIDs, URIs and JSON.
    case int16, int32, int64, decimal, double, float, string, bool, date, binary, uuid, uri, json

    /// Names accepted in model files besides the canonical raw value.
    package static let aliases: [String: AttributeType] = [
        "integer16": .int16, "integer 16": .int16,
        "integer32": .int32, "integer 32": .int32,
        "integer64": .int64, "integer 64": .int64, "int": .int64, "integer": .int64,
        "boolean": .bool, "text": .string, "data": .binary, "binary data": .binary,
        "datetime": .date, "timestamp": .date, "real": .double, "url": .uri,
    ]

    /// Parses a type name from a model file (canonical names and aliases, case-insensitive).
    public init?(name: String) {
        let lowered = name.lowercased()
        if let type = AttributeType(rawValue: lowered) {
            self = type
        } else if let type = AttributeType.aliases[lowered] {
            self = type
        } else {
            return nil
        }
    }

    /// True for the integer, decimal and floating-point types.
    public var isNumeric: Bool {
        switch self {
        case .int16, .int32, .int64, .decimal, .double, .float: return true
        default: return false
        }
    }

    /// True for the integer types.
    public var isInteger: Bool { self == .int16 || self == .int32 || self == .int64 }

    /// The inclusive range of an integer type.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .int16: return Int64(Int16.min)...Int64(Int16.max)
        case .int32: return Int64(Int32.min)...Int64(Int32.max)
        case .int64: return Int64.min...Int64.max
        default: return nil
        }
    }
}
