import FerryCore
import FerryPostgres
import Foundation

/// The migration of a store that lives in a PostgreSQL schema `S`: the next version is built in
/// a new schema `S_next`, verified there, then swapped in by renaming both schemas inside one
/// transaction (`S` → `S_backup_vN_TIME`, `S_next` → `S`), so a failure or a killed process
/// leaves `S` untouched and a reader sees either the old version or the new one, never a mix.
///
/// The version steps are the SQLite engine's (``Migrator`` on a private SQLite snapshot of the
/// store), so inferred steps, mapping files with expressions, custom policies and stage hooks
/// behave exactly as on SQLite, with the same step checks. The snapshot is read from `S` in
/// one transaction; the last step's result is loaded into `S_next` through `COPY`, with its
/// indexes built after the data and each identity sequence moved past the largest key. Before the
/// swap, `S_next` is compared with that result table by table (rows, sums of keys and foreign
/// keys) and entity by entity (checksums of every attribute but JSON, which `jsonb` normalizes).
///
/// The store's advisory writer lock is held from before the first read until the swap commits;
/// a `S_next` left by a killed migration is dropped first, under that lock.
struct PostgresSchemaMigration: EngineMigration {
    let storeURL: String
    let bundle: ModelBundle
    let options: MigrationOptions
    let mappings: StepMappingCache
    weak var observer: (any MigrationObserver)?

    private var url: PostgresURL {
        get throws {
            try Store.postgresURL(storeURL)
        }
    }

    /// The store's version and the target's, with each step's mapping and (when asked) the
    /// store's objects per entity.
    func plan(countingObjects: Bool) throws -> Migrator.Plan {
        let url = try self.url
        let session = try PostgresDatabase(url: url, schema: url.schema ?? Store.defaultPostgreSQLSchema)
        try session.execute("SET default_transaction_read_only = on")
        return try plan(on: session, countingObjects: countingObjects)
    }

    private func plan(on session: PostgresDatabase, countingObjects: Bool) throws -> Migrator.Plan {
        let layout = FerryLayout.postgreSQL
        guard let metadata = try StoreMetadata.read(from: session, layout: layout) else {
            throw FerryError(
                .store, "'\(storeURL)' is not a ferry store (schema '\(session.schema)' has no ferry metadata)")
        }
        let source = try VersionDetector.detect(metadata: metadata, bundle: bundle, store: storeURL)
        let targetLabel = options.targetVersion ?? bundle.currentVersion
        guard let target = bundle.version(targetLabel) else {
            throw FerryError(
                .usage,
                "model \(bundle.name) has no version '\(targetLabel)' (versions: \(bundle.versions.map(\.version).joined(separator: ", ")))"
            )
        }
        let path = try bundle.path(from: source.version, to: target.version)
        for version in path.dropFirst() { try layout.checkRepresentable(version) }
        var steps: [MappingModel] = []
        for (from, to) in zip(path, path.dropFirst()) { steps.append(try mappings.mapping(from: from, to: to)) }
        var counts: [String: Int] = [:]
        if countingObjects {
            for entity in source.entities {
                counts[entity.name] = Int(
                    try session.scalar("SELECT count(*) FROM \(layout.quotedTable(for: entity))")?.int64 ?? 0)
            }
        }
        return Migrator.Plan(source: source, target: target, steps: steps, counts: counts)
    }

    /// Migrates the store and swaps the new version in; see the type's description.
    func run() throws -> MigrationReport {
        let url = try self.url
        let schema = url.schema ?? Store.defaultPostgreSQLSchema
        let next = PostgresIdentifier.fitted(schema, suffix: "_next")
        let now = DateCoding.nowMilliseconds()
        let session = try PostgresDatabase(url: url, schema: schema)
        try Store.takeWriterLock(on: session, schema: schema, timeout: options.busyTimeout, store: storeURL)
        try dropLeftover(next, on: session)
        // A killed migration's snapshot of this store (also when the kill came after the swap and
        // nothing is left to do): no running migration owns it, since it would hold the lock.
        let scratch = Self.scratchDirectory(for: url)
        StoreFiles.removeWorkFile(scratch)

        let plan = try self.plan(on: session, countingObjects: false)
        try options.registry.checkRegistered(plan.steps)
        var report = MigrationReport(
            store: url.description, model: bundle.name, fromVersion: plan.source.version,
            toVersion: plan.target.version, steps: [])
        guard !plan.steps.isEmpty else { return report }
        let backup =
            options.backup
            ? PostgresIdentifier.fitted(schema, suffix: "_backup_v\(plan.source.version)_\(Migrator.stamp(now))") : nil

        do {
            let serverVersion = try session.scalar("SELECT current_setting('server_version_num')::int", [])?.int64
            switch PostgresServerStep.route(
                for: plan.steps, options: options, serverVersion: serverVersion.map { Int($0) })
            {
            case .success(let steps):
                var builder = PostgresServerMigration(
                    steps: steps, storeURL: storeURL, url: url, schema: schema, options: options)
                builder.observer = observer
                report.steps = try builder.build(into: next, now: now)
            case .failure:
                report.steps = try migrateSnapshot(of: session, plan: plan, into: next, scratch: scratch, url: url)
            }

            // The swap: both renames commit together, under the writer lock.
            try session.writeTransaction {
                if let backup {
                    try session.execute(
                        "ALTER SCHEMA \(PostgresIdentifier.quote(schema)) RENAME TO \(PostgresIdentifier.quote(backup))"
                    )
                } else {
                    try session.execute("DROP SCHEMA \(PostgresIdentifier.quote(schema)) CASCADE")
                }
                try session.execute(
                    "ALTER SCHEMA \(PostgresIdentifier.quote(next)) RENAME TO \(PostgresIdentifier.quote(schema))")
            }
        } catch var error as FerryError {
            // A step's error names its mapping; a lost connection's names only the server's cause.
            error.notes.insert(
                "while migrating \(PathOrURL(storeURL).shown) (schema '\(schema)') from version \(plan.source.version) to \(plan.target.version)",
                at: 0)
            throw error
        }
        report.backup = backup.map { Self.url(url.description, schema: $0) }
        return report
    }

    /// The steps through the SQLite engine on a private snapshot of the store (in `scratch`),
    /// whose result is loaded into the schema `next` and compared with it there.
    private func migrateSnapshot(
        of session: PostgresDatabase, plan: Migrator.Plan, into next: String, scratch: String, url: PostgresURL
    ) throws -> [MigrationStepReport] {
        let schema = session.schema
        do {
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        } catch {
            throw FerryError(
                .io,
                "cannot create the folder of the migration's private snapshot '\(scratch)': \(error.localizedDescription)",
                notes: [
                    "the snapshot is made in the temporary directory (TMPDIR)",
                    "nothing was changed: the original schema '\(schema)' is as it was",
                ])
        }
        defer { StoreFiles.removeWorkFile(scratch) }
        let snapshot = scratch + "/store.sqlite"
        try writeSnapshot(of: session, source: plan.source, to: snapshot)

        // The steps: the SQLite engine on the snapshot, which becomes the new version in place.
        var stepOptions = options
        stepOptions.backup = false
        let migrator = Migrator(storePath: snapshot, bundle: bundle, options: stepOptions) { from, to in
            try mappings.mapping(from: from, to: to)
        }
        migrator.observer = observer
        let steps: [MigrationStepReport]
        do {
            steps = try migrator.run().steps
        } catch let error as FerryError {
            throw naming(error, snapshot: snapshot, schema: schema)
        }

        try load(snapshot, target: plan.target, into: next, url: url)
        try verify(next, against: snapshot, target: plan.target, url: url)
        return steps
    }

    /// Drops the scratch schema a killed migration left. No running migration owns it (it would
    /// hold the lock), and it holds a complete ferry store, since it is created and filled in one
    /// transaction. A schema of that name that is no ferry store is someone else's: refused.
    private func dropLeftover(_ next: String, on session: PostgresDatabase) throws {
        let exists =
            try session.scalar("SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = ?", [.text(next)])?.int64
            == 1
        guard exists else { return }
        let metadata = FerryLayout.postgreSQL.bookkeeping?.metadata ?? "ferry_metadata"
        let isStore =
            try session.scalar(
                "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = ? AND tablename = ?",
                [.text(next), .text(metadata)])?.int64 == 1
        guard isStore else {
            throw FerryError(
                .usage,
                "cannot migrate the store in schema '\(session.schema)': the schema '\(next)' the new version is built in already exists and is not a ferry store",
                notes: ["rename or drop that schema; nothing was changed"])
        }
        try session.execute("DROP SCHEMA \(PostgresIdentifier.quote(next)) CASCADE")
    }

    /// Copies the store (at version `source`) into a new SQLite store file, in one read
    /// transaction on `session`.
    private func writeSnapshot(of session: PostgresDatabase, source: ObjectModel, to path: String) throws {
        let connection = try Connection(path: path)
        try connection.execute("PRAGMA journal_mode = OFF")
        try connection.execute("PRAGMA synchronous = OFF")
        try connection.transaction(.immediate) {
            try Store.createSchema(for: source, on: connection, layout: FerryLayout())
            // The store's own metadata (its creation time) comes with the rows.
            if let tables = FerryLayout().bookkeeping {
                try connection.execute("DELETE FROM \(tables.metadata)")
                try connection.execute("DELETE FROM \(tables.entities)")
            }
        }
        try session.readTransaction {
            try connection.transaction(.immediate) {
                try StoreTableTransfer(model: source).copy(
                    from: session, FerryLayout.postgreSQL, to: connection, FerryLayout(), bookkeeping: true)
            }
        }
    }

    /// Creates the schema `next` holding the migrated snapshot, in one transaction of a session
    /// of its own: its tables, the rows, then the indexes.
    private func load(_ snapshot: String, target: ObjectModel, into next: String, url: PostgresURL) throws {
        let source = try Connection(path: MigrationStepRunner.readOnlyURI(snapshot), readOnly: true, create: false)
        let loader = try PostgresDatabase(url: url, schema: next)
        let layout = FerryLayout.postgreSQL
        try loader.writeTransaction {
            try loader.execute("CREATE SCHEMA \(PostgresIdentifier.quote(next))")
            for statement in StoreSchema.bookkeepingTables(in: layout)
                + StoreSchema.tableStatements(for: target, layout: layout)
            {
                try loader.execute(statement)
            }
            try StoreTableTransfer(model: target).copy(
                from: source, FerryLayout(), to: loader, layout, bookkeeping: true)
            for statement in StoreSchema.indexStatements(for: target, layout: layout) { try loader.execute(statement) }
        }
    }

    /// Throws unless the schema `next` holds what the snapshot holds: per table the same rows and
    /// key sums, per entity the same checksum of every attribute (JSON attributes aside).
    private func verify(_ next: String, against snapshot: String, target: ObjectModel, url: PostgresURL) throws {
        let sqlite = try Connection(path: MigrationStepRunner.readOnlyURI(snapshot), readOnly: true, create: false)
        let postgres = try PostgresDatabase(url: url, schema: next)
        let transfer = StoreTableTransfer(model: target)
        let expected = try transfer.keySums(on: sqlite)
        let actual = try transfer.keySums(on: postgres)
        for (wanted, found) in zip(expected, actual) where wanted != found {
            throw failedVerification(
                "table \(found) (rows, then sums of keys) differs from the migrated objects' \(wanted)")
        }
        for entity in target.entities {
            let attributes = entity.attributes.filter { $0.type != .json }.map(\.name)
            guard !attributes.isEmpty else { continue }
            let wanted = try EntityChecksum.compute(
                connection: sqlite, model: target, layout: FerryLayout(), entity: entity.name, attributes: attributes)
            let found = try EntityChecksum.compute(
                connection: postgres, model: target, layout: FerryLayout.postgreSQL, entity: entity.name,
                attributes: attributes)
            guard wanted.matches(found) else {
                throw failedVerification(
                    "the checksum of \(entity.name)'s attributes (\(attributes.joined(separator: ", "))) differs from the migrated objects'"
                )
            }
        }
    }

    private func failedVerification(_ detail: String) -> FerryError {
        FerryError(
            .verification, "the migrated store loaded into PostgreSQL does not match the migration's result: \(detail)",
            notes: ["nothing was changed: the original schema is as it was"])
    }

    /// A step's error, naming the store instead of the private snapshot.
    private func naming(_ error: FerryError, snapshot: String, schema: String) -> FerryError {
        var error = error
        let shown = (try? url.description) ?? storeURL
        error.message = error.message.replacingOccurrences(of: snapshot, with: shown)
        error.notes = error.notes.map { $0.replacingOccurrences(of: snapshot, with: shown) }
        if !error.notes.contains(where: { $0.contains("original") }) {
            error.notes.append("nothing was changed: the original schema '\(schema)' is as it was")
        }
        return error
    }

    /// The folder of the store's snapshots, in the temporary directory, named after the store
    /// (server, database and schema; not the user): one per store, so that a migration removes
    /// what a killed migration of the same store left there.
    static func scratchDirectory(for url: PostgresURL) -> String {
        let store =
            "\(url.host ?? "")|\(url.port.map(String.init) ?? "")|\(url.database ?? "")|\(url.schema ?? Store.defaultPostgreSQLSchema)"
        let key = UInt64(bitPattern: PostgresConnection.advisoryLockKey(for: store))
        return FileManager.default.temporaryDirectory.appendingPathComponent("ferry-migrate-" + String(key, radix: 16))
            .path
    }

    /// The store URL `text` with its `schema=` parameter set to `schema`.
    static func url(_ text: String, schema: String) -> String {
        guard var components = URLComponents(string: text) else { return text }
        var items = (components.queryItems ?? []).filter { $0.name != "schema" }
        items.append(URLQueryItem(name: "schema", value: schema))
        components.queryItems = items
        return components.string ?? text
    }
}
