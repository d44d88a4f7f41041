import Foundation

/// Copies a store into a new store of the same model and version (`ferry copy SRC DST`): every
/// object with its primary key, every relationship, verified by per-entity counts and
/// checksums of every attribute, then put in place with one `rename(2)`.
///
/// The copy is an identity migration (`MigrationStepRunner` with the model mapped onto itself),
/// so it reads the source in the source's layout and writes ferry's: a Core Data store (read
/// through its private copy) becomes a ferry store. The destination is written beside its final
/// path and renamed over it only once verified: a failure or a kill leaves the destination as it
/// was (absent, or the old store with `replace`).
public struct StoreCopier {
    /// The store copied (a ferry store or a Core Data store).
    public let sourcePath: String
    /// The new ferry store's path.
    public let destinationPath: String
    /// Replace a destination that holds objects (refused otherwise).
    public var replacesExisting = false
    /// How long to wait for another writer of the destination before failing.
    public var busyTimeout: Duration = .seconds(30)
    /// The model a Core Data source is read with, at the version of it the store is at (as
    /// `ferry export --model` reads one); nil to read the model the store caches. A ferry store
    /// records its own model: giving one for it is refused.
    public var sourceBundle: ModelBundle?

    /// A copy of the store at `sourcePath` into `destinationPath`.
    public init(from sourcePath: String, to destinationPath: String) {
        self.sourcePath = sourcePath
        self.destinationPath = destinationPath
    }

    /// What a copy did: the model and, per entity, the objects in the source and in the copy.
    public struct Report: Sendable, Codable, Hashable {
        /// One entity's objects in the source and in the copy (always equal in a report).
        public struct EntityCount: Sendable, Codable, Hashable {
            /// The entity's name.
            public var entity: String
            /// Its objects in the source.
            public var source: Int
            /// Its objects in the copy.
            public var copied: Int
        }
        /// The store copied.
        public var source: String
        /// The new store.
        public var destination: String
        /// The model's name.
        public var model: String
        /// The model version both stores are at.
        public var modelVersion: String
        /// Objects per entity.
        public var entities: [EntityCount]
        /// Entities whose attribute checksums were compared and agreed.
        public var checksummed: [String]
        /// How long the copy took.
        public var seconds: Double
    }

    /// Copies the store; throws (leaving the destination untouched) when it cannot, or when the
    /// copy's counts or checksums differ from the source's.
    public func run() throws -> Report {
        let sourceLocation = StoreLocation(sourcePath)
        // Found by the engine conformance suite: with --replace, a Core Data destination was
        // silently replaced by a ferry store (which the app can no longer open), from every
        // source engine. A copy writes only ferry's layout, so a Core Data store is never its
        // destination; said before anything is read, the same from every source.
        if StoreLocation(destinationPath).isCoreData {
            throw FerryError(
                .usage,
                "'\(destinationPath)' is a Core Data store; ferry copy writes ferry stores and never replaces a Core Data store (to fill one, ferry import into it; to copy it, give a new file as the destination)"
            )
        }
        if sourceLocation.isDatabaseServer || StoreLocation(destinationPath).isDatabaseServer {
            return try CrossStoreCopier(copier: self).run()
        }
        let started = ContinuousClock.now
        try PathOrURL.requireStore(sourcePath)
        try PathOrURL.requireStore(destinationPath)
        guard FileManager.default.fileExists(atPath: sourcePath) else {
            throw FerryError(.noInput, "the store '\(sourcePath)' does not exist")
        }
        if FileIdentity(sourcePath).sameFile(as: FileIdentity(destinationPath)) {
            throw FerryError(.usage, "'\(sourcePath)' and '\(destinationPath)' are the same store")
        }
        // The source: a Core Data store through its private copy, or a ferry store read-only.
        let source: Store
        let sourceFile: String
        if sourceLocation.isCoreData {
            source = try Store.openCoreData(at: sourcePath, bundle: sourceBundle)
            sourceFile = source.coreDataCopyPath ?? sourcePath
        } else {
            if sourceBundle != nil {
                throw FerryError(
                    .usage,
                    "--model reads a Core Data store; '\(sourcePath)' is a ferry store, which records its own model")
            }
            guard let metadata = try Store.metadata(at: sourcePath) else {
                throw FerryError(
                    .store,
                    "'\(sourcePath)' is not a ferry store or a Core Data store (it has no ferry metadata); to read a plain SQLite database's tables use ferry import"
                )
            }
            guard let model = metadata.model else {
                throw FerryError(.store, "store '\(sourcePath)' does not record its model")
            }
            source = try Store.open(at: sourcePath, model: model, options: .existingReadOnly)
            sourceFile = sourcePath
        }
        let model = source.model.storedForm
        try FerryLayout().checkRepresentable(model)

        // An existing destination is replaced: refused before the lock file is made when read-only.
        if FileManager.default.fileExists(atPath: destinationPath) { try Store.checkWritable(destinationPath) }
        let writerLock = try StoreLock.acquire(for: destinationPath, timeout: busyTimeout)
        defer { withExtendedLifetime(writerLock) {} }
        try checkDestination()
        let scratch = destinationPath + StoreFiles.copyScratchMark
        StoreFiles.removeLeftovers(of: destinationPath, marked: [StoreFiles.copyScratchMark])
        defer { StoreFiles.remove(scratch) }
        var options = MigrationOptions(backup: false)
        options.checksums = true
        options.busyTimeout = busyTimeout
        let step = MigrationStepRunner(
            mapping: try MappingModel.inferred(from: model, to: model), sourcePath: sourceFile,
            destinationPath: scratch, options: options,
            now: DateCoding.nowMilliseconds(), sourceLayout: source.layout, destination: .ferry)
        let stepReport: MigrationStepReport
        do {
            stepReport = try step.run()
        } catch {
            // The copy's hidden work file is the copy being built to the user; a full disk is the
            // destination's, though SQLite names the connection's main database (the source).
            let shown = (error as? FerryError)?.isOutOfSpace == true ? destinationPath : sourcePath
            throw StoreFiles.naming(
                error,
                [
                    StoreFiles.ShownName(
                        path: scratch, quoted: "the copy of '\(sourcePath)' being built at '\(destinationPath)'",
                        bare: "the copy being built at \(destinationPath)"),
                    StoreFiles.ShownName(path: sourceFile, quoted: "'\(shown)'", bare: shown),
                ])
        }

        // Counts of the source and of the copy, entity by entity, before the copy is put in place.
        let sourceCounts = Dictionary(
            try source.entityCounts().map { ($0.entity, $0.count) }, uniquingKeysWith: { first, _ in first })
        var copyOptions = Store.Options.existingReadOnly
        copyOptions.writerLock = .none
        let copyCounts = try Store.open(at: scratch, model: model, options: copyOptions).entityCounts()
        var entities: [Report.EntityCount] = []
        for (entity, copied) in copyCounts {
            let expected = sourceCounts[entity] ?? 0
            guard expected == copied else {
                throw FerryError(
                    .verification,
                    "the copy of '\(sourcePath)' has \(copied) \(entity) objects, the source \(expected); '\(destinationPath)' was not changed"
                )
            }
            entities.append(Report.EntityCount(entity: entity, source: expected, copied: copied))
        }
        try StoreFiles.replace(destinationPath, with: scratch)
        try StoreFiles.synchronize(destinationPath)
        return Report(
            source: sourcePath, destination: destinationPath, model: model.name, modelVersion: model.version,
            entities: entities,
            checksummed: stepReport.entities.filter { !($0.unchanged ?? []).isEmpty }.map(\.destination),
            seconds: started.duration(to: .now).seconds)
    }

    /// A destination that exists must be an empty ferry store, or be replaced on request.
    func checkDestination() throws {
        guard FileManager.default.fileExists(atPath: destinationPath) else { return }
        if replacesExisting { return }
        guard let metadata = try? Store.metadata(at: destinationPath), let model = metadata.model else {
            throw FerryError(
                .usage,
                "'\(destinationPath)' exists and is not a ferry store; ferry copy never overwrites it (pass --replace to replace it)"
            )
        }
        var options = Store.Options.existingReadOnly
        options.allowModelMismatch = true
        options.writerLock = .none
        try Self.requireEmpty(Store.open(at: destinationPath, model: model, options: options), shown: destinationPath)
    }

    /// Refuses a destination store that holds objects: ferry copy writes only into a new or
    /// empty store unless asked to replace it.
    package static func requireEmpty(_ store: Store, shown: String) throws {
        let objects = try store.entityCounts().reduce(0) { $0 + $1.count }
        if objects > 0 {
            throw FerryError(
                .usage,
                "the store '\(shown)' already holds \(objects) objects; ferry copy writes only into a new or empty store (pass --replace to replace it)"
            )
        }
    }
}
