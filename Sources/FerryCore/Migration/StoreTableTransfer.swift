import FerryPostgres

/// Moves every row of a store in ferry's layout between a SQLite database and a PostgreSQL
/// schema: entity tables with their keys, join tables and ferry's bookkeeping tables (metadata,
/// entity hashes, run log). Attribute values are decoded with the source's value coding and
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
                Table(name: bookkeeping.metadata, columns: [("key", nil), ("value", nil)], keyColumns: [], entity: nil))
            tables.append(
                Table(name: bookkeeping.entities, columns: [("name", nil), ("hash", nil)], keyColumns: [], entity: nil))
            let runColumns = [
                "id", "job", "step_index", "step", "entity", "source", "started_at", "ended_at", "outcome", "read",
                "inserted", "updated",
                "skipped", "rejected", "message",
            ]
            tables.append(
                Table(name: bookkeeping.runs, columns: runColumns.map { ($0, nil) }, keyColumns: ["id"], entity: nil))
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

    /// Copies every table of a PostgreSQL store (read on `source`, in its schema) into the empty
    /// tables of a SQLite database, inside one transaction of each.
    func copy(from source: PostgresDatabase, into destination: Connection) throws {
        let reading = PostgresValueCoding()
        let writing = FerryValueCoding()
        try source.readTransaction {
            try destination.transaction(.immediate) {
                for table in tables {
                    let columns = table.columns.map { layout.dialect.quote($0.name) }
                    let insert = try destination.prepare(
                        "INSERT INTO \(layout.dialect.quote(table.name)) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
                    )
                    let select =
                        "SELECT \(columns.joined(separator: ", ")) FROM \(PostgresIdentifier.quote(table.name)) ORDER BY 1"
                    try source.forEachRow(select, []) { row in
                        insert.reset(clearBindings: true)
                        for (index, column) in table.columns.enumerated() {
                            let value =
                                column.type.map { writing.encode(reading.decode(row[index], as: $0)) } ?? row[index]
                            try insert.bind(value, at: index + 1)
                        }
                        while try insert.step() {}
                    }
                }
            }
        }
    }

    /// Copies every table of a SQLite database (read-only on `source`) into the empty tables of
    /// the PostgreSQL schema `schema` on `destination`, through `COPY … FROM STDIN`, inside the
    /// caller's transaction; then moves each identity column's sequence past the largest key,
    /// so that objects created later get new keys.
    package func copy(from source: Connection, into destination: PostgresDatabase, schema: String) throws {
        let reading = FerryValueCoding()
        let writing = PostgresValueCoding()
        for table in tables {
            let columns = table.columns.map(\.name)
            let statement = try source.prepare(
                "SELECT \(columns.map { layout.dialect.quote($0) }.joined(separator: ", ")) FROM \(layout.dialect.quote(table.name)) ORDER BY 1"
            )
            do {
                try destination.connection.copy(into: table.name, schema: schema, columns: columns) { writer in
                    while try statement.step() {
                        try writer.append(
                            table.columns.enumerated().map { index, column in
                                let stored = statement.value(at: index)
                                return PostgresDatabase.postgresValue(
                                    column.type.map { writing.encode(reading.decode(stored, as: $0)) } ?? stored)
                            })
                    }
                }
            } catch let error as PostgresError {
                throw FerryError(
                    .store,
                    "PostgreSQL store \(destination.location) (schema \(schema)), table \(table.name): \(error.description)"
                )
            }
            // The identity columns: each entity's key and the run log's `id`.
            guard
                let identity = table.entity != nil
                    ? layout.keyColumn : table.name == layout.bookkeeping?.runs ? "id" : nil
            else { continue }
            let qualified = PostgresIdentifier.quote(schema) + "." + PostgresIdentifier.quote(table.name)
            try destination.execute(
                "SELECT setval(pg_get_serial_sequence(?, ?), coalesce(max(\(PostgresIdentifier.quote(identity))), 0) + 1, false) FROM \(qualified)",
                [.text(qualified), .text(identity)])
        }
    }

    /// Per table: its row count and the sum of each key column, in ``tables``' order, on either
    /// backend (unqualified names on `connection`: its own schema or database).
    func keySums(on connection: any DatabaseConnection) throws -> [String] {
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
