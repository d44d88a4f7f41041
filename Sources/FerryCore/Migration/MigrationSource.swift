import Logging

/// The store a migration reads: its version, how its tables are laid out, and the file the
/// first step reads.
///
/// A ferry store is read where it is (its `-wal` was checkpointed under the writer lock). A Core
/// Data store is read where it is too when its main file holds every commit (its `-wal` has no
/// frames and there is no `-journal`): by a plan opened `immutable=1`, by a migration holding
/// the store's write locks read-only like a ferry store. Otherwise it is read from a private copy
/// (``CoreDataStoreCopy``) with its `-wal` replayed there. Its version is found as
/// ``CoreDataVersionDetector`` does, and its rows are read in ``CoreDataLayout``.
struct MigrationSource {
    /// How a Core Data store may be read where it is.
    enum Access {
        /// A plan, which holds no lock: a complete main file is opened `immutable=1`, so nothing
        /// of the store is locked, written or created.
        case plan
        /// A migration holding ferry's writer lock and SQLite's write lock on the store (no
        /// writer can commit until the swap): a complete main file is read in place, read-only,
        /// with SQLite's own locking (shared with the connection holding the write lock).
        case writeLocked
    }

    /// The version of the bundle the store is at.
    let model: ObjectModel
    let layout: any StoreLayout
    /// The file the first step reads: the store itself, its private copy, or (for a plan) the
    /// store's `immutable=1` URI.
    let readPath: String
    /// Core Data's private copy, removed by ``close()``.
    private let copy: CoreDataStoreCopy?
    /// A Core Data store's metadata (its UUID and keys the migrated store keeps).
    let coreDataMetadata: CoreDataStoreMetadata?

    /// True when the store is a Core Data store.
    var isCoreData: Bool { coreDataMetadata != nil }

    /// Finds the version of the store at `path` in `bundle` (its stored form; `givenBundle` is
    /// the bundle as loaded, whose transient attributes a Core Data store's cached model holds),
    /// a Core Data store's first by the hashes of `compiledModel` when given.
    ///
    /// A Core Data store whose main file holds every commit is read in place as `access` allows,
    /// else through a private copy. No table is scanned: the version comes from the metadata,
    /// the entities and the columns.
    static func open(
        _ path: String, bundle: ModelBundle, givenBundle: ModelBundle, compiledModel: CompiledModelVersions? = nil,
        access: Access
    ) throws -> MigrationSource {
        guard StoreLocation(path).isCoreData else {
            guard let metadata = try Store.metadata(ofFileNotCoreData: path) else {
                throw FerryError(.store, "'\(path)' is not a ferry store (it has no ferry metadata)")
            }
            let model = try VersionDetector.detect(metadata: metadata, bundle: bundle, store: path)
            return MigrationSource(
                model: model, layout: FerryLayout(), readPath: path, copy: nil, coreDataMetadata: nil)
        }
        let obstacle = CoreDataStoreFile.inPlaceObstacle(path)
        if obstacle == nil, let readPath = inPlacePath(path, access: access) {
            let connection = try Connection(
                path: MigrationStepRunner.readOnlyURI(readPath), readOnly: true, create: false)
            let file = try CoreDataStoreFile.read(connection: connection, path: path, countingRows: false)
            let model = try version(of: file, bundle: bundle, givenBundle: givenBundle, compiledModel: compiledModel)
            let layout = try CoreDataLayout.reading(connection, model: model)
            return MigrationSource(
                model: model, layout: layout, readPath: readPath, copy: nil, coreDataMetadata: file.metadata)
        }
        FerryLog.migrate.debug(
            "reading Core Data store '\(path)' through a private copy: \(obstacle ?? "its path cannot be written as a file: URI")"
        )
        let copy = try CoreDataStoreCopy(of: path)
        do {
            let file = try CoreDataStoreFile.read(copy, countingRows: false)
            let model = try version(of: file, bundle: bundle, givenBundle: givenBundle, compiledModel: compiledModel)
            let connection = try copy.database
            // The -wal's commits move into the copy's main file, which the steps read.
            _ = try connection.rows("PRAGMA wal_checkpoint(TRUNCATE)")
            let layout = try CoreDataLayout.reading(connection, model: model)
            return MigrationSource(
                model: model, layout: layout, readPath: copy.path, copy: copy, coreDataMetadata: file.metadata)
        } catch {
            copy.remove()
            throw error
        }
    }

    /// What the steps open to read a complete Core Data store in place: its `immutable=1` URI
    /// for a plan, the path itself under the write locks (nil when the path cannot be encoded).
    private static func inPlacePath(_ path: String, access: Access) -> String? {
        switch access {
        case .plan: return CoreDataStoreFile.immutableURI(path)
        case .writeLocked: return path
        }
    }

    /// The version of `bundle` a Core Data store is at, with the properties its sub-entities inherit.
    private static func version(
        of file: CoreDataStoreFile, bundle: ModelBundle, givenBundle: ModelBundle, compiledModel: CompiledModelVersions?
    ) throws -> ObjectModel {
        let match = try CoreDataVersionDetector.detect(store: file, bundle: givenBundle, compiled: compiledModel)
        guard let version = bundle.version(match.version.version) else {
            throw FerryError(
                .internal, "model \(bundle.name) lost version '\(match.version.version)' in its stored form")
        }
        return version.withInheritedProperties
    }

    /// Removes the private copy of a Core Data store.
    func close() { copy?.remove() }

    /// Where the migration writes: a store in the source's own layout (a Core Data store stays
    /// a Core Data store, ``CoreDataMigrationDestination``).
    func destination(compiledModel: CompiledModelVersions?) -> MigrationDestination {
        guard let coreDataMetadata else { return .ferry }
        return .coreData(CoreDataMigrationDestination(sourceMetadata: coreDataMetadata, compiledModel: compiledModel))
    }

    /// Throws when a version the migration writes cannot be stored in the source's layout:
    /// ferry's layout holds no entity hierarchies yet; a new Core Data store cannot keep a
    /// derived attribute up to date (no triggers). Checked for every version before the first
    /// step, so a migration never fails halfway for it.
    func checkMigratable(_ model: ObjectModel) throws {
        if isCoreData {
            do {
                try CoreDataSchemaWriter.checkWritable(model)
            } catch let error as FerryError {
                var refusal = error
                refusal.message = "cannot migrate to version \(model.version): \(error.message); nothing was changed"
                refusal.notes.append(
                    "migrate to the version before it (--to), and let Core Data (the app) migrate the store to version \(model.version)"
                )
                throw refusal
            }
        } else {
            try FerryLayout().checkRepresentable(model)
        }
    }

    /// The versions a migration of this store goes through, as its steps see them: for a Core
    /// Data store each sub-entity with the properties it inherits (``ObjectModel/withInheritedProperties``),
    /// since each of its entity mappings reads and writes whole objects of exactly its own entity
    /// (Core Data's mappings list inherited properties too).
    func stepVersions(_ versions: [ObjectModel]) -> [ObjectModel] {
        isCoreData ? versions.map(\.withInheritedProperties) : versions
    }
}
