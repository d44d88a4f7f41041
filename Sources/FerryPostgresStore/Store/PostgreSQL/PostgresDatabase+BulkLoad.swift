import FerryCore
import FerryPostgres

/// Foreign keys around a bulk load: PostgreSQL checks each row written into a table with a
/// foreign key by a trigger that looks the referenced row up, one lookup per row and key (four
/// times the time of the `COPY` itself for a table with four references). Into an empty table,
/// inside one transaction, dropping the keys and adding them back at the end checks every row at
/// once instead (one join per key), as pgloader does; the transaction keeps it safe: a failure
/// or a kill rolls the drop back with the rows.
extension PostgresDatabase {
    package func liftReferenceChecks(forBulkLoadInto table: String) throws -> [String] {
        guard isInTransaction, try scalar("SELECT count(*) FROM (SELECT 1 FROM \(table) LIMIT 1) AS rows")?.int64 == 0
        else { return [] }
        let keys = try rows(
            """
            SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', conrelid::regclass, conname),
                   format('ALTER TABLE %s ADD CONSTRAINT %I %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
            FROM pg_catalog.pg_constraint WHERE contype = 'f' AND conrelid = ?::regclass ORDER BY conname
            """, [.text(table)])
        var restore: [String] = []
        for key in keys {
            guard let drop = key[0].text, let add = key[1].text else { continue }
            try execute(drop)
            restore.append(add)
        }
        return restore
    }
}

// MARK: - Bulk load, key generators, batched lookups

extension PostgresDatabase {
    /// `COPY … FROM STDIN` into the session's schema; a client error names the store and table.
    package func bulkLoad(
        into table: String, columns: [String], layout: any StoreLayout,
        _ rows: (_ append: ([DatabaseValue]) throws -> Void) throws -> Void
    ) throws {
        do {
            try connection.copy(into: table, schema: schema, columns: columns) { writer in
                try rows { row in try writer.append(row.map(Self.postgresValue)) }
            }
        } catch let error as PostgresError {
            throw FerryError(
                .store, "PostgreSQL store \(location) (schema \(schema)), table \(table): \(error.description)")
        }
    }

    /// Sets the identity sequence of `column` to one past its largest value (`setval`).
    package func advanceKeyGenerator(of table: String, column: String) throws {
        let qualified = PostgresIdentifier.quote(schema) + "." + PostgresIdentifier.quote(table)
        try execute(
            "SELECT setval(pg_get_serial_sequence(?, ?), coalesce(max(\(PostgresIdentifier.quote(column))), 0) + 1, false) FROM \(qualified)",
            [.text(qualified), .text(column)])
    }

    /// One query per batch of keys (``PostgresKeyLookup``).
    package func batchKeyLookup(source: String, keyColumn: String, matchColumn: String) -> (any BatchKeyLookup)? {
        PostgresKeyLookup(database: self, source: source, keyColumn: keyColumn, matchColumn: matchColumn)
    }
}
