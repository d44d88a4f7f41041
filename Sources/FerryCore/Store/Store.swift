import Foundation

/// A ferry store: a SQLite file (or in-memory database), or a schema in a PostgreSQL database
/// (``open(at:model:options:)`` with a `postgresql://` URL), laid out for one model version.
///
/// `Store` is `Sendable` and serializes access to its single connection through closures, as
/// GRDB's `DatabaseQueue` does (`write { connection in … }`, for ferry's own modules). Its
/// `layout` says how the model is laid out in tables and how values are stored; every SQL
/// generator working on the store takes it from here.
///
/// ```swift
/// let store = try Store.open(at: "shop.sqlite", model: bundle.current)
/// let customers = try store.entityCount("Customer")
/// ```
public final class Store: @unchecked Sendable {
    // @unchecked: `connection` and `database` are only touched while `lock` is held.
    private let lock = NSRecursiveLock()
    /// The SQLite connection (nil for a store in a database server).
    private let connection: Connection?
    /// The session every backend-neutral operation works through (the SQLite connection itself,
    /// or a server engine's session).
    private let database: any DatabaseConnection
    /// The path as given (`:memory:` for an in-memory store); for a PostgreSQL store its URL
    /// with any password hidden.
    public let path: String
    /// The model the store was opened with.
    public let model: ObjectModel
    /// The store's metadata after opening.
    public private(set) var metadata: StoreMetadata
    /// How the store lays the model out in tables and stores values: every SQL generator working
    /// on this store receives it from here.
    package let layout: any StoreLayout
    /// ferry's writer lock on the file, held from opening to closing (nil when read-only).
    private let writerLock: StoreLock?
    /// The file the connection opened, to tell when another process replaced the one at `path`.
    private let identity: FileIdentity?
    /// For a Core Data store, the private copy the connection reads (removed with the store).
    private let coreDataCopy: CoreDataStoreCopy?

    /// How to open a store.
    public struct Options: Sendable {
        /// Create the file and schema when the store does not exist yet.
        public var createIfMissing: Bool = true
        /// How long a writer waits for another process's lock before failing.
        public var busyTimeout: Duration = .seconds(30)
        /// Accept a store whose model hash differs (for migration and inspection).
        public var allowModelMismatch: Bool = false
        /// Open read-only.
        public var readOnly: Bool = false

        /// An existing store opened for reading only (never created).
        package static var existingReadOnly: Options {
            var options = Options()
            options.readOnly = true
            options.createIfMissing = false
            return options
        }
        /// Whether to take ferry's writer lock (``StoreLock``) for as long as the store is open
        /// (writers always do; read-only stores never).
        package var writerLock: StoreLock.Policy = .take

        /// Options; the defaults create a missing store and wait up to 30 seconds for a writer.
        public init(
            createIfMissing: Bool = true, busyTimeout: Duration = .seconds(30), allowModelMismatch: Bool = false,
            readOnly: Bool = false
        ) {
            self.createIfMissing = createIfMissing
            self.busyTimeout = busyTimeout
            self.allowModelMismatch = allowModelMismatch
            self.readOnly = readOnly
        }
    }

    init(
        path: String, model: ObjectModel, layout: any StoreLayout, connection: Connection, metadata: StoreMetadata,
        writerLock: StoreLock?,
        coreDataCopy: CoreDataStoreCopy? = nil
    ) {
        self.coreDataCopy = coreDataCopy
        self.path = path
        self.layout = layout
        self.model = model
        self.connection = connection
        self.database = connection
        self.metadata = metadata
        self.writerLock = writerLock
        self.identity = StoreLock.isLockable(path) ? FileIdentity(path) : nil
    }

    /// The private copy's database file, for a store opened with ``openCoreData(at:bundle:)``.
    package var coreDataCopyPath: String? { coreDataCopy?.folder.appendingPathComponent("store.sqlite").path }

    /// A store in a database server (a PostgreSQL schema: `FerryPostgresStore`'s
    /// `Store+PostgreSQL.swift`); the session holds the store's writer lock when it writes.
    package init(
        path: String, model: ObjectModel, layout: any StoreLayout, session: any DatabaseConnection,
        metadata: StoreMetadata
    ) {
        self.coreDataCopy = nil
        self.path = path
        self.layout = layout
        self.model = model
        self.connection = nil
        self.database = session
        self.metadata = metadata
        self.writerLock = nil
        self.identity = nil
    }

    /// The store's engine: what it can do (``StoreEngine/capabilities``).
    public var engine: StoreEngine { layout.engine }

    deinit {
        // The connection is closed with the store; then the Core Data copy's folder goes.
        coreDataCopy?.remove()
    }

    /// Opens a Core Data store for reading, through a private copy (`CoreDataStoreCopy`) that
    /// is removed when the store is released: the user's store, `-wal` and `-shm` are never
    /// opened. Rows are read in `CoreDataLayout` with the model the store is at: the version
    /// of `bundle` detected (`CoreDataVersionDetector`), else the model the store caches, its
    /// sub-entities with their inherited properties (``ObjectModel/withInheritedProperties``).
    ///
    /// The store's ``metadata`` names that model; Core Data stores record no ferry model hash,
    /// so ``StoreMetadata/modelHash`` and ``StoreMetadata/entityHashes`` are empty.
    ///
    /// - Throws: `.store` when the file is not a Core Data store or cannot be read;
    ///   `.modelMismatch` when no version of `bundle` matches the store.
    public static func openCoreData(at path: String, bundle: ModelBundle?) throws -> Store {
        let header = try CoreDataStoreFile.header(of: path)
        let copy = try CoreDataStoreCopy(of: path)
        do {
            let file = try CoreDataStoreFile.read(copy, header: header)
            let model = try coreDataModel(of: file, bundle: bundle)
            let connection = try copy.database
            try configure(connection, busyTimeout: .seconds(30))
            // Nothing is ever written: the copy is private, but ferry's commands only read it.
            try connection.execute("PRAGMA query_only = ON")
            let layout = try CoreDataLayout.reading(connection, model: model)
            let metadata = StoreMetadata(
                formatVersion: 0, modelName: model.name, modelVersion: model.version, modelHash: "", entityHashes: [:],
                model: model, createdAt: nil)
            return Store(
                path: path, model: model, layout: layout, connection: connection, metadata: metadata, writerLock: nil,
                coreDataCopy: copy)
        } catch {
            copy.remove()
            throw error
        }
    }

    /// Opens the store at `path` for `model`, creating it when missing (unless told not to).
    /// `path` may be a `postgresql://` URL: the store is then the URL's schema in that database
    /// (`Store+PostgreSQL.swift`).
    ///
    /// - Throws: `.modelMismatch` naming the store's version and the model's when the stored
    ///   model hash differs; `.store` when the file is not a ferry store.
    public static func open(at path: String, model: ObjectModel, options: Options = Options()) throws -> Store {
        if let server = StoreLocation.serverEngine(path)?.driver.server {
            return try server.open(path, model: model, options: options)
        }
        try PathOrURL.requireStore(path)
        let layout = FerryLayout()
        try layout.checkRepresentable(model)
        let model = model.storedForm
        let exists =
            path == ":memory:" || path.hasPrefix("file:") ? false : FileManager.default.fileExists(atPath: path)
        if !exists && path != ":memory:" && !options.createIfMissing {
            throw FerryError(.store, "store '\(path)' does not exist")
        }
        if !exists && path != ":memory:" {
            // Like `mkdir -p` for the store's folder, so a job can write to `out/shop.sqlite`.
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        // Before the file is opened, so that the file opened is the one at the path once no
        // other writer (a migration about to swap it, a rebuild) is busy with it.
        let writerLock =
            options.readOnly
            ? nil : try StoreLock.acquire(for: path, timeout: options.busyTimeout, policy: options.writerLock)
        if options.readOnly && exists { StoreFiles.rollBackHotJournal(path, busyTimeout: options.busyTimeout) }
        let connection = try Connection(path: path, readOnly: options.readOnly, create: options.createIfMissing)
        try configure(connection, busyTimeout: options.busyTimeout)
        if let metadata = try StoreMetadata.read(from: connection, layout: layout) {
            return try opened(
                path: path, model: model, layout: layout, connection: connection, metadata: metadata, options: options,
                writerLock: writerLock)
        }
        guard !options.readOnly else {
            try checkNoUserTables(path: path, connection: connection, layout: layout)
            throw FerryError(.store, "store '\(path)' is empty and was opened read-only")
        }
        // Look again under the write lock: another process may have created the store since.
        try connection.transaction(.immediate) {
            guard try StoreMetadata.read(from: connection, layout: layout) == nil else { return }
            try checkNoUserTables(path: path, connection: connection, layout: layout)
            try createSchema(for: model, on: connection, layout: layout)
        }
        guard let metadata = try StoreMetadata.read(from: connection, layout: layout) else {
            throw FerryError(.internal, "store '\(path)' has no metadata right after creation")
        }
        return try opened(
            path: path, model: model, layout: layout, connection: connection, metadata: metadata, options: options,
            writerLock: writerLock)
    }

    /// Fails with `.modelMismatch` when the store's model hash is not the model's (unless allowed).
    package static func checkModel(path: String, model: ObjectModel, metadata: StoreMetadata, options: Options) throws {
        if metadata.modelHash != model.versionHash && !options.allowModelMismatch {
            throw mismatch(path: path, metadata: metadata, model: model)
        }
    }

    private static func opened(
        path: String, model: ObjectModel, layout: any StoreLayout, connection: Connection, metadata: StoreMetadata,
        options: Options, writerLock: StoreLock?
    ) throws -> Store {
        try checkModel(path: path, model: model, metadata: metadata, options: options)
        return Store(
            path: path, model: model, layout: layout, connection: connection, metadata: metadata, writerLock: writerLock
        )
    }

    package static func checkNoUserTables(
        path: String, connection: any DatabaseConnection, layout: any StoreLayout
    ) throws {
        let userTables = try connection.scalar(layout.dialect.userTableCountQuery)
        if let count = userTables?.int64, count > 0 {
            let kind = layout.engine.holder
            throw FerryError(
                .store,
                "'\(path)' is \(kind) but not a ferry store (it has no \(layout.bookkeeping?.metadata ?? "metadata") table)"
            )
        }
    }

    /// Creates ferry's tables and the model's tables in `layout` on an empty database (inside the
    /// caller's transaction).
    package static func createSchema(
        for model: ObjectModel, on connection: any DatabaseConnection, layout: any StoreLayout,
        includingIndexes: Bool = true
    ) throws {
        try layout.checkRepresentable(model)
        let model = model.storedForm
        let statements =
            includingIndexes
            ? StoreSchema.statements(for: model, layout: layout)
            : StoreSchema.tableStatements(for: model, layout: layout)
        let all = StoreSchema.bookkeepingTables(in: layout) + statements
        // One script: one round trip for the whole schema where the server is across a network.
        try connection.executeScript(all.joined(separator: ";\n"))
        try StoreMetadata.write(for: model, to: connection, layout: layout, createdAt: DateCoding.nowText())
    }

    /// The model a Core Data store is at: the version of `bundle` detected, else the model it
    /// caches, in its ``coreDataStoreForm(of:)``.
    package static func coreDataModel(of file: CoreDataStoreFile, bundle: ModelBundle?) throws -> ObjectModel {
        let version =
            try bundle.map { try CoreDataVersionDetector.detect(store: file, bundle: $0).version }
            ?? cachedModel(of: file)
        return coreDataStoreForm(of: version)
    }

    /// The model every request on a Core Data store of `version` works with: sub-entities with
    /// their inherited properties, as Core Data fetches them, and without transient attributes
    /// (``ObjectModel/storedForm``), which Core Data never stores: no column is read, written,
    /// checked or checksummed for them.
    package static func coreDataStoreForm(of version: ObjectModel) -> ObjectModel {
        version.withInheritedProperties.storedForm
    }

    /// The model a Core Data store caches; when it has none that can be read, the error says to
    /// give the store's model.
    private static func cachedModel(of file: CoreDataStoreFile) throws -> ObjectModel {
        do {
            return try file.cachedModel()
        } catch var error as FerryError {
            error.notes.append(
                "give the model the store was made with (--model App.xcdatamodeld): ferry reads the store at the version of it the store is at"
            )
            throw error
        }
    }

    /// Whether a store exists at `path`: the file, or for a PostgreSQL URL a ferry store in its
    /// schema (a server that cannot be reached throws).
    package static func exists(at path: String) throws -> Bool {
        guard let server = StoreLocation.serverEngine(path)?.driver.server else {
            return FileManager.default.fileExists(atPath: path)
        }
        return try server.storeExists(path)
    }

    /// A session on the store at `path` for inspecting it (`ferry store info`), with the layout
    /// its tables are in: SQLite's connection (opened for writing when the file allows it, so that
    /// a killed writer's journal is rolled back), or a server engine's session on the store.
    package static func inspectionSession(
        at path: String
    ) throws -> (session: any DatabaseConnection, layout: FerryLayout) {
        if let server = StoreLocation.serverEngine(path)?.driver.server { return try server.inspectionSession(path) }
        return (try Connection(path: path, readOnly: false, create: false), FerryLayout())
    }

    /// Reads a store's metadata without knowing its model (for `ferry store info`).
    ///
    /// Opens the file for writing when the file allows it (reading only otherwise), so that the
    /// journal a killed writer left behind is rolled back; a read-only connection cannot do that
    /// and fails with SQLITE_READONLY_ROLLBACK. A Core Data store has no ferry metadata (nil) and
    /// is never opened here: opening it in place would make or rewrite its `-wal` and `-shm`.
    public static func metadata(at path: String) throws -> StoreMetadata? {
        try metadata(of: StoreLocation(path))
    }

    /// ``metadata(at:)`` of a store already named by its location (classified once, where it
    /// was named).
    public static func metadata(of location: StoreLocation) throws -> StoreMetadata? {
        if let server = StoreLocation.serverEngine(location.text)?.driver.server {
            return try server.metadata(location.text)
        }
        switch location.layout {
        case .coreData: return nil
        case .ferry: return try metadata(ofFileNotCoreData: location.text)
        case .unknown: throw FerryError(.store, "store '\(location.text)' does not exist")
        }
    }

    /// ``metadata(at:)`` of a file the caller has just found not to be a Core Data store.
    package static func metadata(ofFileNotCoreData path: String) throws -> StoreMetadata? {
        if let handle = FileHandle(forReadingAtPath: path) {
            let header = (try? handle.read(upToCount: 16)) ?? Data()
            try? handle.close()
            if !header.isEmpty && header != Data("SQLite format 3\0".utf8) {
                throw FerryError(
                    .store, "'\(path)' is not a SQLite database (its first bytes are not the SQLite header)")
            }
        }
        let connection = try Connection(path: path, readOnly: false, create: false)
        return try StoreMetadata.read(from: connection, layout: FerryLayout())
    }

    static func configure(_ connection: Connection, busyTimeout: Duration) throws {
        connection.setBusyTimeout(milliseconds: busyTimeout.milliseconds)
        try connection.execute("PRAGMA foreign_keys = ON")
        // A larger page cache keeps unique-index inserts fast; bounded, so memory stays flat.
        try connection.execute("PRAGMA cache_size = -16384")
        try PredicateSupport.register(on: connection)
    }

    static func mismatch(path: String, metadata: StoreMetadata, model: ObjectModel) -> FerryError {
        let differing = Set(metadata.entityHashes.keys).union(model.entityHashes.keys)
            .filter { metadata.entityHashes[$0] != model.entityHashes[$0] }.sorted()
        return FerryError(
            .modelMismatch,
            "store '\(path)' is at model \(metadata.modelName) version \(metadata.modelVersion) (hash \(metadata.modelHash.prefix(12))), but the model given is \(model.name) version \(model.version) (hash \(model.versionHash.prefix(12)))",
            notes: [
                "entities that differ: \(differing.joined(separator: ", "))",
                "migrate the store to the model's version first (ferry migrate), or open it with the model it was made with",
            ])
    }

    // MARK: - Access

    /// Runs `body` with the SQLite connection, outside any transaction ferry opens. On a
    /// PostgreSQL store it fails: what needs SQLite's connection is not available there (yet).
    package func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        guard let connection else {
            throw engine.driver.server?.unavailable(on: path)
                ?? FerryError(.internal, "no SQLite connection for '\(path)'")
        }
        return try body(connection)
    }

    /// Runs `body` with the store's session (SQLite or PostgreSQL), outside any transaction ferry opens.
    package func withDatabase<T>(_ body: (any DatabaseConnection) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(database)
    }

    /// Runs `body` in a read transaction on the store's session, whatever its backend.
    package func readDatabase<T>(_ body: (any DatabaseConnection) throws -> T) throws -> T {
        try withDatabase { database in
            if database.isInTransaction { return try body(database) }
            return try database.readTransaction { try body(database) }
        }
    }

    /// Runs `body` in a write transaction on the store's session, whatever its backend: all of
    /// it is committed, or none of it.
    package func writeDatabase<T>(_ body: (any DatabaseConnection) throws -> T) throws -> T {
        try withDatabase { database in
            if database.isInTransaction { return try database.savepoint("ferry_savepoint") { try body(database) } }
            return try database.writeTransaction {
                try checkStillInPlace()
                return try body(database)
            }
        }
    }

    /// Runs `body` in a deferred (read) transaction.
    package func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try withConnection { connection in
            if connection.isInTransaction { return try body(connection) }
            return try connection.transaction(.deferred) { try body(connection) }
        }
    }

    /// Runs `body` in an immediate (write) transaction: all of it is committed, or none of it.
    /// A second writer in another process waits up to the busy timeout, then fails with
    /// "the store is locked by another process".
    package func write<T>(_ body: (Connection) throws -> T) throws -> T {
        try withConnection { connection in
            if connection.isInTransaction { return try connection.savepoint { try body(connection) } }
            return try connection.transaction(.immediate) {
                try checkStillInPlace()
                return try body(connection)
            }
        }
    }

    /// Fails when the file this store opened is no longer the one at its path (a migration or a
    /// rebuild in this process swapped a new file in): writing would go into the retired file.
    private func checkStillInPlace() throws {
        guard let identity, !FileIdentity(path).sameFile(as: identity) else { return }
        throw FerryError(
            .store, "the store '\(path)' was replaced (migrated or rebuilt) after it was opened; nothing was written",
            notes: ["open the store again and retry"])
    }

    /// Counts the rows of every entity, in model order.
    public func entityCounts() throws -> [(entity: String, count: Int)] {
        try readDatabase { connection in
            try model.entities.map { entity in (entity.name, try count(entity, on: connection)) }
        }
    }

    /// Counts the objects of the entity named `name`.
    public func entityCount(_ name: String) throws -> Int {
        guard let entity = model.entity(named: name) else {
            throw FerryError(
                .usage, "the model has no entity '\(name)'\(Suggestions.didYouMean(name, in: model.entityNames))")
        }
        // One statement: no transaction around it (a server may be across a network).
        return try withDatabase { connection in try count(entity, on: connection) }
    }

    private func count(_ entity: EntityDescription, on connection: any DatabaseConnection) throws -> Int {
        Int(try connection.scalar(layout.objectCountQuery(for: entity))?.int64 ?? 0)
    }
}

extension Store {
    /// Adds entities to an existing store, recording `model` (which must contain the store's
    /// current entities unchanged plus `newEntities`) as its model. Used by `ferry import` without
    /// `--model`, where each new file becomes a new table, as with sqlite-utils.
    package static func addEntities(_ newEntities: [String], at path: String, model: ObjectModel) throws {
        let writerLock = try StoreLock.acquire(for: path, timeout: .seconds(30))
        defer { withExtendedLifetime(writerLock) {} }
        let connection = try Connection(path: path, create: false)
        try configure(connection, busyTimeout: .seconds(30))
        let layout = FerryLayout()
        try connection.transaction(.immediate) {
            let partial = ObjectModel(
                name: model.name, version: model.version,
                entities: model.entities.filter { newEntities.contains($0.name) })
            for statement in StoreSchema.statements(for: partial, layout: layout) {
                try connection.execute(statement)
            }
            try StoreMetadata.write(for: model, to: connection, layout: layout, createdAt: DateCoding.nowText())
        }
    }

    /// Adds optional attributes to an entity the store has (`ALTER TABLE … ADD COLUMN`), in one
    /// transaction with recording `model`, which must be the store's model plus those attributes
    /// (`ferry import --alter` on an inferred store).
    package static func addAttributes(
        _ attributes: [AttributeDescription], to entity: String, at path: String, model: ObjectModel
    ) throws {
        let connection = try Connection(path: path, create: false)
        try configure(connection, busyTimeout: .seconds(30))
        let layout = FerryLayout()
        guard let description = model.entity(named: entity) else {
            throw FerryError(.usage, "the model has no entity '\(entity)'")
        }
        try connection.transaction(.immediate) {
            for attribute in attributes {
                try connection.execute(
                    "ALTER TABLE \(layout.quotedTable(for: description)) ADD COLUMN \(StoreSchema.columnDefinition(attribute, of: description, layout: layout))"
                )
            }
            try StoreMetadata.write(for: model, to: connection, layout: layout, createdAt: DateCoding.nowText())
        }
    }
}
