/// Core Data's value forms (COREDATA.md §1.4, §2.6): dates as REAL seconds since 2001-01-01 UTC,
/// UUIDs as 16 bytes in RFC 4122 order, decimals as REAL (Core Data keeps a double), booleans
/// 0/1, strings and URIs as text, binary data as BLOB.
///
/// A date read from the store is its double exactly (``Timestamp``), so a date that passes through
/// an expression or a policy unchanged is written back bit for bit. One form loses information, as
/// in Core Data itself: a decimal becomes the nearest double.
package struct CoreDataValueCoding: ValueCoding {
    /// Seconds from 1970-01-01 to 2001-01-01 (Core Data's reference date).
    package static let referenceDateOffset: Double = Timestamp.referenceDateOffset

    package init() {}

    package var name: String { "coredata" }

    package func storageClass(for type: AttributeType) -> DatabaseValue.StorageClass {
        switch type {
        case .int16, .int32, .int64, .bool: return .integer
        case .double, .float, .decimal, .date: return .real
        case .string, .uri, .json: return .text
        case .uuid, .binary: return .blob
        }
    }

    package func encode(_ value: Value) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .integer(let v): return .integer(v)
        case .bool(let v): return .integer(v ? 1 : 0)
        case .double(let v): return .real(v)
        case .decimal(let text): return Double(text).map { .real($0) } ?? .text(text)
        case .string(let v), .uri(let v), .json(let v): return .text(v)
        case .date(let instant): return .real(instant.referenceSeconds)
        case .uuid(let text): return Self.uuidBytes(text).map { .blob($0) } ?? .text(text)
        case .binary(let v): return .blob(v)
        }
    }

    package func bind(_ value: Value, to statement: Statement, at index: Int) throws {
        try statement.bind(encode(value), at: index)
    }

    package func decode(_ value: DatabaseValue, as type: AttributeType) -> Value {
        switch (value, type) {
        case (.real(let seconds), .date): return Self.date(seconds)
        case (.integer(let seconds), .date): return Self.date(Double(seconds))
        case (.blob(let bytes), .uuid) where bytes.count == 16: return .uuid(Self.uuidText(bytes))
        default: return FerryValueCoding().decode(value, as: type)
        }
    }

    /// The exact instant of seconds since 2001 (a double beyond any date stays a double).
    private static func date(_ seconds: Double) -> Value {
        Timestamp(referenceSeconds: seconds).map(Value.date) ?? .double(seconds)
    }

    /// The 16 bytes of a UUID in any form ``Coercion/canonicalUUID(_:)`` accepts.
    static func uuidBytes(_ text: String) -> [UInt8]? {
        guard let canonical = Coercion.canonicalUUID(text) else { return nil }
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in canonical.utf8 where character != UInt8(ascii: "-") {
            let nibble =
                character <= UInt8(ascii: "9") ? character - UInt8(ascii: "0") : character - UInt8(ascii: "a") + 10
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }

    /// The lowercase 8-4-4-4-12 form of 16 bytes.
    static func uuidText(_ bytes: [UInt8]) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append(UInt8(ascii: "-")) }
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
