/// A value as SQLite stores it: one of its five storage classes.
public enum DatabaseValue: Sendable, Hashable, CustomStringConvertible {
    /// SQL `NULL`.
    case null
    /// A 64-bit integer.
    case integer(Int64)
    /// A double.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob([UInt8])

    /// SQLite's five storage classes, without the value.
    public enum StorageClass: Sendable, Hashable {
        /// Null, integer, real, text and blob.
        case null, integer, real, text, blob
    }

    /// True for SQL `NULL`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value for messages: `NULL`, the number, the text, or `<N bytes>` for a blob.
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let v): return String(v)
        case .real(let v): return String(v)
        case .text(let v): return v
        case .blob(let v): return "<\(v.count) bytes>"
        }
    }

    /// The integer value, if this is an integer.
    public var int64: Int64? {
        if case .integer(let v) = self { return v }
        return nil
    }

    /// The text value, if this is text.
    public var text: String? {
        if case .text(let v) = self { return v }
        return nil
    }
}
