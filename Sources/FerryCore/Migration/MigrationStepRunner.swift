import Foundation

/// Migrates one version step: reads the source store (only reads it) and writes a new store file
/// for the destination model, then verifies it. The engine behind ``Migrator``.
///
/// The source is the connection's `main` database (opened read-only), so predicates and key
/// paths compiled for the source model resolve there; the destination is attached as `dst`.
///
/// Identity: an entity mapping with one destination object per source object (no `distinct`, no
/// policy) keeps each object's primary key, so to-one relationships carry over as plain column
/// copies and the mapping runs as one `INSERT … SELECT` when all its values are expressible in SQL.
/// Mappings that make objects differently (`distinct`, custom policies) record which destination
/// objects came from which source objects in a temporary on-disk table (`links.assoc`), so memory
/// stays flat however large the store is.
///
/// The parts, one concern each: ``MigrationEntityCopier`` carries out the entity mappings,
/// ``MigrationObjectWriter`` writes objects one at a time (the row path and policies, through
/// ``MigrationManager``), ``ManyToManyLinks`` fills join tables, ``MigrationStepVerifier`` checks
/// the result. They share the step's ``MigrationStepScope`` and connection; none refers back.
package final class MigrationStepRunner {
    let mapping: MappingModel
    let sourcePath: String
    let destinationPath: String
    let options: MigrationOptions
    weak var observer: (any MigrationObserver)?
    let now: Int64
    /// How the source store lays out and codes its values.
    let sourceLayout: any StoreLayout
    /// How the new store does: the one its schema was created with, once ``run()`` made it.
    private(set) var destinationLayout: any StoreLayout
    /// The kind of store the step writes.
    let destinationKind: MigrationDestination

    init(
        mapping: MappingModel, sourcePath: String, destinationPath: String, options: MigrationOptions, now: Int64,
        sourceLayout: any StoreLayout, destination: MigrationDestination
    ) {
        self.mapping = mapping
        self.sourceLayout = sourceLayout
        self.destinationKind = destination
        self.destinationLayout = destination.layout(for: mapping.destination)
        self.sourcePath = sourcePath
        self.destinationPath = destinationPath
        self.options = options
        self.now = now
    }

    var source: ObjectModel { mapping.source }
    var destination: ObjectModel { mapping.destination }

    // MARK: - The step

    func run() throws -> MigrationStepReport {
        let started = ContinuousClock.now
        StoreFiles.remove(destinationPath)
        // The new store's schema, written by a connection of its own (its names unqualified).
        do {
            let create = try Connection(path: destinationPath)
            try create.execute("PRAGMA journal_mode = OFF")
            try create.execute("PRAGMA synchronous = OFF")
            // ferry's indexes come after the data (built in bulk), see `buildIndexes`.
            destinationLayout = try destinationKind.createSchema(for: destination, on: create)
        }
        let scope = MigrationStepScope(
            mapping: mapping, options: options, now: now, sourceLayout: sourceLayout,
            destinationLayout: destinationLayout, destinationKind: destinationKind)
        if case .coreData = destinationKind {
            try CoreDataMigrationDestination.checkKeysStayUnique(
                mapping.entities.filter(scope.isIdentity), sourceLayout: sourceLayout,
                destinationLayout: destinationLayout)
        }
        let linksPath = destinationPath + "-links"
        StoreFiles.remove(linksPath)
        defer { StoreFiles.remove(linksPath) }
        let connection = try openStepConnection(linksPath: linksPath)
        let flush = try BackgroundFlush(destinationPath)
        let writer = MigrationObjectWriter(connection: connection, scope: scope)
        // The manager holds the writer; nothing the step owns holds the manager but the copier.
        let manager = MigrationManager(
            connection: connection, sourceModel: source, destinationModel: destination, writer: writer)
        let copier = MigrationEntityCopier(
            scope: scope, connection: connection, writer: writer, manager: manager, observer: observer)
        let hooks = options.registry.stageHooks(from: source.version, to: destination.version)
        try hooks?.willMigrate?(
            MigrationStageContext(
                fromVersion: source.version, toVersion: destination.version, connection: connection,
                schema: MigrationStepScope.sourceSchema))
        let policies = try makePolicies()

        try connection.transaction(.immediate) {
            for entityMapping in mapping.entities {
                try copier.migrate(entityMapping, policy: policies[entityMapping.name])
            }
            try ManyToManyLinks(scope: scope, connection: connection).write()
            // The rows the copy wrote go to disk while the rest of the step runs.
            flush.start()
            // Core Data's second and third stages, once every mapping made its objects.
            for entityMapping in mapping.entities {
                guard let policy = policies[entityMapping.name] else { continue }
                let context = try writer.context(for: entityMapping)
                try writer.forEachDestination(of: entityMapping) { object in
                    try policy.createRelationships(forDestination: object, mapping: context, manager: manager)
                }
                try policy.endRelationshipCreation(mapping: context, manager: manager)
            }
            if destinationKind.buildsIndexesAfterData { try buildIndexes(on: connection) }
            try destinationKind.finish(
                on: connection, schema: MigrationStepScope.destinationSchema,
                sourceSchema: MigrationStepScope.sourceSchema, mapping: mapping,
                layout: destinationLayout)
            try hooks?.didMigrate?(
                MigrationStageContext(
                    fromVersion: source.version, toVersion: destination.version, connection: connection,
                    schema: MigrationStepScope.destinationSchema))
            for entityMapping in mapping.entities {
                guard let policy = policies[entityMapping.name] else { continue }
                let context = try writer.context(for: entityMapping)
                try policy.performCustomValidation(mapping: context, manager: manager)
                try policy.end(mapping: context, manager: manager)
            }
            try carryRunHistory(on: connection, reports: copier.reports, started: started)
        }
        writer.releaseStatements()
        // The rest of the new file goes to disk while the checks read it (from the page cache).
        flush.start()
        try connection.execute("DETACH DATABASE links")
        // The copy's page caches go before the checks fill the verification connection's: the
        // step's connection only reads the source's checksums from here on.
        try connection.execute("PRAGMA main.cache_size = \(Self.defaultCacheSize)")
        try connection.execute("PRAGMA dst.cache_size = \(Self.defaultCacheSize)")
        _ = try connection.scalar("PRAGMA shrink_memory")
        // The checks read the new store through one connection of their own, the source through
        // the step's; `dst` stays attached (idle, no transaction) for the journal mode.
        let verifier = MigrationStepVerifier(
            scope: scope, stepConnection: connection, destinationPath: destinationPath, destinationKind: destinationKind
        )
        copier.creditObjectsMadeByOtherMappings()
        var reports = copier.reports
        do {
            let store = try verifier.openDestination()
            try verifier.verify(store, written: writer.written, computedValues: writer.computedValues)
            if options.checksums { try verifier.compareChecksums(&reports, destination: store) }
        }
        try verifier.keepJournalMode()
        try connection.execute("DETACH DATABASE dst")
        try flush.finish()
        return MigrationStepReport(
            from: source.version, to: destination.version, mappingFile: mapping.location?.file, entities: reports,
            seconds: started.duration(to: .now).seconds)
    }

    /// SQLite's default page cache (about 2 MiB), for the step's connection once the copy is done.
    private static let defaultCacheSize = -2000

    /// The step's connection: the source store as `main` (read-only), the new store attached as
    /// `dst`, and the scratch database of source ↔ destination associations as `links`.
    private func openStepConnection(linksPath: String) throws -> Connection {
        // Read-write flags with `mode=ro` in the URI: the source stays read-only, while the
        // attached destination may be written (a read-only connection could not attach it so).
        let connection = try Connection(path: Self.readOnlyURI(sourcePath), readOnly: false, create: true)
        connection.setBusyTimeout(milliseconds: 30_000)
        try PredicateSupport.register(on: connection)
        try connection.execute("PRAGMA cache_size = -16384")
        // Attached databases take the main connection's read-only flag unless a URI says otherwise.
        try connection.execute("ATTACH DATABASE ? AS dst", [.text(Self.uri(destinationPath, mode: "rw"))])
        try connection.execute("PRAGMA dst.journal_mode = OFF")
        try connection.execute("PRAGMA dst.synchronous = OFF")
        try connection.execute("PRAGMA dst.cache_size = -16384")
        try connection.execute("ATTACH DATABASE ? AS links", [.text(Self.uri(linksPath, mode: "rwc"))])
        try connection.execute("PRAGMA links.journal_mode = OFF")
        try connection.execute("PRAGMA links.synchronous = OFF")
        try connection.executeScript(
            """
            CREATE TABLE links.assoc (mapping TEXT NOT NULL, source INTEGER, destination INTEGER NOT NULL);
            CREATE INDEX links.assoc_source ON assoc (mapping, source);
            CREATE INDEX links.assoc_destination ON assoc (mapping, destination);
            """)
        return connection
    }

    /// A new instance of every policy the mapping names, by entity mapping.
    private func makePolicies() throws -> [String: any EntityMigrationPolicy] {
        var policies: [String: any EntityMigrationPolicy] = [:]
        for entityMapping in mapping.entities {
            if let name = entityMapping.policy {
                guard let policy = options.registry.makePolicy(named: name) else {
                    throw options.registry.unregistered(name, in: entityMapping)
                }
                policies[entityMapping.name] = policy
            }
        }
        return policies
    }

    /// Builds the destination's indexes once its data is in: a sort per index instead of a
    /// b-tree update per row. A uniqueness constraint the migrated objects break fails here.
    private func buildIndexes(on connection: Connection) throws {
        for statement in StoreSchema.indexStatements(
            for: destination, layout: destinationLayout, schema: MigrationStepScope.destinationSchema)
        {
            do {
                try connection.execute(statement)
            } catch let error as FerryError {
                guard let result = error.underlying as? SQLiteResult, result.isConstraint else { throw error }
                let detail = error.message.components(separatedBy: "constraint failed: ").last ?? error.message
                throw FerryError(
                    .migration,
                    "the migrated objects break a uniqueness constraint: two or more have the same \(detail)",
                    notes: ["nothing was changed: the original store is as it was"], underlying: error.underlying)
            }
        }
    }

    // MARK: - History

    /// Carries the source's run log into the new store and records the migration in it.
    private func carryRunHistory(
        on connection: Connection, reports: [MigrationStepReport.EntityReport], started: ContinuousClock.Instant
    ) throws {
        guard let log = RunLog(on: connection, layout: destinationLayout, schema: MigrationStepScope.destinationSchema)
        else { return }
        if let sourceLog = RunLog(on: connection, layout: sourceLayout, schema: MigrationStepScope.sourceSchema) {
            try log.copy(from: sourceLog)
        }
        try log.record(
            RunRecord(
                job: "ferry migrate", step: "migrate", source: sourcePath, startedAt: DateCoding.format(now),
                endedAt: DateCoding.nowText(),
                outcome: "succeeded", read: reports.reduce(0) { $0 + $1.read },
                inserted: reports.reduce(0) { $0 + $1.written },
                message: "\(source.name) version \(source.version) → \(destination.version)"))
    }

    // MARK: - Store URIs

    /// A read-only URI for `path`; a `file:` URI (a plan's in-place read) as it is.
    package static func readOnlyURI(_ path: String) -> String { path.hasPrefix("file:") ? path : uri(path, mode: "ro") }

    /// A `file:` URI for a path (escaped), opening it in `mode` (`ro`, `rw`, `rwc`).
    static func uri(_ path: String, mode: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute) + "?mode=\(mode)"
    }
}
