/// A Core Data store migrated in place: each version step writes a new Core Data store of the
/// step's destination model (``CoreDataSchemaWriter``: tables per root entity, `Z_ENT`
/// numbering of the new model, join tables, `Z_PRIMARYKEY`, `Z_METADATA`), and the step's rows
/// carry Core Data's bookkeeping (`Z_ENT`, `Z_OPT`; ``rowBookkeeping(of:in:version:)``).
///
/// Metadata of the new version: the entity version hashes of the compiled model's version of
/// the same name when `--compiled-model` is given; otherwise none, so Core Data can never take
/// the store for a version it is not (it refuses to open it as any model version). The store's
/// UUID and the metadata keys ferry does not know (an app's own keys) are kept. `Z_MODELCACHE`
/// is left empty: ferry reads the store's version from its tables and columns.
package struct CoreDataMigrationDestination {
    /// The original store's metadata.
    let sourceMetadata: CoreDataStoreMetadata
    let compiledModel: CompiledModelVersions?

    /// Creates the store of `model` and writes its metadata.
    func createSchema(for model: ObjectModel, on connection: Connection) throws -> CoreDataLayout {
        let hashes = try compiledModel.map { try $0.hashes(for: model) }
        return try connection.transaction(.immediate) {
            let layout = try CoreDataSchemaWriter.create(for: model, on: connection, versionHashes: hashes)
            try keepIdentity(on: connection)
            return layout
        }
    }

    /// The original's UUID, and its metadata keys the new metadata does not have.
    private func keepIdentity(on connection: Connection) throws {
        guard case .blob(let written)? = try connection.scalar("SELECT Z_PLIST FROM Z_METADATA"),
            var dictionary = try BinaryPropertyList.decode(written, source: "the new store's metadata").dictionary
        else { throw FerryError(.internal, "the new Core Data store has no metadata dictionary") }
        for key in sourceMetadata.otherKeys.keys where dictionary[key] == nil {
            dictionary[key] = sourceMetadata.otherKeys[key]
        }
        try connection.execute(
            "UPDATE Z_METADATA SET Z_UUID = ?, Z_PLIST = ?", [.text(sourceMetadata.uuid), .blob(BinaryPropertyListWriter.encode(.dictionary(dictionary)))])
    }

    /// Columns a new row of `entity` gets besides its values in `layout`, with their SQL
    /// values: Core Data's `Z_ENT` (the entity's number in the new model) and `Z_OPT` (`version`:
    /// the source row's when carried, else 1, a new object's). None in ferry's layout.
    static func rowBookkeeping(of entity: EntityDescription, in layout: any StoreLayout, version: String = "1") -> [(column: String, value: String)] {
        guard let layout = layout as? CoreDataLayout, let number = layout.entityNumbers[entity.name] else { return [] }
        return [(CoreDataLayout.entityColumn, String(number)), (layout.versionColumn ?? "Z_OPT", version)]
    }

    /// Sets each root entity's `Z_PRIMARYKEY.Z_MAX` to the highest key of its table (sub-entities
    /// keep 0, as Core Data keeps them): new objects the app saves get keys after every migrated one.
    static func recordKeyMaxima(on connection: Connection, schema: String, model: ObjectModel, layout: CoreDataLayout) throws {
        let dialect = layout.dialect
        for entity in model.entities where entity.parent == nil {
            guard let number = layout.entityNumbers[entity.name] else { continue }
            try connection.execute(
                "UPDATE \(dialect.qualified("Z_PRIMARYKEY", in: schema)) SET Z_MAX = (SELECT coalesce(max(\(dialect.quote(layout.keyColumn))), 0) FROM \(dialect.qualified(layout.table(for: entity), in: schema))) WHERE Z_ENT = ?",
                [.integer(number)])
        }
    }

    /// Opens a migrated Core Data store read-only, in place (a scratch file, or `ferry check`'s
    /// copy), with the model it was written for.
    package static func open(at path: String, model: ObjectModel) throws -> Store {
        let connection = try Connection(path: path, readOnly: true, create: false)
        try Store.configure(connection, busyTimeout: .seconds(30))
        let model = model.withInheritedProperties
        let layout = try CoreDataLayout.reading(connection, model: model)
        let metadata = StoreMetadata(
            formatVersion: 0, modelName: model.name, modelVersion: model.version, modelHash: "", entityHashes: [:], model: model, createdAt: nil)
        return Store(path: path, model: model, layout: layout, connection: connection, metadata: metadata, writerLock: nil)
    }

    /// Refuses a model with entity hierarchies: rows of sub-entities would have to move between
    /// tables, which the migration of Core Data stores does not do yet.
    static func checkWithoutHierarchies(_ model: ObjectModel) throws {
        let children = model.entities.filter { $0.parent != nil }
        guard !children.isEmpty else { return }
        let parents = Dictionary(grouping: children, by: { $0.parent ?? "" }).sorted { $0.key < $1.key }
        let described = parents.map { "\($0.value.map(\.name).sorted().joined(separator: ", ")) of \($0.key)" }.joined(separator: "; ")
        throw FerryError(
            .migration,
            "model \(model.name) version \(model.version) has entity hierarchies (sub-entities \(described)): ferry does not migrate Core Data stores with sub-entities yet; nothing was changed")
    }
}
