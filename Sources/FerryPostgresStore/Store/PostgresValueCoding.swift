import FerryCore

/// How a PostgreSQL store keeps values: in PostgreSQL's own types (``PostgreSQLDialect``), so
/// values are sent in ferry's text forms (which the server parses into `numeric`, `timestamptz`,
/// `uuid`, `jsonb`) and read back from PostgreSQL's text output.
///
/// Sent: as ``FerryValueCoding`` encodes them (dates as UTC ISO-8601 with milliseconds), but
/// booleans as `true`/`false`. Read: `numeric` in PostgreSQL's text (which keeps the scale written: `12.50`),
/// `timestamptz` (the session is in UTC with ISO dates) as an instant (milliseconds, or the
/// microseconds PostgreSQL keeps of a finer date), `jsonb` as PostgreSQL
/// writes it (keys sorted by length, then bytes; no insignificant blanks).
package struct PostgresValueCoding: ValueCoding {
    package init() {}

    package var name: String { "postgresql" }

    /// The class the values of `type` are read back in (through ``PostgresDatabase``).
    package func storageClass(for type: AttributeType) -> DatabaseValue.StorageClass {
        FerryValueCoding().storageClass(for: type)
    }

    /// Booleans as `true`/`false` text (what a `boolean` column, a COPY and an untyped literal
    /// all take); everything else as ``FerryValueCoding`` does.
    package func encode(_ value: Value) -> DatabaseValue {
        if case .bool(let v) = value { return .text(v ? "true" : "false") }
        return FerryValueCoding().encode(value)
    }

    package func bind(_ value: Value, to statement: Statement, at index: Int) throws {
        try statement.bind(encode(value), at: index)
    }

    package func decode(_ value: DatabaseValue, as type: AttributeType) -> Value {
        switch (value, type) {
        case (.text(let v), .date):
            return Self.instant(fromTimestamp: v).map(Value.date) ?? .string(v)
        default:
            return FerryValueCoding().decode(value, as: type)
        }
    }

    /// A value as ``PostgresDatabase`` reads it, in ferry's own stored forms
    /// (``FerryValueCoding``): what every reader of a fetch on a PostgreSQL store sees, so that
    /// it sees the bytes a SQLite store gives for the same object.
    package func storedForm(_ value: DatabaseValue, as type: AttributeType) -> DatabaseValue {
        FerryValueCoding().encode(decode(value, as: type))
    }

    /// The instant of PostgreSQL's ISO output of a `timestamptz` in UTC
    /// (`2024-05-01 12:30:00.123456+00`): whole milliseconds as ferry keeps dates, microseconds
    /// (a Core Data date that went in between two milliseconds) as exactly as the server kept them;
    /// nil for anything else (`infinity`, years BC).
    static func instant(fromTimestamp text: String) -> Timestamp? {
        var bytes = Array(text.utf8)
        guard bytes.count >= 19, bytes[10] == UInt8(ascii: " "), text.hasSuffix("+00") else { return nil }
        bytes[10] = UInt8(ascii: "T")
        bytes.removeLast(3)
        bytes.append(UInt8(ascii: "Z"))
        return DateCoding.parseStored(String(decoding: bytes, as: UTF8.self))
    }
}
