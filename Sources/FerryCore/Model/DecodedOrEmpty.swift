/// A model property that decodes as its empty value when the key is missing, so that models
/// recorded in stores before the property existed still decode.
@propertyWrapper
public struct DecodedOrEmpty<Wrapped: EmptyValue>: Hashable, Codable {
    /// The property's value.
    public var wrappedValue: Wrapped

    /// Wraps `wrappedValue`.
    public init(wrappedValue: Wrapped) { self.wrappedValue = wrappedValue }

    /// Decodes the value itself (a missing key is handled by `KeyedDecodingContainer`).
    public init(from decoder: any Decoder) throws {
        wrappedValue = try decoder.singleValueContainer().decode(Wrapped.self)
    }

    /// Encodes the value itself.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

/// A type with an empty value: `false`, `[]`, `[:]`.
public protocol EmptyValue: Hashable, Codable {
    /// The value a missing key decodes as.
    static var empty: Self { get }
}

/// `false`.
extension Bool: EmptyValue { public static var empty: Bool { false } }
/// `[]`.
extension Array: EmptyValue where Element: Hashable & Codable { public static var empty: [Element] { [] } }
/// `[:]`.
extension Dictionary: EmptyValue where Key: Codable, Value: Hashable & Codable {
    /// The empty dictionary.
    public static var empty: [Key: Value] { [:] }
}

extension DecodedOrEmpty: Sendable where Wrapped: Sendable {}

extension KeyedDecodingContainer {
    /// Missing keys of ``DecodedOrEmpty`` properties decode as the empty value.
    public func decode<Wrapped>(_ type: DecodedOrEmpty<Wrapped>.Type, forKey key: Key) throws -> DecodedOrEmpty<Wrapped>
    {
        try decodeIfPresent(type, forKey: key) ?? DecodedOrEmpty(wrappedValue: Wrapped.empty)
    }
}
