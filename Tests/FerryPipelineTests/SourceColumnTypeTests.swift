import FerryCore
import FerryFormats
import FerryPipeline
import Testing

/// How declared column types and typed database values become ferry attribute types.
@Suite("Database column types")
struct SourceColumnTypeTests {
    @Test("SQLite declared types are read by affinity, with ferry's type names")
    func sqliteDeclaredTypes() {
        let cases: [(String?, AttributeType?)] = [
            ("INTEGER", .int64), ("BIGINT", .int64), ("int", .int64), ("VARCHAR(80)", .string),
            ("NVARCHAR(120)", .string), ("TEXT", .string),
            ("CLOB", .string), ("DECIMAL(10,2)", .decimal), ("NUMERIC", .decimal), ("REAL", .double),
            ("DOUBLE PRECISION", .double),
            ("FLOAT", .double), ("BOOLEAN", .bool), ("DATETIME", .date), ("DATE", .date), ("TIMESTAMP", .date),
            ("BLOB", .binary),
            ("UUID", .uuid), ("JSON", .json), ("", nil), (nil, nil), ("GEOMETRY", nil),
        ]
        for (declared, expected) in cases {
            #expect(SourceColumnType.sqlite(declared) == expected, "\(declared ?? "nil")")
        }
    }

    @Test("PostgreSQL type OIDs")
    func postgresOIDs() {
        #expect(SourceColumnType.postgres(oid: 20) == .int64)
        #expect(SourceColumnType.postgres(oid: 21) == .int16)
        #expect(SourceColumnType.postgres(oid: 1700) == .decimal)
        #expect(SourceColumnType.postgres(oid: 1184) == .date)
        #expect(SourceColumnType.postgres(oid: 3802) == .json)
        #expect(SourceColumnType.postgres(oid: 2950) == .uuid)
        #expect(SourceColumnType.postgres(oid: 17) == .binary)
        #expect(SourceColumnType.postgres(oid: 600) == nil, "point: no ferry type, inferred from the values")
    }

    @Test("inference from typed values: each type holds its own values; text is text; mixed kinds widen to string")
    func typedValues() {
        #expect(ModelInference.inferType([.typed(.integer(1)), .null, .typed(.integer(-7))]) == .int64)
        #expect(
            ModelInference.inferType([.typed(.integer(1)), .typed(.double(1.5))]) == .string,
            "no type holds both losslessly")
        #expect(ModelInference.inferType([.typed(.binary([1, 2]))]) == .binary)
        #expect(ModelInference.inferType([.typed(.string("12"))]) == .string, "a database's text stays text")
        #expect(ModelInference.inferType([.typed(.string("2024-01-02T10:00:00Z"))]) == .date)
        #expect(ModelInference.inferType([.typed(.decimal("1.5")), .typed(.integer(2))]) == .decimal)
        #expect(ModelInference.inferType([.text("AQI="), .text("x")]) == .string, "CSV text is never binary")
    }
}
