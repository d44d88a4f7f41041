/// Quoting of SQL identifiers (table, column, schema names) for statements built from names.
public enum PostgresIdentifier {
    /// `name` as a quoted identifier: `"name"`, with inner `"` doubled.
    public static func quote(_ name: String) -> String {
        "\"" + name.replacing("\"", with: "\"\"") + "\""
    }
}
