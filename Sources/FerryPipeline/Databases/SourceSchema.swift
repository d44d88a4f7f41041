import FerryCore
import Foundation

/// The tables of a source database as its schema declares them: columns, primary key, foreign
/// keys and unique indexes, read from SQLite's catalog (`PRAGMA table_info`,
/// `foreign_key_list`, `index_list`) for a whole-database import (``DatabaseModelInference``).
package struct SourceSchema: Sendable, Hashable {
    package struct Column: Sendable, Hashable {
        package var name: String
        /// The ferry type the declaration maps to (``SourceColumnType``), nil when it says nothing.
        package var declaredType: AttributeType?
        package var notNull: Bool
        /// The column's default as SQL (`0`, `'new'`, `CURRENT_TIMESTAMP`), nil without one.
        package var defaultSQL: String? = nil
        /// The type as declared (`DATETIME`, `VARCHAR(20)`), nil without one.
        package var declared: String? = nil
    }

    /// A single- or multi-column reference to another table's key.
    package struct ForeignKey: Sendable, Hashable {
        package var columns: [String]
        package var table: String
        /// The referenced columns; empty means the referenced table's primary key.
        package var referencedColumns: [String]
    }

    package struct Table: Sendable, Hashable {
        package var name: String
        package var columns: [Column]
        package var primaryKey: [String]
        package var foreignKeys: [ForeignKey]
        /// Column sets of UNIQUE constraints and unique indexes (not partial ones).
        package var uniqueKeys: [[String]]
        /// Column lists of the other indexes, in index order (not partial ones, not on expressions).
        package var indexes: [[String]] = []
    }

    /// The user tables (not views, not `sqlite_…`), in name order.
    package var tables: [Table]
    /// The PostgreSQL schema the tables are in; nil for SQLite.
    package var name: String? = nil

    package func table(named name: String) -> Table? { tables.first { $0.name == name } }

    /// Reads the schema of a SQLite database, read-only.
    package static func sqlite(path: String) throws -> SourceSchema {
        guard FileManager.default.fileExists(atPath: path) else {
            throw FerryError(.noInput, "the SQLite database '\(path)' does not exist")
        }
        let connection = try Connection(path: path, readOnly: true, create: false)
        try connection.execute("PRAGMA query_only = ON")
        let names = try connection.rows(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        ).compactMap { $0.first?.text }
        var tables: [Table] = []
        for name in names {
            let quoted = SQL.quote(name)
            var columns: [Column] = []
            var primaryKey: [(Int64, String)] = []
            // cid, name, type, notnull, dflt_value, pk
            for row in try connection.rows("PRAGMA table_info(\(quoted))") {
                let column = row[1].text ?? ""
                columns.append(
                    Column(
                        name: column, declaredType: SourceColumnType.sqlite(row[2].text), notNull: row[3].int64 == 1,
                        defaultSQL: row[4].text, declared: row[2].text))
                if let position = row[5].int64, position > 0 { primaryKey.append((position, column)) }
            }
            // id, seq, table, from, to, on_update, on_delete, match
            var foreignKeys: [Int64: ForeignKey] = [:]
            for row in try connection.rows("PRAGMA foreign_key_list(\(quoted))") {
                let id = row[0].int64 ?? 0
                var key = foreignKeys[id] ?? ForeignKey(columns: [], table: row[2].text ?? "", referencedColumns: [])
                key.columns.append(row[3].text ?? "")
                if let to = row[4].text { key.referencedColumns.append(to) }
                foreignKeys[id] = key
            }
            // seq, name, unique, origin, partial
            var uniqueKeys: [[String]] = []
            var indexes: [[String]] = []
            for row in try connection.rows("PRAGMA index_list(\(quoted))") where row[4].int64 != 1 {
                guard let index = row[1].text else { continue }
                let info = try connection.rows("PRAGMA index_info(\(SQL.quote(index)))")
                let indexed = info.compactMap { $0[2].text }
                // An index on an expression has a NULL column name: it is not a column key.
                guard indexed.count == info.count, !indexed.isEmpty else { continue }
                if row[2].int64 == 1 {
                    if !uniqueKeys.contains(indexed) { uniqueKeys.append(indexed) }
                } else if !indexes.contains(indexed) {
                    indexes.append(indexed)
                }
            }
            var table = Table(
                name: name, columns: columns, primaryKey: primaryKey.sorted { $0.0 < $1.0 }.map(\.1),
                foreignKeys: foreignKeys.keys.sorted().compactMap { foreignKeys[$0] }, uniqueKeys: uniqueKeys)
            table.indexes = indexes
            tables.append(table)
        }
        return SourceSchema(tables: tables)
    }
}
