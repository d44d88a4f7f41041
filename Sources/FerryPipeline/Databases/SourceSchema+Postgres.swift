import FerryCore
import FerryPostgres
import Foundation

extension SourceSchema {
    /// Reads the tables of one schema of a PostgreSQL database from its catalog (`pg_class`,
    /// `pg_attribute`, `pg_constraint`, `pg_index`) in a read-only transaction: the URL's
    /// `?schema=`, else the session's current schema (`public`). Foreign keys to tables of other
    /// schemas are kept with their qualified names (and stay plain values in the model).
    package static func postgres(url: String) throws -> SourceSchema {
        let connection: PostgresConnection
        let schema: String
        do {
            let parsed = try PostgresURL(url)
            connection = try PostgresConnection(url: parsed)
            try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            schema = try parsed.schema ?? connection.execute("SELECT current_schema()").rows[0].string(0)
        } catch {
            throw FerryError(
                .io,
                "cannot read the schema of \((try? PostgresURL(url).description) ?? "the PostgreSQL URL"): \(PostgresSourceCursor.reason(error))"
            )
        }
        defer { connection.close() }
        let separator = "\u{1F}"
        func names(_ text: String) -> [String] { text.isEmpty ? [] : text.components(separatedBy: separator) }
        do {
            var tables: [Table] = []
            let tableNames = try connection.execute(
                """
                SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.relkind IN ('r', 'p') AND n.nspname = $1 AND NOT c.relispartition ORDER BY c.relname
                """, [.text(schema)]
            ).rows.map { try $0.string(0) }
            for name in tableNames {
                let relation = PostgresValue.text(
                    PostgresIdentifier.quote(schema) + "." + PostgresIdentifier.quote(name))
                let columns = try connection.execute(
                    """
                    SELECT a.attname, a.atttypid::bigint, a.attnotnull, coalesce(pg_get_expr(d.adbin, d.adrelid), ''),
                        format_type(a.atttypid, a.atttypmod)
                    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                    WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum
                    """, [relation]
                ).rows.map { row in
                    let defaultSQL = try row.string(3)
                    return Column(
                        name: try row.string(0), declaredType: SourceColumnType.postgres(oid: UInt32(try row.int(1))),
                        notNull: try row.bool(2), defaultSQL: defaultSQL.isEmpty ? nil : defaultSQL,
                        declared: try row.string(4))
                }
                var primaryKey: [String] = []
                var foreignKeys: [ForeignKey] = []
                for row in try connection.execute(
                    """
                    SELECT con.contype::text,
                        array_to_string(ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(n, o)
                            JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o), E'\\x1f'),
                        coalesce((SELECT CASE WHEN rn.nspname = $2 THEN r.relname ELSE rn.nspname || '.' || r.relname END
                            FROM pg_class r JOIN pg_namespace rn ON rn.oid = r.relnamespace WHERE r.oid = con.confrelid), ''),
                        array_to_string(ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(n, o)
                            JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.o), E'\\x1f')
                    FROM pg_constraint con WHERE con.conrelid = $1::regclass AND con.contype IN ('p', 'f') ORDER BY con.conname
                    """, [relation, .text(schema)]
                ).rows {
                    if try row.string(0) == "p" {
                        primaryKey = names(try row.string(1))
                    } else {
                        foreignKeys.append(
                            ForeignKey(
                                columns: names(try row.string(1)), table: try row.string(2),
                                referencedColumns: names(try row.string(3))))
                    }
                }
                // Unique indexes (UNIQUE constraints among them) and other indexes on plain columns,
                // not partial ones.
                var uniqueKeys: [[String]] = []
                var indexes: [[String]] = []
                for row in try connection.execute(
                    """
                    SELECT array_to_string(ARRAY(SELECT a.attname FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o)
                            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o), E'\\x1f'),
                        i.indexprs IS NULL AND i.indpred IS NULL AND i.indnkeyatts = cardinality(i.indkey::int2[]),
                        i.indisunique
                    FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                    WHERE i.indrelid = $1::regclass AND NOT i.indisprimary ORDER BY ic.relname
                    """, [relation]
                ).rows where try row.bool(1) {
                    let key = names(try row.string(0))
                    guard !key.isEmpty else { continue }
                    if try row.bool(2) {
                        if !uniqueKeys.contains(key) { uniqueKeys.append(key) }
                    } else if !indexes.contains(key) {
                        indexes.append(key)
                    }
                }
                var table = Table(
                    name: name, columns: columns, primaryKey: primaryKey, foreignKeys: foreignKeys,
                    uniqueKeys: uniqueKeys)
                table.indexes = indexes
                tables.append(table)
            }
            _ = try? connection.execute("COMMIT")
            return SourceSchema(tables: tables, name: schema)
        } catch let error as FerryError {
            throw error
        } catch {
            throw FerryError(
                .io, "cannot read the schema '\(schema)' of \(connection.url): \(PostgresSourceCursor.reason(error))")
        }
    }
}
