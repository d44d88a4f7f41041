import FerryCore
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// A password written into a PostgreSQL URL never leaves ferry, through the built binary: every
/// command that takes a store or a source (run, validate, import, export, update, delete,
/// migrate, verify, check, copy, store info, store version, model show and diff) run with such
/// URLs, succeeding and failing (a wrong password, a schema holding no store, an unknown entity,
/// a malformed URL), with `--verbose` and JSON and JUnit reports; the password is in none of
/// their standard output, standard error, report files, the store's run log or the process's
/// command line as `ps` shows it.
@Suite(
    "PostgreSQL passwords in URLs are never printed (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresPasswordRedactionCLITests {
    @Test(
        "no command prints, reports, logs or records a password written into a PostgreSQL URL, whether it succeeds or fails"
    )
    func passwordsNeverLeave() throws {
        let admin = try PostgresConnection(PostgresTestServer.requireURL())
        let suffix = UUID().uuidString.lowercased().prefix(8)
        let role = "ferry_pw_cli_\(suffix)"
        let password = "Pw\(suffix)Secret"
        let wrong = "Wrong\(suffix)Secret"
        try admin.execute(
            "CREATE ROLE \(PostgresIdentifier.quote(role)) LOGIN PASSWORD '\(password)' IN ROLE ferry_password_login")
        try admin.execute("GRANT CREATE ON DATABASE \(PostgresIdentifier.quote(admin.url.database ?? "")) TO \(role)")
        let schema = "ferry_pw_\(suffix)"
        defer {
            PostgresStoreLoader.dropSchemas(startingWith: schema)
            _ = try? admin.execute(
                "REVOKE ALL ON DATABASE \(PostgresIdentifier.quote(admin.url.database ?? "")) FROM \(role)")
            _ = try? admin.execute("DROP ROLE IF EXISTS \(PostgresIdentifier.quote(role))")
        }
        var base = try PostgresURL(PostgresTestServer.requireURL())
        base.user = role
        func url(_ schema: String, password: String) -> String {
            "postgresql://\(role):\(password)@\(base.host ?? "127.0.0.1")\(base.port.map { ":\($0)" } ?? "")/\(base.database ?? "")?schema=\(schema)"
        }
        let store = url(schema, password: password)
        let copied = url(schema + "_copy", password: password)
        let missing = url(schema + "_missing", password: password)
        let refused = url(schema, password: wrong)

        let directory = TemporaryDirectory()
        let people = try String(contentsOfFile: Fixtures.peopleModel, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: directory.file("model"), withIntermediateDirectories: true)
        try directory.write("model/model.yml", "name: People\ncurrent: \"2\"\nversions: [v1.yml, v2.yml]\n")
        try directory.write("model/v1.yml", people)
        try directory.write(
            "model/v2.yml", people.replacing("version: \"1\"", with: "version: \"2\"") + "      nickname: string\n")
        try directory.write("people.csv", bytes: BigFiles.csv(ids: 1...20))
        try directory.write(
            "job.yml",
            """
            job: passwords
            model: {path: \(Fixtures.peopleModel)}
            store: {path: "${store}"}
            steps:
              - import: {source: people.csv, entity: Person, on_conflict: update}
              - verify: {}
            """)
        try directory.write(
            "bad-job.yml",
            """
            job: passwords
            model: {path: \(Fixtures.peopleModel)}
            store: {path: "\(store)"}
            steps:
              - import: {source: people.csv, entity: Nobody}
            """)
        let model = Fixtures.peopleModel
        let commands: [(arguments: [String], succeeds: Bool)] = [
            (
                [
                    "import", "people.csv", "--store", store, "--model", model, "--entity", "Person", "--report",
                    "r1.json",
                ], true
            ),
            (["run", "job.yml", "--param", "store=\(store)", "--report", "r2.json", "--junit", "j2.xml"], true),
            (["validate", "job.yml", "--param", "store=\(store)"], true),
            (["export", "--store", store, "--entity", "Person", "--format", "csv", "--report", "r3.json"], true),
            (
                [
                    "update", "--store", store, "--entity", "Person", "--where", "id == 1", "--set", "age=5",
                    "--report", "r4.json",
                ], true
            ),
            (["delete", "--store", store, "--entity", "Person", "--where", "id == 2", "--report", "r5.json"], true),
            (["verify", store, "--report", "r6.json", "--junit", "j6.xml"], true),
            (["store", "info", store], true),
            (["store", "info", store, "--json"], true),
            (["store", "version", store, "--model", "model"], true),
            (["copy", store, "copy.sqlite", "--report", "r7.json"], true),
            (["copy", "copy.sqlite", copied, "--report", "r8.json"], true),
            (["check", "copy.sqlite", "--model", "model", "--report", "r9.json", "--junit", "j9.xml"], true),
            (["migrate", store, "--model", "model", "--report", "r10.json"], true),
            (["import", store, "--store", "whole.sqlite", "--report", "r11.json"], true),
            // Failing invocations.
            (
                [
                    "import", "people.csv", "--store", refused, "--model", model, "--entity", "Person", "--report",
                    "f1.json",
                ], false
            ),
            (["run", "job.yml", "--param", "store=\(refused)", "--report", "f2.json", "--junit", "f2.xml"], false),
            (["run", "bad-job.yml", "--report", "f3.json", "--junit", "f3.xml"], false),
            (["export", "--store", refused, "--entity", "Person", "--format", "csv"], false),
            (["export", "--store", missing, "--entity", "Person", "--format", "csv", "--report", "f4.json"], false),
            (["export", "--store", store, "--entity", "Nobody", "--format", "csv"], false),
            (["update", "--store", missing, "--entity", "Person", "--where", "id == 1", "--set", "age=5"], false),
            (["delete", "--store", refused, "--entity", "Person", "--where", "id == 1"], false),
            (["verify", refused, "--report", "f5.json", "--junit", "f5.xml"], false),
            (["verify", missing], false),
            (["store", "info", refused], false),
            (["store", "info", missing], false),
            (["copy", refused, "copy2.sqlite"], false),
            (["copy", "copy.sqlite", store, "--report", "f6.json"], false),
            (["migrate", refused, "--model", "model"], false),
            (["migrate", missing, "--model", "model", "--report", "f7.json"], false),
            (["import", store, "--store", "whole2.sqlite", "--table", "Nobody"], false),
            (["import", "people.csv", "--store", store + "#fragment", "--model", model, "--entity", "Person"], false),
            (
                [
                    "import", "people.csv", "--store", store + "&no_such_keyword=1", "--model", model, "--entity",
                    "Person",
                ], false
            ),
            (
                [
                    "import", "people.csv", "--store", url(String(repeating: "s", count: 70), password: password),
                    "--model", model, "--entity", "Person",
                ], false
            ),
            // A store stands for the model it records: shown and compared, the password hidden.
            (["model", "show", store], true),
            (["model", "diff", store, "model"], true),
        ]
        var leaks: [String] = []
        for (arguments, succeeds) in commands {
            let result = try runFerry(["--verbose"] + arguments, cwd: directory.path)
            let shown = arguments.joined(separator: " ").replacing(password, with: "<password>")
            #expect(
                (result.exitCode == 0) == succeeds,
                "ferry \(shown): \(result.exitCode)\n\(result.stderr.suffix(1500).replacing(password, with: "<password>"))"
            )
            for (name, text) in [("stdout", result.stdout), ("stderr", result.stderr)]
            where text.contains(password) || text.contains(wrong) {
                leaks.append("ferry \(shown): \(name)")
            }
        }
        // Every file the commands wrote (reports, JUnit files, exports), and the run logs.
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path)
        where !name.hasSuffix(".sqlite") && !name.hasSuffix(".yml") {
            let text = (try? String(contentsOfFile: directory.file(name), encoding: .utf8)) ?? ""
            if text.contains(password) || text.contains(wrong) { leaks.append("file \(name)") }
        }
        let session = try Store.inspectionSession(at: try PostgresTestServer.requireURL() + "?schema=public").session
        for runs in ["\(schema).ferry_runs", "\(schema)_copy.ferry_runs"] {
            let rows = try session.rows("SELECT * FROM \(runs)")
            #expect(runs.hasSuffix("_copy.ferry_runs") || !rows.isEmpty, "\(runs) records the runs")
            if rows.contains(where: { $0.contains { $0.text?.contains(password) == true } }) {
                leaks.append("run log \(runs)")
            }
        }
        #expect(leaks.isEmpty, "the password was printed or written by: \(leaks.joined(separator: "; "))")
    }

    @Test("the command line `ps` shows of a running ferry has its PostgreSQL URL's password replaced by ***")
    func processTitleHidesPassword() throws {
        let directory = TemporaryDirectory()
        let fifo = directory.file("input.csv")
        #expect(mkfifo(fifo, 0o600) == 0)
        let password = "Pw\(UUID().uuidString.lowercased().prefix(8))Secret"
        var url = try PostgresURL(PostgresTestServer.requireURL())
        url.password = password
        let text =
            "postgresql://\(url.user ?? "ferry"):\(password)@\(url.host ?? "127.0.0.1")\(url.port.map { ":\($0)" } ?? "")/\(url.database ?? "")?schema=ferry_title"
        // The import waits on the FIFO, which nothing writes: the process stays up to be looked at.
        defer { PostgresStoreLoader.dropSchemas(startingWith: "ferry_title") }
        let process = try FerryProcess([
            "import", fifo, "--store", text, "--model", Fixtures.peopleModel, "--entity", "Person",
        ])
        defer { process.kill() }
        Thread.sleep(forTimeInterval: 1)
        let commandLine = try String(
            decoding: Data(contentsOf: URL(fileURLWithPath: "/proc/\(process.pid)/cmdline")), as: UTF8.self)
        #expect(commandLine.contains("--store"), "\(commandLine)")
        #expect(!commandLine.contains(password), "\(commandLine)")
        #expect(commandLine.contains(":***@"), "\(commandLine)")
        process.kill()
        _ = try? process.wait()
    }
}
