/// An engine's own code as ferry's generic code reaches it: what differs in a store's life
/// between engines (where a new store is laid out, how `ferry copy` builds a copy beside a
/// store and puts it in place). Each ``StoreEngine`` carries its driver (``StoreEngine/driver``);
/// a fourth engine is one more implementation, and no generic code asks which engine it has.
package protocol StoreEngineDriver: Sendable {
    /// The layout a new store of the engine is created in, which says what models it can hold
    /// (nil for Core Data's, which depends on the model).
    var newStoreLayout: FerryLayout? { get }
    /// True when `first` and `second` name the same store of this engine (two spellings of one
    /// URL); false for files, whose copies never reach the same store.
    func sameStore(_ first: String, _ second: String) throws -> Bool
    /// Locks the copy's destination store for writing, checks that `ferry copy` may write a
    /// store of `model` there, and makes the scratch store's place beside it.
    func copyDestination(for copier: StoreCopier, model: ObjectModel) throws -> any StoreCopyDestination
    /// The migration of the store at `storePath` when the engine runs it itself (in the server,
    /// from schema to schema); nil where ``Migrator`` migrates a scratch copy of the store file.
    func engineMigration(
        of storePath: String, bundle: ModelBundle, options: MigrationOptions, mappings: StepMappingCache,
        observer: (any MigrationObserver)?
    ) -> (any EngineMigration)?
    /// How stores of an engine in a database server (named by a URL) are opened and read; nil
    /// for an engine of files, which ``Store`` opens itself.
    var server: (any ServerStoreDriver)? { get }
}

/// Stores in a database server, named by a URL (``StoreLocation/serverEngine(_:)``): what
/// ``Store`` asks the engine where it opens or reads a file itself.
package protocol ServerStoreDriver: Sendable {
    /// Opens the store `text` names for `model` (``Store/open(at:model:options:)``).
    func open(_ text: String, model: ObjectModel, options: Store.Options) throws -> Store
    /// The store's metadata, nil when the place `text` names holds no ferry store.
    func metadata(_ text: String) throws -> StoreMetadata?
    /// Whether a ferry store is at the place `text` names (a server that cannot be reached throws).
    func storeExists(_ text: String) throws -> Bool
    /// A session on the store for inspecting it, with the layout its tables are in.
    func inspectionSession(_ text: String) throws -> (session: any DatabaseConnection, layout: FerryLayout)
    /// The schema (or database) the store `text` names lives in, the engine's default when it
    /// names none or cannot be read (opening the store then says why).
    func schema(of text: String) -> String
    /// The store's name for messages, its password hidden.
    func shown(_ text: String) -> String
    /// `text` with the password of every URL of this engine in it hidden.
    func redactingPasswords(in text: String) -> String
    /// The refusal of an operation that needs SQLite's own connection, on the store `path`.
    func unavailable(on path: String) -> FerryError
}

/// A migration an engine runs itself (``StoreEngineDriver/engineMigration(of:bundle:options:mappings:observer:)``).
package protocol EngineMigration {
    /// The steps from the store's version to the target, without changing anything; the
    /// source's objects counted only when asked.
    func plan(countingObjects: Bool) throws -> Migrator.Plan
    /// Migrates the store and puts the result in place.
    func run() throws -> MigrationReport
}

/// Where `ferry copy` builds a new store before putting it in place of its destination; holds
/// the destination's writer lock for as long as it lives.
package protocol StoreCopyDestination: AnyObject {
    /// Where the scratch store is opened (a file path, a URL naming a work schema).
    var scratchPath: String { get }
    /// Puts the verified scratch store in place of the destination.
    func place() throws
    /// Removes the scratch store (the copy failed); errors are not reported.
    func discard()
}

/// ferry's and Core Data's stores in SQLite files: a new store in ferry's layout (none for Core
/// Data's), and a copy built in a scratch file beside the destination, swapped in by rename.
package struct SQLiteFileDriver: StoreEngineDriver {
    package let newStoreLayout: FerryLayout?

    package func sameStore(_ first: String, _ second: String) throws -> Bool { false }

    package func copyDestination(for copier: StoreCopier, model: ObjectModel) throws -> any StoreCopyDestination {
        try ScratchFileCopyDestination(copier)
    }

    /// ``Migrator`` migrates a scratch copy of the file itself.
    package func engineMigration(
        of storePath: String, bundle: ModelBundle, options: MigrationOptions, mappings: StepMappingCache,
        observer: (any MigrationObserver)?
    ) -> (any EngineMigration)? { nil }

    /// Files are opened by ``Store`` itself.
    package var server: (any ServerStoreDriver)? { nil }
}

/// A copy built in `destination` plus ``StoreFiles/copyScratchMark``, under the destination's
/// ``StoreLock``.
final class ScratchFileCopyDestination: StoreCopyDestination {
    private let destination: String
    private let lock: StoreLock
    let scratchPath: String

    init(_ copier: StoreCopier) throws {
        destination = copier.destinationPath
        lock = try StoreLock.acquire(for: destination, timeout: copier.busyTimeout)
        try copier.checkDestination()
        StoreFiles.removeLeftovers(of: destination, marked: [StoreFiles.copyScratchMark])
        scratchPath = destination + StoreFiles.copyScratchMark
    }

    func place() throws {
        try StoreFiles.replace(destination, with: scratchPath)
        try StoreFiles.synchronize(destination)
    }

    func discard() { withExtendedLifetime(lock) { StoreFiles.remove(scratchPath) } }
}
