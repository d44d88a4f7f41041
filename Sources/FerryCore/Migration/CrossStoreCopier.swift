import FerryPostgres
import Foundation

/// `ferry copy` when the source or the destination is a PostgreSQL store: SQLite → PostgreSQL,
/// PostgreSQL → SQLite, PostgreSQL → PostgreSQL (same model and version).
///
/// Store-agnostic: every entity's rows, with their keys, to-one keys and join-table rows, are
/// copied by `StoreTableTransfer` (the one row copier between backends) into a new store beside
/// the destination: a scratch schema on PostgreSQL, a scratch file on SQLite, in one transaction
/// with foreign keys checked at its end. The
/// copy is then verified (per-entity counts, and checksums of every attribute, which compare
/// across backends) and only then put in place: a file rename on SQLite; on PostgreSQL, one
/// transaction that drops the replaced store's schema and renames the scratch schema. A failure
/// leaves the destination as it was and removes the scratch store.
struct CrossStoreCopier {
    let copier: StoreCopier

    /// Where the new store is built before it is put in place.
    private enum Scratch {
        case file(String)
        case schema(url: String, name: String)
    }

    /// A Core Data source copied into a ferry store file in a temporary folder (as a copy into
    /// a file would), then from there into PostgreSQL; the report names the Core Data store.
    private func throughFerryStore() throws -> StoreCopier.Report {
        let started = ContinuousClock.now
        // Removed by the next process that makes one when this one is killed.
        let folder = try CoreDataStoreCopy.makePrivateFolder(for: copier.sourcePath)
        defer { try? FileManager.default.removeItem(at: folder) }
        var first = StoreCopier(from: copier.sourcePath, to: folder.appendingPathComponent("store.sqlite").path)
        first.sourceBundle = copier.sourceBundle
        _ = try first.run()
        var onward = StoreCopier(from: first.destinationPath, to: copier.destinationPath)
        onward.replacesExisting = copier.replacesExisting
        onward.busyTimeout = copier.busyTimeout
        var report = try CrossStoreCopier(copier: onward).run()
        report.source = copier.sourcePath
        report.seconds = (ContinuousClock.now - started).seconds
        return report
    }

    func run() throws -> StoreCopier.Report {
        let started = ContinuousClock.now
        let sourcePath = copier.sourcePath
        let destinationPath = copier.destinationPath
        let sourceLocation = StoreLocation(sourcePath)
        let toPostgreSQL = StoreLocation(destinationPath).isDatabaseServer
        try PathOrURL.requireStore(sourcePath)
        try PathOrURL.requireStore(destinationPath)
        if !sourceLocation.isDatabaseServer {
            guard FileManager.default.fileExists(atPath: sourcePath) else {
                throw FerryError(.noInput, "the store '\(sourcePath)' does not exist")
            }
            if sourceLocation.isCoreData { return try throughFerryStore() }
        }
        if copier.sourceBundle != nil {
            throw FerryError(
                .usage,
                "--model reads a Core Data store; '\(Self.shown(sourcePath))' is a ferry store, which records its own model"
            )
        }
        guard let metadata = try Store.metadata(at: sourcePath), let model = metadata.model else {
            throw FerryError(
                .store,
                "'\(Self.shown(sourcePath))' is not a ferry store (it has no ferry metadata); to read a plain database's tables use ferry import"
            )
        }
        let source = try Store.open(at: sourcePath, model: model, options: .existingReadOnly)
        try FerryLayout().checkRepresentable(source.model)
        if toPostgreSQL, sourceLocation.isDatabaseServer, try Self.sameSchema(sourcePath, destinationPath) {
            throw FerryError(
                .usage, "'\(Self.shown(sourcePath))' and '\(Self.shown(destinationPath))' are the same store")
        }

        // The destination: locked for writing, checked, and a scratch store beside it.
        let scratch: Scratch
        var lock: Any?
        if toPostgreSQL {
            let (session, schema) = try Self.session(destinationPath)
            try Store.takeWriterLock(
                on: session, schema: schema, timeout: copier.busyTimeout, store: Self.shown(destinationPath))
            lock = session
            try checkPostgreSQLDestination(session, schema: schema, model: source.model)
            let name = Store.postgreSQLCopyScratchSchema(of: schema)
            // Held until the session ends: a later run drops the scratch only once this one is gone.
            do {
                try session.connection.acquireAdvisoryLock(
                    Store.postgreSQLWorkLockKey(schema: name), timeout: copier.busyTimeout)
            } catch {
                throw FerryError(.store, "store '\(Self.shown(destinationPath))': \(error.description)")
            }
            try Store.dropLeftoverWorkSchemas(of: schema, on: session, store: Self.shown(destinationPath))
            try session.execute("DROP SCHEMA IF EXISTS \(PostgresIdentifier.quote(name)) CASCADE")
            scratch = .schema(url: try Self.url(destinationPath, schema: name), name: name)
        } else {
            lock = try StoreLock.acquire(for: destinationPath, timeout: copier.busyTimeout)
            try copier.checkDestination()
            StoreFiles.removeLeftovers(of: destinationPath, marked: [StoreFiles.copyScratchMark])
            scratch = .file(destinationPath + StoreFiles.copyScratchMark)
        }
        defer { withExtendedLifetime(lock) {} }
        var placed = false
        defer { if !placed { Self.remove(scratch, besides: destinationPath) } }

        let scratchPath: String
        switch scratch {
        case .file(let path): scratchPath = path
        case .schema(let url, _): scratchPath = url
        }
        var entities: [StoreCopier.Report.EntityCount] = []
        var checksummed: [String] = []
        do {
            let copy = try Store.open(at: scratchPath, model: source.model)
            try source.readDatabase { from in
                try copy.writeDatabase { to in
                    try StoreTableTransfer(model: source.model).copy(
                        from: from, source.layout, to: to, copy.layout, bookkeeping: false)
                }
            }
            // Verified before it is put in place: counts, then every attribute's checksum.
            let sourceCounts = try source.entityCounts()
            let copyCounts = try copy.entityCounts()
            for ((entity, expected), (_, copied)) in zip(sourceCounts, copyCounts) {
                guard expected == copied else {
                    throw FerryError(
                        .verification,
                        "the copy of '\(Self.shown(sourcePath))' has \(copied) \(entity) objects, the source \(expected); '\(Self.shown(destinationPath))' was not changed"
                    )
                }
                entities.append(StoreCopier.Report.EntityCount(entity: entity, source: expected, copied: copied))
            }
            for entity in source.model.entities where !entity.attributes.isEmpty {
                let attributes = entity.attributes.map(\.name)
                let before = try EntityChecksum.compute(store: source, entity: entity.name, attributes: attributes)
                let after = try EntityChecksum.compute(store: copy, entity: entity.name, attributes: attributes)
                guard before.matches(after) else {
                    throw FerryError(
                        .verification,
                        "the copy of \(entity.name) differs from the source (checksum \(after.value), source \(before.value)); '\(Self.shown(destinationPath))' was not changed"
                    )
                }
                checksummed.append(entity.name)
            }
        }
        switch scratch {
        case .file(let path):
            try StoreFiles.replace(destinationPath, with: path)
            try StoreFiles.synchronize(destinationPath)
        case .schema(_, let name):
            guard let session = lock as? PostgresDatabase else {
                throw FerryError(.internal, "no PostgreSQL session for the copy")
            }
            let schema = try Self.session(destinationPath).schema
            try session.writeTransaction {
                try session.execute("DROP SCHEMA IF EXISTS \(PostgresIdentifier.quote(schema)) CASCADE")
                try session.execute(
                    "ALTER SCHEMA \(PostgresIdentifier.quote(name)) RENAME TO \(PostgresIdentifier.quote(schema))")
            }
        }
        placed = true
        return StoreCopier.Report(
            source: Self.shown(sourcePath), destination: Self.shown(destinationPath), model: source.model.name,
            modelVersion: source.model.version,
            entities: entities, checksummed: checksummed, seconds: started.duration(to: .now).seconds)
    }

    // MARK: - Destinations

    /// A PostgreSQL destination may be a missing or empty schema, or an empty ferry store of the
    /// source's model and version; `--replace` also replaces a ferry store holding objects or at
    /// another version. A schema holding anything but a ferry store is never touched.
    private func checkPostgreSQLDestination(_ session: PostgresDatabase, schema: String, model: ObjectModel) throws {
        let shown = Self.shown(copier.destinationPath)
        let exists =
            try session.scalar("SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = ?", [.text(schema)])?.int64
            == 1
        guard exists else { return }
        let layout = FerryLayout(backend: .postgresql)
        guard let metadata = try StoreMetadata.read(from: session, layout: layout) else {
            let tables =
                try session.scalar(
                    "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ?",
                    [.text(schema)])?.int64 ?? 0
            if tables == 0 { return }
            throw FerryError(
                .usage,
                "'\(shown)' is a PostgreSQL schema but not a ferry store; ferry copy never overwrites it, with --replace neither"
            )
        }
        if copier.replacesExisting { return }
        if metadata.modelName != model.name || metadata.modelVersion != model.version {
            throw FerryError(
                .usage,
                "the store '\(shown)' is at model \(metadata.modelName) version \(metadata.modelVersion), the source at \(model.name) version \(model.version); ferry copy writes only into a new or empty store of the same model (pass --replace to replace it)"
            )
        }
        try StoreCopier.requireEmpty(
            Store.open(at: copier.destinationPath, model: model, options: .existingReadOnly), shown: shown)
    }

    private static func remove(_ scratch: Scratch, besides destination: String) {
        switch scratch {
        case .file(let path):
            StoreFiles.remove(path)
        case .schema(_, let name):
            guard let session = try? session(destination).database else { return }
            _ = try? session.execute("DROP SCHEMA IF EXISTS \(PostgresIdentifier.quote(name)) CASCADE")
        }
    }

    // MARK: - URLs

    /// A session on the database of the store at `text`, and the store's schema.
    private static func session(_ text: String) throws -> (database: PostgresDatabase, schema: String) {
        let url = try Store.postgresURL(text)
        let schema = url.schema ?? Store.defaultPostgreSQLSchema
        return (try PostgresDatabase(url: url, schema: schema), schema)
    }

    private static func sameSchema(_ a: String, _ b: String) throws -> Bool {
        var left = try Store.postgresURL(a)
        var right = try Store.postgresURL(b)
        left.schema = left.schema ?? Store.defaultPostgreSQLSchema
        right.schema = right.schema ?? Store.defaultPostgreSQLSchema
        return left == right
    }

    /// `text` with its `schema=` parameter set to `schema` (everything else, the password too, kept).
    private static func url(_ text: String, schema: String) throws -> String {
        _ = try Store.postgresURL(text)
        let parts = text.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query = parts.count > 1 ? parts[1].split(separator: "&").map(String.init) : []
        query.removeAll { $0.hasPrefix("schema=") }
        query.append("schema=" + (schema.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? schema))
        return parts[0] + "?" + query.joined(separator: "&")
    }

    /// A store for messages: a PostgreSQL URL without its password.
    static func shown(_ text: String) -> String {
        PathOrURL(text).shown
    }
}
