import FerryCore

/// The ferry attribute type of a database column, from what the database declares: a SQLite
/// declared type (read the way SQLite derives a column's affinity, with the names ferry's types
/// have), or a PostgreSQL type OID. Nil when the declaration says nothing ferry can use.
package enum SourceColumnType {
    /// A SQLite declared type: `INTEGER`, `VARCHAR(20)`, `DECIMAL(10,2)`, `DATETIME`, `BLOB`, ….
    package static func sqlite(_ declared: String?) -> AttributeType? {
        guard let declared, !declared.isEmpty else { return nil }
        let name = declared.uppercased()
        func has(_ part: String) -> Bool { name.contains(part) }
        if has("BOOL") { return .bool }
        if has("UUID") || has("GUID") { return .uuid }
        if has("JSON") { return .json }
        if has("CHAR") || has("CLOB") || has("TEXT") || has("STRING") { return .string }
        if has("DATE") || has("TIME") { return .date }
        if has("INT") { return .int64 }
        if has("DEC") || has("NUMERIC") || has("MONEY") { return .decimal }
        if has("REAL") || has("FLOA") || has("DOUB") { return .double }
        if has("BLOB") || has("BINARY") || has("BYTEA") { return .binary }
        return nil
    }

    /// PostgreSQL type OIDs ferry maps (`pg_type.oid`, fixed for built-in types).
    enum PostgresOID {
        static let bool: UInt32 = 16
        static let bytea: UInt32 = 17
        static let name: UInt32 = 19
        static let int8: UInt32 = 20
        static let int2: UInt32 = 21
        static let int4: UInt32 = 23
        static let text: UInt32 = 25
        static let oid: UInt32 = 26
        static let json: UInt32 = 114
        static let float4: UInt32 = 700
        static let float8: UInt32 = 701
        static let bpchar: UInt32 = 1042
        static let varchar: UInt32 = 1043
        static let date: UInt32 = 1082
        static let timestamp: UInt32 = 1114
        static let timestamptz: UInt32 = 1184
        static let numeric: UInt32 = 1700
        static let uuid: UInt32 = 2950
        static let jsonb: UInt32 = 3802
    }

    /// A PostgreSQL column type, by OID: `bigint` → int64, `numeric` → decimal, `timestamptz`
    /// → date, `jsonb` → json, `bytea` → binary, ….
    package static func postgres(oid: UInt32) -> AttributeType? {
        switch oid {
        case PostgresOID.bool: return .bool
        case PostgresOID.bytea: return .binary
        case PostgresOID.int2: return .int16
        case PostgresOID.int4: return .int32
        case PostgresOID.int8, PostgresOID.oid: return .int64
        case PostgresOID.float4: return .float
        case PostgresOID.float8: return .double
        case PostgresOID.numeric: return .decimal
        case PostgresOID.text, PostgresOID.varchar, PostgresOID.bpchar, PostgresOID.name: return .string
        case PostgresOID.date, PostgresOID.timestamp, PostgresOID.timestamptz: return .date
        case PostgresOID.uuid: return .uuid
        case PostgresOID.json, PostgresOID.jsonb: return .json
        default: return nil
        }
    }
}
