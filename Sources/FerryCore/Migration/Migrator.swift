import Foundation

/// Options of a migration.
public struct MigrationOptions: Sendable {
    /// The version to migrate to; nil for the bundle's current version.
    public var targetVersion: String?
    /// Keep the original store beside the migrated one (`STORE.backup-v1-…`).
    public var backup = true
    /// Values of `$name` in mapping expressions.
    public var parameters: [String: Value] = [:]
    /// Where mapping files' policy names are looked up.
    public var registry: PolicyRegistry = .shared
    /// Prove that carried-over values are unchanged: per entity mapping, an order-independent
    /// checksum of every attribute the mapping copies as it is, before and after (one more read
    /// of both stores; `ferry check` always does it).
    public var checksums = false
    /// How long to wait for another writer (or a reader blocking a checkpoint) before failing.
    public var busyTimeout: Duration = .seconds(30)
    /// For a Core Data store: the compiled model (`.momd`) whose entity hashes the migrated
    /// store's metadata records for its new version; without it, it records none.
    package var compiledModel: CompiledModelVersions?

    /// Options migrating to `targetVersion` (nil: the current version), with a backup unless `backup` is false.
    public init(
        targetVersion: String? = nil, backup: Bool = true, parameters: [String: Value] = [:],
        registry: PolicyRegistry = .shared
    ) {
        self.targetVersion = targetVersion
        self.backup = backup
        self.parameters = parameters
        self.registry = registry
    }
}

/// Receives progress while a store migrates.
public protocol MigrationObserver: AnyObject {
    /// A version step starts: step `index` (1-based) of `total`, from version `from` to `to`.
    func migrationStepStarted(_ index: Int, of total: Int, from: String, to: String)
    /// An entity mapping of the current step starts.
    func migrationEntityStarted(_ mapping: String)
    /// `processed` source objects of the mapping are done so far.
    func migrationProgress(mapping: String, processed: Int)
}

/// What one version step did, per entity mapping.
public struct MigrationStepReport: Sendable, Codable, Hashable {
    /// What one entity mapping of the step did.
    public struct EntityReport: Sendable, Codable, Hashable {
        /// The entity mapping's name.
        public var mapping: String
        /// The destination entity.
        public var destination: String
        /// The source entity; nil for an entity that starts empty.
        public var source: String?
        /// Source objects read.
        public var read = 0
        /// Destination objects written.
        public var written = 0
        /// The mapping's wall-clock time.
        public var seconds = 0.0
        /// Attributes copied unchanged whose checksums agreed before and after (with `checksums`).
        public var unchanged: [String]?
        /// Attributes the mapping transforms (expressions, conversions, defaults for nil, filters),
        /// which a checksum cannot compare.
        public var notComparable: [String]?

        enum CodingKeys: String, CodingKey {
            case mapping, destination, source, read, written, seconds, unchanged
            case notComparable = "not_comparable"
        }
    }

    /// The version migrated from.
    public var from: String
    /// The version migrated to.
    public var to: String
    /// The mapping file used; nil for an inferred step.
    public var mappingFile: String?
    /// One report per entity mapping, in the order they ran.
    public var entities: [EntityReport]
    /// The step's wall-clock time.
    public var seconds: Double

    /// A step's report (also as an engine's own migration makes it).
    package init(from: String, to: String, mappingFile: String?, entities: [EntityReport], seconds: Double) {
        self.from = from
        self.to = to
        self.mappingFile = mappingFile
        self.entities = entities
        self.seconds = seconds
    }

    enum CodingKeys: String, CodingKey {
        case from, to, entities, seconds
        case mappingFile = "mapping_file"
    }
}

/// What a migration did.
public struct MigrationReport: Sendable, Codable, Hashable {
    /// The store's path.
    public var store: String
    /// The model's name.
    public var model: String
    /// The store's version before the migration.
    public var fromVersion: String
    /// The store's version after it.
    public var toVersion: String
    /// One report per version step, in order.
    public var steps: [MigrationStepReport]
    /// The original store, kept beside the migrated one (nil with `backup: false`).
    public var backup: String?

    /// A migration's report (also as an engine's own migration makes it).
    package init(
        store: String, model: String, fromVersion: String, toVersion: String, steps: [MigrationStepReport],
        backup: String? = nil
    ) {
        self.store = store
        self.model = model
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.steps = steps
        self.backup = backup
    }

    enum CodingKeys: String, CodingKey {
        case store, model, steps, backup
        case fromVersion = "from_version"
        case toVersion = "to_version"
    }
}

/// Migrates a store to another version of its model, step by step (v1 → v2 → v3), each step
/// lightweight (inferred) or described by a mapping file: Core Data's progressive migration with
/// `NSStagedMigrationManager`'s stages.
///
/// Crash safety: every step writes a new file beside the store (`STORE.ferry-migrating-N`) and
/// only reads the store. The last result is verified, then swapped in with one `rename(2)`, after
/// the original is hard-linked to a backup. A failure or a kill at any moment leaves either the
/// untouched original or the fully migrated store in place. A store in a PostgreSQL schema is
/// migrated into a new schema swapped in by renaming (`PostgresSchemaMigration`).
///
/// ```swift
/// let migrator = Migrator(storePath: "shop.sqlite", bundle: bundle) { from, to in
///     try MappingModel.inferred(from: from, to: to)
/// }
/// let report = try migrator.run()
/// ```
public final class Migrator {
    /// The store migrated.
    public let storePath: String
    /// The model's versions (stored attributes only).
    public let bundle: ModelBundle
    /// The bundle as given (transient attributes included): a Core Data store's cached model is
    /// compared with it to find the store's version.
    private let givenBundle: ModelBundle
    /// The migration's options.
    public var options: MigrationOptions
    /// Receives progress; held weakly.
    public weak var observer: (any MigrationObserver)?
    /// Each step's mapping, made once per migrator (``plan()`` and ``run()`` share them).
    private let mappings: StepMappingCache

    /// - Parameters:
    ///   - storePath: the store to migrate.
    ///   - bundle: the model's versions, the store's among them.
    ///   - options: the target version, backup, parameters and policy registry.
    ///   - mappingProvider: the mapping for one adjacent version step (a mapping file's,
    ///     or the inferred one).
    public init(
        storePath: String, bundle: ModelBundle, options: MigrationOptions = MigrationOptions(),
        mappingProvider: @escaping (ObjectModel, ObjectModel) throws -> MappingModel
    ) {
        self.storePath = storePath
        self.givenBundle = bundle
        // Transient attributes have no storage: migrations move only what stores hold.
        self.bundle = bundle.storedForm
        self.options = options
        self.mappings = StepMappingCache(mappingProvider)
    }

    /// The migration's plan: the store's version, the target, each step's mapping, and how many
    /// objects of each source entity the store holds.
    public struct Plan {
        /// The store's version.
        public var source: ObjectModel
        /// The version migrated to.
        public var target: ObjectModel
        /// The mapping of each version step, in order.
        public var steps: [MappingModel]
        /// Objects per source entity in the store (each entity's own, not its sub-entities').
        public var counts: [String: Int]
        /// How each step moves each entity mapping's objects (keyed by mapping name); empty
        /// when not computed (a PostgreSQL store's steps choose theirs when they run).
        package var strategies: [[String: MigrationStrategy]] = []
    }

    /// Finds the store's version and plans the steps to the target, without changing anything.
    /// A Core Data store is read in place opened `immutable=1` when its main file holds every
    /// commit, else from a private copy (its `-wal` included), so not even its `-shm` is touched.
    public func plan() throws -> Plan {
        try plan(countingObjects: true)
    }

    /// ``plan()``, counting the source's objects only when asked (`counts` is empty otherwise):
    /// whether a migration is needed takes no table scan.
    package func plan(countingObjects: Bool) throws -> Plan {
        if let migration = engineMigration { return try migration.plan(countingObjects: countingObjects) }
        let source = try MigrationSource.open(
            storePath, bundle: bundle, givenBundle: givenBundle, compiledModel: options.compiledModel, access: .plan)
        defer { source.close() }
        return try plan(source, countingObjects: countingObjects)
    }

    private func plan(_ source: MigrationSource, countingObjects: Bool) throws -> Plan {
        let targetLabel = options.targetVersion ?? bundle.currentVersion
        guard let target = bundle.version(targetLabel) else {
            throw FerryError(
                .usage,
                "model \(bundle.name) has no version '\(targetLabel)' (versions: \(bundle.versions.map(\.version).joined(separator: ", ")))"
            )
        }
        let path = source.stepVersions(try bundle.path(from: source.model.version, to: target.version))
        // Every version the migration writes (the store's own is only read).
        for version in path.dropFirst() { try source.checkMigratable(version) }
        var steps: [MappingModel] = []
        for (from, to) in zip(path, path.dropFirst()) {
            steps.append(try mappings.mapping(from: from, to: to))
        }
        var counts: [String: Int] = [:]
        guard countingObjects else { return Plan(source: source.model, target: target, steps: steps, counts: counts) }
        let strategies = try Self.strategies(
            of: steps, sourceLayout: source.layout,
            destination: source.destination(compiledModel: options.compiledModel),
            options: options)
        let connection = try Connection(
            path: MigrationStepRunner.readOnlyURI(source.readPath), readOnly: true, create: false)
        // Each entity's own objects (its sub-entities' are theirs), as each entity mapping reads them.
        for entity in source.model.entities {
            counts[entity.name] = Int(
                try connection.scalar(source.layout.objectCountQuery(for: entity, ownObjectsOnly: true))?.int64 ?? 0)
        }
        return Plan(
            source: source.model, target: path.last ?? target, steps: steps, counts: counts, strategies: strategies)
    }

    /// Migrates the store to the target version and swaps the result in.
    ///
    /// Holds the store's writer lock (`StoreLock`) from the first read to the swap, so another
    /// ferry writer waits for the migration and then opens the migrated store, and two
    /// migrations of one store run one after the other (the second finds nothing to do).
    public func run() throws -> MigrationReport {
        let location = StoreLocation(storePath)
        if let migration = engineMigration { return try migration.run() }
        // A Core Data store with nothing to do is not opened at all (its -wal stays as it is).
        if location.isCoreData {
            let preview = try plan(countingObjects: false)
            if preview.steps.isEmpty {
                return MigrationReport(
                    store: storePath, model: bundle.name, fromVersion: preview.source.version,
                    toVersion: preview.target.version, steps: [])
            }
        }
        // Before the lock file is made beside it: a store that cannot be written gets nothing
        // (a rename would replace it all the same).
        try Store.checkWritable(storePath)
        let writerLock = try StoreLock.acquire(for: storePath, timeout: options.busyTimeout)
        defer { withExtendedLifetime(writerLock) {} }
        // Files a killed migration of this store left: no running migration owns them, since
        // it would hold the lock.
        removeScratchFiles()
        // The store's latest commits move from its -wal into the main file (which is backed up),
        // a Core Data store's too: its steps then read the main file in place.
        try settleWriteAheadLog()

        // Writers that do not know ferry's lock (the sqlite3 shell, an app) are held off by
        // SQLite's own write lock, from before the store is read until the new file is in place.
        let barrier = try SQLiteWriteBarrier(path: storePath, timeout: options.busyTimeout)
        defer { barrier.release() }

        // Read in place when the main file holds every commit: the barrier keeps it so.
        let source = try MigrationSource.open(
            storePath, bundle: bundle, givenBundle: givenBundle, compiledModel: options.compiledModel,
            access: .writeLocked)
        defer { source.close() }
        let plan = try self.plan(source, countingObjects: false)
        // Every step's policies exist before the first step does any work.
        try options.registry.checkRegistered(plan.steps)
        var report = MigrationReport(
            store: storePath, model: bundle.name, fromVersion: plan.source.version, toVersion: plan.target.version,
            steps: [])
        guard !plan.steps.isEmpty else { return report }
        let destination = source.destination(compiledModel: options.compiledModel)

        let now = DateCoding.nowMilliseconds()
        var current = source.readPath
        var currentLayout = source.layout
        var scratch: [String] = []
        var backup: String?
        do {
            for (index, mapping) in plan.steps.enumerated() {
                observer?.migrationStepStarted(
                    index + 1, of: plan.steps.count, from: mapping.source.version, to: mapping.destination.version)
                let next = storePath + StoreFiles.migrationScratchMark + "\(index + 1)"
                scratch.append(next)
                let runner = MigrationStepRunner(
                    mapping: mapping, sourcePath: current, destinationPath: next, options: options, now: now,
                    sourceLayout: currentLayout,
                    destination: destination)
                runner.observer = observer
                report.steps.append(try runner.run())
                if current != source.readPath { StoreFiles.remove(current) }
                current = next
                currentLayout = runner.destinationLayout
            }
            if options.backup {
                let path = "\(storePath).backup-v\(plan.source.version)-\(Self.stamp(now))"
                try StoreFiles.preserve(storePath, as: path)
                backup = path
            }
            try barrier.swapIn(current)
        } catch {
            // Nothing was swapped in: the original is where it was, untouched.
            for file in scratch { StoreFiles.remove(file) }
            if let backup { StoreFiles.removeWorkFile(backup) }
            throw namingTheStore(error, scratch: scratch, steps: plan.steps, copy: source.readPath)
        }
        report.backup = backup
        return report
    }

    /// The migration the store's engine runs itself (a PostgreSQL schema's, in the server), with
    /// this migrator's bundle, options, mappings and observer; nil for a store file, which this
    /// migrator migrates through a scratch copy (told from a server's URL without opening it).
    private var engineMigration: (any EngineMigration)? {
        StoreLocation.serverEngine(storePath)?.driver.engineMigration(
            of: storePath, bundle: bundle, options: options, mappings: mappings, observer: observer)
    }

    /// `error` with the scratch files' hidden names replaced by what they are to the user: the
    /// version-N copy of the store.
    private func namingTheStore(_ error: any Error, scratch: [String], steps: [MappingModel], copy: String) -> any Error
    {
        var files = zip(scratch, steps).map { file, step in
            let copy = "the version \(step.destination.version) copy of '\(storePath)'"
            return StoreFiles.ShownName(path: file, quoted: copy, bare: copy)
        }
        // A Core Data store's private copy, and the store as the steps open it, are the store to the user.
        files.append(StoreFiles.ShownName(path: copy, quoted: "'\(storePath)'", bare: storePath))
        if copy != storePath {
            files.append(StoreFiles.ShownName(path: storePath, quoted: "'\(storePath)'", bare: storePath))
        }
        return StoreFiles.naming(error, files)
    }

    /// Removes the scratch files a killed migration of this store left (`STORE.ferry-migrating-N`
    /// and their companions). Called while holding the store's writer lock, so no running
    /// migration of the store owns them.
    private func removeScratchFiles() {
        StoreFiles.removeLeftovers(of: storePath, marked: [StoreFiles.migrationScratchMark])
        removeBackupsOfUnswappedStore()
    }

    /// Removes the backups a migration killed between keeping its backup and its swap left: a
    /// backup that is still a second name of the store itself (the same device and inode) backs
    /// up nothing, and the next migration makes its own. A backup of an earlier version (another
    /// file since its swap) stays.
    private func removeBackupsOfUnswappedStore() {
        guard let store = FileIO.deviceAndInode(of: storePath) else { return }
        let url = URL(fileURLWithPath: storePath)
        let folder = url.deletingLastPathComponent().path
        let prefix = url.lastPathComponent + ".backup-v"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) {
            let path = (folder as NSString).appendingPathComponent(name)
            if let backup = FileIO.deviceAndInode(of: path), backup == store { StoreFiles.removeWorkFile(path) }
        }
    }

    /// A store whose latest data still sits in its `-wal` file is checkpointed completely first
    /// (the data moves into the main file unchanged, and the `-wal` is emptied), so that the
    /// backup holds every commit and nothing of the old `-wal` can meet the new file.
    ///
    /// A reader that keeps an older snapshot open prevents a complete checkpoint: then the
    /// migration waits for it a few seconds and refuses, changing nothing.
    private func settleWriteAheadLog() throws {
        let wal = storePath + "-wal"
        guard let size = (try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? Int, size > 0 else {
            return
        }
        let connection = try Connection(path: storePath, create: false)
        // A reader is waited for briefly: it may keep its transaction open for hours.
        connection.setBusyTimeout(milliseconds: min(options.busyTimeout, .seconds(5)).milliseconds)
        // One row: busy (1 when the checkpoint could not finish), frames in the log, frames copied.
        let result = try connection.rows("PRAGMA wal_checkpoint(TRUNCATE)").first ?? []
        let busy = result.first?.int64 ?? 1
        let remaining = (try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? Int ?? 0
        guard busy == 0, remaining == 0 else {
            throw FerryError(
                .store,
                "cannot migrate '\(storePath)': another process is reading it, so the commits in its write-ahead log ('\(wal)', \(size) bytes) cannot all be moved into the store; nothing was changed",
                notes: ["close the other connections to the store (apps, sqlite3 shells) and run the migration again"])
        }
    }

    package static func stamp(_ millis: Int64) -> String {
        DateCoding.format(millis).replacingOccurrences(of: ":", with: "").replacingOccurrences(of: "-", with: "")
            .replacingOccurrences(of: ".", with: "")
    }
}

extension StoreFiles {
    /// Puts a finished, closed store in place of `path` with one `rename(2)`.
    ///
    /// The old file's `-wal` and `-shm` go first: the caller checkpointed the old store completely
    /// and has held its writer lock since, so they hold nothing the old main file lacks, and once
    /// they are gone no kill can leave them beside the new file. A kill before the rename leaves
    /// the complete original, after it the complete new store.
    static func swapIn(_ newPath: String, at path: String) throws {
        for companion in [path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: companion) {
            do {
                try FileIO.removeFile(companion)
            } catch {
                throw FerryError(.io, "cannot remove '\(companion)' before replacing '\(path)': \(error)")
            }
        }
        do {
            try FileIO.replace(path, with: newPath)
        } catch {
            throw FerryError(.io, "cannot move the migrated store into place at '\(path)': \(error)")
        }
        try synchronize(path)
    }

    /// Keeps the file at `path` under a second name (a hard link, or a copy where links are not
    /// possible), so the original survives the swap.
    static func preserve(_ path: String, as backup: String) throws {
        do {
            try FileIO.link(path, as: backup)
            return
        } catch {
            // No hard links on this file system (or across devices): a copy keeps the original.
        }
        do {
            try FileManager.default.copyItem(atPath: path, toPath: backup)
        } catch {
            throw FerryError(.io, "cannot keep a backup of '\(path)' at '\(backup)': \(error.localizedDescription)")
        }
    }

    /// Flushes a file and its folder to disk (the swap must not reach the disk before the data).
    static func synchronize(_ path: String) throws {
        do {
            try FileIO.synchronize(path)
        } catch {
            throw FerryError(.io, "cannot flush '\(path)': \(error)")
        }
    }
}

// A mapping's report and the plan as an engine's own migration (`EngineMigration`) makes them;
// in extensions, so that the memberwise initialisers stay.
extension MigrationStepReport.EntityReport {
    /// A mapping's report before it runs (the migration fills in the counts).
    package init(mapping: String, destination: String, source: String?) {
        self.mapping = mapping
        self.destination = destination
        self.source = source
    }
}

extension Migrator.Plan {
    /// A plan whose steps choose their strategies when they run.
    package init(source: ObjectModel, target: ObjectModel, steps: [MappingModel], counts: [String: Int]) {
        self.source = source
        self.target = target
        self.steps = steps
        self.counts = counts
    }
}
