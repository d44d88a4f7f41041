/// Quoting of SQL identifiers (table, column, schema names) for statements built from names, and
/// the one rule of which names PostgreSQL takes as written.
///
/// PostgreSQL keeps at most 63 bytes of a name (`NAMEDATALEN - 1`) and silently cuts a longer
/// one, also when it is quoted: `"a…z"` (70 bytes) and its first 63 bytes name the same schema,
/// table or column. ferry never lets that happen to a name it creates or uses: a name a user
/// chose (a store's schema, an entity, attribute or relationship name) that PostgreSQL would cut
/// is refused (``problem(with:)``), and a name ferry derives by adding a prefix or a suffix (a
/// work schema beside the store, an index) is made to fit (``fitted(_:suffix:)``).
public enum PostgresIdentifier {
    /// The longest name PostgreSQL keeps whole, in bytes of UTF-8.
    public static let maximumLength = 63

    /// `name` as a quoted identifier: `"name"`, with inner `"` doubled.
    public static func quote(_ name: String) -> String {
        "\"" + name.replacing("\"", with: "\"\"") + "\""
    }

    /// Why PostgreSQL cannot take `name` as written (empty, a NUL byte, longer than
    /// ``maximumLength`` bytes: it would be cut), nil when it can. The one check of every name
    /// ferry creates or uses on PostgreSQL.
    public static func problem(with name: String) -> String? {
        if name.isEmpty { return "the name is empty" }
        if name.utf8.contains(0) { return "the name contains a NUL byte" }
        let length = name.utf8.count
        guard length > maximumLength else { return nil }
        return
            "'\(name)' is \(length) bytes long, over PostgreSQL's limit of \(maximumLength) bytes for a name (PostgreSQL would silently cut it to its first \(maximumLength) bytes)"
    }

    /// Why `name` cannot be the schema of a ferry store: ``problem(with:)``, or a schema
    /// PostgreSQL keeps for itself (`pg_catalog`, `pg_temp…`, `pg_toast…`, any `pg_` name, which
    /// `CREATE SCHEMA` refuses, and `information_schema`); nil when it can.
    public static func storeSchemaProblem(with name: String) -> String? {
        if let problem = problem(with: name) { return problem }
        if name.lowercased().hasPrefix("pg_") {
            return
                "'\(name)' is a schema PostgreSQL reserves for itself (names starting with 'pg_': pg_catalog, pg_temp, pg_toast, …)"
        }
        if name.lowercased() == "information_schema" {
            return "'\(name)' is PostgreSQL's own information_schema"
        }
        return nil
    }

    /// `base + suffix` when it fits in ``maximumLength`` bytes; otherwise `base` cut (at a
    /// character boundary), an underscore and 8 hexadecimal digits of a hash of the whole `base`,
    /// then `suffix`: the same for the same `base` in every ferry process, different for two
    /// bases that share their first bytes, and never longer than ``maximumLength`` (for a suffix
    /// of at most 40 bytes).
    public static func fitted(_ base: String, suffix: String) -> String {
        guard base.utf8.count + suffix.utf8.count > maximumLength else { return base + suffix }
        let tag = "_" + hexHash(base)
        var head = Substring(base)
        while head.utf8.count + tag.utf8.count + suffix.utf8.count > maximumLength, !head.isEmpty {
            head.removeLast()
        }
        return head + tag + suffix
    }

    /// 8 hexadecimal digits of FNV-1a over the UTF-8 of `text`.
    static func hexHash(_ text: String) -> String {
        var hash: UInt32 = 0x811c_9dc5
        for byte in text.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
