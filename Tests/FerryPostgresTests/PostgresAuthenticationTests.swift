import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// Password logins: the test server (scripts/pg-test-server.sh) asks members of the role
/// `ferry_password_login` for a password (SCRAM) and trusts everyone else. These tests change
/// process environment variables (PGPASSWORD, PGPASSFILE, HOME), so they run one at a time;
/// other suites log in by trust and ignore them.
@Suite(
    "PostgreSQL authentication: PGPASSWORD, password files, redaction", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
final class PostgresAuthenticationTests {
    let admin: PostgresConnection
    let role: String
    let password = "Tr0ub4dor&3-\(UUID().uuidString.prefix(8))"
    let base: PostgresURL
    let directory = TemporaryDirectory("ferry-pgpass")

    init() throws {
        admin = try PostgresConnection(PostgresTestServer.requireURL())
        role = "ferry_pw_" + UUID().uuidString.lowercased().prefix(8)
        try admin.execute(
            "CREATE ROLE \(PostgresIdentifier.quote(role)) LOGIN PASSWORD '\(password)' IN ROLE ferry_password_login")
        // The same server, database and (TCP) address as the test URL, as the password role.
        base = try PostgresURL(PostgresTestServer.requireURL())
        for name in ["PGPASSWORD", "PGPASSFILE"] { unsetenv(name) }
    }

    deinit {
        for name in ["PGPASSWORD", "PGPASSFILE"] { unsetenv(name) }
        _ = try? admin.execute("DROP ROLE IF EXISTS \(PostgresIdentifier.quote(role))")
    }

    private func url(_ change: (inout PostgresURL) -> Void = { _ in }) -> PostgresURL {
        var url = base
        url.user = role
        url.password = nil
        change(&url)
        return url
    }

    private func loginUser(_ url: PostgresURL) throws -> String {
        try PostgresConnection(url: url).execute("SELECT current_user").rows[0].string(0)
    }

    private func writePasswordFile(_ name: String, password: String) throws -> String {
        let host = base.host ?? "*"
        let port = base.port.map(String.init) ?? "*"
        let path = try directory.write(name, "# ferry test\n\(host):\(port):*:\(role):\(password)\n")
        chmod(path, 0o600)
        return path
    }

    @Test("without a password the login fails, saying the server asked for one")
    func noPassword() throws {
        setenv("PGPASSFILE", directory.file("absent"), 1)
        let error = try #require(throws: PostgresError.self) { try loginUser(url()) }
        #expect(error.kind == .connectionFailed)
        #expect(error.message.contains("no password supplied"), "\(error.message)")
    }

    @Test("PGPASSWORD logs in; a wrong one fails without being echoed")
    func environmentPassword() throws {
        setenv("PGPASSFILE", directory.file("absent"), 1)
        setenv("PGPASSWORD", password, 1)
        #expect(try loginUser(url()) == role)
        setenv("PGPASSWORD", "wrong-\(password)", 1)
        let error = try #require(throws: PostgresError.self) { try loginUser(url()) }
        #expect(error.message.contains("password authentication failed for user \"\(role)\""))
        #expect(!error.description.contains(password))
    }

    @Test("~/.pgpass logs in")
    func homePasswordFile() throws {
        let home = TemporaryDirectory("ferry-home")
        let path = try writePasswordFile("pgpass", password: password)
        try FileManager.default.copyItem(atPath: path, toPath: home.file(".pgpass"))
        chmod(home.file(".pgpass"), 0o600)
        let savedHome = ProcessInfo.processInfo.environment["HOME"]
        setenv("HOME", home.path, 1)
        defer {
            if let savedHome { setenv("HOME", savedHome, 1) } else { unsetenv("HOME") }
        }
        #expect(try loginUser(url()) == role)
    }

    @Test("PGPASSFILE and the passfile= URL parameter name a password file")
    func namedPasswordFile() throws {
        let good = try writePasswordFile("good", password: password)
        setenv("PGPASSFILE", good, 1)
        #expect(try loginUser(url()) == role)
        unsetenv("PGPASSFILE")
        #expect(try loginUser(url { $0.parameters.append(("passfile", good)) }) == role)
        let bad = try writePasswordFile("bad", password: "not-it")
        let error = try #require(throws: PostgresError.self) {
            try loginUser(url { $0.parameters.append(("passfile", bad)) })
        }
        #expect(error.message.contains("password authentication failed"))
    }

    @Test("a password in the URL logs in, and a failure shows it only as ***")
    func urlPassword() throws {
        setenv("PGPASSFILE", directory.file("absent"), 1)
        #expect(try loginUser(url { $0.password = password }) == role)
        let wrong = "Wr0ng-\(password)"
        let failing = url { $0.password = wrong }
        let error = try #require(throws: PostgresError.self) { try loginUser(failing) }
        #expect(!error.description.contains(wrong))
        #expect(error.message.contains("\(role):***@"))
    }
}
