import Foundation

/// A property a batch insert writes: an attribute, or a to-one relationship given as the
/// related object's primary key (`.integer(ferry_pk)`).
public enum InsertColumn: Sendable, Hashable {
    /// An attribute, by name.
    case attribute(String)
    /// A to-one relationship, by name: its value is the related object's primary key
    /// (`.integer`) or `.null`; any other value rejects the row (on every backend).
    case relationship(String)

    /// The attribute's or relationship's name.
    public var name: String {
        switch self {
        case .attribute(let name), .relationship(let name): return name
        }
    }
}

/// What happened to one record of a batch insert.
package enum InsertOutcome: Sendable, Hashable {
    case inserted
    case updated
    /// A sync found the record's row with the same values: nothing was written.
    case unchanged
    case skipped
    /// The record was refused; `column` is the index of the offending column when known.
    case rejected(reason: String, column: Int?)
}

/// Inserts rows into one entity with a prepared statement, applying validation and a conflict
/// policy row by row: the engine behind ``BatchInsertRequest`` and the `import` step.
///
/// Use inside a write transaction (``Store/write(_:)``). Record-level problems (a failed rule, a
/// uniqueness conflict under `.error`, a missing required value) come back as `.rejected`; only
/// store failures throw.
package final class BatchInserter {
    package let entity: EntityDescription
    package let columns: [InsertColumn]
    package let policy: ConflictPolicy
    private let connection: Connection
    /// For a sync: the rows seen so far; the existing object is found by its key only, and
    /// updated only when a value differs.
    private let sync: SyncTracker?
    /// For a sync: the indexes of the key's columns.
    private let syncKeyColumns: [Int]
    private let coding: DispatchedValueCoding
    private let types: [AttributeType?]
    private let validators: [AttributeValidator?]
    private let defaults: [Value?]
    /// The columns' stored names, types, rules and relationships.
    private let plan: InsertColumnPlan
    private let insert: Statement
    private let update: Statement?
    /// For update/replace: statements finding the existing object through each usable uniqueness
    /// constraint, with the column indexes they bind.
    private let finders: [(statement: Statement, columns: [Int])]
    private var encoded: [DatabaseValue]
    /// What the layout writes beside each row (Core Data's keys, entity numbers and versions).
    private let bookkeeping: (any InsertBookkeeping)?
    /// The other side of each one-to-one the record sets, where the layout stores both sides.
    private let oneToOnes: (any OneToOneMirroring)?
    /// The primary key of the object the last `.inserted` or `.updated` (or `.unchanged`)
    /// outcome wrote or found: how nested imports link related objects.
    package private(set) var lastKey: Int64?
    /// What a ``MultiRowInsert`` for this inserter needs: nil when rows must be written one by one.
    private let multiRowSource: (table: String, columns: [String])?
    /// The prepared ``MultiRowInsert`` (nil inside when none can be made), once asked for.
    private var preparedMultiRow: MultiRowInsert??
    /// The property names of the stored columns SQLite names in a constraint failure
    /// (`ZPERSON.ZPERSONID` → `personID` in Core Data's layout, `Person.personID` in ferry's).
    private let constraintNames: [String: String]

    /// Prepares the statements for `columns` of `entityName` in a store of `layout`.
    package init(
        connection: Connection, model: ObjectModel, layout: any StoreLayout, entity entityName: String,
        columns: [InsertColumn],
        policy: ConflictPolicy = .error, validate: Bool = true, sync: SyncTracker? = nil, matchKey: [String]? = nil
    ) throws {
        // A sync updates what it finds (replace if asked, else update).
        let policy = sync == nil ? policy : (policy == .replace ? .replace : .update)
        guard let entity = model.entity(named: entityName) else {
            throw FerryError(.usage, "the model has no entity '\(entityName)'")
        }
        self.entity = entity
        self.columns = columns
        self.policy = policy
        self.connection = connection
        self.sync = sync
        syncKeyColumns = try sync?.keyColumns(in: columns) ?? []
        self.coding = DispatchedValueCoding(layout.valueCoding)
        let dialect = layout.dialect
        let plan = try InsertColumnPlan(columns: columns, of: entity, model: model, layout: layout, validate: validate)
        self.plan = plan
        let storedNames = plan.storedNames
        self.types = plan.types
        self.validators = plan.validators
        self.defaults = plan.defaults
        let keyColumns = plan.keyColumns
        self.encoded = Array(repeating: .null, count: columns.count)

        let table = layout.quotedTable(for: entity)
        let names = storedNames.map { dialect.quote($0) }
        var constraintNames: [String: String] = [:]
        for name in columns.map(\.name) + entity.uniquenessConstraints.joined()
        where entity.attribute(named: name) != nil {
            constraintNames[layout.table(for: entity) + "." + layout.column(forAttribute: name, in: entity)] = name
        }
        self.constraintNames = constraintNames
        let bookkeeping = try layout.insertBookkeeping(
            on: connection, model: model, entity: entity, keyColumns: keyColumns,
            suppliedAttributes: Set(columns.compactMap { if case .attribute(let name) = $0 { name } else { nil } }))
        self.bookkeeping = bookkeeping
        oneToOnes = try layout.oneToOneMirror(
            on: connection, model: model, entity: entity, relationships: keyColumns.map(\.relationship))
        // Bookkeeping values come after the record's, so the record's `?` keep their numbers.
        let values = Array(repeating: "?", count: columns.count) + (bookkeeping?.values ?? [])
        let placeholders = values.isEmpty ? "" : "VALUES (" + values.joined(separator: ", ") + ")"
        let insertNames = names + (bookkeeping?.columns.map { dialect.quote($0) } ?? [])
        insert = try connection.prepare(
            dialect.insert(
                into: table, columns: insertNames, values: placeholders, onConflict: policy == .keep ? .ignore : .fail))
        // Several rows per statement only where a row's outcome needs no statement of its own:
        // plain inserts (`error`: a refused row stops the statement, the rows before it stay).
        multiRowSource = policy == .error && sync == nil && bookkeeping == nil ? (table, insertNames) : nil

        if policy == .update || policy == .replace {
            // `?N` is the value and `?(N + count + 1)` says whether this record supplied it, so one
            // statement serves records that supply different attributes (JSON keys may be absent).
            let flagBase = columns.count + 1
            var assignments = names.enumerated().map {
                "\($0.element) = CASE WHEN ?\(flagBase + $0.offset + 1) THEN ?\($0.offset + 1) ELSE \($0.element) END"
            }
            // Each change of an object counts in its version (Core Data's Z_OPT).
            if let increment = layout.versionIncrement { assignments.append(increment) }
            if policy == .replace {
                // Overwrite: every attribute the record does not supply returns to its default.
                let supplied = Set(columns.map(\.name))
                for attribute in entity.attributes where !supplied.contains(attribute.name) {
                    let value = attribute.defaultValue.map { layout.valueCoding.sqlLiteral($0, in: dialect) } ?? "NULL"
                    assignments.append("\(layout.quotedColumn(forAttribute: attribute.name, in: entity)) = \(value)")
                }
            }
            let keyIndex = columns.count + 1
            var condition = "\(dialect.quote(layout.keyColumn)) = ?\(keyIndex)"
            if sync != nil {
                // A sync writes only a row whose values differ (changes() tells updated from unchanged).
                var differences = names.enumerated().map {
                    "(?\(flagBase + $0.offset + 1) AND \($0.element) IS NOT ?\($0.offset + 1))"
                }
                if policy == .replace {
                    let supplied = Set(columns.map(\.name))
                    for attribute in entity.attributes where !supplied.contains(attribute.name) {
                        let value =
                            attribute.defaultValue.map { layout.valueCoding.sqlLiteral($0, in: dialect) } ?? "NULL"
                        differences.append(
                            "\(layout.quotedColumn(forAttribute: attribute.name, in: entity)) IS NOT \(value)")
                    }
                }
                if !differences.isEmpty { condition += " AND (\(differences.joined(separator: " OR ")))" }
            }
            update =
                assignments.isEmpty
                ? nil
                : try connection.prepare(
                    "UPDATE \(table) SET \(assignments.joined(separator: ", ")) WHERE \(condition)")
            var finders: [(Statement, [Int])] = []
            for constraint in sync.map({ [$0.key] }) ?? matchKey.map({ [$0] }) ?? entity.uniquenessConstraints {
                let indexes = constraint.compactMap { name in columns.firstIndex { $0.name == name } }
                guard indexes.count == constraint.count else { continue }
                // `=`, not `IS`: a null never matches (nulls never conflict in a unique index),
                // so a record without a nick does not take over some object without one.
                // Only the entity's own objects (and its sub-entities'), never a sibling's in a shared table.
                let matching = layout.selection(
                    of: entity, alias: "t0",
                    where: constraint.map { "t0.\(layout.quotedColumn(forAttribute: $0, in: entity)) = ?" }.joined(
                        separator: " AND "))
                finders.append(
                    (
                        try connection.prepare(
                            "SELECT t0.\(dialect.quote(layout.keyColumn)) FROM \(matching.from) WHERE \(matching.sql)"),
                        indexes
                    ))
            }
            guard !finders.isEmpty else {
                throw FerryError(
                    .usage,
                    "on_conflict: \(policy.rawValue) needs the record to supply every attribute of one of \(entity.name)'s uniqueness constraints"
                )
            }
            self.finders = finders
        } else {
            update = nil
            finders = []
        }
    }

    /// Validates and writes one record. `values` is aligned with ``columns``; a `.null` value of
    /// an attribute that has a default takes the default.
    ///
    /// `supplied` (aligned with ``columns``, nil meaning all) marks the values the record really
    /// has: an unsupplied attribute gets its default when inserted and is left unchanged by
    /// `update` (Core Data's pitfall of resetting unsupplied attributes does not happen here).
    package func insert(_ values: [Value], supplied: [Bool]? = nil) throws -> InsertOutcome {
        precondition(values.count == columns.count, "one value per column")
        // Without update/replace the values are bound straight away (the fast path of imports);
        // otherwise they are kept encoded to look up the existing object first.
        let direct = policy == .error || policy == .keep
        if direct { insert.reset() }
        for index in 0..<values.count {
            var value = values[index]
            if let supplied, !supplied[index] {
                // Not validated here: an update leaves it alone, and an insert that needs it
                // fails on the column's NOT NULL constraint with "X is required".
                value = defaults[index] ?? .null
                // A Core Data table has no NOT NULL to refuse a missing required value.
                if bookkeeping != nil, value.isNull, let problem = validators[index]?.problem(with: value) {
                    return .rejected(reason: problem, column: index)
                }
                if direct {
                    try coding.bind(value, to: insert, at: index + 1)
                } else {
                    encoded[index] = coding.encode(value)
                }
                continue
            }
            if value.isNull, let fallback = defaults[index] { value = fallback }
            if let problem = plan.problem(with: value, column: index) {
                return .rejected(reason: problem, column: index)
            }
            if direct {
                try coding.bind(value, to: insert, at: index + 1)
            } else {
                encoded[index] = coding.encode(value)
            }
        }
        if direct { return try stepInsert() }
        if sync != nil, let column = syncKeyColumns.first(where: { encoded[$0].isNull }) {
            return SyncTracker.nullKeyRejection(name: columns[column].name, column: column)
        }
        lastKey = nil
        if policy == .update || policy == .replace, let key = try existingKey() {
            lastKey = key
            if let sync, !(try sync.markSeen(key)) {
                return SyncTracker.repeatedKeyRejection(
                    key: syncKeyColumns.map { columns[$0].name }, values: syncKeyValues, column: syncKeyColumns.first)
            }
            // The object exists: change it in place, keeping its identity (and relationships to it).
            guard let update else { return sync == nil ? .skipped : .unchanged }
            update.reset()
            for index in 0..<encoded.count {
                try update.bind(encoded[index], at: index + 1)
            }
            try update.bind(key, at: encoded.count + 1)
            for index in 0..<encoded.count {
                let isSupplied = policy == .replace || (supplied?[index] ?? true)
                try update.bind(Int64(isSupplied ? 1 : 0), at: encoded.count + 2 + index)
            }
            do {
                try update.step()
            } catch let error as FerryError {
                return try rejection(for: error)
            }
            if sync != nil && connection.changes == 0 { return .unchanged }
            try oneToOnes?.mirror(key: key)
            return .updated
        }
        insert.reset()
        for index in 0..<encoded.count {
            try insert.bind(encoded[index], at: index + 1)
        }
        return try stepInsert()
    }

    /// Runs the bound insert; for a Core Data store, records the key it took.
    private func stepInsert() throws -> InsertOutcome {
        do {
            try insert.step()
        } catch let error as FerryError {
            return try rejection(for: error)
        }
        if policy == .keep && connection.changes == 0 { return .skipped }
        lastKey = connection.lastInsertRowID
        try bookkeeping?.recordInsert()
        try oneToOnes?.mirror(key: connection.lastInsertRowID)
        if let sync { _ = try sync.markSeen(connection.lastInsertRowID) }
        return .inserted
    }

    /// The key's values of the record being written, for a sync's messages.
    private var syncKeyValues: [Value] {
        syncKeyColumns.map { index in types[index].map { coding.decode(encoded[index], as: $0) } ?? .null }
    }

    // MARK: - Direct binding (the import fast path)

    /// True when rows can be bound column by column with ``bindDirect(_:column:)`` and friends:
    /// the `error` and `keep` policies, which need no lookup of an existing object, in a store
    /// that keeps values in ferry's forms (the fast path binds dates and UUIDs as ferry's text;
    /// a Core Data store keeps them as reference-date seconds and 16 bytes).
    package var supportsDirectBinding: Bool { (policy == .error || policy == .keep) && bookkeeping == nil }

    /// The validator of a column (nil when validation is off or the column is a relationship).
    package func validator(forColumn index: Int) -> AttributeValidator? { validators[index] }

    /// The default value of a column's attribute.
    package func defaultValue(forColumn index: Int) -> Value? { defaults[index] }

    /// Starts a row for direct binding.
    @inline(__always)
    package func beginDirectRow() { insert.reset() }

    @inline(__always)
    package func bindDirect(_ value: Value, column index: Int) throws {
        try coding.bind(value, to: insert, at: index + 1)
    }

    @inline(__always)
    package func bindDirect(utf8 bytes: UnsafeBufferPointer<UInt8>, column index: Int) throws {
        try insert.bind(utf8: bytes, at: index + 1)
    }

    @inline(__always)
    package func bindDirect(_ value: Int64, column index: Int) throws {
        try insert.bind(value, at: index + 1)
    }

    @inline(__always)
    package func bindDirect(_ value: Double, column index: Int) throws {
        try insert.bind(value, at: index + 1)
    }

    /// Writes the directly bound row.
    package func finishDirectRow() throws -> InsertOutcome {
        try stepInsert()
    }

    /// A statement writing several directly bound rows at once (prepared on the first call);
    /// nil when this inserter writes rows one by one (`keep`, `update`, `replace`, a sync, a Core
    /// Data store) or a row has too many values. After ``MultiRowInsert/write()`` wrote rows,
    /// call ``didWriteMultipleRows()``.
    package func multiRowInsert() throws -> MultiRowInsert? {
        if let preparedMultiRow { return preparedMultiRow }
        let made = try multiRowSource.flatMap {
            try MultiRowInsert(connection: connection, table: $0.table, columns: $0.columns, coding: coding)
        }
        preparedMultiRow = .some(made)
        return made
    }

    /// Records that a ``MultiRowInsert`` wrote its rows (``lastKey`` is then its last row's key).
    package func didWriteMultipleRows() {
        lastKey = connection.lastInsertRowID
    }

    private func existingKey() throws -> Int64? {
        for (statement, indexes) in finders {
            statement.reset()
            for (position, index) in indexes.enumerated() {
                try statement.bind(encoded[index], at: position + 1)
            }
            if try statement.step() {
                let key = statement.int64(at: 0)
                // An active statement would keep the connection from dropping tables (a sync's
                // and a batch delete's temporary tables).
                statement.reset()
                return key
            }
        }
        return nil
    }

    /// Turns a constraint failure into a rejection; other store errors are rethrown.
    private func rejection(for error: FerryError) throws -> InsertOutcome {
        guard let result = error.underlying as? SQLiteResult, result.isConstraint else { throw error }
        // SQLite says e.g. "UNIQUE constraint failed: Customer.id, Customer.email".
        let detail = error.message.components(separatedBy: "constraint failed: ").last ?? error.message
        // The properties, whatever the layout calls their columns.
        let names = detail.split(separator: ",").map {
            let qualified = $0.trimmingCharacters(in: .whitespaces)
            return constraintNames[qualified] ?? qualified.replacingOccurrences(of: "\(entity.name).", with: "")
        }
        let column = names.first.flatMap { name in columns.firstIndex { $0.name == name } }
        if result.isUniqueConstraint {
            return .rejected(
                reason:
                    "another \(entity.name) already has the same \(names.joined(separator: ", ")) (uniqueness constraint)",
                column: column)
        }
        if result.isNotNullConstraint {
            return .rejected(reason: "\(names.first ?? "a property") is required", column: column)
        }
        if result.isForeignKeyConstraint {
            return .rejected(reason: "a relationship points to an object that does not exist", column: column)
        }
        return .rejected(reason: error.message, column: column)
    }
}

/// Finds the primary key of the object of `entity` whose unique attribute equals a value: how
/// imports resolve to-one relationships (an order's `customer_id` → the Customer with that `id`).
///
/// On SQLite the lookup is a prepared statement; on any other ``DatabaseConnection`` (PostgreSQL)
/// it is the same query sent with the value as its argument.
package final class ReferenceResolver {
    /// The entity whose records name the key.
    package let entityName: String
    /// The to-one relationship the key links.
    package let relationshipName: String
    package let destination: EntityDescription
    package let matchAttribute: AttributeDescription
    private let lookup: (DatabaseValue) throws -> Int64?

    private let coding: any ValueCoding
    /// What the in-memory copy of the destination's keys needs (SQLite, an integer match attribute
    /// that is unique on its own); nil otherwise.
    private let snapshotSource: (connection: Connection, sql: String)?
    private var snapshotEnabled = false
    private var snapshot: IntegerKeyRuns?
    /// The `data_version` the copy was taken at: another connection's commit changes it.
    private var snapshotVersion: Int64?
    /// The destination could not be copied (too many runs, a key stored as something else).
    private var snapshotRefused = false

    /// Why a record is rejected when its key names no object: one wording for keys linked by
    /// `relationships:` and for nested objects linked by key (`Order.customer: no Customer with
    /// id = 9`).
    package static func unmatchedKeyReason(
        entity: String, relationship: String, destination: String, attribute: String, key: String
    ) -> String {
        "\(entity).\(relationship): no \(destination) with \(attribute) = \(key)"
    }

    /// The largest copy of a destination's keys: 2^19 runs, 12 MiB.
    package static let maximumSnapshotRuns = 1 << 19

    /// What ``prefetch(_:)`` resolves a batch of keys with (one query), where the session has one
    /// (a server's); nil on SQLite.
    private let batchLookup: (any BatchKeyLookup)?
    /// PostgreSQL: the keys ``prefetch(_:)`` resolved (nil: no object has it), while enabled
    /// by ``resolveFromSnapshot()``; emptied at each transaction (``revalidateSnapshot()``).
    private var prefetched: [DatabaseValue: Int64?] = [:]
    /// The most keys kept from ``prefetch(_:)``: beyond, the copy starts again.
    package static let maximumPrefetchedKeys = 1 << 20

    package convenience init(
        connection: Connection, model: ObjectModel, layout: any StoreLayout, entity entityName: String,
        relationship relationshipName: String, match: String
    ) throws {
        try self.init(
            database: connection, model: model, layout: layout, entity: entityName, relationship: relationshipName,
            match: match)
    }

    package init(
        database: any DatabaseConnection, model: ObjectModel, layout: any StoreLayout, entity entityName: String,
        relationship relationshipName: String, match: String
    ) throws {
        guard let entity = model.entity(named: entityName),
            let relationship = entity.relationship(named: relationshipName), !relationship.isToMany
        else {
            throw FerryError(.usage, "\(entityName) has no to-one relationship '\(relationshipName)'")
        }
        // Found by the engine conformance suite: a one-to-one whose key this layout keeps on the
        // other side (a ferry store keeps it on one side, Core Data on both) has no column in the
        // imported row. Said here, where the caller locates it at the step's mapping, before any
        // row is read (the batch inserter's own check was unlocated and came after the steps before).
        if case .inverseForeignKey(let table, let column) = layout.storage(of: relationship, in: entity, model: model) {
            throw FerryError(
                .usage,
                "\(entityName).\(relationshipName) is one side of a one-to-one whose key this store keeps in \(table).\(column); 'relationships:' links only keys kept in \(entityName)'s rows: map \(relationship.destination).\(model.inverse(of: relationship, in: entity)?.name ?? column) in the step that imports \(relationship.destination), or link nested objects with 'nested: true'"
            )
        }
        guard let destination = model.entity(named: relationship.destination),
            let attribute = destination.attribute(named: match)
        else {
            throw FerryError(.usage, "\(relationship.destination) has no attribute '\(match)'")
        }
        self.entityName = entityName
        self.relationshipName = relationshipName
        self.destination = destination
        self.matchAttribute = attribute
        coding = layout.valueCoding
        let sql =
            "SELECT \(layout.dialect.quote(layout.keyColumn)) FROM \(layout.quotedSource(for: destination)) WHERE \(layout.quotedColumn(forAttribute: match, in: destination)) = ? LIMIT 2"
        if let connection = database as? Connection {
            if attribute.type.isInteger && destination.uniquenessConstraints.contains([match]) {
                let column = layout.quotedColumn(forAttribute: match, in: destination)
                let sql =
                    "SELECT \(column), \(layout.dialect.quote(layout.keyColumn)) FROM \(layout.quotedSource(for: destination)) WHERE \(column) IS NOT NULL ORDER BY \(column)"
                snapshotSource = (connection, sql)
            } else {
                snapshotSource = nil
            }
            let statement = try connection.prepare(sql)
            lookup = { value in
                statement.reset()
                try statement.bind(value, at: 1)
                guard try statement.step() else { return nil }
                let key = statement.int64(at: 0)
                statement.reset()  // not left active (see existingKey())
                return key
            }
        } else {
            snapshotSource = nil
            lookup = { value in try database.scalar(sql, [value])?.int64 }
        }
        batchLookup = database.batchKeyLookup(
            source: layout.quotedSource(for: destination), keyColumn: layout.dialect.quote(layout.keyColumn),
            matchColumn: layout.quotedColumn(forAttribute: match, in: destination))
    }

    /// The primary key of the matching object, nil when none matches.
    package func resolve(_ value: Value) throws -> Int64? {
        let encoded = coding.encode(value)
        // Only PostgreSQL fills it: SQLite's hot path does not hash the key for nothing.
        if !prefetched.isEmpty, let primaryKey = prefetched[encoded] { return primaryKey }
        if snapshotEnabled, case .integer(let key) = encoded, let runs = try currentSnapshot(),
            let primaryKey = runs.primaryKey(for: key)
        {
            return primaryKey
        }
        return try lookup(encoded)
    }

    /// Resolves keys from an in-memory copy of the destination's keys and primary keys
    /// (``IntegerKeyRuns``, at most ``maximumSnapshotRuns``), taken inside the first write
    /// transaction that resolves a key; a key the copy lacks is still looked up by query, so
    /// objects written after the copy (by the same import) are found.
    ///
    /// Only for a caller under which the copied objects keep their keys and stay (an import that
    /// does not update or delete objects of the destination), and which calls
    /// ``revalidateSnapshot()`` at the start of each transaction. Without an integer match
    /// attribute that is unique on its own, every key is looked up by query. On PostgreSQL it
    /// enables ``prefetch(_:)`` instead.
    package func resolveFromSnapshot() {
        snapshotEnabled = snapshotSource != nil || batchLookup != nil
    }

    /// PostgreSQL, once ``resolveFromSnapshot()`` enabled it: resolves every key of `keys` not
    /// resolved yet with one query (a join of the keys with the destination), so that
    /// ``resolve(_:)`` answers them, found or not, without asking the server again until the
    /// transaction ends. Does nothing on SQLite, or when not enabled.
    package func prefetch(_ keys: [Value]) throws {
        try Self.prefetch([(self, keys)])
    }

    /// ``prefetch(_:)`` for several resolvers on one session, with one query for all of them
    /// where the engine joins lookups (``BatchKeyLookup/primaryKeys(_:)``).
    package static func prefetch(_ requests: [(resolver: ReferenceResolver, keys: [Value])]) throws {
        var lookups: [(lookup: any BatchKeyLookup, keys: [DatabaseValue])] = []
        var resolvers: [ReferenceResolver] = []
        for (resolver, keys) in requests {
            guard resolver.snapshotEnabled, let batchLookup = resolver.batchLookup else { continue }
            let missing = resolver.keysToPrefetch(keys, lookup: batchLookup)
            guard !missing.isEmpty else { continue }
            lookups.append((batchLookup, missing))
            resolvers.append(resolver)
        }
        guard let first = lookups.first?.lookup else { return }
        let found = try first.primaryKeys(lookups)
        for ((resolver, request), keys) in zip(zip(resolvers, lookups), found) {
            for (key, primaryKey) in zip(request.keys, keys) { resolver.prefetched[key] = .some(primaryKey) }
        }
    }

    /// The keys of `keys` not resolved yet that `lookup` can send, each once (making room for them).
    private func keysToPrefetch(_ keys: [Value], lookup: any BatchKeyLookup) -> [DatabaseValue] {
        var missing: [DatabaseValue] = []
        var wanted = Set<DatabaseValue>()
        for key in keys {
            let encoded = coding.encode(key)
            if prefetched[encoded] == nil, lookup.canSend(encoded), wanted.insert(encoded).inserted {
                missing.append(encoded)
            }
        }
        if prefetched.count + missing.count > Self.maximumPrefetchedKeys { prefetched.removeAll() }
        return missing
    }

    /// Drops the copy when another connection committed since it was taken (SQLite's
    /// `data_version`); the next key takes a new one. Call at the start of each transaction.
    /// On PostgreSQL, forgets the keys ``prefetch(_:)`` resolved.
    package func revalidateSnapshot() throws {
        prefetched.removeAll(keepingCapacity: true)
        guard snapshot != nil || snapshotRefused, let source = snapshotSource else { return }
        if try source.connection.scalar("PRAGMA data_version")?.int64 != snapshotVersion {
            snapshot = nil
            snapshotRefused = false
        }
    }

    /// True when keys are being resolved from a copy (for tests and reports).
    package var resolvesFromSnapshot: Bool { snapshot != nil }

    private func currentSnapshot() throws -> IntegerKeyRuns? {
        if let snapshot { return snapshot }
        guard !snapshotRefused, let (connection, sql) = snapshotSource, connection.isInTransaction else { return nil }
        snapshotVersion = try connection.scalar("PRAGMA data_version")?.int64
        let statement = try connection.prepare(sql)
        defer { statement.reset() }
        var storedOtherwise = false
        let runs = try IntegerKeyRuns(maximumRuns: Self.maximumSnapshotRuns) {
            guard try statement.step() else { return nil }
            guard statement.storageClass(at: 0) == .integer else {
                storedOtherwise = true
                return nil
            }
            return (statement.int64(at: 0), statement.int64(at: 1))
        }
        snapshot = storedOtherwise ? nil : runs
        snapshotRefused = snapshot == nil
        return snapshot
    }
}
