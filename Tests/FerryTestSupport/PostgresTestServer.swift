import FerryPostgresStore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The PostgreSQL server tests run against.
///
/// - `FERRY_TEST_POSTGRES_URL` set (as `scripts/pg-test-server.sh start` and `.ci/run` export it):
///   that server.
/// - Otherwise, when PostgreSQL's server binaries are installed (Debian: `apt-get install
///   postgresql`), the first test that asks starts a throwaway server with
///   `scripts/pg-test-server.sh start`; it is stopped when the test process ends (however it ends:
///   a watcher process stops it once the test process is gone).
/// - Otherwise (or with `FERRY_TEST_POSTGRES=off`) PostgreSQL tests are skipped with
///   ``skipReason``, which names what to install, except under `CI=true`, where they run and fail:
///   a CI machine without a server can never pass by skipping.
public enum PostgresTestServer {
    public static let urlVariable = "FERRY_TEST_POSTGRES_URL"

    /// The server URL, or nil when there is none and none can be started.
    public static var url: String? {
        if case .running(let url) = server { return url }
        return nil
    }

    /// Whether PostgreSQL tests must run: a server is given or can be started, or this is CI (where
    /// a missing one fails). Cheap: it starts nothing, so a run that filters the PostgreSQL tests
    /// out never starts a server.
    public static var shouldRun: Bool {
        PostgreSQLEngine.register()
        return unavailableReason == nil || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// Why PostgreSQL tests were skipped, for the `.enabled(if:)` trait.
    public static var skipReason: String {
        unavailableReason ?? "a PostgreSQL test server is available"
    }

    /// Why no server can be had without starting one, or nil when one is given or can be started.
    private static var unavailableReason: String? {
        let environment = ProcessInfo.processInfo.environment
        if let value = environment[urlVariable], !value.isEmpty { return nil }
        if environment["FERRY_TEST_POSTGRES"] == "off" {
            return "FERRY_TEST_POSTGRES=off: the PostgreSQL tests are turned off"
        }
        guard serverBinariesInstalled else {
            return "no PostgreSQL server to test against: install its binaries (Debian: apt-get install postgresql) "
                + "and the tests start a throwaway server, or set \(urlVariable)"
        }
        return nil
    }

    /// The server URL; throws (failing the test) when there is none.
    public static func requireURL() throws -> String {
        switch server {
        case .running(let url): return url
        case .unavailable(let reason):
            let ci = ProcessInfo.processInfo.environment["CI"] == "true"
            throw Missing(description: ci ? "CI=true but \(reason)" : reason)
        case .failedToStart(let reason): throw Missing(description: reason)
        }
    }

    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    // MARK: - Finding or starting the server

    private enum Server: Sendable {
        case running(url: String)
        case unavailable(reason: String)
        case failedToStart(reason: String)
    }

    /// Decided once per test process (a `static let` is initialised exactly once, thread-safely).
    /// PostgreSQL's engine is registered first, so that every test reaching the server can open
    /// its stores.
    private static let server: Server = {
        PostgreSQLEngine.register()
        return findOrStart()
    }()

    private static func findOrStart() -> Server {
        if let value = ProcessInfo.processInfo.environment[urlVariable], !value.isEmpty {
            return .running(url: value)
        }
        if let reason = unavailableReason { return .unavailable(reason: reason) }
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/pg-test-server.sh").path
        let started = spawnAndWait(script, ["start"])
        guard started.status == 0, let url = exported("FERRY_TEST_POSTGRES_URL", in: started.output),
            let directory = exported("FERRY_TEST_POSTGRES_DIR", in: started.output)
        else {
            return .failedToStart(
                reason: "scripts/pg-test-server.sh start exited \(started.status): \(started.error)")
        }
        stopWhenThisProcessEnds(script: script, directory: directory)
        // Children that read the variable (scripts, the samples' runners) see the same server.
        setenv(urlVariable, url, 1)
        return .running(url: url)
    }

    /// Debian's layout (`/usr/lib/postgresql/VERSION/bin/initdb`) or `PG_BINDIR`, as the script looks.
    static var serverBinariesInstalled: Bool {
        if let bindir = ProcessInfo.processInfo.environment["PG_BINDIR"], !bindir.isEmpty {
            return FileManager.default.isExecutableFile(atPath: bindir + "/initdb")
        }
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.contains { FileManager.default.isExecutableFile(atPath: "\(root)/\($0)/bin/initdb") }
    }

    /// The value of `export NAME='VALUE'` in `scripts/pg-test-server.sh start`'s output.
    static func exported(_ name: String, in output: String) -> String? {
        for line in output.split(separator: "\n") where line.hasPrefix("export \(name)=") {
            var value = line.dropFirst("export \(name)=".count)
            if value.hasPrefix("'") && value.hasSuffix("'") && value.count >= 2 { value = value.dropFirst().dropLast() }
            return String(value)
        }
        return nil
    }

    /// Runs a program to its end through `posix_spawn` and `waitpid`, its output in temporary
    /// files. Not Foundation's `Process`: this runs inside the `static let`'s once-initialiser,
    /// where `Process` was seen never to reap the finished script (the tests hung).
    static func spawnAndWait(_ path: String, _ arguments: [String]) -> (status: Int32, output: String, error: String) {
        let token = UUID().uuidString
        let outputPath = NSTemporaryDirectory() + "/ferry-pg-start-\(token).out"
        let errorPath = NSTemporaryDirectory() + "/ferry-pg-start-\(token).err"
        defer {
            try? FileManager.default.removeItem(atPath: outputPath)
            try? FileManager.default.removeItem(atPath: errorPath)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard spawned == 0 else { return (-1, "", "posix_spawn \(path): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let error = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        return (exitStatus, output, error)
    }

    /// A detached watcher stops the server once this process is gone, whether it exits, crashes
    /// or is killed: `atexit` alone would miss the last two.
    private static func stopWhenThisProcessEnds(script: String, directory: String) {
        let watcher = """
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            exec '\(script)' stop '\(directory)'
            """
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_RDWR, 0)
        }
        let words = ["/usr/bin/setsid", "/bin/sh", "-c", watcher]
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        _ = posix_spawn(&pid, "/usr/bin/setsid", &actions, nil, argv, environ)
    }
}
