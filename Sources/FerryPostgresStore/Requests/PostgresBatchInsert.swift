import FerryCore

/// A ``BatchInsertRequest`` on a PostgreSQL store: the rows go through the import step's
/// ``PostgresStagedInserter`` (rules and defaults decided in ferry, `COPY` into the table or a
/// staging table, every conflict policy), inside the request's transaction, so the counts and
/// the rows reported to `onReject` are those of the same request on SQLite.
///
/// A to-one relationship's value is the related object's primary key (an integer; any other
/// value is rejected by the column rules on both backends); a row naming a key no object of the
/// destination has is rejected on its own (`a relationship points to an object that does not
/// exist`, SQLite's reason for its foreign-key failure), never failing the whole request: with
/// `error` and `keep` the staged insert leaves it out (a uniqueness conflict decides first, as
/// on SQLite); with `update` and `replace`, which reject it whether it matches an object or
/// not, it is rejected before it is staged, after the validation rules and required values
/// (SQLite's order). A key of the entity itself that a row staged earlier in the batch took is
/// looked up after flushing the batch, so it names that row's object as on SQLite.
enum PostgresBatchInsert {
    static func run(
        _ request: BatchInsertRequest, on database: PostgresDatabase, model: ObjectModel, layout: any StoreLayout
    ) throws -> BatchInsertResult {
        let inserter = try PostgresStagedInserter(
            database: database, model: model, layout: layout, entity: request.entity, columns: request.columns,
            policy: request.conflictPolicy, validate: request.validate)
        let references =
            inserter.policy == .update || inserter.policy == .replace
            ? ReferenceCheck(
                request: request, model: model, layout: layout, entity: inserter.entity, database: database)
            : nil
        var result = BatchInsertResult()
        /// The rows read since the last flush: nil when staged (its outcome comes from the flush).
        var pending: [InsertOutcome?] = []
        func count(_ outcome: InsertOutcome) {
            if case .rejected(let reason, _) = outcome { request.onReject?(result.read, reason) }
            result.count(outcome)
        }
        func flush() throws {
            var outcomes = try inserter.flush().makeIterator()
            for entry in pending {
                if let outcome = entry ?? outcomes.next() { count(outcome) }
            }
            pending.removeAll(keepingCapacity: true)
        }
        /// Rejects a row naming a missing object (after a missing required value, as SQLite's
        /// NOT NULL fails before its foreign key).
        func admit(_ encoded: [DatabaseValue]) throws -> InsertOutcome? {
            guard let references, try references.missing(in: row, staged: inserter.stagedKeys, flush: flush) else {
                return nil
            }
            return inserter.rules.missingValue(in: encoded, supplied: nil, updating: true)
                ?? .rejected(reason: PostgresStagedInserter.missingReference, column: nil)
        }
        var row = Array(repeating: Value.null, count: request.columns.count)
        while try !request.rowHandler(&row) {
            let outcome = try inserter.stage(row, supplied: nil, admit: references == nil ? nil : admit)
            pending.append(outcome)
            if inserter.isFull { try flush() }
        }
        try flush()
        return result
    }
}

/// The to-one columns of a batch insert on PostgreSQL, and whether a row's keys name objects
/// that exist (one indexed query per key not seen before; keys found are remembered).
private struct ReferenceCheck {
    /// Keys remembered per column before the memory is cleared (bounded memory).
    private static let rememberedLimit = 100_000

    /// Per to-one column: its index in the row, the query finding its destination's key, and
    /// whether the destination is the entity itself.
    private let columns: [(index: Int, query: String, isSelf: Bool)]
    private let database: PostgresDatabase
    private let found: Box

    /// The keys found so far, per checked column.
    private final class Box {
        var keys: [Set<Int64>]
        init(count: Int) { keys = Array(repeating: [], count: count) }
    }

    init(
        request: BatchInsertRequest, model: ObjectModel, layout: any StoreLayout, entity: EntityDescription,
        database: PostgresDatabase
    ) {
        let dialect = layout.dialect
        columns = request.columns.enumerated().compactMap { index, column in
            guard case .relationship(let name) = column,
                let relationship = model.relationship(named: name, in: entity), !relationship.isToMany,
                let destination = model.entity(named: relationship.destination)
            else { return nil }
            let table = dialect.quote(database.schema) + "." + dialect.quote(layout.table(for: destination))
            return (
                index, "SELECT 1 FROM \(table) WHERE \(dialect.quote(layout.keyColumn)) = ? LIMIT 1",
                destination.name == entity.name
            )
        }
        self.database = database
        found = Box(count: columns.count)
    }

    /// True when one of the row's relationship keys names no object of its destination. A key
    /// of the entity itself among the `staged` rows' keys is looked up after `flush` wrote them.
    func missing(in row: [Value], staged: Range<Int64>, flush: () throws -> Void) throws -> Bool {
        for (position, column) in columns.enumerated() {
            guard column.index < row.count, case .integer(let key) = row[column.index] else { continue }
            if found.keys[position].contains(key) { continue }
            if column.isSelf && staged.contains(key) { try flush() }
            guard try database.scalar(column.query, [.integer(key)]) != nil else { return true }
            if found.keys[position].count >= Self.rememberedLimit { found.keys[position].removeAll() }
            found.keys[position].insert(key)
        }
        return false
    }
}
