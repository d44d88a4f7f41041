import FerryCore
import FerryPostgres
import Logging

/// Writes records into one entity of a PostgreSQL store at `COPY` speed, with the outcomes and
/// reasons ``BatchInserter`` gives on SQLite row by row, for every conflict policy.
///
/// A record is decided in two stages. ``stage(_:supplied:)`` checks in ferry what needs no
/// server (validation rules, defaults, required values: ``PostgresRecordRules``) and encodes the
/// row in COPY's text format (`PostgresCopyText`) with its key; ``flush()`` then settles the batch:
///
/// 1. at a batch's first row a block of ``capacity`` keys is reserved from the table's identity
///    sequence (never below a key the table holds); rows take them in record order, and the
///    flush hands the unused ones back;
/// 2. unless the last batch had collisions, the rows go straight into the entity's table with
///    one `COPY` in a savepoint (the server's bulk insert). When ``streamsWhileStaging``, that
///    COPY opens at the batch's first row and rows are sent while later ones are still read and
///    coerced, so the server stores one part of the batch while ferry prepares the next (two
///    processes, two cores); the flush only ends it. If no row collides, every row is inserted;
///    a constraint error rolls the savepoint back and the batch takes the next steps;
/// 3. the same encoded rows go through `COPY … FROM STDIN` into a temporary staging table (no
///    constraints, so the COPY cannot fail on a record);
/// 4. `INSERT … SELECT … ORDER BY key ON CONFLICT DO NOTHING` moves them into the entity's
///    table in record order: a row colliding with a stored object or with an earlier row of the
///    same batch is left out, exactly the rows SQLite's row-by-row inserts reject;
/// 5. when some were left out, one query over the staged rows the table does not hold finds,
///    for each, the constraints an object stored before it holds (existing objects and the rows inserted ahead of it), naming the
///    one declared last as SQLite does.
///
/// `update` and `replace` stage the records the same way (with the values each supplies), then
/// update the objects they match and insert the others set-based (`PostgresStagedMerge`). So
/// does a sync import (`mode: sync`, given its ``SyncTracker``), which matches by its key, counts
/// `unchanged` records and notes the rows the source has in the tracker's table.
///
/// Only the first COPY can fail on a record's values, inside its savepoint, so the step's
/// transaction goes on. The outcomes come back in record order.
package final class PostgresStagedInserter: StagingRecordInserter {
    package let entity: EntityDescription
    package let policy: ConflictPolicy
    private let database: PostgresDatabase
    let rules: PostgresRecordRules
    /// The entity's table, schema-qualified and quoted, and its name.
    private let table: String
    private let tableName: String
    /// Whether rows of the last batch collided with stored objects or each other: when not, the
    /// next batch first tries going straight into the table (``copyDirectly()``).
    private var lastBatchCollided = false
    /// The key column, quoted and as named.
    private let keyColumn: String
    private let keyName: String
    /// The staging table (in `pg_temp`), unquoted and quoted.
    private let stagingName: String
    private let staging: String
    /// The stored columns the records supply, quoted.
    private let quotedNames: [String]
    /// Per to-one column the records supply: the condition that a staged row `s`'s key names
    /// an object of the destination (or is null). A row whose key names none is left out of
    /// the staging table's `INSERT` and rejected on its own, as SQLite's foreign key rejects it.
    private let referenceConditions: [String]
    /// The record columns that are to-one relationships to the entity itself.
    private let selfReferenceColumns: [Int]
    /// Whether a staged row of the batch names a key of the batch above its own (an object staged
    /// after it): one COPY would accept it, as the server checks foreign keys at the statement's
    /// end, while SQLite rejects it; so the batch takes the staging table.
    private var forwardReference = false
    /// The staged rows in COPY's text format, the reserved key first.
    private var rows: PostgresCopyText
    private var encoded: [DatabaseValue]
    /// For `update` and `replace`: the staged rows' values (`columns.count` each), their supplied
    /// flags (empty while every staged record supplies every value), and the set-based writing.
    private var mergeValues: [DatabaseValue] = []
    private var supplied: [Bool] = []
    private var tracksSupplied = false
    private let merge: PostgresStagedMerge?
    /// For a sync: the key's columns, and the staged rows of the batch that are claims
    /// (``stagePresent(key:)``), whose outcomes are not the caller's.
    private let syncKeyColumns: [Int]
    private var claims: [Int] = []
    /// The first key of the block reserved for the batch (nil before its first row).
    private var firstKey: Int64?
    /// Whether the caller uses the store's connection for nothing else between ``stage(_:supplied:)``
    /// calls, so the direct COPY can stay open while records are staged.
    package let streamsWhileStaging: Bool
    /// The direct COPY of the batch while it streams, and how many bytes of ``rows`` it was sent.
    private var stream: PostgresCopyStream?
    private var sentBytes = 0
    /// A constraint error the server reported while the batch streamed.
    private var streamCollided = false
    /// How many rows are staged.
    package var stagedCount: Int { rows.rowCount }
    /// The rows staged before a flush is due.
    package let capacity: Int
    /// Bytes of encoded rows sent to the streaming COPY at a time.
    private static let sendBytes = 128 * 1024
    /// The savepoint around a streaming direct COPY.
    private static let savepoint = "ferry_direct_copy"

    /// Prepares the SQL for `columns` of `entityName` in the PostgreSQL store `database`. With
    /// `streamsWhileStaging`, the caller promises not to use the connection between
    /// ``stage(_:supplied:)`` calls until ``flush()`` (no reference lookups, no sync bookkeeping).
    /// With `sync`, the records of a `mode: sync` import are matched by the tracker's key (which
    /// `columns` must include) and `policy` is `replace` if asked, else `update`.
    package init(
        database: PostgresDatabase, model: ObjectModel, layout: any StoreLayout, entity entityName: String,
        columns: [InsertColumn],
        policy: ConflictPolicy, validate: Bool = true, capacity: Int = 10_000, streamsWhileStaging: Bool = false,
        sync: SyncTracker? = nil
    ) throws {
        rules = try PostgresRecordRules(
            model: model, layout: layout, entity: entityName, columns: columns, validate: validate)
        entity = rules.entity
        // A sync updates what it finds (replace if asked, else update), as on SQLite.
        let policy = sync == nil ? policy : (policy == .replace ? .replace : .update)
        self.policy = policy
        let keyColumns = try sync?.keyColumns(in: columns) ?? []
        syncKeyColumns = keyColumns
        self.database = database
        self.capacity = max(capacity, 1)
        // update and replace always go through the staging table: nothing streams.
        self.streamsWhileStaging = streamsWhileStaging && (policy == .error || policy == .keep)
        let dialect = layout.dialect
        tableName = layout.table(for: entity)
        table = dialect.quote(database.schema) + "." + dialect.quote(tableName)
        keyColumn = dialect.quote(layout.keyColumn)
        keyName = layout.keyColumn
        stagingName = database.uniqueTemporaryName("ferry_staging")
        staging = "pg_temp." + dialect.quote(stagingName)
        quotedNames = rules.plan.storedNames.map { dialect.quote($0) }
        let (table, keyColumn, staging, quotedNames) = (table, keyColumn, staging, quotedNames)
        referenceConditions = rules.plan.keyColumns.map { column in
            let name = quotedNames[column.parameter - 1]
            let destination =
                dialect.quote(database.schema) + "."
                + dialect.quote(layout.table(forEntityNamed: column.relationship.destination))
            let stored = "EXISTS (SELECT 1 FROM \(destination) AS r WHERE r.\(keyColumn) = s.\(name))"
            guard destination == table else { return "(s.\(name) IS NULL OR \(stored))" }
            // The row itself, or an object of the same entity stored or staged ahead of it
            // (SQLite checks a row's foreign key once the row is written; a key above the row's
            // is taken later, whether or not that row is in the table by now).
            let staged =
                "EXISTS (SELECT 1 FROM \(staging) AS r WHERE r.\(keyColumn) = s.\(name) AND r.\(keyColumn) <= s.\(keyColumn))"
            return "(s.\(name) IS NULL OR (s.\(name) <= s.\(keyColumn) AND (\(stored) OR \(staged))))"
        }
        let entityName = entity.name
        selfReferenceColumns = rules.plan.keyColumns.compactMap { column in
            column.relationship.destination == entityName ? column.parameter - 1 : nil
        }
        encoded = Array(repeating: .null, count: columns.count)
        merge =
            policy == .update || policy == .replace
            ? try PostgresStagedMerge(
                database: database, model: model, layout: layout, rules: rules, policy: policy, table: table,
                staging: staging,
                sync: sync.map { PostgresSyncMatch(keyColumns: keyColumns, seenTable: $0.seenTable) })
            : nil
        rows = PostgresCopyText(
            columns: [layout.keyColumn] + rules.plan.storedNames + (merge.map { [$0.maskName] } ?? []))
    }

    /// The keys of the rows staged in this batch, in record order (empty before its first row).
    package var stagedKeys: Range<Int64> {
        guard let firstKey else { return 0..<0 }
        return firstKey..<(firstKey + Int64(stagedCount))
    }

    /// True when ``capacity`` rows wait for ``flush()``.
    package var isFull: Bool { stagedCount >= capacity }

    /// Decides what ferry can decide about a record now: a rejection (a broken rule, a missing
    /// required value, text PostgreSQL cannot store), or nil when the row is staged and
    /// ``flush()`` will give its outcome.
    package func stage(_ values: [Value], supplied: [Bool]?) throws -> InsertOutcome? {
        try stage(values, supplied: supplied, admit: nil)
    }

    /// ``stage(_:supplied:)``, where `admit`, given the encoded values once the rules
    /// passed, may still reject the record before it is staged (and may flush the inserter).
    package func stage(
        _ values: [Value], supplied: [Bool]?, admit: (([DatabaseValue]) throws -> InsertOutcome?)?
    ) throws -> InsertOutcome? {
        if let rejection = rules.encode(values, supplied: supplied, into: &encoded) { return rejection }
        if let admit, let rejection = try admit(encoded) { return rejection }
        if merge == nil, let rejection = rules.missingValue(in: encoded) { return rejection }
        if let column = syncKeyColumns.first(where: { encoded[$0].isNull }) {
            return SyncTracker.nullKeyRejection(name: rules.columns[column].name, column: column)
        }
        // Whether a required value is missing depends on whether the record updates an object:
        // the merge decides, with the values and the flags of what was supplied.
        return try stageRow(mask: supplied.map { String($0.map { $0 ? "1" : "0" }) }, supplied: supplied)
    }

    /// Stages a claim of a sync import: no record of its own, but the object holding this key
    /// (`values` aligned with the columns, the key's values set) is present in the source, in
    /// its place among the staged records. For a record rejected before staging whose key could
    /// be read; ``flush()`` gives no outcome for it.
    package func stagePresent(key values: [Value]) throws {
        precondition(merge != nil && !syncKeyColumns.isEmpty, "claims are a sync's")
        for index in encoded.indices { encoded[index] = .null }
        for index in syncKeyColumns { encoded[index] = rules.coding.encode(values[index]) }
        claims.append(stagedCount)
        if try stageRow(mask: PostgresStagedMerge.claimMask, supplied: nil) != nil {
            // Key text holding U+0000 cannot be staged: such a key is in no stored object.
            claims.removeLast()
        }
    }

    /// Appends ``encoded`` as the next staged row (its key first, then, for a merge, its mask of
    /// supplied values); the rejection of text PostgreSQL cannot store, else nil.
    private func stageRow(mask: String?, supplied: [Bool]?) throws -> InsertOutcome? {
        let first = try firstKey ?? beginBatch()
        do {
            try rows.appendField(.integer(first + Int64(rows.rowCount)))
            for value in encoded { try rows.appendField(Self.copyValue(value)) }
            if merge != nil {
                try rows.appendField(.text(mask ?? String(repeating: "1", count: encoded.count)))
                trackSupplied(supplied)
            }
        } catch {
            // Only text holding U+0000 cannot be encoded: the row is not staged.
            let column = error.copyColumn.flatMap { rules.plan.storedNames.firstIndex(of: $0) }
            return .rejected(reason: error.message, column: column)
        }
        rows.endRow()
        try noteForwardReference(key: first + Int64(rows.rowCount - 1))
        try sendIfDue()
        return nil
    }

    /// Notes when the row just staged (with `key`) names a later key of its own entity, and ends
    /// a streaming direct COPY then (the flush takes the staging table).
    private func noteForwardReference(key: Int64) throws {
        guard !forwardReference,
            selfReferenceColumns.contains(where: {
                if case .integer(let target) = encoded[$0] { target > key } else { false }
            })
        else { return }
        forwardReference = true
        if let stream {
            self.stream = nil
            stream.abort(because: FerryError(.store, "a record names an object staged after it"))
            streamCollided = true
        }
    }

    /// Stages a record whose values `encode` appends to its COPY row, after the key: values
    /// coerced, defaulted and checked by the caller exactly as ``stage(_:supplied:)`` checks
    /// them (``columnValidators``, ``columnDefaults``, ``requiresValue(column:)``). False, with
    /// nothing staged, when `encode` returns false or throws (text holding U+0000): the record
    /// then takes ``stage(_:supplied:)``, which gives the reason. Only when ``acceptsEncodedRows``.
    package func stageEncoded(_ encode: (inout PostgresCopyText) throws -> Bool) throws -> Bool {
        precondition(acceptsEncodedRows, "encoded rows are staged for error and keep only")
        let first = try firstKey ?? beginBatch()
        rows.appendField(first + Int64(rows.rowCount))
        let encoded: Bool
        do {
            encoded = try encode(&rows)
        } catch is PostgresError {
            encoded = false
        } catch {
            rows.discardRow()
            throw error
        }
        guard encoded else {
            rows.discardRow()
            return false
        }
        rows.endRow()
        try sendIfDue()
        return true
    }

    /// Writes the staged rows and returns their outcomes in the order they were staged:
    /// `.inserted`, or for a row colliding with a stored object or an earlier row, `.skipped`
    /// (`keep`) or the rejection naming the constraint (`error`). Inside the caller's transaction.
    package func flush() throws -> [InsertOutcome] {
        let count = stagedCount
        guard count > 0, let first = firstKey else { return [] }
        defer {
            rows.removeAll()
            mergeValues.removeAll(keepingCapacity: true)
            supplied.removeAll(keepingCapacity: true)
            tracksSupplied = false
            firstKey = nil
            claims.removeAll()
            sentBytes = 0
            streamCollided = false
            forwardReference = false
        }
        if let merge {
            try returnUnusedKeys(first: first, used: count)
            let outcomes = try flush(through: merge, first: first, count: count)
            guard !claims.isEmpty else { return outcomes }
            var claimed = claims.makeIterator()
            var nextClaim = claimed.next()
            return outcomes.enumerated().compactMap { index, outcome in
                guard index == nextClaim else { return outcome }
                nextClaim = claimed.next()
                return nil
            }
        }
        let streamed = stream != nil || streamCollided
        let inserted = streamed ? try finishStream() : false
        try returnUnusedKeys(first: first, used: count)
        var directly = inserted
        if !streamed && !lastBatchCollided && !forwardReference { directly = try copyDirectly() }
        if directly { return Array(repeating: .inserted, count: count) }
        FerryLog.postgres.debug(
            "\(count) row(s) for \(table) go through the staging table: \(streamed || !lastBatchCollided ? "a constraint stopped the direct COPY" : "the last batch collided, so no direct COPY was tried")"
        )
        lastBatchCollided = true
        try database.execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS \(staging) ON COMMIT DROP AS SELECT \(([keyColumn] + quotedNames).joined(separator: ", ")) FROM \(table) WITH NO DATA"
        )
        do {
            try copyRows(into: stagingName, schema: "pg_temp")
        } catch let error as PostgresError {
            throw storeFailure(error)
        }
        let moved = try insertStaged(first: first, count: count)
        var outcomes = Array(repeating: InsertOutcome.inserted, count: count)
        lastBatchCollided = moved.count < count || !moved.orphans.isEmpty
        if lastBatchCollided {
            for (key, constraint, missingReference) in try collisions() {
                if constraint == nil && missingReference {
                    outcomes[Int(key - first)] = .rejected(reason: Self.missingReference, column: nil)
                } else {
                    outcomes[Int(key - first)] = policy == .keep ? .skipped : rules.conflict(constraint: constraint)
                }
            }
            for key in moved.orphans {
                outcomes[Int(key - first)] = .rejected(reason: Self.missingReference, column: nil)
            }
        }
        try database.execute("TRUNCATE \(staging)")
        return outcomes
    }

    /// Moves the staged rows naming existing objects (or rows staged ahead of them) into the
    /// entity's table in record order, leaving out those a uniqueness constraint refuses; returns
    /// how many went in and the *orphans*: rows naming an object of the entity staged ahead of
    /// them that was left out, so SQLite's foreign key rejects them. Their batch's self
    /// references are checked at the end (deferred); from the first orphan on, the rows are
    /// taken out and moved again without it (removed from the staging table), until none is left.
    private func insertStaged(first: Int64, count: Int) throws -> (count: Int, orphans: [Int64]) {
        let names = ([keyColumn] + quotedNames).joined(separator: ", ")
        let moves = { (from: Int64) in
            let conditions = ["s.\(self.keyColumn) >= \(from)"] + self.referenceConditions
            try self.database.execute(
                "INSERT INTO \(self.table) (\(names)) SELECT \(names) FROM \(self.staging) AS s WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(self.keyColumn) ON CONFLICT DO NOTHING"
            )
        }
        let last = first + Int64(count) - 1
        guard !selfReferenceColumns.isEmpty else {
            try moves(first)
            return (database.changes, [])
        }
        let dangling = selfReferenceColumns.map { column in
            let name = quotedNames[column]
            return
                "(t.\(name) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(table) AS r WHERE r.\(keyColumn) = t.\(name)))"
        }
        let firstOrphan =
            "SELECT min(t.\(keyColumn)) FROM \(table) AS t WHERE t.\(keyColumn) BETWEEN \(first) AND \(last) AND (\(dangling.joined(separator: " OR ")))"
        try database.execute("SET CONSTRAINTS ALL DEFERRED")
        var orphans: [Int64] = []
        var from = first
        while true {
            try moves(from)
            guard let orphan = try database.scalar(firstOrphan, [])?.int64 else { break }
            orphans.append(orphan)
            try database.execute("DELETE FROM \(table) WHERE \(keyColumn) BETWEEN \(orphan) AND \(last)")
            try database.execute("DELETE FROM \(staging) WHERE \(keyColumn) = \(orphan)")
            from = orphan + 1
        }
        try database.execute("SET CONSTRAINTS ALL IMMEDIATE")
        let inserted =
            try database.scalar("SELECT count(*) FROM \(table) WHERE \(keyColumn) BETWEEN \(first) AND \(last)", [])?
            .int64 ?? 0
        return (Int(inserted), orphans)
    }

    /// Notes a staged `update`/`replace` record's values and supplied flags for the merge.
    private func trackSupplied(_ flags: [Bool]?) {
        mergeValues += encoded
        if let flags, flags.contains(false), !tracksSupplied {
            supplied = Array(repeating: true, count: (rows.rowCount) * encoded.count)
            tracksSupplied = true
        }
        if tracksSupplied { supplied += flags ?? Array(repeating: true, count: encoded.count) }
    }

    /// `update` and `replace`: the rows and their supplied flags go into the staging table, and
    /// `merge` writes them.
    private func flush(through merge: PostgresStagedMerge, first: Int64, count: Int) throws -> [InsertOutcome] {
        let names = ([keyColumn] + quotedNames).joined(separator: ", ")
        try database.execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS \(staging) ON COMMIT DROP AS SELECT \(names), ''::text AS \(PostgresIdentifier.quote(merge.maskName)) FROM \(table) WITH NO DATA"
        )
        do {
            try copyRows(into: stagingName, schema: "pg_temp")
        } catch let error as PostgresError {
            throw storeFailure(error)
        }
        try database.execute("ANALYZE \(staging)")
        return try merge.write(
            first: first, count: count, values: mergeValues, width: encoded.count, supplied: supplied)
    }

    /// The batch's first row: reserves its keys. Returns the first key.
    private func beginBatch() throws -> Int64 {
        let first = try reserveKeys(capacity)
        firstKey = first
        return first
    }

    /// When the batch streams and ``sendBytes`` of complete rows wait, sends them, opening the
    /// direct COPY in a savepoint first when it is not open yet (so a batch whose records were all
    /// refused never opens one).
    private func sendIfDue() throws {
        guard streamsWhileStaging, !lastBatchCollided, !streamCollided, !forwardReference,
            rows.bytes.count - sentBytes >= Self.sendBytes
        else { return }
        if stream == nil {
            // Sent in one message with the COPY's start.
            database.connection.hold("SAVEPOINT \(Self.savepoint)")
            do {
                stream = try database.connection.beginCopy(
                    into: tableName, schema: database.schema, columns: rows.columns)
            } catch {
                throw storeFailure(error)
            }
        }
        try sendStreamed()
    }

    /// Sends the rows encoded since the last send to the streaming COPY. A constraint error the
    /// server reports ends the stream; the flush then takes the staging path.
    private func sendStreamed() throws {
        guard let stream else { return }
        do {
            try stream.send(rows.bytes[sentBytes...])
            sentBytes = rows.bytes.count
        } catch  where error.sqlState?.hasPrefix("23") == true {
            self.stream = nil
            streamCollided = true
        } catch {
            self.stream = nil
            throw storeFailure(error)
        }
    }

    /// Ends the streaming direct COPY: true when every row went in (the savepoint is released),
    /// false when a constraint stopped it (the savepoint is rolled back, nothing of it stays).
    private func finishStream() throws -> Bool {
        try sendStreamed()
        if let stream {
            self.stream = nil
            do {
                try stream.finish()
                database.connection.hold("RELEASE SAVEPOINT \(Self.savepoint)")
                return true
            } catch  where error.sqlState?.hasPrefix("23") == true {
                streamCollided = true
            } catch {
                throw storeFailure(error)
            }
        }
        try database.executeScript("ROLLBACK TO SAVEPOINT \(Self.savepoint); RELEASE SAVEPOINT \(Self.savepoint)")
        return false
    }

    /// The optimistic path when the batch did not stream: the rows go straight into the
    /// entity's table with one COPY (the server's bulk insert, as fast as `psql \copy`), inside
    /// a savepoint. True when it worked, so no row collided with a stored object or another row
    /// and all are inserted; false when a constraint stopped it: the savepoint is rolled back
    /// and nothing of the COPY stays.
    private func copyDirectly() throws -> Bool {
        do {
            try database.connection.transaction {
                try copyRows(into: tableName, schema: database.schema)
            }
            return true
        } catch let error as PostgresError where error.sqlState?.hasPrefix("23") == true {
            return false
        } catch let error as PostgresError {
            throw storeFailure(error)
        }
    }

    /// Sends the staged rows (key first) into `schema.table` with one COPY.
    private func copyRows(into table: String, schema: String) throws {
        try Self.copy(rows, into: table, schema: schema, on: database)
    }

    /// Sends `rows` into `schema.table` of `database` with one COPY (cancelled if sending fails).
    static func copy(_ rows: PostgresCopyText, into table: String, schema: String, on database: PostgresDatabase) throws
    {
        let stream = try database.connection.beginCopy(into: table, schema: schema, columns: rows.columns)
        do {
            try stream.send(rows.bytes[...])
        } catch {
            stream.abort(because: error)
            throw error
        }
        try stream.finish()
    }

    /// A value as the COPY sends it: integers as digits (the column decides their type, as a
    /// `boolean` takes 1 and 0), the rest as ``PostgresDatabase`` sends parameters.
    static func copyValue(_ value: DatabaseValue) -> PostgresValue {
        if case .integer(let number) = value { return .integer(number) }
        return PostgresDatabase.postgresValue(value)
    }

    private func storeFailure(_ error: PostgresError) -> FerryError {
        FerryError(
            .store, "import into \(entity.name) on PostgreSQL store \(database.location) failed: \(error.description)")
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

    /// Hands the keys of the batch's block that no row took back to the sequence (one writer
    /// per store, so nobody took keys after them); sent with the next statement.
    private func returnUnusedKeys(first: Int64, used: Int) throws {
        guard used < capacity else { return }
        try database.executeWithNext(
            "SELECT setval(pg_get_serial_sequence(?1, ?2), ?3)",
            [.text(table), .text(keyName), .integer(first + Int64(used) - 1)])
    }

    /// SQLite's reason for a row whose to-one key names no object (its foreign key failing).
    package static let missingReference = "a relationship points to an object that does not exist"

    /// The staged rows the entity's table does not hold (they were not inserted) with the uniqueness constraint
    /// each breaks: the last one declared that an object stored before the row holds (nil when
    /// none is found; a broken constraint decides before a missing reference, as on SQLite), and
    /// whether one of its to-one keys names no object. NULLs never conflict.
    private func collisions() throws -> [(key: Int64, constraint: Int?, missingReference: Bool)] {
        // `keep` needs no reason (a row left out is skipped) unless a missing reference may have left it out.
        let checks: [String] =
            policy == .keep && referenceConditions.isEmpty
            ? []
            : rules.constraints.map { constraint in
                let condition = constraint.columns.map { "t.\(quotedNames[$0]) = s.\(quotedNames[$0])" }.joined(
                    separator: " AND ")
                return "EXISTS (SELECT 1 FROM \(table) AS t WHERE \(condition) AND t.\(keyColumn) < s.\(keyColumn))"
            }
        let notInserted = "NOT EXISTS (SELECT 1 FROM \(table) AS t WHERE t.\(keyColumn) = s.\(keyColumn))"
        let missing = referenceConditions.map { "NOT \($0)" }
        let sql =
            "SELECT s.\(keyColumn)\((checks + missing).map { ", " + $0 }.joined()) FROM \(staging) AS s WHERE \(notInserted) ORDER BY s.\(keyColumn)"
        return try database.rows(sql, []).map { row in
            let key = row[0].int64 ?? 0
            let broken = (1..<(1 + checks.count)).last { row[$0].int64 == 1 }
            let missingReference = row.dropFirst(1 + checks.count).contains { $0.int64 == 1 }
            return (key, broken.map { $0 - 1 }, missingReference)
        }
    }
}
