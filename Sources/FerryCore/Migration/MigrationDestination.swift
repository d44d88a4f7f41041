/// The kind of store each step of a migration writes: ferry's layout, or Core Data's (the
/// migration of a Core Data store in place).
package enum MigrationDestination {
    case ferry
    case coreData(CoreDataMigrationDestination)

    /// The new store's layout before its schema exists: its naming and value coding.
    func layout(for model: ObjectModel) -> any StoreLayout {
        switch self {
        case .ferry: return FerryLayout()
        case .coreData: return CoreDataLayout(model: model)
        }
    }

    /// Creates the new store's tables on `connection` (an empty database) and returns its
    /// layout. ferry's indexes come after the data (``buildsIndexesAfterData``); Core Data's
    /// are made with the tables, in the forms Core Data makes them.
    func createSchema(for model: ObjectModel, on connection: Connection) throws -> any StoreLayout {
        switch self {
        case .ferry:
            let layout = FerryLayout()
            try connection.transaction(.immediate) {
                try Store.createSchema(for: model, on: connection, layout: layout, includingIndexes: false)
            }
            return layout
        case .coreData(let destination):
            return try destination.createSchema(for: model, on: connection)
        }
    }

    /// True when the step builds the indexes once the data is in.
    var buildsIndexesAfterData: Bool {
        if case .ferry = self { return true }
        return false
    }

    /// The bookkeeping a step writes once every object is in (inside the step's transaction,
    /// the new store attached as `schema`, the source as `sourceSchema`): the other side of each
    /// one-to-one, Core Data's entity and order columns beside keys, and `Z_PRIMARYKEY.Z_MAX`.
    func finish(
        on connection: Connection, schema: String, sourceSchema: String, mapping: MappingModel,
        layout: any StoreLayout
    ) throws {
        guard case .coreData = self else { return }
        let model = mapping.destination
        try CoreDataMigrationDestination.mirrorOneToOnes(
            on: connection, schema: schema, mapping: mapping, layout: layout)
        try CoreDataMigrationDestination.recordLinkBookkeeping(
            on: connection, schema: schema, model: model, layout: layout)
        try CoreDataMigrationDestination.recordKeyMaxima(
            on: connection, schema: schema, sourceSchema: sourceSchema, model: model, layout: layout)
    }

    /// Opens a finished step's store to verify it (a scratch file: no writer lock).
    func open(at path: String, model: ObjectModel) throws -> Store {
        switch self {
        case .ferry:
            var options = Store.Options(createIfMissing: false)
            options.writerLock = .none  // a scratch file: the migration holds the store's lock
            return try Store.open(at: path, model: model, options: options)
        case .coreData:
            return try CoreDataMigrationDestination.open(at: path, model: model)
        }
    }
}
