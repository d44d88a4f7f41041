import FerryCore

/// The objects of a PostgreSQL store as ferry's in-memory predicate evaluation reads them
/// (``PredicateEvaluable``): attributes decoded as ferry's values, relationships loaded on demand
/// with one indexed query each (the key columns of ferry's layout are indexed).
///
/// Used for the comparisons PostgreSQL cannot compute exactly as ferry does (see
/// ``PredicateFilter``), on the rows the server's filter selected.
final class PostgresObjectGraph {
    let database: PostgresDatabase
    let model: ObjectModel
    let layout: any StoreLayout
    private let coding = PostgresValueCoding()
    /// The first error a lazy load met (``PredicateEvaluable`` cannot throw); rethrown by ``evaluate(_:on:)``.
    fileprivate var failure: (any Error)?

    init(database: PostgresDatabase, model: ObjectModel, layout: any StoreLayout) {
        self.database = database
        self.model = model
        self.layout = layout
    }

    /// `predicate` (bound to the object's entity) evaluated on `object`.
    func evaluate(_ predicate: Predicate, on object: PostgresStoredObject) throws -> Bool {
        let result = try predicate.evaluate(on: object)
        if let failure {
            self.failure = nil
            throw failure
        }
        return result
    }

    private var key: String { layout.dialect.quote(layout.keyColumn) }

    /// The attribute values of the object `key` of `entity`.
    fileprivate func attributes(of entity: EntityDescription, key: Int64) throws -> [String: Value] {
        guard !entity.attributes.isEmpty else { return [:] }
        let columns = entity.attributes.map { layout.quotedColumn(forAttribute: $0.name, in: entity) }
        let sql =
            "SELECT \(columns.joined(separator: ", ")) FROM \(layout.quotedSource(for: entity)) WHERE \(self.key) = ?"
        guard let row = try database.rows(sql, [.integer(key)]).first else { return [:] }
        var values: [String: Value] = [:]
        for (index, attribute) in entity.attributes.enumerated() {
            values[attribute.name] = coding.decode(row[index], as: attribute.type)
        }
        return values
    }

    /// The keys of the objects `relationship` of the object `key` of `entity` leads to, in key order.
    fileprivate func related(
        _ relationship: RelationshipDescription, of entity: EntityDescription, key: Int64
    ) throws -> [Int64] {
        let sql: String
        switch layout.storage(of: relationship, in: entity, model: model) {
        case .foreignKey(let column):
            sql =
                "SELECT \(layout.dialect.quote(column)) FROM \(layout.quotedSource(for: entity)) WHERE \(self.key) = ?"
        case .inverseForeignKey(_, let column):
            guard let destination = model.entity(named: relationship.destination) else { return [] }
            sql =
                "SELECT \(self.key) FROM \(layout.quotedSource(for: destination)) WHERE \(layout.dialect.quote(column)) = ? ORDER BY \(self.key)"
        case .joinTable(let table, let source, let target):
            let quotedTarget = layout.dialect.quote(target)
            sql =
                "SELECT \(quotedTarget) FROM \(layout.dialect.quote(table)) WHERE \(layout.dialect.quote(source)) = ? ORDER BY \(quotedTarget)"
        }
        return try database.rows(sql, [.integer(key)]).compactMap(\.first?.int64)
    }

    fileprivate func record(_ failure: any Error) {
        if self.failure == nil { self.failure = failure }
    }
}

/// One object of a PostgreSQL store, for ``Predicate/evaluate(on:)``.
final class PostgresStoredObject: PredicateEvaluable {
    private let graph: PostgresObjectGraph
    private let entity: EntityDescription
    private let key: Int64
    private var values: [String: Value]?

    init(graph: PostgresObjectGraph, entity: EntityDescription, key: Int64, values: [String: Value]? = nil) {
        self.graph = graph
        self.entity = entity
        self.key = key
        self.values = values
    }

    func predicateValue(forKey name: String) -> PredicateValue {
        do {
            if let relationship = entity.relationship(named: name) {
                guard let destination = graph.model.entity(named: relationship.destination) else {
                    return .value(.null)
                }
                let objects = try graph.related(relationship, of: entity, key: key).map {
                    PostgresStoredObject(graph: graph, entity: destination, key: $0)
                }
                return relationship.isToMany ? .objects(objects) : .object(objects.first)
            }
            if values == nil { values = try graph.attributes(of: entity, key: key) }
            return .value(values?[name] ?? .null)
        } catch {
            graph.record(error)
            return .value(.null)
        }
    }
}
