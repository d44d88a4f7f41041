/// A model property that decodes as its empty value when the key is missing, so that models
/// recorded in stores before the property existed still decode.
@propertyWrapper
public struct DecodedOrEmpty<Wrapped: EmptyValue>: Hashable, Codable {
    public var wrappedValue: Wrapped

    public init(wrappedValue: Wrapped) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        wrappedValue = try decoder.singleValueContainer().decode(Wrapped.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

/// A type with an empty value: `false`, `[]`, `[:]`.
public protocol EmptyValue: Hashable, Codable {
    static var empty: Self { get }
}

extension Bool: EmptyValue { public static var empty: Bool { false } }
extension Array: EmptyValue where Element: Hashable & Codable { public static var empty: [Element] { [] } }
extension Dictionary: EmptyValue where Key: Codable, Value: Hashable & Codable { public static var empty: [Key: Value] { [:] } }

extension DecodedOrEmpty: Sendable where Wrapped: Sendable {}

extension KeyedDecodingContainer {
    /// Missing keys of ``DecodedOrEmpty`` properties decode as the empty value.
    public func decode<Wrapped>(_ type: DecodedOrEmpty<Wrapped>.Type, forKey key: Key) throws -> DecodedOrEmpty<Wrapped> {
        try decodeIfPresent(type, forKey: key) ?? DecodedOrEmpty(wrappedValue: Wrapped.empty)
    }
}
