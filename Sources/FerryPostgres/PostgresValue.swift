/// One value sent to or read from PostgreSQL.
///
/// Results are decoded by column type: `boolean` → ``bool(_:)``; `smallint`, `integer`, `bigint`,
/// `oid` → ``integer(_:)``; `real`, `double precision` → ``real(_:)``; `bytea` → ``bytes(_:)``;
/// every other type (`numeric`, `timestamptz`, `uuid`, `text`, …) → ``text(_:)`` in PostgreSQL's
/// own text form, so no precision is lost.
public enum PostgresValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// A `boolean`.
    case bool(Bool)
    /// A `smallint`, `integer`, `bigint` or `oid`.
    case integer(Int64)
    /// A `real` or `double precision`.
    case real(Double)
    /// Any other type, in PostgreSQL's text form.
    case text(String)
    /// A `bytea`.
    case bytes([UInt8])

    /// A short name of the case, for messages.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .real: "double"
        case .text: "text"
        case .bytes: "bytea"
        }
    }
}

// MARK: - Text form

extension PostgresValue {
    /// The PostgreSQL type OIDs this client decodes specially.
    package enum TypeOID {
        package static let bool: UInt32 = 16
        package static let bytea: UInt32 = 17
        package static let int8: UInt32 = 20
        package static let int2: UInt32 = 21
        package static let int4: UInt32 = 23
        package static let oid: UInt32 = 26
        package static let float4: UInt32 = 700
        package static let float8: UInt32 = 701
    }

    /// Decodes PostgreSQL's text output for a column of type `oid`.
    package init(text: String, typeOID oid: UInt32) {
        switch oid {
        case TypeOID.bool:
            self = .bool(text == "t")
        case TypeOID.int8, TypeOID.int2, TypeOID.int4, TypeOID.oid:
            self = Int64(text).map(PostgresValue.integer) ?? .text(text)
        case TypeOID.float4, TypeOID.float8:
            self = Double(text).map(PostgresValue.real) ?? .text(text)
        case TypeOID.bytea:
            self = Self.decodeHexBytea(text).map(PostgresValue.bytes) ?? .text(text)
        default:
            self = .text(text)
        }
    }

    /// The value in PostgreSQL's text input form (nil for NULL); `bytea` as `\x` hex.
    package var textForm: String? {
        switch self {
        case .null: nil
        case .bool(let value): value ? "t" : "f"
        case .integer(let value): String(value)
        case .real(let value): Self.textForm(of: value)
        case .text(let value): value
        case .bytes(let value): "\\x" + Self.hex(value)
        }
    }

    private static func textForm(of value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return "\(value)"
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func decodeHexBytea(_ text: String) -> [UInt8]? {
        var text = text
        var bytes: [UInt8] = []
        return text.withUTF8 { appendHexBytea($0, to: &bytes) } ? bytes : nil
    }

    /// Appends the bytes `bytea`'s hex output spells (`\x` and two hex digits per byte) to
    /// `bytes`; false, with `bytes` unchanged, for anything else.
    package static func appendHexBytea(_ utf8: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) -> Bool {
        let start = bytes.count
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"),
            utf8.count % 2 == 0
        else { return false }
        bytes.reserveCapacity(start + (utf8.count - 2) / 2)
        var index = 2
        while index < utf8.count {
            guard let high = hexDigit(utf8[index]), let low = hexDigit(utf8[index + 1]) else {
                bytes.removeSubrange(start...)
                return false
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return true
    }

    /// The value of a hex digit (either case), or nil.
    package static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
