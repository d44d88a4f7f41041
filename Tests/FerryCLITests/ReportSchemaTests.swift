import FerryTestSupport
import Foundation
import Testing

/// Every command's `--report` has the one shape docs/report.schema.json describes, checked
/// against the shipped schema with the real binary, for successes, failures and dry runs.
@Suite("JSON reports match docs/report.schema.json (CLI)", .serialized)
struct ReportSchemaTests {
    static let schemaPath = TestPaths.packageRoot.appendingPathComponent("docs/report.schema.json").path
    static let bundle = Fixtures.repository("samples/models/Shop")

    /// Runs ferry with `--report` (appended) and checks the report against the schema and the
    /// fields every report has; returns the parsed report.
    @discardableResult
    static func report(
        _ arguments: [String], in directory: TemporaryDirectory, expectExit: Int32, command: String,
        dryRun: Bool = false
    ) throws -> [String: Any] {
        let path = directory.file("report-\(UUID().uuidString).json")
        let result = try runFerry(arguments + ["--report", path], cwd: directory.path)
        #expect(result.exitCode == expectExit, "\(arguments): \(result)")
        let schema = try JSONSchema(path: schemaPath)
        let violations = try schema.violations(ofFile: path)
        #expect(violations.isEmpty, "\(arguments): \(violations.joined(separator: "\n"))")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        #expect(report["command"] as? String == command)
        #expect(report["exit_code"] as? Int == Int(expectExit))
        #expect(report["dry_run"] as? Bool == dryRun)
        let outcome = expectExit != 0 ? "failed" : dryRun ? "dry_run" : "succeeded"
        #expect(report["outcome"] as? String == outcome, "\(arguments)")
        let started = try #require(report["started_at"] as? String)
        let ended = try #require(report["ended_at"] as? String)
        #expect(started <= ended)
        #expect(!((report["steps"] as? [Any]) ?? []).isEmpty, "\(arguments): no steps")
        return report
    }

    @Test("the validator itself catches what the schema forbids")
    func validatorCatchesViolations() throws {
        let schema = try JSONSchema(path: Self.schemaPath)
        #expect(schema.violations(of: ["schema_version": 1]).contains("$: missing required 'command'"))
        let bad: [String: Any] = [
            "schema_version": 1, "command": "import", "job": "j", "store": "s", "dry_run": false, "started_at": "",
            "ended_at": "2026-01-01T00:00:00.000Z", "outcome": "running", "exit_code": 0, "steps": [["index": 1]],
            "extra": true,
        ]
        let violations = schema.violations(of: bad)
        #expect(violations.contains("$: 'extra' is not in the schema"))
        #expect(violations.contains { $0.hasPrefix("$.started_at: '' does not match") })
        #expect(violations.contains { $0.hasPrefix("$.outcome: 'running' is not one of") })
        #expect(violations.contains("$.steps[0]: missing required 'kind'"))
    }

    @Test("import, export, update, delete: success, failure and dry run")
    func singleStepCommands() throws {
        let directory = TemporaryDirectory()
        try directory.write(
            "people.csv",
            "id,email,name,age\n1,ann@example.com,Ann,34\n2,bob@example.com,Bob,41\n3,cy(at)example.com,Cy,29\n")
        let model = Fixtures.peopleModel
        let base = ["--store", "s.sqlite", "--entity", "Person", "--model", model]
        Self.check(
            try Self.report(
                ["import", "people.csv"] + base + ["--rejects", "r.ndjson"], in: directory, expectExit: 0,
                command: "import"))
        try Self.report(
            ["import", "people.csv"] + base + ["--on-conflict", "keep"], in: directory, expectExit: 2, command: "import"
        )
        try Self.report(
            ["import", "people.csv"] + base + ["--on-conflict", "keep", "--rejects", "r.ndjson", "--dry-run"],
            in: directory, expectExit: 0, command: "import", dryRun: true)
        try Self.report(
            ["export", "--store", "s.sqlite", "--entity", "Person", "--output", "out.csv"], in: directory,
            expectExit: 0, command: "export")
        try Self.report(
            ["export", "--store", "s.sqlite", "--entity", "Person", "--output", "/dev/full", "--format", "csv"],
            in: directory, expectExit: 1, command: "export")
        try Self.report(
            ["export", "--store", "s.sqlite", "--entity", "Person", "--format", "csv", "--dry-run"], in: directory,
            expectExit: 0, command: "export", dryRun: true)
        try Self.report(
            ["update", "--store", "s.sqlite", "--entity", "Person", "--where", "id == 1", "--set", "age=35"],
            in: directory, expectExit: 0, command: "update")
        try Self.report(
            ["update", "--store", "s.sqlite", "--entity", "Person", "--where", "id == 1", "--set", "age=500"],
            in: directory, expectExit: 1, command: "update")
        try Self.report(
            ["delete", "--store", "s.sqlite", "--entity", "Person", "--where", "id == 2", "--dry-run"], in: directory,
            expectExit: 0, command: "delete", dryRun: true)
        try Self.report(
            ["delete", "--store", "s.sqlite", "--entity", "Person", "--where", "id == 2"], in: directory, expectExit: 0,
            command: "delete")
    }

    /// The import step of a single-step report.
    static func check(_ report: [String: Any]) {
        let step = (report["steps"] as? [[String: Any]])?.first
        #expect(step?["kind"] as? String == "import")
        #expect(step?["read"] as? Int == 3)
        #expect(step?["inserted"] as? Int == 2)
        #expect(step?["rejected"] as? Int == 1)
    }

    @Test("run, migrate (also --dry-run), verify and check write the same shape")
    func jobsMigrationsAndChecks() throws {
        let directory = TemporaryDirectory()
        let out = directory.path
        let job = Fixtures.repository("pipelines/import-shop.yml")
        try Self.report(["run", job, "--param", "out=\(out)", "--quiet"], in: directory, expectExit: 0, command: "run")
        try Self.report(
            ["run", job, "--param", "out=\(out)", "--quiet", "--dry-run"], in: directory, expectExit: 0, command: "run",
            dryRun: true)
        let store = directory.file("shop.sqlite")
        let plan = try Self.report(
            ["migrate", store, "--model", Self.bundle, "--to", "2", "--dry-run", "--quiet"], in: directory,
            expectExit: 0, command: "migrate", dryRun: true)
        #expect((plan["steps"] as? [[String: Any]])?.first?["kind"] as? String == "migrate")
        let migrated = try Self.report(
            ["migrate", store, "--model", Self.bundle, "--to", "2", "--quiet"], in: directory, expectExit: 0,
            command: "migrate")
        let migration = (migrated["steps"] as? [[String: Any]])?.first?["migration"] as? [String: Any]
        #expect(migration?["from_version"] as? String == "1")
        #expect(migration?["to_version"] as? String == "2")
        // Without the PhoneNormalizer policy (registered only by samples/custom-policy) 2 → 3 fails.
        try Self.report(
            ["migrate", store, "--model", Self.bundle, "--quiet"], in: directory, expectExit: 1, command: "migrate")
        try Self.report(
            ["verify", store, "--model", Fixtures.repository("samples/models/Shop/v2.yml")], in: directory,
            expectExit: 0, command: "verify")
        try Self.report(
            ["verify", store, "--model", Fixtures.repository("samples/models/Shop/v1.yml")], in: directory,
            expectExit: 3, command: "verify")
        try Self.report(
            ["check", Fixtures.repository("samples/snapshots"), "--model", Self.bundle, "--to", "2", "--quiet"],
            in: directory, expectExit: 0, command: "check")
        try Self.report(
            ["check", Fixtures.repository("samples/snapshots"), "--model", Self.bundle, "--quiet"], in: directory,
            expectExit: 1, command: "check")
        let failing = try Self.report(
            ["run", Fixtures.repository("pipelines/verify-failing.yml"), "--param", "out=\(out)", "--quiet"],
            in: directory, expectExit: 3, command: "run")
        #expect(((failing["steps"] as? [[String: Any]])?.last?["error"] as? String)?.isEmpty == false)
    }
}
