import FerryCore
import FerryPostgres
import Foundation
import Logging

/// The work schemas ferry builds beside a PostgreSQL store `S` (a `rebuild: true` job's
/// `S_ferry_rebuild_PID_XXXXXXXX`, a dry run's `S_ferry_dry_run_PID_XXXXXXXX`, `ferry copy`'s
/// `S_ferry_copy`), and the ones a killed process leaves behind.
///
/// The process building a work schema holds the schema's work lock (a session advisory lock,
/// `postgreSQLWorkLockKey`) from before the schema is created until it is swapped in or
/// dropped; the lock goes with the session, so a killed process frees it. Every opening of `S`
/// for writing, and every run that builds a work schema beside it, drops the work schemas of `S`
/// whose lock it can take (never one a live process holds), and logs each at `notice`.
extension Store {
    /// The advisory-lock key a process holds while it builds the work schema `schema`.
    package static func postgreSQLWorkLockKey(schema: String) -> Int64 {
        PostgresConnection.advisoryLockKey(for: "ferry work schema " + schema)
    }

    /// The marks of the work schemas named `S_MARK_PID_XXXXXXXX` (see `postgreSQLWorkURL`).
    static let postgreSQLWorkMarks = ["ferry_rebuild", "ferry_dry_run"]

    /// The schema `ferry copy` builds a copy of the store in `schema` in, before swapping it in.
    package static func postgreSQLCopyScratchSchema(of schema: String) -> String {
        PostgresIdentifier.fitted(
            schema, suffix: StoreFiles.copyScratchMark.replacing(".", with: "_").replacing("-", with: "_"))
    }

    /// True when `name` is one of the work schemas ferry builds beside the store in `schema`.
    static func isPostgreSQLWorkSchema(_ name: String, of schema: String) -> Bool {
        // Both names are whole: a store's schema longer than PostgreSQL keeps is refused with its
        // URL, and every work schema's name is made to fit (`PostgresIdentifier.fitted`).
        if name == postgreSQLCopyScratchSchema(of: schema) && name != schema { return true }
        for mark in postgreSQLWorkMarks {
            // `HEAD_MARK_PID_XXXXXXXX`, HEAD the store's schema (or, when that would not fit in
            // 63 bytes, its start and a hash of the whole: `PostgresIdentifier.fitted`).
            let parts = name.split(separator: "_" + mark + "_", omittingEmptySubsequences: false)
            guard parts.count >= 2, let suffix = parts.last else { continue }
            let pieces = suffix.split(separator: "_", omittingEmptySubsequences: false)
            guard pieces.count == 2, !pieces[0].isEmpty, pieces[0].allSatisfy({ ("0"..."9").contains($0) }),
                pieces[1].utf8.count == 8, pieces[1].allSatisfy(\.isHexDigit)
            else { continue }
            if workSchemaName(of: schema, mark: mark, suffix: String(suffix)) == name { return true }
        }
        return false
    }

    /// `SCHEMA_MARK_SUFFIX`; when that is longer than PostgreSQL's 63 bytes, the start of
    /// `SCHEMA`, a hash of all of it and `_MARK_SUFFIX` (`PostgresIdentifier.fitted`).
    static func workSchemaName(of schema: String, mark: String, suffix: String) -> String {
        PostgresIdentifier.fitted(schema, suffix: "_\(mark)_\(suffix)")
    }

    /// Drops the work schemas beside the PostgreSQL store at `store` that no live process
    /// holds, then takes the work lock of the schema of `work` on a session of its own, held
    /// until that session is released: the caller keeps it for as long as it builds `work`.
    package static func claimPostgreSQLWorkSchema(_ work: String, beside store: String) throws -> PostgresDatabase {
        let url = try postgresURL(store)
        let database = try PostgresDatabase(url: url, schema: url.schema ?? defaultPostgreSQLSchema)
        try dropLeftoverWorkSchemas(of: database.schema, on: database, store: url.description)
        let workSchema = try postgresURL(work).schema ?? defaultPostgreSQLSchema
        do {
            try database.connection.acquireAdvisoryLock(
                postgreSQLWorkLockKey(schema: workSchema), timeout: .seconds(30))
        } catch {
            throw FerryError(.store, "store '\(url.description)': \(error.description)")
        }
        return database
    }

    /// Drops each work schema of the store in `schema` whose work lock this session can take:
    /// no live process builds it, so a killed one left it. Only schemas holding a ferry store
    /// (its metadata table) are dropped; each one dropped is logged at `notice`. Returns whether
    /// the schema `schema` exists (the same query says).
    @discardableResult
    package static func dropLeftoverWorkSchemas(
        of schema: String, on database: PostgresDatabase, store: String
    ) throws
        -> Bool
    {
        let metadata = FerryLayout.postgreSQL.bookkeeping?.metadata ?? "ferry_metadata"
        let found = try database.rows(
            """
            SELECT n.nspname FROM pg_catalog.pg_namespace n
            WHERE n.nspname LIKE ? AND (n.nspname = ? OR EXISTS (
                SELECT 1 FROM pg_catalog.pg_tables t WHERE t.schemaname = n.nspname AND t.tablename = ?))
            ORDER BY n.nspname
            """,
            [.text(likePrefix(of: schema) + "%"), .text(schema), .text(metadata)]
        ).compactMap { $0.first?.text }
        let names = found.filter { $0 != schema && isPostgreSQLWorkSchema($0, of: schema) }
        for name in names {
            let key = postgreSQLWorkLockKey(schema: name)
            do {
                guard try database.connection.tryAdvisoryLock(key) else { continue }
                defer { _ = try? database.connection.releaseAdvisoryLock(key) }
                try database.execute("DROP SCHEMA IF EXISTS \(PostgresIdentifier.quote(name)) CASCADE")
            } catch {
                throw FerryError(
                    .store,
                    "store '\(store)': cannot drop the work schema '\(name)' a killed ferry process left: \(error)")
            }
            FerryLog.store.notice(
                "dropped the work schema '\(name)' a killed ferry process left beside the store '\(store)'")
        }
        return found.contains(schema)
    }

    /// The first bytes every work schema of `schema` starts with, as a `LIKE` prefix (escaped).
    private static func likePrefix(of schema: String) -> String {
        // The shortest head a work name keeps: 63 bytes less the longest tail and the hash.
        var head = schema
        while head.utf8.count > 16 { head.removeLast() }
        var escaped = ""
        for character in head {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
