import FerryCore
import FerryPostgresStore
import Foundation

/// Puts a SQLite ferry store's objects, keys and run log into a new PostgreSQL store (the
/// tests' stand-in for `ferry copy` into PostgreSQL), and drops test schemas.
package enum PostgresStoreLoader {
    /// Creates the store at `url` (a schema that must not exist) holding exactly what the SQLite
    /// store at `path` holds, at its model version.
    package static func load(_ path: String, into url: String) throws {
        let sqlite = try Connection(path: path, readOnly: true, create: false)
        guard let model = try StoreMetadata.read(from: sqlite, layout: FerryLayout())?.model else {
            throw FerryError(.store, "'\(path)' records no model")
        }
        let store = try Store.open(at: url, model: model)
        try store.withDatabase { database in
            guard let postgres = database as? PostgresDatabase else {
                throw FerryError(.internal, "\(url) is not a PostgreSQL store")
            }
            try postgres.writeTransaction {
                try postgres.execute("DELETE FROM ferry_metadata")
                try postgres.execute("DELETE FROM ferry_entities")
                try StoreTableTransfer(model: model).copy(
                    from: sqlite, FerryLayout(), to: postgres, FerryLayout.postgreSQL, bookkeeping: true)
            }
        }
    }

    /// Every object of every entity of the store's model, exported by `ferry export` as NDJSON
    /// (JSON attributes left out: `jsonb` normalizes their text), by entity, with the model's
    /// version under `version`.
    package static func exports(_ store: String, cwd: String? = nil) throws -> [String: String] {
        guard let model = try Store.metadata(at: store)?.model else {
            throw FerryError(.store, "'\(store)' records no model")
        }
        var result: [String: String] = ["version": model.version]
        for entity in model.entities {
            let fields = entity.attributes.filter { $0.type != .json }.map(\.name)
            let export = try runFerry(
                [
                    "export", "--store", store, "--entity", entity.name, "--format", "ndjson", "--quiet", "--fields",
                    fields.joined(separator: ","),
                ], cwd: cwd)
            guard export.exitCode == 0 else {
                throw FerryError(.store, "export of \(entity.name) from '\(store)' failed: \(export.stderr)")
            }
            result[entity.name] = export.stdout
        }
        return result
    }

    /// The schemas of the test server whose names start with `prefix`, in name order.
    package static func schemas(startingWith prefix: String) throws -> [String] {
        let database = try Store.inspectionSession(at: try PostgresTestServer.requireURL() + "?schema=public").session
        return try database.rows(
            "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, ?) ORDER BY 1", [.text(prefix)]
        ).compactMap(\.first?.text)
    }

    /// True while a session of the test server runs a `COPY` into a table of `schema`.
    package static func isCopying(into schema: String) throws -> Bool {
        // Transaction control (`SAVEPOINT …;`) may travel in front of the COPY, in one message.
        try isRunning(statementLike: "%COPY \"\(schema)\".%")
    }

    /// True while another session runs an `INSERT INTO "schema".…` or a `CREATE TABLE
    /// "schema".… AS SELECT` (a migration in the server filling its new schema).
    package static func isInserting(into schema: String) throws -> Bool {
        try isRunning(statementLike: "%INSERT INTO \"\(schema)\".%")
            || isRunning(statementLike: "%CREATE TABLE \"\(schema)\".% AS SELECT %")
    }

    /// True while another session holds the writer lock of the store in `schema` (its advisory
    /// lock: PostgreSQL shows a 64-bit key as its high and low 32 bits).
    package static func isLocked(schema: String) throws -> Bool {
        let key = UInt64(bitPattern: Store.postgreSQLLockKey(schema: schema))
        let database = try Store.inspectionSession(at: try PostgresTestServer.requireURL() + "?schema=public").session
        return try database.scalar(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid::bigint = ? AND objid::bigint = ? AND pid <> pg_backend_pid()",
            [.integer(Int64(key >> 32)), .integer(Int64(key & 0xffff_ffff))])?.int64 ?? 0 > 0
    }

    /// Ends, as `pg_terminate_backend` does (an administrator, a failover, a server-side idle
    /// timeout), every other session running a statement matching the `LIKE` pattern `pattern`;
    /// how many it ended.
    @discardableResult
    package static func terminateSessions(runningStatementLike pattern: String) throws -> Int {
        let database = try Store.inspectionSession(at: try PostgresTestServer.requireURL() + "?schema=public").session
        return Int(
            try database.scalar(
                "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE state = 'active' AND query LIKE ? AND pid <> pg_backend_pid()) AS ended",
                [.text(pattern)])?.int64 ?? 0)
    }

    /// True while another session runs a statement matching the `LIKE` pattern `pattern`.
    package static func isRunning(statementLike pattern: String) throws -> Bool {
        let database = try Store.inspectionSession(at: try PostgresTestServer.requireURL() + "?schema=public").session
        return try database.scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE ? AND pid <> pg_backend_pid()",
            [.text(pattern)])?
            .int64 ?? 0 > 0
    }

    /// Drops every schema whose name starts with `prefix` (a test's store, its backups and scratch).
    package static func dropSchemas(startingWith prefix: String) {
        guard let url = try? PostgresTestServer.requireURL(), let names = try? schemas(startingWith: prefix),
            let database = try? Store.inspectionSession(at: url + "?schema=public").session
        else { return }
        for name in names { try? database.execute("DROP SCHEMA \"\(name)\" CASCADE") }
    }
}
