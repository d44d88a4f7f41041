import FerryCore
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
            guard let postgres = database as? PostgresDatabase else { throw FerryError(.internal, "\(url) is not a PostgreSQL store") }
            try postgres.writeTransaction {
                try postgres.execute("DELETE FROM ferry_metadata")
                try postgres.execute("DELETE FROM ferry_entities")
                try StoreTableTransfer(model: model).copy(from: sqlite, into: postgres, schema: postgres.schema)
            }
        }
    }

    /// The schemas of the test server whose names start with `prefix`, in name order.
    package static func schemas(startingWith prefix: String) throws -> [String] {
        let database = try Store.inspectionSession(at: try PostgresTestServer.requireURL() + "?schema=public").session
        return try database.rows("SELECT nspname FROM pg_namespace WHERE starts_with(nspname, ?) ORDER BY 1", [.text(prefix)]).compactMap(\.first?.text)
    }

    /// Drops every schema whose name starts with `prefix` (a test's store, its backups and scratch).
    package static func dropSchemas(startingWith prefix: String) {
        guard let url = try? PostgresTestServer.requireURL(), let names = try? schemas(startingWith: prefix),
            let database = try? Store.inspectionSession(at: url + "?schema=public").session
        else { return }
        for name in names { try? database.execute("DROP SCHEMA \"\(name)\" CASCADE") }
    }
}
