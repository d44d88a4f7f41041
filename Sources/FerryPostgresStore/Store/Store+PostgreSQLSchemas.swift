import FerryCore
import FerryPostgres
import Foundation

/// Second schemas beside a PostgreSQL store: what a job's `rebuild: true` builds the new store
/// in and swaps in by renaming, and what a dry run of a job on a store not created yet works in.
extension Store {
    /// The URL of a work store beside the PostgreSQL store at `text`: the same database, the
    /// schema `SCHEMA_MARK_SUFFIX` (cut to PostgreSQL's 63 bytes, the store's part first).
    package static func postgreSQLWorkURL(_ text: String, mark: String, suffix: String) throws -> String {
        let schema = try postgresURL(text).schema ?? defaultPostgreSQLSchema
        return withSchema(workSchemaName(of: schema, mark: mark, suffix: suffix), in: text)
    }

    /// The URL `text` (as written, password and parameters kept) with `schema=` set to `schema`.
    static func withSchema(_ schema: String, in text: String) -> String {
        let value = "schema=" + (schema.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? schema)
        guard let mark = text.firstIndex(of: "?") else { return text + "?" + value }
        let parameters = text[text.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false).filter
        {
            !$0.lowercased().hasPrefix("schema=")
        }
        return text[..<mark] + "?"
            + (parameters.map(String.init) + [value]).filter { !$0.isEmpty }.joined(separator: "&")
    }

    /// True when the PostgreSQL URL names a schema holding a ferry store.
    package static func postgreSQLStoreExists(_ text: String) throws -> Bool {
        try postgreSQLMetadata(text) != nil
    }

    /// Drops the schema of the PostgreSQL store at `text` with everything in it (a work store).
    package static func dropPostgreSQLSchema(_ text: String) throws {
        let url = try postgresURL(text)
        let database = try PostgresDatabase(url: url, schema: url.schema ?? defaultPostgreSQLSchema)
        try database.execute("DROP SCHEMA IF EXISTS \(PostgresIdentifier.quote(database.schema)) CASCADE")
    }

    /// Puts the store built in `work`'s schema in the place of the store at `target`, in one
    /// transaction: the old schema is renamed aside, the work schema takes its name, and the old
    /// one is dropped. Waits for the target's writer lock (up to `timeout`); a failure leaves
    /// both schemas as they were.
    package static func replacePostgreSQLSchema(
        _ target: String, with work: String, timeout: Duration = .seconds(30)
    ) throws {
        let targetURL = try postgresURL(target)
        let workURL = try postgresURL(work)
        let schema = targetURL.schema ?? defaultPostgreSQLSchema
        let workSchema = workURL.schema ?? defaultPostgreSQLSchema
        let database = try PostgresDatabase(url: targetURL, schema: schema)
        try takeWriterLock(on: database, schema: schema, timeout: timeout, store: targetURL.description)
        let aside =
            try PostgresURL(postgreSQLWorkURL(target, mark: "ferry_old", suffix: String(workSchema.suffix(8)))).schema
            ?? schema + "_ferry_old"
        let quote = PostgresIdentifier.quote
        try database.writeTransaction {
            let exists =
                try database.scalar("SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = ?", [.text(schema)])?
                .int64 == 1
            if exists { try database.execute("ALTER SCHEMA \(quote(schema)) RENAME TO \(quote(aside))") }
            try database.execute("ALTER SCHEMA \(quote(workSchema)) RENAME TO \(quote(schema))")
            if exists { try database.execute("DROP SCHEMA \(quote(aside)) CASCADE") }
        }
    }
}
