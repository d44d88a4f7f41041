import FerryCore

/// The rows of a ``FetchRequest`` on a PostgreSQL store, for a ``FetchCursor``: read through a
/// server-side cursor and handed out in ferry's own stored forms (``FerryValueCoding``), so that
/// every reader of a cursor (the exporters read raw text and blob bytes) sees the same bytes as
/// from a SQLite store.
///
/// The predicate is compiled to PostgreSQL (``Predicate/postgresFilter(for:model:layout:alias:)``).
/// When the server's filter is the whole predicate, rows, limit and offset come from the server.
/// Otherwise the server selects a superset, and ferry evaluates the predicate on each candidate
/// row (``Predicate/evaluate(on:)``, relationships loaded on demand through
/// ``PostgresStoredObject``), then applies the limit and offset.
final class PostgresFetchRows {
    private let cursor: PostgresRowCursor
    private let types: [AttributeType]
    /// For a predicate ferry evaluates: the bound predicate, the objects it reads, and the
    /// attributes after the key and the requested columns.
    private let residual: (predicate: Predicate, graph: PostgresObjectGraph, entity: EntityDescription)?
    private let coding = PostgresValueCoding()
    /// Where the requested columns start in a stored row (after the key).
    private let first = 1
    private var toSkip: Int
    private var remaining: Int?
    /// The current row, in ferry's stored forms.
    private(set) var row: [DatabaseValue] = []
    /// The key of the current row's object.
    private(set) var key: Int64 = 0

    init(_ request: FetchRequest, database: PostgresDatabase, model: ObjectModel, layout: any StoreLayout) throws {
        let query = try request.compileSelectingKey(model: model, layout: layout)
        types = query.columns.map(\.type)
        guard let predicate = request.predicate, !query.predicateIsExact else {
            cursor = try database.openCursor(query.sql, query.arguments)
            residual = nil
            toSkip = 0
            remaining = nil
            return
        }
        guard let entity = model.entity(named: request.entity) else {
            throw FerryError(.internal, "no entity \(request.entity)")
        }
        var candidates = request
        candidates.limit = nil
        candidates.offset = 0
        candidates.properties =
            (request.properties ?? FetchRequest.defaultProperties(of: entity))
            + entity.attributes.map { FetchProperty($0.name) }
        let candidateQuery = try candidates.compileSelectingKey(model: model, layout: layout)
        cursor = try database.openCursor(candidateQuery.sql, candidateQuery.arguments)
        residual = (
            try predicate.bound(to: entity, model: model),
            PostgresObjectGraph(database: database, model: model, layout: layout), entity
        )
        toSkip = request.offset
        remaining = request.limit
    }

    /// Moves to the next matching row; false at the end.
    package func advance() throws -> Bool {
        while remaining.map({ $0 > 0 }) ?? true, let stored = try cursor.next() {
            guard case .integer(let key) = stored[0] else {
                throw FerryError(.internal, "a PostgreSQL row without its key")
            }
            if let residual {
                var values: [String: Value] = [:]
                for (offset, attribute) in residual.entity.attributes.enumerated() {
                    values[attribute.name] = coding.decode(stored[first + types.count + offset], as: attribute.type)
                }
                let object = PostgresStoredObject(
                    graph: residual.graph, entity: residual.entity, key: key, values: values)
                guard try residual.graph.evaluate(residual.predicate, on: object) else { continue }
                if toSkip > 0 {
                    toSkip -= 1
                    continue
                }
                remaining = remaining.map { $0 - 1 }
            }
            row = types.indices.map { coding.storedForm(stored[first + $0], as: types[$0]) }
            self.key = key
            return true
        }
        return false
    }

    /// The keys of the objects of `entity` that `predicate` selects, in key order (inside the
    /// caller's transaction): how update and delete find their objects on PostgreSQL when ferry
    /// evaluates part of the predicate.
    static func keys(
        of entity: EntityDescription, matching predicate: Predicate, database: PostgresDatabase, model: ObjectModel,
        layout: any StoreLayout
    ) throws -> [Int64] {
        let request = FetchRequest(entity: entity.name, predicate: predicate, properties: [])
        let rows = try PostgresFetchRows(request, database: database, model: model, layout: layout)
        var keys: [Int64] = []
        while try rows.advance() { keys.append(rows.key) }
        return keys
    }
}
