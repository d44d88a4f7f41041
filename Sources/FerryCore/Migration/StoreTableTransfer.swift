/// Moves every row of a store in ferry's layout between a SQLite database and a PostgreSQL
/// schema (either way, or between two schemas): entity tables with their keys, join tables and
/// ferry's bookkeeping tables (metadata, entity hashes, run log). Attribute values are decoded with the source's value coding and
/// encoded with the destination's, so each value arrives in the destination's own form
/// (`numeric`, `timestamptz`, `uuid`, `jsonb`, `bytea` on PostgreSQL; ferry's text forms in
/// SQLite); keys and bookkeeping columns are copied as they are.
///
/// The destination's tables must exist (and be empty); nothing here creates or checks them.
package struct StoreTableTransfer {
    /// One table and its columns, each with the attribute type whose values it holds (nil for
    /// keys, foreign keys and bookkeeping columns).
    struct Table {
        var name: String
        var columns: [(name: String, type: AttributeType?)]
        /// Columns holding integer keys (summed by ``keySums(on:in:)``).
        var keyColumns: [String]
        /// The entity whose objects the table holds (nil for join and bookkeeping tables).
        var entity: EntityDescription?
        /// True for ferry's own tables (metadata, entity hashes, run log).
        var isBookkeeping = false
    }

    package let model: ObjectModel

    package init(model: ObjectModel) { self.model = model }

    /// Both backends lay ferry's tables out alike: the table and column names of the SQLite layout.
    private var layout: FerryLayout { FerryLayout() }

    /// Every table of a store of `model`: bookkeeping tables first, then entity and join tables.
    var tables: [Table] {
        let key = layout.keyColumn
        var tables: [Table] = []
        if let bookkeeping = layout.bookkeeping {
            tables.append(
                Table(
                    name: bookkeeping.metadata, columns: [("key", nil), ("value", nil)], keyColumns: [], entity: nil,
                    isBookkeeping: true))
            tables.append(
                Table(
                    name: bookkeeping.entities, columns: [("name", nil), ("hash", nil)], keyColumns: [], entity: nil,
                    isBookkeeping: true))
            let runColumns = [
                "id", "job", "step_index", "step", "entity", "source", "started_at", "ended_at", "outcome", "read",
                "inserted", "updated",
                "skipped", "rejected", "message",
            ]
            tables.append(
                Table(
                    name: bookkeeping.runs, columns: runColumns.map { ($0, nil) }, keyColumns: ["id"], entity: nil,
                    isBookkeeping: true))
        }
        var joinTables: Set<String> = []
        for entity in model.entities {
            var columns: [(name: String, type: AttributeType?)] = [(key, nil)]
            var keys = [key]
            for attribute in entity.attributes {
                columns.append((layout.column(forAttribute: attribute.name, in: entity), attribute.type))
            }
            for relationship in entity.relationships {
                switch layout.storage(of: relationship, in: entity, model: model) {
                case .foreignKey(let column):
                    columns.append((column, nil))
                    keys.append(column)
                case .joinTable(let name, let sourceColumn, let targetColumn):
                    guard joinTables.insert(name).inserted else { continue }
                    let pair = [sourceColumn, targetColumn].sorted()
                    tables.append(Table(name: name, columns: pair.map { ($0, nil) }, keyColumns: pair, entity: nil))
                case .inverseForeignKey:
                    continue
                }
            }
            tables.append(Table(name: layout.table(for: entity), columns: columns, keyColumns: keys, entity: entity))
        }
        return tables
    }

    /// Copies the rows of every table of a store of `model` on `source` (laid out by
    /// `sourceLayout`) into the empty tables of `destination` (laid out by `destinationLayout`),
    /// in key order: with `bookkeeping`, ferry's metadata, entity hashes and run log too. Values
    /// are decoded from the source's coding and encoded in the destination's; keys are copied as
    /// they are. Through the destination session's bulk load (PostgreSQL's `COPY … FROM STDIN`
    /// into the session's schema, SQLite's one prepared `INSERT` per table), each key generator
    /// then moved past the largest key (``DatabaseConnection/advanceKeyGenerator(of:column:)``),
    /// so that objects created later get new keys. Foreign keys are checked once
    /// every row is in (PostgreSQL), or at the end of the caller's transaction (SQLite), which
    /// this runs in (it opens none).
    ///
    /// The one row copier between backends: `ferry copy`, a migration's snapshot of a PostgreSQL
    /// store and its load into the new schema all use it.
    package func copy(
        from source: any DatabaseConnection, _ sourceLayout: any StoreLayout, to destination: any DatabaseConnection,
        _ destinationLayout: any StoreLayout, bookkeeping: Bool
    ) throws {
        try destination.execute(destinationLayout.dialect.deferForeignKeysStatement)
        let sourceCoding = sourceLayout.valueCoding
        let destinationCoding = destinationLayout.valueCoding
        let runs = layout.bookkeeping?.runs
        for table in tables where bookkeeping || !table.isBookkeeping {
            let types = table.columns.map(\.type)
            let select =
                "SELECT \(table.columns.map { sourceLayout.dialect.quote($0.name) }.joined(separator: ", ")) FROM \(sourceLayout.dialect.quote(table.name)) ORDER BY 1"
            try Self.copyRows(
                of: select, from: source, into: table.name, columns: table.columns.map(\.name), on: destination,
                layout: destinationLayout
            ) { row in
                row.indices.map { index in
                    guard let type = types[index] else { return row[index] }
                    return destinationCoding.encode(sourceCoding.decode(row[index], as: type))
                }
            }
            // The identity columns: each entity's key and the run log's `id`.
            guard let identity = table.entity != nil ? layout.keyColumn : table.name == runs ? "id" : nil else {
                continue
            }
            try destination.advanceKeyGenerator(of: table.name, column: identity)
        }
        // The deferred checks run now where the engine builds no index with checks pending.
        if let immediate = destinationLayout.dialect.immediateForeignKeysStatement {
            try destination.execute(immediate)
        }
    }

    /// The rows of `select` on `source`, converted, written into `table` on `destination` by the
    /// session's bulk load (``DatabaseConnection/bulkLoad(into:columns:layout:_:)``).
    private static func copyRows(
        of select: String, from source: any DatabaseConnection, into table: String, columns: [String],
        on destination: any DatabaseConnection, layout: any StoreLayout, convert: ([DatabaseValue]) -> [DatabaseValue]
    ) throws {
        try destination.bulkLoad(into: table, columns: columns, layout: layout) { append in
            try source.forEachRow(select, []) { row in try append(convert(row)) }
        }
    }

    /// Per table: its row count and the sum of each key column, in ``tables``' order, on either
    /// backend (unqualified names on `connection`: its own schema or database).
    package func keySums(on connection: any DatabaseConnection) throws -> [String] {
        try tables.map { table in
            // As text: PostgreSQL sums `bigint`s into a `numeric`, SQLite into an integer.
            let sums = (["count(*)"] + table.keyColumns.map { "coalesce(sum(\(layout.dialect.quote($0))), 0)" }).map {
                "CAST(\($0) AS TEXT)"
            }
            let row =
                try connection.rows("SELECT \(sums.joined(separator: ", ")) FROM \(layout.dialect.quote(table.name))")
                .first ?? []
            return "\(table.name): " + row.map { value in value.text ?? "\(value)" }.joined(separator: " ")
        }
    }
}
