/// The rows of one entity that a sync import's source still has, and the deletion of the others.
///
/// The primary keys of the rows the source inserted, updated, left unchanged or names in a
/// rejected record go into a temporary table on the import's connection (SQLite keeps it in a
/// temporary file, so memory stays flat for millions of keys); at the end every row of the
/// entity whose key is not in it is deleted with the model's delete rules. Use inside the
/// import's write transaction.
package final class SyncTracker {
    package let entity: EntityDescription
    /// The attributes that identify a record.
    package let key: [String]
    private let connection: Connection
    private let model: ObjectModel
    private let layout: any StoreLayout
    private let coding: any ValueCoding
    private let mark: Statement
    private let finder: Statement
    private static let table = "temp.ferry_sync_seen"

    package init(
        connection: Connection, model: ObjectModel, layout: any StoreLayout, entity: EntityDescription, key: [String]
    ) throws {
        self.connection = connection
        self.model = model
        self.layout = layout
        self.entity = entity
        self.key = key
        coding = layout.valueCoding
        try connection.execute("DROP TABLE IF EXISTS \(Self.table)")
        try connection.execute("CREATE TABLE \(Self.table) (pk INTEGER PRIMARY KEY)")
        mark = try connection.prepare(
            layout.dialect.insert(into: Self.table, columns: ["pk"], values: "VALUES (?)", onConflict: .ignore))
        let condition = key.map { "\(layout.quotedColumn(forAttribute: $0, in: entity)) = ?" }.joined(
            separator: " AND ")
        finder = try connection.prepare(
            "SELECT \(layout.dialect.quote(layout.keyColumn)) FROM \(layout.quotedTable(for: entity)) WHERE \(condition) LIMIT 1"
        )
    }

    /// Drops the temporary table (the tracker is not used afterwards).
    package func close() {
        mark.reset()
        finder.reset()
        try? connection.execute("DROP TABLE IF EXISTS \(Self.table)")
    }

    /// Marks the row `primaryKey` as present; false when it already was, i.e. an earlier
    /// record of the source had the same key.
    package func markSeen(_ primaryKey: Int64) throws -> Bool {
        mark.reset()
        try mark.bind(primaryKey, at: 1)
        _ = try mark.step()
        return connection.changes > 0
    }

    /// Marks the row whose key has these values (one per ``key`` attribute, typed) as present,
    /// if the store has one: what a rejected record whose key could be read keeps.
    package func markPresent(key values: [Value]) throws {
        precondition(values.count == key.count, "one value per key attribute")
        finder.reset()
        for (index, value) in values.enumerated() {
            try finder.bind(coding.encode(value), at: index + 1)
        }
        guard try finder.step() else { return }
        let primaryKey = finder.int64(at: 0)
        // Done with the row: an active statement would keep the table locked (DROP in close()).
        finder.reset()
        _ = try markSeen(primaryKey)
    }

    /// The selection of the rows the source does not have, as SQL over the entity's table
    /// aliased `t0`.
    private var absentSelection: String {
        "t0.\(layout.dialect.quote(layout.keyColumn)) NOT IN (SELECT pk FROM \(Self.table))"
    }

    /// How many rows of the entity the source does not have.
    package func absentCount() throws -> Int {
        Int(
            try connection.scalar(
                "SELECT count(*) FROM \(layout.quotedTable(for: entity)) AS t0 WHERE \(absentSelection)")?.int64 ?? 0)
    }

    /// The keys of the first `limit` absent rows (in primary-key order), as `id=4` or
    /// `(sku=A1, store=3)`.
    package func absentKeys(limit: Int) throws -> [String] {
        let columns = key.map { "t0.\(layout.quotedColumn(forAttribute: $0, in: entity))" }.joined(separator: ", ")
        let pk = layout.dialect.quote(layout.keyColumn)
        let rows = try connection.rows(
            "SELECT \(columns) FROM \(layout.quotedTable(for: entity)) AS t0 WHERE \(absentSelection) ORDER BY t0.\(pk) LIMIT \(limit)"
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
        return try deleter.run(on: connection)
    }

    /// A record's key as text for reports and messages: `id=4`, or `(sku=A1, store=3)`.
    package static func describe(key: [String], values: [Value]) -> String {
        let pairs = zip(key, values).map { "\($0)=\($1)" }
        return pairs.count == 1 ? pairs[0] : "(" + pairs.joined(separator: ", ") + ")"
    }
}
