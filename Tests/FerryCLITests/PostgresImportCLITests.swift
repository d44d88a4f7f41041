import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `ferry run` and `ferry import` into PostgreSQL stores through the built binary, compared with
/// the same runs into SQLite stores: the same counts, the same rejects files byte for byte, the
/// same stored objects (exports), the same failures.
@Suite(
    "PostgreSQL imports (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresImportCLITests {
    /// A fresh schema's URL on the test server, and a closure dropping it.
    static func freshStore(_ prefix: String) throws -> (url: String, drop: () -> Void) {
        let schema = "ferry_\(prefix)_" + UUID().uuidString.lowercased().replacing("-", with: "")
        let url = try PostgresTestServer.requireURL() + "?schema=" + schema
        return (url, { PostgresStoreCLITests.dropSchema(url, schema) })
    }

    /// The report lines of a run (`step N …: read …`), without timings.
    static func countLines(_ output: String) -> [String] {
        output.split(separator: "\n").map(String.init).filter {
            $0.hasPrefix("step ") || $0.contains("error:") || $0.contains("last reject")
        }.map { line in
            line.replacing(#/ in [0-9.]+ s( \([0-9,]+ records\/s\))?/#, with: "").replacing(#/(sq|pg)\//#, with: "")
        }
    }

    /// The sample job `pipelines/import-shop.yml` with absolute model and data paths, its store
    /// line rewritten as `storeLine` says.
    static func shopJob(storeLine: (String) -> String) throws -> String {
        let root = TestPaths.packageRoot.path
        let line = #"store: {path: "${store:-${out:-../out}/shop.sqlite}", rebuild: true}"#
        let job = try String(contentsOfFile: root + "/pipelines/import-shop.yml", encoding: .utf8)
            .replacing(line, with: storeLine(line))
            .replacing("path: ../samples/models/Shop", with: "path: \(root)/samples/models/Shop")
            .replacing("data: ../samples/data", with: "data: \(root)/samples/data")
        #expect(job.contains("${store"))
        return job
    }

    @Test(
        "the Shop import job (pipelines/import-shop.yml, store given as a parameter) gives on PostgreSQL the counts, rejects and objects it gives on SQLite, and fails the same way when run again"
    )
    func shopJobMatchesSQLite() throws {
        let directory = TemporaryDirectory()
        let (url, drop) = try Self.freshStore("shopjob")
        defer { drop() }
        // The sample job, with its store line taking the store from a parameter (rebuild is a file swap).
        try directory.write("shop.yml", try Self.shopJob { _ in #"store: {path: "${store}"}"# })
        try FileManager.default.createDirectory(atPath: directory.file("sq"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory.file("pg"), withIntermediateDirectories: true)
        for round in 1...2 {
            let sqlite = try runFerry(
                ["run", "shop.yml", "--param", "store=sq/shop.sqlite", "--param", "out=sq"], cwd: directory.path)
            let postgres = try runFerry(
                ["run", "shop.yml", "--param", "store=\(url)", "--param", "out=pg"], cwd: directory.path)
            #expect(postgres.exitCode == sqlite.exitCode, "round \(round): \(postgres.stderr)")
            // The second run fails on both: customers use on_conflict: error, so every id is a duplicate.
            #expect(round == 1 ? sqlite.exitCode == 0 : sqlite.exitCode != 0, "\(sqlite.stderr)")
            let expected = Self.countLines(sqlite.stdout + sqlite.stderr)
            #expect(
                expected.contains {
                    $0.contains("Customer") && $0.contains(round == 1 ? "inserted 197" : "rejected 4")
                }, "\(expected)")
            #expect(Self.countLines(postgres.stdout + postgres.stderr) == expected, "round \(round)")
            for name in ["customers", "orders", "order_items"] where round == 1 || name == "customers" {
                let left = try String(contentsOfFile: directory.file("sq/\(name).rejects.ndjson"), encoding: .utf8)
                let right = try String(contentsOfFile: directory.file("pg/\(name).rejects.ndjson"), encoding: .utf8)
                #expect(!left.isEmpty)
                #expect(right == left, "\(name).rejects.ndjson, round \(round)")
            }
        }
        for entity in ["Customer", "Product", "Order", "OrderItem"] {
            // jsonb keeps JSON normalized (its own key order and spacing): the JSON attributes
            // (Customer.address, Product.tags) are left out.
            let withoutJSON = [
                "Customer": "id,email,name,phone,age,balance,created_at,active,notes",
                "Product": "sku,name,price,weight_kg,uuid",
            ]
            let fields =
                ["--format", "ndjson", "--quiet", "--entity", entity]
                + (withoutJSON[entity].map { ["--fields", $0] } ?? [])
            let expected = try runFerry(["export", "--store", "sq/shop.sqlite"] + fields, cwd: directory.path)
            let actual = try runFerry(["export", "--store", url] + fields, cwd: directory.path)
            #expect(expected.exitCode == 0, "\(expected.stderr)")
            #expect(actual.exitCode == 0, "\(actual.stderr)")
            #expect(!expected.stdout.isEmpty)
            #expect(actual.stdout == expected.stdout, "\(entity)")
        }
    }

    @Test(
        "ferry import with on_conflict error, keep, update and replace, atomic or per batch, rejects the same records and stores the same objects on PostgreSQL as on SQLite"
    )
    func conflictPoliciesMatchSQLite() throws {
        let directory = TemporaryDirectory()
        let (url, drop) = try Self.freshStore("conflicts")
        defer { drop() }
        let model = TestPaths.packageRoot.path + "/samples/models/Shop/v1.yml"
        try directory.write(
            "first.csv",
            """
            id,email,name,age,created_at
            1,ann@example.com,Ann,30,2024-01-02T03:04:05Z
            2,bob@example.com,Bob,41,2024-01-02T03:04:05Z
            2,bob2@example.com,Bob again,42,2024-01-02T03:04:05Z
            3,ann@example.com,Ann's twin,30,2024-01-02T03:04:05Z
            4,not-an-email,Dan,50,2024-01-02T03:04:05Z
            5,eve@example.com,Eve,,2024-01-02T03:04:05.123Z
            """ + "\n")
        try directory.write(
            "second.csv",
            """
            id,email,name,age,created_at
            1,ann@example.com,Ann Updated,31,2024-02-02T03:04:05Z
            2,ann@example.com,Bob takes Ann's email,41,2024-02-02T03:04:05Z
            6,fay@example.com,Fay,22,2024-02-02T03:04:05Z
            5,eve@example.com,,,2024-02-02T03:04:05Z
            """ + "\n")
        try directory.write("missing.csv", "id,name\n7,No email\n")
        let steps: [(file: String, options: [String])] = [
            ("first.csv", ["--on-conflict", "error", "--max-rejects", "10", "--rejects", "R/first.ndjson"]),
            ("second.csv", ["--on-conflict", "keep", "--max-rejects", "10", "--rejects", "R/keep.ndjson"]),
            (
                "second.csv",
                [
                    "--on-conflict", "update", "--max-rejects", "10", "--rejects", "R/update.ndjson", "--atomic",
                    "false", "--batch-size", "2",
                ]
            ),
            ("second.csv", ["--on-conflict", "replace", "--max-rejects", "10", "--rejects", "R/replace.ndjson"]),
            ("missing.csv", ["--max-rejects", "10", "--rejects", "R/missing.ndjson"]),
            ("first.csv", ["--on-conflict", "error", "--max-rejects", "2"]),
        ]
        for folder in ["sq", "pg"] {
            try FileManager.default.createDirectory(atPath: directory.file(folder), withIntermediateDirectories: true)
        }
        for (index, step) in steps.enumerated() {
            var outcomes: [(exitCode: Int32, lines: [String])] = []
            for (store, folder) in [("shop.sqlite", "sq"), (url, "pg")] {
                let options = step.options.map { $0.replacing("R/", with: "\(folder)/") }
                let result = try runFerry(
                    ["import", step.file, "--store", store, "--model", model, "--entity", "Customer"] + options,
                    cwd: directory.path)
                outcomes.append((result.exitCode, Self.countLines(result.stdout + result.stderr)))
            }
            #expect(outcomes[1].exitCode == outcomes[0].exitCode, "step \(index + 1): \(outcomes[1].lines)")
            #expect(outcomes[1].lines == outcomes[0].lines, "step \(index + 1)")
            if let rejects = step.options.first(where: { $0.hasPrefix("R/") }) {
                let left = try String(
                    contentsOfFile: directory.file(rejects.replacing("R/", with: "sq/")), encoding: .utf8)
                let right = try String(
                    contentsOfFile: directory.file(rejects.replacing("R/", with: "pg/")), encoding: .utf8)
                #expect(right == left, "step \(index + 1) rejects")
            }
            let expected = try runFerry(
                ["export", "--store", "shop.sqlite", "--entity", "Customer", "--format", "csv", "--quiet"],
                cwd: directory.path)
            let actual = try runFerry(
                ["export", "--store", url, "--entity", "Customer", "--format", "csv", "--quiet"], cwd: directory.path)
            #expect(actual.stdout == expected.stdout, "step \(index + 1)")
        }
        // The first step's duplicate id and e-mail, its bad e-mail; keep skips; update and replace change Ann.
        let first = try String(contentsOfFile: directory.file("pg/first.ndjson"), encoding: .utf8)
        #expect(first.contains("another Customer already has the same id (uniqueness constraint)"), "\(first)")
        #expect(first.contains("another Customer already has the same email (uniqueness constraint)"), "\(first)")
        let update = try String(contentsOfFile: directory.file("pg/update.ndjson"), encoding: .utf8)
        #expect(update.contains("another Customer already has the same email"), "\(update)")
        let missing = try String(contentsOfFile: directory.file("pg/missing.ndjson"), encoding: .utf8)
        #expect(missing.contains("email is required"), "\(missing)")
        let final = try runFerry(
            ["export", "--store", url, "--entity", "Customer", "--format", "csv", "--quiet", "--fields", "id,name"],
            cwd: directory.path)
        #expect(final.stdout.contains("1,Ann Updated"), "\(final.stdout)")
    }

    @Test(
        "ferry verify on PostgreSQL reports the failed checks of SQLite for the same objects: validation rules (checked in ferry), required values, uniqueness and predicate assertions, with the same offending records"
    )
    func verifyMatchesSQLite() throws {
        let directory = TemporaryDirectory()
        let (url, drop) = try Self.freshStore("verify")
        defer { drop() }
        let model = TestPaths.packageRoot.path + "/samples/models/Shop/v1.yml"
        // Rules broken on purpose (imported without validation): a bad e-mail, an age above 150,
        // a too long phone, an empty name.
        try directory.write(
            "customers.csv",
            """
            id,email,name,phone,age,created_at
            1,ann@example.com,Ann,+64 21 120 8669,30,2024-01-02T03:04:05Z
            2,not-an-email,Bob,,151,2024-01-02T03:04:05Z
            3,cat@example.com,"",+64 21 120 8669 1234567890123456789,20,2024-01-02T03:04:05Z
            4,dan@example.com,Dan,,-1,2024-01-02T03:04:05Z
            """ + "\n")
        for store in ["shop.sqlite", url] {
            let imported = try runFerry(
                [
                    "import", "customers.csv", "--store", store, "--model", model, "--entity", "Customer",
                    "--no-validate",
                ], cwd: directory.path)
            #expect(imported.exitCode == 0, "\(imported.stderr)")
        }
        // Predicate assertions: compiled to PostgreSQL, or ([c], LIKE, MATCHES) evaluated by ferry.
        try directory.write(
            "expect.yml",
            """
            assertions:
              - {entity: Customer, where: "age > 100 OR age < 0", count: 0}
              - {entity: Customer, where: "name ==[c] 'ANN' OR email LIKE '*@example.com'", at_least: 3}
              - {entity: Customer, where: "email MATCHES '[a-z]+@example[.]com'", at_most: 1}
              - {entity: Customer, where: "phone BEGINSWITH '+64'", between: [1, 2]}
            """ + "\n")
        let expected = try runFerry(
            ["verify", "shop.sqlite", "--checks", "all", "--expect", "expect.yml", "--report", "sq.json"],
            cwd: directory.path)
        let actual = try runFerry(
            ["verify", url, "--checks", "all", "--expect", "expect.yml", "--report", "pg.json"], cwd: directory.path)
        #expect(expected.exitCode != 0)
        #expect(actual.exitCode == expected.exitCode, "\(actual.stdout)")
        /// The report's checks by name: outcome, message and offending records (timings left out).
        func checks(_ file: String) throws -> [String: String] {
            let data = try Data(contentsOf: URL(fileURLWithPath: directory.file(file)))
            let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let step = try #require((report["steps"] as? [[String: Any]])?.first)
            let results = try #require((step["verification"] as? [String: Any])?["results"] as? [[String: Any]])
            var byName: [String: String] = [:]
            for result in results {
                let name = result["name"] as? String ?? ""
                let offending = (result["offending"] as? [[String: Any]] ?? []).map {
                    "\($0["ferry_pk"] ?? "") \($0["key_value"] ?? "") \($0["problem"] ?? "")"
                }
                byName[name] = "\(result["outcome"] ?? "") \(result["message"] ?? "") \(offending)"
            }
            return byName
        }
        let sqlite = try checks("sq.json")
        let postgres = try checks("pg.json")
        #expect(sqlite["validation Customer"]?.contains("failed") == true, "\(sqlite["validation Customer"] ?? "")")
        #expect(sqlite["validation Customer"]?.contains("does not match the pattern") == true)
        #expect(sqlite["validation Customer"]?.contains("is above the maximum") == true)
        #expect(sqlite.keys.filter { $0.hasPrefix("assertion ") }.count == 4)
        #expect(sqlite["assertion Customer: age > 100 OR age < 0"]?.hasPrefix("failed") == true)
        #expect(sqlite["assertion Customer: email MATCHES '[a-z]+@example[.]com'"]?.hasPrefix("failed") == true)
        #expect(sqlite["assertion Customer: phone BEGINSWITH '+64'"]?.hasPrefix("passed") == true)
        // The same report but for what PostgreSQL cannot or need not check (skipped there).
        for (name, result) in sqlite where !["integrity_check"].contains(name) && !name.hasPrefix("types ") {
            #expect(postgres[name] == result, "\(name)")
        }
        #expect(postgres["integrity_check"]?.hasPrefix("skipped") == true)
    }

    /// The schemas of the test database whose names start with `prefix` (a store's and its work schemas).
    static func schemas(_ url: String, prefix: String) throws -> [String] {
        let session = try Store.inspectionSession(at: url).session
        return try session.rows(
            "SELECT nspname FROM pg_catalog.pg_namespace WHERE starts_with(nspname, ?) ORDER BY nspname",
            [.text(prefix)]
        ).compactMap(\.first?.text)
    }

    @Test(
        "pipelines/import-shop.yml runs unchanged with --param store=postgresql://…: rebuild: true builds a new schema and swaps it in (SQLite's counts, rejects and objects), a failed rebuild and a dry run leave the store as it was, and no work schema stays"
    )
    func rebuildAndDryRunOnPostgreSQL() throws {
        let directory = TemporaryDirectory()
        let (url, drop) = try Self.freshStore("rebuild")
        defer { drop() }
        let schema = try #require(url.split(separator: "schema=").last.map(String.init))
        // The sample job as it is, but for absolute paths to the model and the data.
        try directory.write("shop.yml", try Self.shopJob { $0 })
        try directory.write("inplace.yml", try Self.shopJob { _ in #"store: {path: "${store}"}"# })
        let sqlite = try runFerry(["run", "shop.yml", "--param", "out=sq"], cwd: directory.path)
        #expect(sqlite.exitCode == 0, "\(sqlite.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.file("sq/shop.sqlite")))
        for round in 1...2 {
            let postgres = try runFerry(
                ["run", "shop.yml", "--param", "store=\(url)", "--param", "out=pg"], cwd: directory.path)
            #expect(postgres.exitCode == 0, "round \(round): \(postgres.stderr)")
            #expect(
                Self.countLines(postgres.stdout + postgres.stderr) == Self.countLines(sqlite.stdout + sqlite.stderr),
                "round \(round)")
            #expect(try Self.schemas(url, prefix: schema) == [schema], "round \(round): no work schema stays")
        }
        for name in ["customers", "orders", "order_items"] {
            let left = try String(contentsOfFile: directory.file("sq/\(name).rejects.ndjson"), encoding: .utf8)
            #expect(
                try String(contentsOfFile: directory.file("pg/\(name).rejects.ndjson"), encoding: .utf8) == left,
                "\(name)")
        }
        let export = ["export", "--entity", "Order", "--format", "ndjson", "--quiet"]
        let expected = try runFerry(export + ["--store", "sq/shop.sqlite"], cwd: directory.path)
        let before = try runFerry(export + ["--store", url], cwd: directory.path)
        #expect(!expected.stdout.isEmpty)
        #expect(before.stdout == expected.stdout)
        let info = try runFerry(["store", "info", url], cwd: directory.path)
        let created = info.stdout.split(separator: "\n").first { $0.hasPrefix("created:") }
        #expect(created != nil, "\(info.stdout)")

        // A rebuild failing in its third step (no orders file) keeps the store that was there.
        try FileManager.default.createDirectory(atPath: directory.file("partial"), withIntermediateDirectories: true)
        for file in ["customers.csv", "products.json"] {
            try FileManager.default.copyItem(
                atPath: TestPaths.packageRoot.path + "/samples/data/" + file, toPath: directory.file("partial/" + file))
        }
        let failed = try runFerry(
            ["run", "shop.yml", "--param", "store=\(url)", "--param", "out=pg", "--param", "data=partial"],
            cwd: directory.path)
        #expect(failed.exitCode != 0)
        #expect(failed.stderr.contains("orders.ndjson"), "\(failed.stderr)")
        #expect(!failed.stderr.contains("ferry_rebuild"), "messages name the user's store: \(failed.stderr)")
        #expect(try runFerry(export + ["--store", url], cwd: directory.path).stdout == expected.stdout)
        #expect(try Self.schemas(url, prefix: schema) == [schema])

        // Dry runs: rebuilding (a scratch schema), in place (one transaction rolled back), and of a
        // store that does not exist (a scratch schema): none changes or leaves anything.
        try directory.write(
            "more.csv", "customer_id,email,full_name,signed_up\n9001,new@example.com,New,2024-01-01T00:00:00Z\n")
        for (job, extra) in [
            ("shop.yml", [String]()), ("inplace.yml", []), ("inplace.yml", ["--param", "data=partial"]),
        ] {
            let dry = try runFerry(
                ["run", job, "--dry-run", "--param", "store=\(url)", "--param", "out=dry"] + extra, cwd: directory.path)
            // In place, every customer is now a duplicate: the dry run fails as a real run would.
            #expect(job == "shop.yml" ? dry.exitCode == 0 : dry.exitCode != 0, "\(job) \(extra): \(dry.stderr)")
            if job == "shop.yml" { #expect(dry.stdout.contains("dry_run (4 steps)"), "\(dry.stdout)") }
            #expect(try runFerry(export + ["--store", url], cwd: directory.path).stdout == expected.stdout, "\(job)")
            #expect(
                try runFerry(["store", "info", url], cwd: directory.path).stdout.split(separator: "\n").first {
                    $0.hasPrefix("created:")
                } == created)
            #expect(try Self.schemas(url, prefix: schema) == [schema], "\(job)")
        }
        let (newURL, dropNew) = try Self.freshStore("drynew")
        defer { dropNew() }
        let newSchema = try #require(newURL.split(separator: "schema=").last.map(String.init))
        let dryNew = try runFerry(
            ["run", "inplace.yml", "--dry-run", "--param", "store=\(newURL)", "--param", "out=dry"], cwd: directory.path
        )
        #expect(dryNew.exitCode == 0, "\(dryNew.stderr)")
        #expect(dryNew.stdout.contains("inserted 197"), "\(dryNew.stdout)")
        #expect(try Self.schemas(newURL, prefix: newSchema).isEmpty, "a dry run creates no store")
    }
}
