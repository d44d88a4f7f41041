/// How a store layout keeps typed values in its columns: ferry's lossless text forms
/// (``FerryValueCoding``), or another tool's (Core Data's dates as seconds since 2001, UUIDs as
/// 16-byte blobs). A store's ``StoreLayout/valueCoding`` is used by every part of ferry that
/// writes or reads values, so the same value always reaches the store in the same form.
package protocol ValueCoding: Sendable {
    /// Names the coding: two codings with the same name store every value the same way, so
    /// stored values copy between their stores as they are.
    var name: String { get }
    /// The storage class values of `type` are kept in (what the column is declared as).
    func storageClass(for type: AttributeType) -> DatabaseValue.StorageClass
    /// The stored form of a typed value.
    func encode(_ value: Value) -> DatabaseValue
    /// Binds a value in its stored form (the import hot path: implementations avoid building an
    /// intermediate ``DatabaseValue`` where they can).
    func bind(_ value: Value, to statement: Statement, at index: Int) throws
    /// The typed value of a stored value for an attribute type. Values another tool wrote in
    /// another storage class are converted where that is exact.
    func decode(_ value: DatabaseValue, as type: AttributeType) -> Value
    /// SQL of `expression` (a stored date, or a date literal in its stored form) that compares
    /// and sorts in the order of the instants: `expression` itself where the stored form does.
    func orderedDate(_ expression: String) -> String
}

extension ValueCoding {
    /// Stored dates that compare as the instants do: numbers, or a server's timestamp type.
    package func orderedDate(_ expression: String) -> String { expression }

    /// A SQL literal of a value in its stored form, in `dialect` (only for DDL defaults and
    /// assignments of constants, never for data).
    package func sqlLiteral(_ value: Value, in dialect: any SQLDialect) -> String {
        dialect.literal(encode(value))
    }
}
