import FerryCore

/// The objects of one entity of a Core Data store, read through ``Store/openCoreData(at:bundle:)``
/// (a private copy of the store, at the model it caches) with a ``FetchCursor``: every attribute,
/// decoded as `ferry export` decodes it, then every to-one relationship as the related object's
/// key. The copy is removed when the cursor is released.
final class CoreDataSourceCursor: DatabaseCursor {
    let columns: [DatabaseColumn]
    private let store: Store
    private let cursor: FetchCursor
    private let source: DatabaseSource

    init(path: String, source: DatabaseSource) throws {
        self.source = source
        guard case .entity(let name) = source.selection else {
            throw FerryError(
                .invalidDefinition,
                "a Core Data store is read by entity: use 'entity:' (its tables are Core Data's, not the model's)",
                at: source.selectionLocation)
        }
        store = try Store.openCoreData(at: path, bundle: nil)
        guard let entity = store.model.entity(named: name) else {
            throw FerryError(
                .invalidDefinition,
                "the Core Data store '\(path)' has no entity '\(name)'\(Suggestions.didYouMean(name, in: store.model.entityNames))",
                at: source.selectionLocation,
                notes: ["its entities: \(store.model.entityNames.joined(separator: ", "))"])
        }
        let request = FetchRequest(entity: entity.name, properties: FetchRequest.defaultProperties(of: entity))
        let store = store
        cursor = try store.withConnection {
            try FetchCursor(request, connection: $0, model: store.model, layout: store.layout)
        }
        columns = cursor.columns.map { DatabaseColumn(name: $0.name, type: $0.type) }
    }

    func next() throws -> [Value]? {
        do {
            return try cursor.next()
        } catch let error as FerryError {
            throw FerryError(
                error.code, "reading \(source.label) failed: \(error.message)", at: source.selectionLocation)
        }
    }
}
