import Foundation

/// The PostgreSQL server tests run against: `FERRY_TEST_POSTGRES_URL`, as exported by
/// `scripts/pg-test-server.sh start` (and by `.ci/run`).
///
/// Without the variable, PostgreSQL tests skip locally (the trait prints ``skipReason``) but run
/// and fail in CI (`CI=true`), so a CI machine without a server can never pass by skipping.
public enum PostgresTestServer {
    public static let urlVariable = "FERRY_TEST_POSTGRES_URL"

    /// The server URL, or nil when the variable is unset or empty.
    public static var url: String? {
        guard let value = ProcessInfo.processInfo.environment[urlVariable], !value.isEmpty else {
            return nil
        }
        return value
    }

    /// Whether PostgreSQL tests must run: a URL is set, or this is CI (where a missing URL fails).
    public static var shouldRun: Bool {
        url != nil || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// Why PostgreSQL tests were skipped, for the `.enabled(if:)` trait.
    public static let skipReason =
        "FERRY_TEST_POSTGRES_URL is not set; run `eval \"$(scripts/pg-test-server.sh start)\"` first"

    /// The server URL; throws (failing the test) when it is missing.
    public static func requireURL() throws -> String {
        guard let url else { throw Missing() }
        return url
    }

    struct Missing: Error, CustomStringConvertible {
        var description: String { "CI=true but \(PostgresTestServer.skipReason)" }
    }
}
