/// A value as SQLite stores it: one of its five storage classes.
public enum DatabaseValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// SQLite's five storage classes, without the value.
    public enum StorageClass: Sendable, Hashable {
        case null, integer, real, text, blob
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

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
