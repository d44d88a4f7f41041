import FerryCore
import FerryPostgres
import Foundation

/// Opening stores in PostgreSQL: `postgresql://user@host:port/database?schema=name`.
///
/// One store is one schema (`ferry` when the URL names none), created with ferry's bookkeeping
/// tables and the model's tables when missing. A writer holds a session advisory lock on the
/// schema's name for as long as the store is open: a second writer waits up to the busy timeout,
/// then fails naming the store. The lock goes with the session (also when the process dies).
extension Store {
    /// The schema a store lives in when its URL has no `schema=`.
    package static let defaultPostgreSQLSchema = "ferry"

    static func openPostgreSQL(_ text: String, model: ObjectModel, options: Options) throws -> Store {
        let url = try postgresURL(text)
        let schema = url.schema ?? defaultPostgreSQLSchema
        let layout = FerryLayout.postgreSQL
        try layout.checkRepresentable(model)
        let model = model.storedForm
        let database = try PostgresDatabase(url: url, schema: schema)
        let path = url.description
        var schemaFound: Bool?
        if options.readOnly {
            try database.execute("SET default_transaction_read_only = on")
        } else {
            try takeWriterLock(on: database, schema: schema, timeout: options.busyTimeout, store: path)
            schemaFound = try dropLeftoverWorkSchemas(of: schema, on: database, store: path)
        }
        let schemaExists =
            try schemaFound
            ?? (database.scalar("SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = ?", [.text(schema)])?
                .int64 == 1)
        if schemaExists, let metadata = try StoreMetadata.read(from: database, layout: layout) {
            try checkModel(path: path, model: model, metadata: metadata, options: options)
            return Store(path: path, model: model, layout: layout, session: database, metadata: metadata)
        }
        if schemaExists { try checkNoUserTables(path: path, connection: database, layout: layout) }
        guard options.createIfMissing else {
            throw FerryError(
                .store, "store '\(path)' does not exist (the database has no ferry store in schema '\(schema)')")
        }
        guard !options.readOnly else {
            throw FerryError(.store, "store '\(path)' is empty and was opened read-only")
        }
        try database.writeTransaction {
            try database.executeWithNext("CREATE SCHEMA IF NOT EXISTS \(PostgresIdentifier.quote(schema))", [])
            try createSchema(for: model, on: database, layout: layout)
        }
        guard let metadata = try StoreMetadata.read(from: database, layout: layout) else {
            throw FerryError(.internal, "store '\(path)' has no metadata right after creation")
        }
        return Store(path: path, model: model, layout: layout, session: database, metadata: metadata)
    }

    /// The metadata of the store at a PostgreSQL URL, nil when its schema holds no ferry store.
    static func postgreSQLMetadata(_ text: String) throws -> StoreMetadata? {
        let url = try postgresURL(text)
        let database = try PostgresDatabase(url: url, schema: url.schema ?? defaultPostgreSQLSchema)
        return try StoreMetadata.read(from: database, layout: FerryLayout.postgreSQL)
    }

    /// The advisory-lock key of the store in `schema` (advisory locks are per database).
    package static func postgreSQLLockKey(schema: String) -> Int64 {
        PostgresConnection.advisoryLockKey(for: "ferry store " + schema)
    }

    /// Takes the store's writer lock on `database`'s session, waiting up to `timeout`; nothing
    /// to take when this process holds it already (`PostgreSQLWriterLock`: a job's run holds it
    /// from its first step to its last, and each step's opening joins it).
    package static func takeWriterLock(
        on database: PostgresDatabase, schema: String, timeout: Duration, store: String
    ) throws {
        if PostgreSQLWriterLock.isHeld(url: database.connection.url, schema: schema) { return }
        do {
            try database.connection.acquireAdvisoryLock(postgreSQLLockKey(schema: schema), timeout: timeout)
        } catch  where error.kind == .lockTimeout {
            throw FerryError(
                .store,
                "the store is locked by another process (store '\(store)': another ferry session is writing to schema '\(schema)'; waited \(timeout))",
                notes: ["wait for the other job to finish, or raise the busy timeout"])
        } catch {
            throw FerryError(.store, "store '\(store)': \(error.description)")
        }
    }

    /// A store's PostgreSQL URL, parsed; a malformed one, or one whose `schema=` no store can
    /// live in (longer than PostgreSQL keeps, a NUL byte, a schema PostgreSQL reserves:
    /// `PostgresIdentifier.storeSchemaProblem`), is a usage error naming the part at fault.
    static func postgresURL(_ text: String) throws -> PostgresURL {
        let url: PostgresURL
        do {
            url = try PostgresURL(text)
        } catch {
            throw FerryError(.usage, error.message)
        }
        if let schema = url.schema, let problem = PostgresIdentifier.storeSchemaProblem(with: schema) {
            throw FerryError(
                .usage, "store '\(url.description)': the schema name (schema=) cannot hold a ferry store: \(problem)",
                notes: ["nothing was read or changed; name a schema of at most 63 bytes that does not start with 'pg_'"]
            )
        }
        return url
    }

    /// The refusal of an operation that needs SQLite's connection on a PostgreSQL store.
    static func notOnPostgreSQL(_ path: String) -> FerryError {
        FerryError(
            .usage, "this operation is not available on a PostgreSQL store yet (store '\(path)')",
            notes: [
                "on PostgreSQL, ferry imports, exports, fetches, updates, deletes, verifies, migrates and copies stores; what needs SQLite's own connection (reading a Core Data store) does not run there (docs/postgresql.md)"
            ])
    }
}
