import Foundation

/// Writing Core Data stores: opening one in place, creating a new one from a model.
extension Store {
    /// Opens the Core Data store at `path` for writing, in place: its main file and `-wal` under
    /// ferry's writer lock, each write one transaction (kill-safe through SQLite's journal or
    /// WAL, whichever the store has; the journal mode is kept). The store's model is the version
    /// of `bundle` it is at, else the model it caches, read from a private copy as
    /// ``openCoreData(at:bundle:)`` does; writes go through `CoreDataLayout` and keep Core
    /// Data's bookkeeping (`CoreDataInsertBookkeeping`).
    ///
    /// When the connection closes, the `-wal` is left as it is (not checkpointed into the main
    /// file and deleted): it holds ferry's committed frames, and the app's SQLite recovers it.
    /// The derived-attribute trigger functions are registered (`CoreDataTriggerFunctions`).
    /// `Z_METADATA` is never changed: Core Data does not change it on a save either.
    ///
    /// - Throws: `.store` when the file is not a Core Data store, cannot be written, or its
    ///   `Z_PRIMARYKEY` lacks an entity of the model; `.modelMismatch` when no version of
    ///   `bundle` matches the store.
    public static func openCoreDataForWriting(
        at path: String, bundle: ModelBundle?, options: Options = Options()
    ) throws -> Store {
        let header = try CoreDataStoreFile.header(of: path)
        let writerLock = try StoreLock.acquire(for: path, timeout: options.busyTimeout, policy: options.writerLock)
        try checkWritable(path)
        let copy = try CoreDataStoreCopy(of: path)
        let model: ObjectModel
        do {
            defer { copy.remove() }
            let file = try CoreDataStoreFile.read(copy, header: header)
            model = try coreDataModel(of: file, bundle: bundle)
        }
        let connection = try Connection(path: path, readOnly: false, create: false)
        try connection.keepWriteAheadLogOnClose()
        try configure(connection, busyTimeout: options.busyTimeout)
        try CoreDataTriggerFunctions.register(on: connection)
        let layout = try CoreDataLayout.reading(connection, model: model)
        try checkPrimaryKeys(connection, model: model, layout: layout, path: path)
        return Store(
            path: path, model: model, layout: layout, connection: connection, metadata: coreDataMetadata(model),
            writerLock: writerLock)
    }

    /// The Core Data store a job or `ferry import` writes at `path`: an existing Core Data store
    /// opened in place (`openCoreDataForWriting`, its version found in `bundle`), or, when
    /// `creating` names a model and no file is at `path`, a new one for that model
    /// (`createCoreData`, its version hashes computed from the model and checked against the
    /// compiled model at `compiledModel` when given); nil for a ferry store.
    package static func openCoreDataTarget(
        at path: String, bundle: ModelBundle?, creating model: ObjectModel?, compiledModel: String?, options: Options
    ) throws -> Store? {
        let location = StoreLocation(path)
        if location.isCoreData {
            return try openCoreDataForWriting(at: path, bundle: bundle, options: options)
        }
        guard let model, location.existsOnDisk == false, options.createIfMissing else { return nil }
        let hashes = try compiledModel.map { try CompiledModelVersions.read($0).hashes(for: model) }
        return try createCoreData(at: path, model: model, compiledHashes: hashes, options: options)
    }

    /// Creates a new Core Data store at `path` for `model` (`CoreDataSchemaWriter`) and opens
    /// it for writing. Its metadata records the entity version hashes computed from the model
    /// (COREDATA.md §3.2), their digest and checksum; `compiledHashes`, a compiled model's
    /// hashes of the same version, must equal them entity by entity.
    ///
    /// - Throws: `.store` when a file is at `path` already (it is never overwritten);
    ///   `.invalidModel` when the model cannot be written as a Core Data store, or a compiled
    ///   hash differs from the computed one (nothing is created).
    public static func createCoreData(
        at path: String, model: ObjectModel, compiledHashes: [String: [UInt8]]? = nil, options: Options = Options()
    ) throws -> Store {
        try PathOrURL.requireStore(path)
        guard !FileManager.default.fileExists(atPath: path) else {
            throw FerryError(
                .store,
                "'\(path)' exists already; a new Core Data store is only created where there is no file (nothing was changed)"
            )
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let writerLock = try StoreLock.acquire(for: path, timeout: options.busyTimeout, policy: options.writerLock)
        let connection: Connection
        let layout: CoreDataLayout
        do {
            guard !FileManager.default.fileExists(atPath: path) else {
                throw FerryError(.store, "'\(path)' was created by another process meanwhile; nothing was changed")
            }
            connection = try Connection(path: path, readOnly: false, create: true)
            try configure(connection, busyTimeout: options.busyTimeout)
            try CoreDataTriggerFunctions.register(on: connection)
            layout = try CoreDataSchemaWriter.create(for: model, on: connection, compiledHashes: compiledHashes)
        } catch {
            StoreFiles.remove(path)
            throw error
        }
        let stored = coreDataStoreForm(of: model)
        return Store(
            path: path, model: stored, layout: layout, connection: connection, metadata: coreDataMetadata(stored),
            writerLock: writerLock)
    }

    /// Core Data stores record no ferry model hash.
    private static func coreDataMetadata(_ model: ObjectModel) -> StoreMetadata {
        StoreMetadata(
            formatVersion: 0, modelName: model.name, modelVersion: model.version, modelHash: "", entityHashes: [:],
            model: model, createdAt: nil)
    }

    /// Throws unless the store at `path` (ferry's or Core Data's) and its folder (where SQLite puts
    /// the journal or `-wal`, and a migration or a rebuild its new file) can be written: every
    /// writer calls it before it creates any file beside the store. A read-only store is refused
    /// even where the folder would let a `rename(2)` replace it (a migration, a rebuild).
    package static func checkWritable(_ path: String) throws {
        // A PostgreSQL store, or a file still to be created, has nothing to check here.
        guard !StoreLocation.namesDatabaseServer(path), FileIO.kind(of: path) != nil else { return }
        let mode = (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? nil
        // Read-only by its mode even for a user SQLite could write it as (root).
        guard FileManager.default.isWritableFile(atPath: path), (mode ?? 0o200) & 0o222 != 0 else {
            throw FerryError(
                .store,
                "cannot write store '\(path)': the file is read-only (permission denied); nothing was changed"
            )
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard FileManager.default.isWritableFile(atPath: folder) else {
            throw FerryError(
                .store,
                "cannot write store '\(path)': its folder '\(folder)' is read-only, and SQLite writes the store's journal (and ferry a migration's or a rebuild's new file) there; nothing was changed"
            )
        }
    }

    /// Every entity of the model needs its `Z_PRIMARYKEY` row, with its number: new keys come
    /// from its root's `Z_MAX`.
    private static func checkPrimaryKeys(
        _ connection: Connection, model: ObjectModel, layout: CoreDataLayout, path: String
    ) throws {
        var numbers: [Int64: String] = [:]
        for row in try connection.rows("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY") {
            if let number = row[0].int64 { numbers[number] = row[1].text ?? "" }
        }
        for entity in model.entities {
            guard let number = layout.entityNumbers[entity.name], numbers[number] != nil else {
                throw FerryError(
                    .store,
                    "store '\(path)': Z_PRIMARYKEY has no row for entity \(entity.name) (number \(layout.entityNumbers[entity.name].map(String.init) ?? "?")); ferry cannot assign its keys, nothing was written",
                    notes: ["the store is damaged or was not made by Core Data for this model"])
            }
        }
    }
}
