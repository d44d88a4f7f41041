import FerryPostgres

/// Writes records into one entity of a PostgreSQL store at `COPY` speed, with the outcomes and
/// reasons ``BatchInserter`` gives on SQLite row by row, for every conflict policy.
///
/// A record is decided in two stages. ``stage(_:supplied:)`` checks in ferry what needs no
/// server (validation rules, defaults, required values: ``PostgresRecordRules``) and keeps the
/// encoded row; ``flush()`` then moves the kept rows in one go:
///
/// 1. a block of keys is reserved from the table's identity sequence, one per row in record
///    order (never below a key the table holds);
/// 2. unless the last batch had collisions, the rows first go straight into the entity's table
///    with one `COPY` in a savepoint (the server's bulk insert): if no row collides, that is
///    all, and every row is inserted; a constraint error rolls the savepoint back and the
///    batch takes the next steps;
/// 3. the rows go through `COPY … FROM STDIN` into a temporary staging table (no constraints,
///    so the COPY cannot fail on a record);
/// 4. `INSERT … SELECT … ORDER BY key ON CONFLICT DO NOTHING` moves them into the entity's
///    table in record order: a row colliding with a stored object or with an earlier row of the
///    same batch is left out, exactly the rows SQLite's row-by-row inserts reject;
/// 5. when some were left out, one query over the staged rows the table does not hold finds,
///    for each, the constraints an object stored before it holds (existing objects and the rows inserted ahead of it), naming the
///    one declared last as SQLite does.
///
/// `update` and `replace` stage the records the same way (with the values each supplies), then
/// update the objects they match and insert the others set-based (`PostgresStagedMerge`).
///
/// Only the first COPY can fail on a record's values, inside its savepoint, so the step's
/// transaction goes on. The outcomes come back in record order.
package final class PostgresStagedInserter: StagingRecordInserter {
    package let entity: EntityDescription
    package let policy: ConflictPolicy
    private let database: PostgresDatabase
    private let rules: PostgresRecordRules
    /// The entity's table, schema-qualified and quoted, and its name.
    private let table: String
    private let tableName: String
    /// Whether rows of the last batch collided with stored objects or each other: when not, the
    /// next batch first tries going straight into the table (``copyDirectly(count:width:)``).
    private var lastBatchCollided = false
    /// The key column, quoted and as named.
    private let keyColumn: String
    private let keyName: String
    /// The staging table (in `pg_temp`), unquoted and quoted.
    private let stagingName: String
    private let staging: String
    /// The stored columns the records supply, quoted.
    private let quotedNames: [String]
    /// The staged rows, `columns.count + 1` values each (the reserved key's slot first).
    private var rows: [PostgresValue] = []
    /// For `update` and `replace`: the staged rows' supplied flags, `columns.count` each (empty
    /// while every staged record supplies every value), and the set-based writing.
    private var supplied: [Bool] = []
    private var tracksSupplied = false
    private let merge: PostgresStagedMerge?
    private var encoded: [DatabaseValue]
    /// How many rows are staged.
    package private(set) var stagedCount = 0
    /// The rows staged before a flush is due.
    package let capacity: Int

    /// Prepares the SQL for `columns` of `entityName` in the PostgreSQL store `database`.
    package init(
        database: PostgresDatabase, model: ObjectModel, layout: any StoreLayout, entity entityName: String,
        columns: [InsertColumn],
        policy: ConflictPolicy, validate: Bool = true, capacity: Int = 10_000
    ) throws {
        rules = try PostgresRecordRules(
            model: model, layout: layout, entity: entityName, columns: columns, validate: validate)
        entity = rules.entity
        self.policy = policy
        self.database = database
        self.capacity = max(capacity, 1)
        let dialect = layout.dialect
        tableName = layout.table(for: entity)
        table = dialect.quote(database.schema) + "." + dialect.quote(tableName)
        keyColumn = dialect.quote(layout.keyColumn)
        keyName = layout.keyColumn
        stagingName = database.uniqueTemporaryName("ferry_staging")
        staging = "pg_temp." + dialect.quote(stagingName)
        quotedNames = rules.plan.storedNames.map { dialect.quote($0) }
        encoded = Array(repeating: .null, count: columns.count)
        merge =
            policy == .update || policy == .replace
            ? try PostgresStagedMerge(
                database: database, model: model, layout: layout, rules: rules, policy: policy, table: table,
                staging: staging)
            : nil
    }

    /// True when ``capacity`` rows wait for ``flush()``.
    package var isFull: Bool { stagedCount >= capacity }

    /// Decides what ferry can decide about a record now: a rejection (a broken rule, a missing
    /// required value), or nil when the row is staged and ``flush()`` will give its outcome.
    package func stage(_ values: [Value], supplied: [Bool]?) throws -> InsertOutcome? {
        if let rejection = rules.encode(values, supplied: supplied, into: &encoded) { return rejection }
        if merge != nil {
            // Whether a required value is missing depends on whether the record updates an object.
            if let supplied, supplied.contains(false), !tracksSupplied {
                self.supplied = Array(repeating: true, count: stagedCount * encoded.count)
                tracksSupplied = true
            }
            if tracksSupplied { self.supplied += supplied ?? Array(repeating: true, count: encoded.count) }
        } else if let rejection = rules.missingValue(in: encoded) {
            return rejection
        }
        rows.append(.null)  // the key, reserved at the flush
        for value in encoded { rows.append(PostgresDatabase.postgresValue(value)) }
        stagedCount += 1
        return nil
    }

    /// Writes the staged rows and returns their outcomes in the order they were staged:
    /// `.inserted`, or for a row colliding with a stored object or an earlier row, `.skipped`
    /// (`keep`) or the rejection naming the constraint (`error`). Inside the caller's transaction.
    package func flush() throws -> [InsertOutcome] {
        let count = stagedCount
        guard count > 0 else { return [] }
        defer {
            rows.removeAll(keepingCapacity: true)
            supplied.removeAll(keepingCapacity: true)
            tracksSupplied = false
            stagedCount = 0
        }
        let first = try reserveKeys(count)
        let width = quotedNames.count + 1
        for row in 0..<count { rows[row * width] = .integer(first + Int64(row)) }
        if let merge {
            return try flush(through: merge, first: first, count: count, width: width)
        }
        if lastBatchCollided == false, try copyDirectly(count: count, width: width) {
            return Array(repeating: .inserted, count: count)
        }
        try database.execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS \(staging) ON COMMIT DROP AS SELECT \(([keyColumn] + quotedNames).joined(separator: ", ")) FROM \(table) WITH NO DATA"
        )
        do {
            try copyRows(into: stagingName, schema: "pg_temp", count: count, width: width)
        } catch let error as PostgresError {
            throw FerryError(
                .store,
                "import into \(entity.name) on PostgreSQL store \(database.location) failed: \(error.description)")
        }
        let names = ([keyColumn] + quotedNames).joined(separator: ", ")
        try database.execute(
            "INSERT INTO \(table) (\(names)) SELECT \(names) FROM \(staging) ORDER BY \(keyColumn) ON CONFLICT DO NOTHING"
        )
        var outcomes = Array(repeating: InsertOutcome.inserted, count: count)
        lastBatchCollided = database.changes < count
        if database.changes < count {
            for (key, constraint) in try collisions() {
                outcomes[Int(key - first)] = policy == .keep ? .skipped : rules.conflict(constraint: constraint)
            }
        }
        try database.execute("TRUNCATE \(staging)")
        return outcomes
    }

    /// `update` and `replace`: the rows and their supplied flags go into the staging table, and
    /// `merge` writes them.
    private func flush(
        through merge: PostgresStagedMerge, first: Int64, count: Int, width: Int
    ) throws
        -> [InsertOutcome]
    {
        let names = ([keyColumn] + quotedNames).joined(separator: ", ")
        try database.execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS \(staging) ON COMMIT DROP AS SELECT \(names), ''::text AS \(PostgresIdentifier.quote(merge.maskName)) FROM \(table) WITH NO DATA"
        )
        do {
            try copyRows(into: stagingName, schema: "pg_temp", count: count, width: width, mask: merge.maskName)
        } catch let error as PostgresError {
            throw FerryError(
                .store,
                "import into \(entity.name) on PostgreSQL store \(database.location) failed: \(error.description)")
        }
        try database.execute("ANALYZE \(staging)")
        return try merge.write(first: first, count: count, rows: rows, width: width, supplied: supplied)
    }

    /// The optimistic path: the rows go straight into the entity's table with one COPY (the
    /// server's bulk insert, as fast as `psql \copy`), inside a savepoint. True when it worked,
    /// so no row collided with a stored object or another row and all are inserted; false when
    /// a constraint stopped it: the savepoint is rolled back and nothing of the COPY stays.
    private func copyDirectly(count: Int, width: Int) throws -> Bool {
        do {
            try database.connection.transaction {
                try copyRows(into: tableName, schema: database.schema, count: count, width: width)
            }
            return true
        } catch let error as PostgresError where error.sqlState?.hasPrefix("23") == true {
            lastBatchCollided = true
            return false
        } catch let error as PostgresError {
            throw FerryError(
                .store,
                "import into \(entity.name) on PostgreSQL store \(database.location) failed: \(error.description)")
        }
    }

    /// Sends the staged rows (key first) into `schema.table` with one COPY; with `mask`, each
    /// row's supplied flags (`1`/`0` per value) go into that column last.
    private func copyRows(into table: String, schema: String, count: Int, width: Int, mask: String? = nil) throws {
        let columns = [keyName] + rules.plan.storedNames + (mask.map { [$0] } ?? [])
        let allSupplied = PostgresValue.text(String(repeating: "1", count: width - 1))
        try database.connection.copy(into: table, schema: schema, columns: columns) { writer in
            for row in 0..<count {
                var values = Array(rows[(row * width)..<((row + 1) * width)])
                if mask != nil {
                    values.append(
                        supplied.isEmpty
                            ? allSupplied
                            : .text(
                                String(
                                    supplied[(row * (width - 1))..<((row + 1) * (width - 1))].map { $0 ? "1" : "0" })))
                }
                try writer.append(values)
            }
        }
    }

    /// Reserves `count` consecutive keys from the table's identity sequence and returns the
    /// first; the block starts above every key the table holds (a copy may have given keys of its own).
    private func reserveKeys(_ count: Int) throws -> Int64 {
        let sequence = "pg_get_serial_sequence(?1, ?2)"
        let arguments: [DatabaseValue] = [.text(table), .text(keyName)]
        let last = try database.scalar(
            "SELECT setval(\(sequence), GREATEST(nextval(\(sequence)), (SELECT COALESCE(max(\(keyColumn)), 0) + 1 FROM \(table))) + ?3 - 1)",
            arguments + [.integer(Int64(count))])
        guard let last = last?.int64 else {
            throw FerryError(
                .store,
                "PostgreSQL store \(database.location): \(entity.name) has no key sequence to number new objects")
        }
        return last - Int64(count) + 1
    }

    /// The staged rows the entity's table does not hold (they were not inserted) with the uniqueness constraint
    /// each breaks: the last one declared that an object stored before the row holds (nil when
    /// none is found). NULLs never conflict.
    private func collisions() throws -> [(key: Int64, constraint: Int?)] {
        // `keep` needs no reason: a row left out is skipped.
        let checks: [String] =
            policy == .keep
            ? []
            : rules.constraints.map { constraint in
                let condition = constraint.columns.map { "t.\(quotedNames[$0]) = s.\(quotedNames[$0])" }.joined(
                    separator: " AND ")
                return "EXISTS (SELECT 1 FROM \(table) AS t WHERE \(condition) AND t.\(keyColumn) < s.\(keyColumn))"
            }
        let notInserted = "NOT EXISTS (SELECT 1 FROM \(table) AS t WHERE t.\(keyColumn) = s.\(keyColumn))"
        let sql =
            "SELECT s.\(keyColumn)\(checks.map { ", " + $0 }.joined()) FROM \(staging) AS s WHERE \(notInserted) ORDER BY s.\(keyColumn)"
        return try database.rows(sql, []).map { row in
            let key = row[0].int64 ?? 0
            let broken = row.indices.dropFirst().last { row[$0].int64 == 1 }
            return (key, broken.map { $0 - 1 })
        }
    }
}
