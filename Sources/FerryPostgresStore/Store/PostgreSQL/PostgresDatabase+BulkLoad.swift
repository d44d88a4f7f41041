import FerryCore
import FerryPostgres

/// Foreign keys around a bulk load: PostgreSQL checks each row written into a table with a
/// foreign key by a trigger that looks the referenced row up, one lookup per row and key (four
/// times the time of the `COPY` itself for a table with four references). Into an empty table,
/// inside one transaction, dropping the keys and adding them back at the end checks every row at
/// once instead (one join per key), as pgloader does; the transaction keeps it safe: a failure
/// or a kill rolls the drop back with the rows.
extension PostgresDatabase {
    /// One query finds the keys (none when the table holds a row), one statement sent with the
    /// next drops them all; the one statement returned adds them all back.
    package func liftReferenceChecks(forBulkLoadInto table: String) throws -> [String] {
        guard isInTransaction else { return [] }
        let keys = try rows(
            """
            SELECT format('ALTER TABLE %s', conrelid::regclass), format('DROP CONSTRAINT %I', conname),
                   format('ADD CONSTRAINT %I %s', conname, pg_get_constraintdef(oid))
            FROM pg_catalog.pg_constraint WHERE contype = 'f' AND conrelid = ?::regclass
                AND NOT EXISTS (SELECT 1 FROM \(table)) ORDER BY conname
            """, [.text(table)])
        guard let alter = keys.first?[0].text else { return [] }
        let drops = keys.compactMap { $0[1].text }
        let adds = keys.compactMap { $0[2].text }
        try executeWithNext(alter + " " + drops.joined(separator: ", "), [])
        return [alter + " " + adds.joined(separator: ", ")]
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
