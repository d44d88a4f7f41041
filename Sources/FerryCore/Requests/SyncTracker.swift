/// The rows of one entity that a sync import's source still has, and the deletion of the others.
///
/// The primary keys of the rows the source inserted, updated, left unchanged or names in a
/// rejected record go into a temporary table on the import's session (SQLite keeps it in a
/// temporary file, PostgreSQL in the session's `pg_temp`, so memory stays flat for millions of
/// keys); at the end every row of the entity whose key is not in it is deleted with the model's
/// delete rules, through the deleter `ferry delete` uses. Use inside the import's write
/// transaction.
///
/// On SQLite, and on PostgreSQL for a nested import (`PostgresRecordInserter`), the import marks
/// each row as its record is written; otherwise on PostgreSQL the set-based merge of each batch
/// marks them (`PostgresStagedMerge`, which ``seenTable`` names to it), and
/// ``markPresent(key:)`` serves only when nothing is staged.
package final class SyncTracker {
    package let entity: EntityDescription
    /// The attributes that identify a record.
    package let key: [String]
    /// The temporary table of the primary keys seen (one column, `pk`), qualified and quoted.
    package let seenTable: String
    private let database: any DatabaseConnection
    private let model: ObjectModel
    private let layout: any StoreLayout
    private let coding: any ValueCoding
    /// The statement marking a key seen, prepared.
    private let mark: any PreparedStatement
    /// The statement finding a key's row, prepared.
    private let finder: any PreparedStatement

    package init(
        database: any DatabaseConnection, model: ObjectModel, layout: any StoreLayout, entity: EntityDescription,
        key: [String]
    ) throws {
        self.database = database
        self.model = model
        self.layout = layout
        self.entity = entity
        self.key = key
        coding = layout.valueCoding
        let dialect = layout.dialect
        let name = database.uniqueTemporaryName("ferry_sync_seen")
        seenTable = dialect.temporaryTable(dialect.quote(name))
        try database.execute("DROP TABLE IF EXISTS \(seenTable)")
        try database.execute(
            "CREATE TEMPORARY TABLE \(dialect.quote(name)) (pk \(dialect.keyReferenceType) PRIMARY KEY)")
        let markSQL = dialect.insert(into: seenTable, columns: ["pk"], values: "VALUES (?)", onConflict: .ignore)
        let holdingKey = layout.selection(
            of: entity, alias: "t0",
            where: key.map { "t0.\(layout.quotedColumn(forAttribute: $0, in: entity)) = ?" }.joined(separator: " AND "))
        let pk = "t0." + dialect.quote(layout.keyColumn)
        // The first row holding the key: where the engine's scan (of the key's index, or of the
        // table) meets the smallest primary key first, it needs no ORDER BY.
        let finderSQL =
            dialect.scansInKeyOrder
            ? "SELECT \(pk) FROM \(holdingKey.from) WHERE \(holdingKey.sql) LIMIT 1"
            : "SELECT \(pk) FROM \(holdingKey.from) WHERE \(holdingKey.sql) ORDER BY \(pk) LIMIT 1"
        mark = try database.prepared(markSQL)
        finder = try database.prepared(finderSQL)
    }

    /// Drops the temporary table (the tracker is not used afterwards).
    package func close() {
        mark.finish()
        finder.finish()
        try? database.execute("DROP TABLE IF EXISTS \(seenTable)")
    }

    /// Marks the row `primaryKey` as present; false when it already was, i.e. an earlier
    /// record of the source had the same key.
    package func markSeen(_ primaryKey: Int64) throws -> Bool {
        try mark.execute([.integer(primaryKey)])
        return database.changes > 0
    }

    /// Marks the row whose key has these values (one per ``key`` attribute, typed) as present,
    /// if the store has one: what a rejected record whose key could be read keeps.
    package func markPresent(key values: [Value]) throws {
        precondition(values.count == key.count, "one value per key attribute")
        let encoded = values.map { coding.encode($0) }
        guard let primaryKey = try finder.scalar(encoded)?.int64 else { return }
        _ = try markSeen(primaryKey)
    }

    /// The selection of the rows the source does not have, as SQL over the entity's table
    /// aliased `t0`.
    private var absentSelection: String {
        let pk = "t0.\(layout.dialect.quote(layout.keyColumn))"
        return layout.dialect.notAmongKeys(pk, in: seenTable)
    }

    /// The rows of the entity (and its sub-entities) the source does not have.
    private var absent: PredicateSQL { layout.selection(of: entity, alias: "t0", where: absentSelection) }

    /// How many rows of the entity the source does not have.
    package func absentCount() throws -> Int {
        Int(try database.scalar("SELECT count(*) FROM \(absent.from) WHERE \(absent.sql)")?.int64 ?? 0)
    }

    /// How many rows the entity has.
    package func rowCount() throws -> Int {
        Int(try database.scalar("SELECT count(*) FROM \(layout.quotedTable(for: entity)) AS t0")?.int64 ?? 0)
    }

    /// The keys of the first `limit` absent rows (in primary-key order), as `id=4` or
    /// `(sku=A1, store=3)`.
    package func absentKeys(limit: Int) throws -> [String] {
        let columns = key.map { "t0.\(layout.quotedColumn(forAttribute: $0, in: entity))" }.joined(separator: ", ")
        let pk = layout.dialect.quote(layout.keyColumn)
        let rows = try database.rows(
            "SELECT \(columns) FROM \(absent.from) WHERE \(absent.sql) ORDER BY t0.\(pk) LIMIT \(limit)"
        )
        return rows.map { row in
            let values = key.indices.map { index -> Value in
                let type = entity.attribute(named: key[index])?.type ?? .string
                return coding.decode(row[index], as: type)
            }
            return Self.describe(key: key, values: values)
        }
    }

    /// Deletes every row of the entity the source does not have, applying the model's delete
    /// rules (a `deny` failure throws, naming the relationship).
    package func deleteAbsent(location: InputLocation?) throws -> BatchDeleteResult {
        let deleter = try BatchDeleter(
            entity: entity.name, selection: absentSelection, model: model, layout: layout, location: location)
        return try deleter.run(on: database)
    }

    /// The indexes of the key's attributes among an inserter's `columns`, in the key's order.
    ///
    /// - Throws: `.invalidInput` when the columns lack one (the source supplies no value for it).
    package func keyColumns(in columns: [InsertColumn]) throws -> [Int] {
        try key.map { name in
            guard let index = columns.firstIndex(of: .attribute(name)) else {
                throw FerryError(
                    .invalidInput,
                    "the source supplies no value for \(entity.name).\(name), which is part of the sync key (\(key.joined(separator: ", ")))"
                )
            }
            return index
        }
    }

    /// The rejection of a record whose key (attributes `key`) an earlier record of the source had
    /// (`values`: the key's, typed; `column`: the record column of its first attribute).
    package static func repeatedKeyRejection(key: [String], values: [Value], column: Int?) -> InsertOutcome {
        .rejected(
            reason:
                "an earlier record of the source has the same key (\(describe(key: key, values: values))): a sync needs each key once",
            column: column)
    }

    /// The rejection of a record whose key attribute `name` (record column `column`) is null.
    package static func nullKeyRejection(name: String, column: Int) -> InsertOutcome {
        .rejected(reason: "\(name) is null: a sync needs every record's key", column: column)
    }

    /// A record's key as text for reports and messages: `id=4`, or `(sku=A1, store=3)`.
    package static func describe(key: [String], values: [Value]) -> String {
        let pairs = zip(key, values).map { "\($0)=\($1)" }
        return pairs.count == 1 ? pairs[0] : "(" + pairs.joined(separator: ", ") + ")"
    }
}
