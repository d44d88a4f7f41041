import FerryCore

/// Writes one record at a time into one entity of a PostgreSQL store, with the outcomes, reasons
/// and keys SQLite's ``BatchInserter`` gives: what a nested import needs, whose records depend on
/// the keys of the objects written just before them, so they cannot wait for a batch.
///
/// Every record-level problem is decided so that no statement fails on a record (PostgreSQL
/// cannot go on with a transaction after a failed statement): rules, defaults and required values
/// in ferry (``PostgresRecordRules``), uniqueness by `ON CONFLICT DO NOTHING` on insert and by a
/// guard on update (`NOT EXISTS` another object holding the values the update would write); when
/// a record is refused, one query names the constraint, the one declared last, as SQLite does.
///
/// Each statement is a prepared statement of the session (``PostgresStatement``): the server
/// parses and plans it once, not once per record.
///
/// Round trips per record: one (`INSERT … RETURNING` for `error` and `keep`; for `update` and
/// `replace`, one statement whose CTEs find the existing object, update it or insert the new
/// one, and return which), a second only to name a broken constraint, or when a required value
/// is missing on one of the two paths (then the lookup goes first, as SQLite decides).
///
/// For a sync (``SyncTracker``) the existing object is found by the sync key alone (the lookup,
/// then the update or the insert: two round trips), each row found or inserted is marked seen (a
/// key seen before rejects the record), and the update writes only an object whose values
/// differ; one it leaves alone is `.unchanged`, as on SQLite.
package final class PostgresRecordInserter: RecordInserting {
    package let entity: EntityDescription
    package let policy: ConflictPolicy
    /// The primary key of the object the last `.inserted` or `.updated` outcome wrote (or the
    /// `.skipped` update found), as ``BatchInserter/lastKey``.
    package internal(set) var lastKey: Int64?
    let database: PostgresDatabase
    let rules: PostgresRecordRules
    /// The rows a nested import's batch writes together (``deferInsert(_:)``), none otherwise.
    var deferred: PostgresDeferredRows
    private var encoded: [DatabaseValue]
    private let insertStatement: PostgresRecordQuery.Prepared
    /// For update/replace: the query of the existing object's key (the first constraint in order
    /// whose values one holds), the update guarded against uniqueness conflicts (nil when the
    /// entity has nothing to assign), and the query of the constraints an update would break.
    private let finder: PostgresRecordQuery.Prepared?
    private let updateStatement: PostgresRecordQuery.Prepared?
    /// For update/replace: the lookup, the update and the insert in one statement (CTEs), which
    /// returns the key found, the key updated and the key inserted (nil when the entity has
    /// nothing to assign: nothing to update).
    private let upsertStatement: PostgresRecordQuery.Prepared?
    private let updateCollisions: PostgresRecordQuery.Prepared?
    /// The query of the constraints the record's values break on insert.
    private let insertCollisions: PostgresRecordQuery.Prepared?
    /// Every uniqueness constraint of the entity, for an update's rejection: stored columns and
    /// the record column of its first attribute.
    private let constraints: [(names: [String], column: Int?)]
    /// The SQL moving the key sequence above every key the table holds, run before the first insert
    /// (another writer, a copy, may have given keys of its own).
    private var sequenceCatchUp: String?
    /// For a sync: the rows seen so far, and the indexes of the key's columns.
    private let sync: SyncTracker?
    private let syncKeyColumns: [Int]

    /// Prepares the SQL for `columns` of `entityName` in the PostgreSQL store `database`;
    /// `matchKey` (for update/replace) is the attributes existing objects are found by, else the
    /// entity's uniqueness constraints the columns cover, in order. With `sync`, objects are
    /// found by its key and the policy is `replace` if asked, else `update`.
    package init(
        database: PostgresDatabase, model: ObjectModel, layout: any StoreLayout, entity entityName: String,
        columns: [InsertColumn], policy: ConflictPolicy, validate: Bool = true, matchKey: [String]? = nil,
        sync: SyncTracker? = nil
    ) throws {
        rules = try PostgresRecordRules(
            model: model, layout: layout, entity: entityName, columns: columns, validate: validate)
        let entity = rules.entity
        self.entity = entity
        // A sync updates what it finds (replace if asked, else update).
        let policy = sync == nil ? policy : (policy == .replace ? .replace : .update)
        self.policy = policy
        self.sync = sync
        syncKeyColumns = try sync?.keyColumns(in: columns) ?? []
        let matchKey = sync?.key ?? matchKey
        self.database = database
        encoded = Array(repeating: .null, count: columns.count)
        let dialect = layout.dialect
        let table = dialect.quote(database.schema) + "." + layout.quotedTable(for: entity)
        let key = dialect.quote(layout.keyColumn)
        let names = rules.plan.storedNames.map { dialect.quote($0) }
        deferred = PostgresDeferredRows(
            schema: database.schema, tableName: layout.table(for: entity), table: table, keyName: layout.keyColumn,
            names: rules.plan.storedNames, quotedNames: names, quotedKey: key)

        var insert = PostgresRecordQuery()
        let values = names.indices.map { insert.placeholder(.value($0)) }
        insert.sql =
            names.isEmpty
            ? "INSERT INTO \(table) DEFAULT VALUES ON CONFLICT DO NOTHING RETURNING \(key)"
            : "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES (\(values.joined(separator: ", "))) ON CONFLICT DO NOTHING RETURNING \(key)"
        insertStatement = insert.prepared(on: database)
        if rules.constraints.isEmpty {
            insertCollisions = nil
        } else {
            var query = PostgresRecordQuery()
            let checks = rules.constraints.map { constraint in
                let condition = constraint.columns.map { "t.\(names[$0]) = \(query.placeholder(.value($0)))" }
                return "EXISTS (SELECT 1 FROM \(table) AS t WHERE \(condition.joined(separator: " AND ")))"
            }
            query.sql = "SELECT " + checks.joined(separator: ", ")
            insertCollisions = query.prepared(on: database)
        }
        let literal: (String) -> String = { "'" + $0.replacing("'", with: "''") + "'" }
        let sequence = "pg_get_serial_sequence(\(literal(table)), \(literal(layout.keyColumn)))"
        sequenceCatchUp =
            "SELECT setval(\(sequence), GREATEST(nextval(\(sequence)), (SELECT COALESCE(max(\(key)), 0) + 1 FROM \(table))), false)"
        let recordColumn: (String) -> Int? = { name in columns.firstIndex(of: .attribute(name)) }
        constraints = entity.uniquenessConstraints.map { constraint in
            (constraint.map { layout.column(forAttribute: $0, in: entity) }, constraint.first.flatMap(recordColumn))
        }
        guard policy == .update || policy == .replace else {
            finder = nil
            updateStatement = nil
            upsertStatement = nil
            updateCollisions = nil
            return
        }
        let matchedConstraints = (matchKey.map { [$0] } ?? entity.uniquenessConstraints).compactMap { constraint in
            let indexes = constraint.compactMap { name in columns.firstIndex { $0.name == name } }
            return indexes.count == constraint.count ? indexes : nil
        }
        guard !matchedConstraints.isEmpty else {
            throw FerryError(
                .usage,
                "on_conflict: \(policy.rawValue) needs the record to supply every attribute of one of \(entity.name)'s uniqueness constraints"
            )
        }
        // The key of the existing object: the first constraint in order whose values it holds.
        func found(in query: inout PostgresRecordQuery) -> String {
            let finders = matchedConstraints.map { indexes in
                // `=`: a null never matches, as in SQLite's lookups (nulls never conflict).
                let condition = indexes.map { "t.\(names[$0]) = \(query.placeholder(.value($0)))" }
                return "(SELECT t.\(key) FROM \(table) AS t WHERE \(condition.joined(separator: " AND ")) LIMIT 1)"
            }
            return finders.count == 1 ? finders[0] : "COALESCE(\(finders.joined(separator: ", ")))"
        }
        var find = PostgresRecordQuery()
        find.sql = "SELECT " + found(in: &find)
        finder = find.prepared(on: database)
        let defaultLiteral: (AttributeDescription?) -> String = { attribute in
            attribute?.defaultValue.map { layout.valueCoding.sqlLiteral($0, in: dialect) } ?? "NULL"
        }
        // The value of column `index` an update writes: the record's, or for `update` when the
        // record does not supply it, the object's (`replace` writes every column, an unsupplied one
        // as its default).
        func written(_ index: Int, current: String, in query: inout PostgresRecordQuery) -> String {
            let value = query.placeholder(.value(index))
            return policy == .replace
                ? value : "CASE WHEN \(query.placeholder(.flag(index))) THEN \(value) ELSE \(current) END"
        }
        // For each constraint, whether another object holds the values the update writes: the
        // record's, else the object's (`update`) or the default (`replace`).
        func holders(in query: inout PostgresRecordQuery) -> [String] {
            entity.uniquenessConstraints.map { constraint in
                let condition = constraint.map { attribute in
                    let column = layout.quotedColumn(forAttribute: attribute, in: entity)
                    let value: String
                    if let index = recordColumn(attribute) {
                        value = written(index, current: "o.\(column)", in: &query)
                    } else {
                        value = policy == .replace ? defaultLiteral(entity.attribute(named: attribute)) : "o.\(column)"
                    }
                    return "x.\(column) = \(value)"
                }
                return
                    "EXISTS (SELECT 1 FROM \(table) AS x WHERE x.\(key) <> o.\(key) AND \(condition.joined(separator: " AND ")))"
            }
        }
        // The update of the object whose key is `objectKey`, guarded against uniqueness
        // conflicts, and for a sync writing only an object whose values differ; nil when there
        // is nothing to assign (for a sync, nothing to compare).
        func updating(
            _ objectKey: (inout PostgresRecordQuery) -> String, in query: inout PostgresRecordQuery
        )
            -> String?
        {
            var writes = names.indices.map {
                (column: names[$0], value: written($0, current: "o.\(names[$0])", in: &query))
            }
            if policy == .replace {
                let supplied = Set(columns.map(\.name))
                for attribute in entity.attributes where !supplied.contains(attribute.name) {
                    writes.append(
                        (layout.quotedColumn(forAttribute: attribute.name, in: entity), defaultLiteral(attribute)))
                }
            }
            var assignments = writes.map { "\($0.column) = \($0.value)" }
            if let increment = layout.versionIncrement { assignments.append(increment) }
            guard !(sync == nil ? assignments.isEmpty : writes.isEmpty) else { return nil }
            let guards = holders(in: &query)
            var sql =
                "UPDATE \(table) AS o SET \(assignments.joined(separator: ", ")) WHERE o.\(key) = \(objectKey(&query))"
                + (guards.isEmpty ? "" : " AND NOT (\(guards.joined(separator: " OR ")))")
            if sync != nil {
                sql +=
                    " AND (\(writes.map { "o.\($0.column) IS DISTINCT FROM \($0.value)" }.joined(separator: " OR ")))"
            }
            return sql
        }
        var update = PostgresRecordQuery()
        if let sql = updating({ $0.placeholder(.key) }, in: &update) {
            update.sql = sql
            updateStatement = update.prepared(on: database)
        } else {
            updateStatement = nil
        }
        // The three in one round trip: data-modifying CTEs all run, on the same snapshot; the
        // update changes the object found, the insert runs only when none was found.
        var upsert = PostgresRecordQuery()
        let lookup = found(in: &upsert)
        if sync == nil, !names.isEmpty, let update = updating({ _ in "(SELECT k FROM f)" }, in: &upsert) {
            let inserted = names.indices.map { upsert.placeholder(.value($0)) }
            upsert.sql =
                "WITH f AS (SELECT \(lookup) AS k), u AS (\(update) RETURNING o.\(key)), i AS (INSERT INTO \(table) (\(names.joined(separator: ", "))) SELECT \(inserted.joined(separator: ", ")) WHERE (SELECT k FROM f) IS NULL ON CONFLICT DO NOTHING RETURNING \(key)) SELECT (SELECT k FROM f), (SELECT \(key) FROM u), (SELECT \(key) FROM i)"
            upsertStatement = upsert.prepared(on: database)
        } else {
            upsertStatement = nil
        }
        if entity.uniquenessConstraints.isEmpty {
            updateCollisions = nil
        } else {
            var collisions = PostgresRecordQuery()
            let checks = holders(in: &collisions)
            collisions.sql =
                "SELECT \(checks.joined(separator: ", ")) FROM \(table) AS o WHERE o.\(key) = \(collisions.placeholder(.key))"
            updateCollisions = collisions.prepared(on: database)
        }
    }

    /// Validates and writes one record, as ``BatchInserter/insert(_:supplied:)`` does.
    package func insert(_ values: [Value], supplied: [Bool]?) throws -> InsertOutcome {
        if let rejection = rules.encode(values, supplied: supplied, into: &encoded) { return rejection }
        // A parameter is sent as a C string: text holding U+0000 would be cut short there.
        if let index = encoded.firstIndex(where: Self.holdsNUL) {
            return .rejected(
                reason: "text contains the NUL character (U+0000), which PostgreSQL cannot store", column: index)
        }
        if sync != nil, let column = syncKeyColumns.first(where: { encoded[$0].isNull }) {
            return SyncTracker.nullKeyRejection(name: rules.columns[column].name, column: column)
        }
        lastKey = nil
        if let upsert = upsertStatement, rules.missingValue(in: encoded) == nil,
            rules.missingValue(in: encoded, supplied: supplied.map { $0[...] }, updating: policy == .update) == nil
        {
            return try upsertRecord(upsert, supplied: supplied)
        }
        if let finder, let key = try finder.scalar(encoded)?.int64 {
            lastKey = key
            if let sync, !(try sync.markSeen(key)) {
                return SyncTracker.repeatedKeyRejection(
                    key: sync.key, values: syncKeyColumns.map { rules.decoded(encoded, column: $0) },
                    column: syncKeyColumns.first)
            }
            return try update(key, supplied: supplied)
        }
        if let rejection = rules.missingValue(in: encoded) { return rejection }
        try catchUpSequence()
        if let key = try insertStatement.scalar(encoded)?.int64 {
            lastKey = key
            if let sync { _ = try sync.markSeen(key) }
            return .inserted
        }
        if policy == .keep { return .skipped }
        return try insertRefused()
    }

    /// The rejection of a record whose insert wrote nothing: it names the constraint broken.
    private func insertRefused() throws -> InsertOutcome {
        let broken = try insertCollisions.flatMap { try $0.rows(encoded).first }
        return rules.conflict(constraint: broken.flatMap { row in row.indices.last { row[$0].int64 == 1 } })
    }

    /// Updates the existing object or inserts the record in one statement (neither path misses
    /// a required value); the outcome and key ``insert(_:supplied:)`` would give.
    private func upsertRecord(_ upsert: PostgresRecordQuery.Prepared, supplied: [Bool]?) throws -> InsertOutcome {
        try catchUpSequence()
        let row = try upsert.rows(encoded, supplied: supplied).first ?? []
        let key: (Int) -> Int64? = { row.indices.contains($0) ? row[$0].int64 : nil }
        if let found = key(0) {
            lastKey = found
            if key(1) != nil { return .updated }
            return try updateRefused(found, supplied: supplied)
        }
        if let inserted = key(2) {
            lastKey = inserted
            return .inserted
        }
        return try insertRefused()
    }

    /// The SQL moving the key sequence on, run once before the first insert.
    private func catchUpSequence() throws {
        guard let catchUp = sequenceCatchUp else { return }
        _ = try database.scalar(catchUp)
        sequenceCatchUp = nil
    }

    /// True for text holding U+0000, which PostgreSQL text cannot store.
    package static func holdsNUL(_ value: DatabaseValue) -> Bool {
        if case .text(let text) = value { return text.utf8.contains(0) }
        return false
    }

    /// Changes the existing object `key` in place (keeping its identity and its relationships).
    private func update(_ key: Int64, supplied: [Bool]?) throws -> InsertOutcome {
        guard let updateStatement else { return sync == nil ? .skipped : .unchanged }
        if let rejection = rules.missingValue(
            in: encoded, supplied: supplied.map { $0[...] }, updating: policy == .update)
        {
            return rejection
        }
        try updateStatement.execute(encoded, supplied: supplied, key: key)
        if database.changes > 0 { return .updated }
        return try updateRefused(key, supplied: supplied)
    }

    /// The rejection of a record whose update of the object `key` wrote nothing: it names the
    /// constraint the update would break.
    private func updateRefused(_ key: Int64, supplied: [Bool]?) throws -> InsertOutcome {
        let row = try updateCollisions.flatMap { try $0.rows(encoded, supplied: supplied, key: key).first }
        guard let row, let index = row.indices.last(where: { row[$0].int64 == 1 }) else {
            // A sync's update that breaks no constraint wrote nothing because nothing differs.
            return sync == nil ? rules.conflict(constraint: nil) : .unchanged
        }
        return rules.conflict(names: constraints[index].names, column: constraints[index].column)
    }
}

/// A statement of ``PostgresRecordInserter`` and what its parameters are: PostgreSQL must infer
/// the type of every parameter it is sent, so each statement is sent only the ones it uses.
/// Built with ``placeholder(_:)`` and ``sql``, then run ``prepared(on:)`` (a prepared statement of
/// the session: the inserter runs each once or more per record).
struct PostgresRecordQuery {
    enum Slot: Hashable {
        /// The record's value of a column.
        case value(Int)
        /// Whether the record supplied the value of a column.
        case flag(Int)
        /// The existing object's key.
        case key
    }

    var sql = ""
    private(set) var slots: [Slot] = []

    /// The placeholder of `slot` (`?N`), numbered on first use.
    mutating func placeholder(_ slot: Slot) -> String {
        if let index = slots.firstIndex(of: slot) { return "?\(index + 1)" }
        slots.append(slot)
        return "?\(slots.count)"
    }

    /// The query ready to run on `database`.
    func prepared(on database: PostgresDatabase) -> Prepared {
        Prepared(statement: database.statement(sql), slots: slots)
    }

    /// A built query and its statement on the store's session, run with a record's `values`
    /// (encoded), supplied flags (nil: all) and the existing object's key.
    struct Prepared {
        let statement: PostgresStatement
        let slots: [Slot]

        func execute(_ values: [DatabaseValue], supplied: [Bool]? = nil, key: Int64 = 0) throws {
            try statement.execute(arguments(values, supplied: supplied, key: key))
        }

        func rows(_ values: [DatabaseValue], supplied: [Bool]? = nil, key: Int64 = 0) throws -> [[DatabaseValue]] {
            try statement.rows(arguments(values, supplied: supplied, key: key))
        }

        func scalar(_ values: [DatabaseValue]) throws -> DatabaseValue? {
            try statement.scalar(arguments(values, supplied: nil, key: 0))
        }

        /// The arguments of the record's `values`, supplied flags and object key, slot by slot.
        private func arguments(_ values: [DatabaseValue], supplied: [Bool]?, key: Int64) -> [DatabaseValue] {
            slots.map { slot in
                switch slot {
                case .value(let index): return values[index]
                case .flag(let index): return .integer(supplied?[index] ?? true ? 1 : 0)
                case .key: return .integer(key)
                }
            }
        }
    }
}

extension PostgresRecordInserter: KeyedRecordInserting {}
