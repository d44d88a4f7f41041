/// The rows of a ``FetchRequest`` on a PostgreSQL store, for a ``FetchCursor``: read through a
/// server-side cursor and handed out in ferry's own stored forms (``FerryValueCoding``), so that
/// every reader of a cursor (the exporters read raw text and blob bytes) sees the same bytes as
/// from a SQLite store.
///
/// A predicate is evaluated by ferry on each row (``Predicate/evaluate(on:)``, the reference the
/// SQL compilation agrees with), so results are exactly SQLite's; the limit and offset then apply
/// in ferry. Predicates are limited to the entity's own attributes (no relationship key paths,
/// aggregates or subqueries) on PostgreSQL for now, and refused otherwise.
final class PostgresFetchRows {
    private let cursor: PostgresRowCursor
    private let types: [AttributeType]
    private let predicate: Predicate?
    /// For a predicate: the attribute names and types of the extra columns after `types`.
    private let predicateAttributes: [(name: String, type: AttributeType)]
    private let coding = PostgresValueCoding()
    private var toSkip: Int
    private var remaining: Int?
    /// The current row, in ferry's stored forms.
    private(set) var row: [DatabaseValue] = []

    init(_ request: FetchRequest, database: PostgresDatabase, model: ObjectModel, layout: any StoreLayout, columns: [FetchColumn]) throws {
        types = columns.map(\.type)
        guard let predicate = request.predicate else {
            let query = try request.compile(model: model, layout: layout)
            cursor = try database.openCursor(query.sql, query.arguments)
            self.predicate = nil
            predicateAttributes = []
            toSkip = 0
            remaining = nil
            return
        }
        guard let entity = model.entity(named: request.entity) else { throw FerryError(.internal, "no entity \(request.entity)") }
        // Checked and bound as on SQLite first, so errors are the same.
        _ = try predicate.sql(for: entity, model: model, layout: layout, alias: "t0")
        let bound = try predicate.bound(to: entity, model: model)
        try Self.requireOwnAttributes(bound, of: entity)
        var unfiltered = request
        unfiltered.predicate = nil
        unfiltered.limit = nil
        unfiltered.offset = 0
        unfiltered.properties = (request.properties ?? FetchRequest.defaultProperties(of: entity)) + entity.attributes.map { FetchProperty($0.name) }
        let query = try unfiltered.compile(model: model, layout: layout)
        cursor = try database.openCursor(query.sql, query.arguments)
        self.predicate = bound
        predicateAttributes = entity.attributes.map { ($0.name, $0.type) }
        toSkip = request.offset
        remaining = request.limit
    }

    /// Moves to the next matching row; false at the end.
    func advance() throws -> Bool {
        while remaining.map({ $0 > 0 }) ?? true, let stored = try cursor.next() {
            if let predicate {
                var values: [String: Value] = [:]
                for (offset, attribute) in predicateAttributes.enumerated() {
                    values[attribute.name] = coding.decode(stored[types.count + offset], as: attribute.type)
                }
                guard try predicate.evaluate(on: PredicateRecord(values: values)) else { continue }
                if toSkip > 0 {
                    toSkip -= 1
                    continue
                }
                remaining = remaining.map { $0 - 1 }
            }
            row = types.indices.map { FerryValueCoding().encode(coding.decode(stored[$0], as: types[$0])) }
            return true
        }
        return false
    }

    /// Refuses key paths other than the entity's own attributes (what ferry can evaluate from one row).
    private static func requireOwnAttributes(_ predicate: Predicate, of entity: EntityDescription) throws {
        func refuse(_ what: String) -> FerryError {
            FerryError(
                .usage, "this predicate cannot run on a PostgreSQL store yet: \(what)",
                notes: ["on PostgreSQL, fetch and export predicates may use the entity's own attributes only"])
        }
        func check(_ expression: PredicateExpression) throws {
            switch expression {
            case .constant, .variable: return
            case .list(let items, _): try items.forEach(check)
            case .keyPath(let path):
                guard path.root == .object, path.components.count == 1, entity.attribute(named: path.components[0]) != nil else {
                    throw refuse("the key path '\(path.components.joined(separator: "."))' is not an attribute of \(entity.name)")
                }
            case .aggregate: throw refuse("aggregates (@count, @sum, …)")
            case .subquery: throw refuse("SUBQUERY")
            }
        }
        switch predicate {
        case .constant: return
        case .comparison(let comparison):
            try check(comparison.lhs)
            try check(comparison.rhs)
        case .and(let parts), .or(let parts): try parts.forEach { try requireOwnAttributes($0, of: entity) }
        case .not(let inner): try requireOwnAttributes(inner, of: entity)
        }
    }
}
