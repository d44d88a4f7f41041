import FerryCore
import FerryPostgres
import Foundation

extension StoreEngine {
    /// ferry's layout in a PostgreSQL schema.
    public static let postgreSQL = StoreEngine(
        name: "PostgreSQL", holder: "a PostgreSQL schema",
        capabilities: Capabilities(
            readsPrivateCopy: false, storesInheritance: false, orderedToMany: false, workArea: .workSchema,
            writerLock: .advisoryLock, predicatePushdown: .superset),
        driver: PostgreSQLDriver())
}

/// ferry's layout in a PostgreSQL schema: a copy is built in a scratch schema beside the
/// destination's, renamed into place in one transaction.
struct PostgreSQLDriver: StoreEngineDriver {
    var newStoreLayout: FerryLayout? { FerryLayout.postgreSQL }

    /// The same server, database and schema (the default schema filled in).
    func sameStore(_ first: String, _ second: String) throws -> Bool {
        var left = try Store.postgresURL(first)
        var right = try Store.postgresURL(second)
        left.schema = left.schema ?? Store.defaultPostgreSQLSchema
        right.schema = right.schema ?? Store.defaultPostgreSQLSchema
        return left == right
    }

    func copyDestination(for copier: StoreCopier, model: ObjectModel) throws -> any StoreCopyDestination {
        try PostgresCopyDestination(copier, model: model)
    }

    var server: (any ServerStoreDriver)? { self }

    /// From schema to schema in the server (``PostgresSchemaMigration``).
    func engineMigration(
        of storePath: String, bundle: ModelBundle, options: MigrationOptions, mappings: StepMappingCache,
        observer: (any MigrationObserver)?
    ) -> (any EngineMigration)? {
        PostgresSchemaMigration(
            storeURL: storePath, bundle: bundle, options: options, mappings: mappings, observer: observer)
    }
}

extension PostgreSQLDriver: ServerStoreDriver {
    func open(_ text: String, model: ObjectModel, options: Store.Options) throws -> Store {
        try Store.openPostgreSQL(text, model: model, options: options)
    }

    func metadata(_ text: String) throws -> StoreMetadata? { try Store.postgreSQLMetadata(text) }

    func storeExists(_ text: String) throws -> Bool { try Store.postgreSQLStoreExists(text) }

    func inspectionSession(_ text: String) throws -> (session: any DatabaseConnection, layout: FerryLayout) {
        let url = try Store.postgresURL(text)
        return (
            try PostgresDatabase(url: url, schema: url.schema ?? Store.defaultPostgreSQLSchema),
            FerryLayout.postgreSQL
        )
    }

    func schema(of text: String) -> String { (try? PostgresURL(text))?.schema ?? Store.defaultPostgreSQLSchema }

    func shown(_ text: String) -> String { PostgresURL.redacted(text) }

    func redactingPasswords(in text: String) -> String { PostgresURL.redactingPasswords(in: text) }

    func unavailable(on path: String) -> FerryError { Store.notOnPostgreSQL(path) }
}

/// A copy built in a scratch schema beside the destination's, under the destination's writer
/// lock (the session's advisory lock) and the scratch schema's work lock.
final class PostgresCopyDestination: StoreCopyDestination {
    private let copier: StoreCopier
    /// The session holding the destination's writer lock and the scratch schema's work lock.
    private let session: PostgresDatabase
    private let schema: String
    /// The scratch schema.
    private let name: String
    let scratchPath: String

    init(_ copier: StoreCopier, model: ObjectModel) throws {
        self.copier = copier
        let destinationPath = copier.destinationPath
        let (session, schema) = try Self.session(destinationPath)
        self.session = session
        self.schema = schema
        try Store.takeWriterLock(
            on: session, schema: schema, timeout: copier.busyTimeout, store: Self.shown(destinationPath))
        name = Store.postgreSQLCopyScratchSchema(of: schema)
        scratchPath = try Self.url(destinationPath, schema: name)
        try checkDestination(model: model)
        // Held until the session ends: a later run drops the scratch only once this one is gone.
        do {
            try session.connection.acquireAdvisoryLock(
                Store.postgreSQLWorkLockKey(schema: name), timeout: copier.busyTimeout)
        } catch {
            throw FerryError(.store, "store '\(Self.shown(destinationPath))': \(error.description)")
        }
        try Store.dropLeftoverWorkSchemas(of: schema, on: session, store: Self.shown(destinationPath))
        try session.execute("DROP SCHEMA IF EXISTS \(PostgresIdentifier.quote(name)) CASCADE")
    }

    /// One transaction: the replaced store's schema dropped, the scratch schema renamed.
    func place() throws {
        try session.writeTransaction {
            try session.execute("DROP SCHEMA IF EXISTS \(PostgresIdentifier.quote(schema)) CASCADE")
            try session.execute(
                "ALTER SCHEMA \(PostgresIdentifier.quote(name)) RENAME TO \(PostgresIdentifier.quote(schema))")
        }
    }

    /// Dropped on a session of its own.
    func discard() {
        guard let session = try? Self.session(copier.destinationPath).database else { return }
        _ = try? session.execute("DROP SCHEMA IF EXISTS \(PostgresIdentifier.quote(name)) CASCADE")
    }

    /// A PostgreSQL destination may be a missing or empty schema, or an empty ferry store of the
    /// source's model and version; `--replace` also replaces a ferry store holding objects or at
    /// another version. A schema holding anything but a ferry store is never touched.
    private func checkDestination(model: ObjectModel) throws {
        let shown = Self.shown(copier.destinationPath)
        let exists =
            try session.scalar("SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = ?", [.text(schema)])?.int64
            == 1
        guard exists else { return }
        let layout = FerryLayout.postgreSQL
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

    /// A session on the database of the store at `text`, and the store's schema.
    private static func session(_ text: String) throws -> (database: PostgresDatabase, schema: String) {
        let url = try Store.postgresURL(text)
        let schema = url.schema ?? Store.defaultPostgreSQLSchema
        return (try PostgresDatabase(url: url, schema: schema), schema)
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

    private static func shown(_ text: String) -> String { PathOrURL(text).shown }
}
