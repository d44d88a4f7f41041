/// SQLite's SQL.
package struct SQLiteDialect: SQLDialect {
    package init() {}

    package func quote(_ identifier: String) -> String { SQL.quote(identifier) }

    package func qualified(_ name: String, in schema: String) -> String { "\(schema).\(SQL.quote(name))" }

    package func literal(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let v): return String(v)
        // SQLite has no infinity literal; a number too large for a double reads as one.
        case .real(let v): return v.isFinite ? String(v) : (v > 0 ? "9e999" : "-9e999")
        case .text(let v): return SQL.stringLiteral(v)
        case .blob(let v): return "X'" + v.map { String($0, radix: 16).leftPadded(to: 2) }.joined() + "'"
        }
    }

    /// The type whose affinity keeps the storage class (SQLite's types are the storage classes).
    package func columnType(for type: AttributeType, storedAs storage: DatabaseValue.StorageClass) -> String {
        switch storage {
        case .integer: return "INTEGER"
        case .real: return "REAL"
        case .text: return "TEXT"
        case .blob, .null: return "BLOB"
        }
    }

    package func keyColumnDefinition(_ column: String) -> String { "\(quote(column)) INTEGER PRIMARY KEY" }

    package func keyColumnDefinitionWithoutPrimaryKey(_ column: String) -> String? { nil }

    package var joinTableOptions: String { " WITHOUT ROWID" }

    package func insert(into table: String, columns: [String], values: String, onConflict: ConflictAction) -> String {
        let head =
            columns.isEmpty ? "INSERT INTO \(table)" : "INSERT INTO \(table) (\(columns.joined(separator: ", ")))"
        let body = columns.isEmpty && values.isEmpty ? " DEFAULT VALUES" : " " + values
        if case .fail = onConflict { return head + body }
        // A SELECT needs a WHERE before an upsert clause, or SQLite reads its ON as a join's.
        let source = values.hasPrefix("SELECT") && !values.contains(" WHERE ") ? body + " WHERE true" : body
        switch onConflict {
        case .fail, .ignore:
            return head + source + " ON CONFLICT DO NOTHING"
        case .update(let key, let updated):
            let assignments = updated.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
            return head + source + " ON CONFLICT(\(key.joined(separator: ", "))) DO UPDATE SET \(assignments)"
        }
    }

    package var tableExistsQuery: String { "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?" }

    package func tableExistsQuery(inSchema schema: String) -> String {
        "SELECT count(*) FROM \(qualified("sqlite_schema", in: schema)) WHERE type = 'table' AND name = ?"
    }

    package var userTableCountQuery: String {
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    }

    package var deferForeignKeysStatement: String { "PRAGMA defer_foreign_keys = ON" }

    package func isInteger(_ expression: String) -> String { "typeof(\(expression)) = 'integer'" }

    /// Decimals are text: by their value as a double, ties broken by the exact collation.
    package func ordering(_ sql: String, type: AttributeType, ascending: Bool) -> [String] {
        let direction = ascending ? "" : " DESC"
        guard type == .decimal else { return [sql + direction] }
        return ["CAST(\(sql) AS REAL)\(direction)", "\(sql) COLLATE \(FetchRequest.decimalCollation)\(direction)"]
    }
}
