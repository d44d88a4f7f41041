import FerryCore
import FerryPostgresStore
import Foundation

/// A PostgreSQL server of one test's own, run as production servers run (fsync, synchronous
/// commits and full-page writes on: `scripts/pg-test-server.sh start --durable`), that the test
/// may crash as a power cut would and start again. The shared test server turns fsync off for
/// speed, which would hide a commit lost in a crash.
///
/// Needs PostgreSQL's server binaries (the same as ``PostgresTestServer``); the server is stopped
/// and its directory removed when the value is released.
public final class DurablePostgresServer: @unchecked Sendable {
    // @unchecked: immutable after init; the script serialises the server's own state.
    public let url: String
    public let directory: String
    private let script = TestPaths.packageRoot.appendingPathComponent("scripts/pg-test-server.sh").path

    /// Whether tests that crash a server can run here (or must, in CI): they start their own
    /// server, so they need PostgreSQL's server binaries whatever `FERRY_TEST_POSTGRES_URL` says.
    public static var shouldRun: Bool {
        ProcessInfo.processInfo.environment["FERRY_TEST_POSTGRES"] != "off"
            && (PostgresTestServer.serverBinariesInstalled || ProcessInfo.processInfo.environment["CI"] == "true")
    }

    /// Why those tests were skipped, for the `.enabled(if:)` trait.
    public static let skipReason =
        "these tests crash a PostgreSQL server of their own: install its binaries (Debian: apt-get install postgresql)"

    public convenience init() throws {
        try self.init(startOptions: ["--durable"])
    }

    /// A server of the test's own started with `scripts/pg-test-server.sh start` and these
    /// options (`--durable`, `--ssl CERT KEY`).
    public init(startOptions: [String]) throws {
        PostgreSQLEngine.register()
        let started = PostgresTestServer.spawnAndWait(script, ["start"] + startOptions)
        guard started.status == 0, let url = PostgresTestServer.exported("FERRY_TEST_POSTGRES_URL", in: started.output),
            let directory = PostgresTestServer.exported("FERRY_TEST_POSTGRES_DIR", in: started.output)
        else {
            throw FerryProcessError(
                description:
                    "a PostgreSQL server (start \(startOptions.joined(separator: " "))) did not start: \(started.error)"
            )
        }
        self.url = url
        self.directory = directory
    }

    deinit {
        _ = PostgresTestServer.spawnAndWait(script, ["stop", directory])
    }

    /// Stops the server at once, as a power cut or `kill -9` of the postmaster would: no
    /// checkpoint, every connection dropped; what was committed must survive the restart.
    public func crash() throws {
        let result = PostgresTestServer.spawnAndWait(script, ["crash", directory])
        guard result.status == 0 else { throw FerryProcessError(description: "crash failed: \(result.error)") }
    }

    /// Starts the crashed server again (crash recovery replays its write-ahead log).
    public func restart() throws {
        let result = PostgresTestServer.spawnAndWait(script, ["restart", directory])
        guard result.status == 0 else { throw FerryProcessError(description: "restart failed: \(result.error)") }
    }

    /// True while a session other than the asking one runs a statement matching `pattern` (SQL `LIKE`).
    public func isRunning(statementLike pattern: String) throws -> Bool {
        let database = try Store.inspectionSession(at: url + "?schema=public").session
        return try database.scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE ? AND pid <> pg_backend_pid()",
            [.text(pattern)])?
            .int64 ?? 0 > 0
    }
}
