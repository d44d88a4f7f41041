/// One storage engine as the pipeline and the command line see it: what it can do, never which
/// engine it is. Reached from where a store is (``StoreLocation/engine``) or from an open store
/// (``Store/engine``).
///
/// ferry has three engines: ``sqlite`` (ferry's layout in a SQLite file), ``coreDataSQLite``
/// (Core Data's layout in a SQLite file) and `postgreSQL` (ferry's layout in a schema, defined
/// in `FerryPostgresStore`). A caller that needs to behave differently on one of them asks a
/// capability here; engine code itself sits behind the session (`DatabaseConnection`), the SQL
/// dialect and the layout.
///
/// ```swift
/// let engine = StoreLocation(path).engine
/// if engine.capabilities.readsPrivateCopy { … }   // never open the user's file in place
/// ```
public struct StoreEngine: Sendable, Hashable {
    /// How a change that must not touch the store until it has succeeded (a rebuild, a dry run, a
    /// migration) is made.
    public enum WorkArea: Sendable, Hashable {
        /// In a scratch copy of the store file beside it, swapped in when it succeeds.
        case scratchCopy
        /// In a work schema beside the store's schema, renamed into place when it succeeds.
        case workSchema
    }

    /// The lock that keeps a second writer out of a store.
    public enum WriterLock: Sendable, Hashable {
        /// ferry's lock file beside the store file (`StoreLock`).
        case lockFile
        /// A session advisory lock on the store's schema, held by the server.
        case advisoryLock
    }

    /// How a compiled predicate filters rows in the database.
    public enum PredicatePushdown: Sendable, Hashable {
        /// Every predicate compiles to SQL that selects exactly its objects (ferry registers its
        /// own SQL functions on the connection).
        case exact
        /// What the server computes exactly as ferry does is pushed down; the rest is a wider
        /// filter, and ferry evaluates the predicate on the rows it returns.
        case superset
    }

    /// What an engine can do: the questions the pipeline and the command line ask about a store.
    public struct Capabilities: Sendable, Hashable {
        /// True when the store is read through a private copy and never opened in place: opening
        /// the user's file would checkpoint its `-wal` and rewrite its `-shm` (Core Data's). A dry
        /// run then works on its own copy.
        public var readsPrivateCopy: Bool
        /// True when an entity hierarchy shares its root's table and each sub-entity carries what it
        /// inherits (Core Data's layout): steps see sub-entities with inherited properties.
        public var storesInheritance: Bool
        /// True when ordered to-many relationships are stored with their order.
        public var orderedToMany: Bool
        /// Where a rebuild, a dry run of a migration or a migration does its work.
        public var workArea: WorkArea
        /// The lock a writer holds.
        public var writerLock: WriterLock
        /// How predicates filter in the database.
        public var predicatePushdown: PredicatePushdown

        /// An engine's capabilities (an engine module describes its own).
        package init(
            readsPrivateCopy: Bool, storesInheritance: Bool, orderedToMany: Bool, workArea: WorkArea,
            writerLock: WriterLock, predicatePushdown: PredicatePushdown
        ) {
            self.readsPrivateCopy = readsPrivateCopy
            self.storesInheritance = storesInheritance
            self.orderedToMany = orderedToMany
            self.workArea = workArea
            self.writerLock = writerLock
            self.predicatePushdown = predicatePushdown
        }
    }

    /// The engine's name for messages (`SQLite`, `Core Data`, `PostgreSQL`).
    public let name: String
    /// What holds one store, for messages (`a SQLite database`, `a PostgreSQL schema`).
    public let holder: String
    /// What the engine can do.
    public let capabilities: Capabilities
    /// The engine's own code, as ferry's generic code reaches it.
    package let driver: any StoreEngineDriver

    /// An engine: its name, what holds its stores, its capabilities and its driver (an engine
    /// module defines its own, registered with ``StoreEngines/register(_:schemes:)``).
    package init(name: String, holder: String, capabilities: Capabilities, driver: any StoreEngineDriver) {
        self.name = name
        self.holder = holder
        self.capabilities = capabilities
        self.driver = driver
    }

    /// ferry's layout in a SQLite file.
    public static let sqlite = StoreEngine(
        name: "SQLite", holder: "a SQLite database",
        capabilities: Capabilities(
            readsPrivateCopy: false, storesInheritance: false, orderedToMany: false, workArea: .scratchCopy,
            writerLock: .lockFile, predicatePushdown: .exact),
        driver: SQLiteFileDriver(newStoreLayout: FerryLayout()))

    /// Core Data's layout in a SQLite file.
    public static let coreDataSQLite = StoreEngine(
        name: "Core Data", holder: "a SQLite database",
        capabilities: Capabilities(
            readsPrivateCopy: true, storesInheritance: true, orderedToMany: true, workArea: .scratchCopy,
            writerLock: .lockFile, predicatePushdown: .exact),
        driver: SQLiteFileDriver(newStoreLayout: nil))

    /// Throws the refusal naming what `model` holds that a new store of this engine cannot store
    /// faithfully; does nothing for an engine whose layout follows the model (Core Data's).
    package func checkRepresentable(_ model: ObjectModel) throws {
        try driver.newStoreLayout?.checkRepresentable(model)
    }

    /// Engines are told apart by name.
    public static func == (lhs: StoreEngine, rhs: StoreEngine) -> Bool { lhs.name == rhs.name }

    /// Hashes the name.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
