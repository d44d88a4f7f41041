import FerryPostgres
import FerryTestSupport
import Foundation

/// A connection to the test server and a fresh schema of its own, dropped when released, so
/// tests running in parallel never see each other's tables.
final class PostgresScratch {
    let connection: PostgresConnection
    let schema: String

    init() throws {
        connection = try PostgresConnection(PostgresTestServer.requireURL())
        schema = "ferry_test_" + UUID().uuidString.lowercased().replacing("-", with: "")
        try connection.execute("CREATE SCHEMA \(PostgresIdentifier.quote(schema))")
    }

    /// `name` qualified with the scratch schema, quoted.
    func table(_ name: String) -> String {
        PostgresIdentifier.quote(schema) + "." + PostgresIdentifier.quote(name)
    }

    /// A second, independent session to the same server.
    func openAnother() throws -> PostgresConnection {
        try PostgresConnection(PostgresTestServer.requireURL())
    }

    /// The number of rows in `name`.
    func count(_ name: String) throws -> Int64 {
        try connection.execute("SELECT count(*) FROM \(table(name))").rows[0].int(0)
    }

    deinit {
        _ = try? connection.execute("DROP SCHEMA \(PostgresIdentifier.quote(schema)) CASCADE")
    }
}
