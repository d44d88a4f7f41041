import FerryTestSupport
import Foundation
import Testing

/// The commands as a user (or cron) sees them: help, validation, inference, reports, store and
/// model inspection, and every documented exit code.
@Suite("CLI commands")
struct CommandTests {
    static func importPeople(_ file: String, store: String, _ more: [String] = []) throws -> ProcessResult {
        try runFerry(["import", file, "--store", store, "--model", Fixtures.peopleModel, "--entity", "Person"] + more)
    }

    // MARK: - Help

    @Test(
        "--help works for every command",
        arguments: [
            [], ["run"], ["validate"], ["import"], ["store"], ["store", "info"], ["model"], ["model", "show"],
        ])
    func help(command: [String]) throws {
        let result = try runFerry(command + ["--help"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.contains(
                "USAGE: ferry \((command).joined(separator: " "))".trimmingCharacters(in: .whitespaces)), "\(result)")
        #expect(result.stderr == "")
    }

    @Test("the root help documents the exit codes")
    func exitCodesInHelp() throws {
        let result = try runFerry(["--help"])
        let text = result.stdout.replacingOccurrences(of: "\n", with: " ")
        for code in [
            "0 success", "1 a step failed", "2 rejects over budget", "3 verification failed",
            "64 configuration or usage error",
        ] {
            #expect(text.contains(code), "\(code)")
        }
    }

    // MARK: - validate

    @Test("validate reports every problem of a broken job as file:line:column, exits 64 and creates nothing")
    func validateBroken() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("never.sqlite")
        let job = Fixtures.path("jobs/broken.yml")
        let result = try runFerry(["validate", job, "--param", "store=\(store)"])
        #expect(result.exitCode == 64, "\(result)")
        #expect(
            result.errorLines == [
                "\(job):7:20: error: 'upsert' is not a valid 'on_conflict' (one of error, update, keep, replace)",
                "\(job):8:19: error: 'batch_size' must be at least 1, not 0",
                "\(job):9:5: error: unknown step 'improt'; did you mean 'import'?",
            ])
        #expect(result.stdout == "")
        #expect(fileSize(store) == nil)

        // `run` checks the same way before touching anything.
        let run = try runFerry(["run", job, "--param", "store=\(store)"])
        #expect(run.exitCode == 64)
        #expect(run.stderr == result.stderr)
        #expect(fileSize(store) == nil)
    }

    @Test("validate accepts a good job without creating its store")
    func validateGood() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("never.sqlite")
        let result = try runFerry([
            "validate", Fixtures.peopleJob, "--param", "store=\(store)", "--param", "rejects=r.ndjson",
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout == "\(Fixtures.peopleJob): ok (1 step, model People version 1)\n")
        #expect(fileSize(store) == nil)
    }

    @Test("a job naming an entity the model lacks is a configuration error")
    func validateUnknownEntity() throws {
        let dir = TemporaryDirectory()
        let job = try dir.write(
            "job.yml",
            """
            store: s.sqlite
            model: \(Fixtures.peopleModel)
            steps:
              - import:
                  source: people.csv
                  entity: Persn
            """)
        let result = try runFerry(["validate", job])
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.hasPrefix("\(job):6:15: error: "), "\(result)")
        #expect(result.stderr.contains("Persn"))
        #expect(fileSize(dir.file("s.sqlite")) == nil)
    }

    // MARK: - Usage errors (exit 64)

    @Test("bad command-line values exit 64 with a message and touch nothing")
    func usageErrors() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let people = Fixtures.path("data/people.csv")
        let cases: [(arguments: [String], message: String)] = [
            (
                ["import", people, "--store", store, "--on-conflict", "upsert"],
                "error: --on-conflict must be one of error, update, keep, replace"
            ),
            (
                ["import", dir.file("missing.csv"), "--store", store, "--type", "age=frob"],
                "error: --type needs column=TYPE with a type such as int64, decimal, date; got 'age=frob'"
            ),
            (
                ["import", people, "--store", store, "--max-rejects", "5"],
                "error: --max-rejects needs --rejects FILE: rejected records must go somewhere"
            ),
            (
                ["import", people, "--store", store, "--rejects", "r.ndjson", "--max-rejects", "lots"],
                "error: --max-rejects must be a count or a percentage like 1%, got 'lots'"
            ),
            (
                ["import", dir.file("data.xml"), "--store", store],
                "error: cannot tell the format of '\(dir.file("data.xml"))'; pass --format csv|tsv|json|ndjson"
            ),
            (
                ["import", people, "--store", store, "--model", Fixtures.peopleModel, "--entity", "Nobody"],
                "error: model People has no entity 'Nobody'; pass --entity (entities: Person)"
            ),
            (["run", Fixtures.peopleJob, "--param", "novalue"], "Error: --param needs name=value, got 'novalue'"),
        ]
        for (arguments, message) in cases {
            let result = try runFerry(arguments)
            #expect(result.exitCode == 64, "\(arguments): \(result)")
            #expect(result.errorLines.first == message, "\(arguments)")
            #expect(fileSize(store) == nil, "\(arguments) created the store")
        }
    }

    @Test("an unknown option or missing argument exits 64")
    func parserErrors() throws {
        #expect(try runFerry(["import", "x.csv"]).exitCode == 64)
        #expect(try runFerry(["run"]).exitCode == 64)
        #expect(try runFerry(["run", "job.yml", "--frobnicate"]).exitCode == 64)
        #expect(try runFerry(["frobnicate"]).exitCode == 64)
    }

    // MARK: - import with an inferred model

    @Test("import without --model infers types; another file adds a table")
    func inferredImport() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("inferred.sqlite")
        let items = try runFerry(["import", Fixtures.path("data/items.csv"), "--store", store])
        #expect(items.exitCode == 0, "\(items)")
        #expect(
            items.stdout.hasPrefix(
                "inferred items: sku string, title string, price double, in_stock bool, added date\n"), "\(items)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT name, type FROM pragma_table_info('items')") == [
                ["ferry_pk", "INTEGER"], ["sku", "TEXT"], ["title", "TEXT"], ["price", "REAL"],
                ["in_stock", "INTEGER"], ["added", "TEXT"],
            ])
        #expect(
            try StoreSnapshot.texts(store, "SELECT sku, price, in_stock, added FROM items ORDER BY ferry_pk") == [
                ["A-1", "4.5", "1", "2024-03-01T00:00:00.000Z"],
                ["A-2", "12.0", "0", "2024-03-02T00:00:00.000Z"],
                ["A-3", "7.25", "1", "2024-03-03T00:00:00.000Z"],
            ])

        let people = try runFerry([
            "import", Fixtures.path("data/people.csv"), "--store", store, "--entity", "people", "--quiet",
        ])
        #expect(people.exitCode == 0, "\(people)")
        #expect(people.stdout == "")
        let info = try jsonObject(text: try runFerry(["store", "info", store, "--json"]).stdout)
        #expect(info["model"] as? String == "items")
        #expect(info["version"] as? String == "2")
        let entities = (info["entities"] as? [[String: Any]])?.map { "\($0["name"] ?? "")=\($0["count"] ?? "")" }
        #expect(entities == ["items=3", "people=6"])
        #expect(
            try StoreSnapshot.texts(store, "SELECT name, type FROM pragma_table_info('people')") == [
                ["ferry_pk", "INTEGER"], ["id", "INTEGER"], ["email", "TEXT"], ["name", "TEXT"], ["age", "TEXT"],
            ])

        // Importing the first file again goes into its table, with the store's recorded model.
        let again = try runFerry(["import", Fixtures.path("data/items.csv"), "--store", store, "--quiet"])
        #expect(again.exitCode == 0, "\(again)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM items") == [6])
    }

    @Test("standard input, a JSON document with a pointer and NDJSON import with inferred models")
    func inferredFormats() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let stdin = try runFerry(
            ["import", "-", "--format", "csv", "--entity", "stuff", "--store", store], stdin: "a,b\n1,x\n2,y\n")
        #expect(stdin.exitCode == 0, "\(stdin)")
        #expect(stdin.stdout.hasPrefix("inferred stuff: a int64, b string\n"), "\(stdin)")

        let products = try runFerry([
            "import", Fixtures.repository("samples/data/products.json"), "--json-pointer", "/data/products", "--store",
            store,
        ])
        #expect(products.exitCode == 0, "\(products)")
        #expect(
            products.stdout.hasPrefix(
                "inferred products: sku string, title string, price string, weight_kg double, tags json, uuid uuid\n"),
            "\(products)")

        let rejects = dir.file("orders.rejects.ndjson")
        let orders = try runFerry([
            "import", Fixtures.repository("samples/data/orders.ndjson"), "--store", store, "--rejects", rejects,
            "--max-rejects", "1", "--quiet",
        ])
        #expect(orders.exitCode == 0, "\(orders)")
        let reject = try jsonObject(text: try #require(try lines(ofFile: rejects).first))
        #expect(reject["line"] as? Int == 377)
        #expect(reject["reason"] as? String == "expected a value, found end of input")

        let info = try jsonObject(text: try runFerry(["store", "info", store, "--json"]).stdout)
        let entities = (info["entities"] as? [[String: Any]])?.map { "\($0["name"] ?? "")=\($0["count"] ?? "")" }
        #expect(entities == ["stuff=2", "products=50", "orders=499"])
        #expect(info["version"] as? String == "3")
    }

    @Test("--type overrides an inferred type and --unique adds a constraint")
    func typeOverride() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("typed.sqlite")
        let result = try runFerry([
            "import", Fixtures.path("data/items.csv"), "--store", store, "--type", "price=decimal", "--type",
            "added=string", "--unique", "sku",
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.hasPrefix(
                "inferred items: sku string, title string, price decimal, in_stock bool, added string\n"), "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT price, added FROM items ORDER BY ferry_pk") == [
                ["4.5", "2024-03-01"], ["12", "2024-03-02"], ["7.25", "2024-03-03"],
            ])
        #expect(
            try StoreSnapshot.integers(store, "SELECT count(*) FROM pragma_index_list('items') WHERE \"unique\" = 1")
                == [1])
        // The constraint holds: importing the same file again rejects every record.
        let again = try runFerry(["import", Fixtures.path("data/items.csv"), "--store", store, "--quiet"])
        #expect(again.exitCode == 2, "\(again)")
    }

    // MARK: - dry run and reports

    @Test("--dry-run counts everything and leaves the store unchanged")
    func dryRun() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        #expect(
            try Self.importPeople(BigFilesSmall.write(dir, ids: 1_001...1_020), store: store, ["--quiet"]).exitCode == 0
        )
        let before = try StoreSnapshot.take(store, excluding: [])
        let report = dir.file("dry.json")
        let result = try runFerry([
            "run", Fixtures.peopleJob, "--param", "store=\(store)", "--param", "rejects=\(dir.file("r.ndjson"))",
            "--dry-run", "--report", report,
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.contains("(dry run, rolled back): read 6, inserted 4, updated 0, skipped 0, rejected 2 in "),
            "\(result)")
        #expect(try StoreSnapshot.take(store, excluding: []) == before)
        let json = try jsonObject(file: report)
        #expect(json["dry_run"] as? Bool == true)
        #expect(json["outcome"] as? String == "dry_run")
        let step = (json["steps"] as? [[String: Any]])?.first
        #expect(step?["outcome"] as? String == "dry_run")
        #expect(step?["inserted"] as? Int == 4)
    }

    @Test("--dry-run does not create a missing store")
    func dryRunNewStore() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("new.sqlite")
        let result = try runFerry([
            "run", Fixtures.peopleJob, "--param", "store=\(store)", "--param", "rejects=\(dir.file("r.ndjson"))",
            "--dry-run", "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result)")
        // Not even the rejects file: a dry run touches nothing.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [])
    }

    @Test("ferry import --dry-run neither creates a store nor adds a table")
    func importDryRun() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let items = Fixtures.path("data/items.csv")
        let fresh = try runFerry(["import", items, "--store", store, "--dry-run", "--quiet"])
        #expect(fresh.exitCode == 0, "\(fresh)")
        #expect(fileSize(store) == nil)

        #expect(try runFerry(["import", items, "--store", store, "--quiet"]).exitCode == 0)
        let before = try StoreSnapshot.take(store, excluding: [])
        let report = dir.file("report.json")
        let added = try runFerry([
            "import", Fixtures.path("data/people.csv"), "--store", store, "--dry-run", "--report", report,
        ])
        #expect(added.exitCode == 0, "\(added)")
        #expect(
            added.stdout.contains("(dry run, rolled back): read 6, inserted 6, updated 0, skipped 0, rejected 0 in "),
            "\(added)")
        #expect(try StoreSnapshot.take(store, excluding: []) == before)
        #expect(try jsonObject(file: report)["store"] as? String == store)
        // The writer lock file is the real import's (`ferry import` without --dry-run made it).
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == [
                "report.json", "s.sqlite", "s.sqlite.ferry-lock",
            ])
    }

    @Test("--report writes the documented fields")
    func reportFields() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let rejects = dir.file("r.ndjson")
        let report = dir.file("report.json")
        let result = try runFerry([
            "run", Fixtures.peopleJob, "--param", "store=\(store)", "--param", "rejects=\(rejects)", "--report", report,
            "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result)")
        let json = try jsonObject(file: report)
        #expect(
            Set(json.keys) == [
                "schema_version", "command", "job", "job_file", "store", "model", "model_version", "dry_run",
                "started_at", "ended_at", "outcome", "exit_code", "steps",
            ])
        #expect(json["schema_version"] as? Int == 1)
        #expect(json["job"] as? String == "people")
        #expect(json["job_file"] as? String == Fixtures.peopleJob)
        #expect(json["store"] as? String == store)
        #expect(json["model"] as? String == "People")
        #expect(json["model_version"] as? String == "1")
        #expect(json["outcome"] as? String == "succeeded")
        #expect(json["exit_code"] as? Int == 0)
        let step = try #require((json["steps"] as? [[String: Any]])?.first)
        // The schema only ever grows: these fields are always there for an import step.
        #expect(
            Set(step.keys).isSuperset(of: [
                "index", "kind", "entity", "source", "outcome", "read", "inserted", "updated", "skipped", "rejected",
                "elapsed_seconds", "records_per_second", "rejects_file",
            ]))
        #expect(step["index"] as? Int == 1)
        #expect(step["kind"] as? String == "import")
        #expect(step["entity"] as? String == "Person")
        #expect(step["source"] as? String == Fixtures.path("data/people.csv"))
        #expect(step["rejects_file"] as? String == rejects)
        #expect([step["read"], step["inserted"], step["rejected"]].map { $0 as? Int } == [6, 4, 2])
    }

    @Test("a failed run's report has the error and the exit code")
    func failedReport() throws {
        let dir = TemporaryDirectory()
        let report = dir.file("report.json")
        let result = try runFerry([
            "run", Fixtures.peopleJob, "--param", "store=\(dir.file("s.sqlite"))", "--param",
            "rejects=\(dir.file("r.ndjson"))",
            "--param", "budget=1", "--report", report, "--quiet",
        ])
        #expect(result.exitCode == 2)
        let json = try jsonObject(file: report)
        #expect(json["outcome"] as? String == "failed")
        #expect(json["exit_code"] as? Int == 2)
        let step = (json["steps"] as? [[String: Any]])?.first
        #expect(step?["outcome"] as? String == "failed")
        #expect(
            (step?["error"] as? String)?.hasPrefix(
                "\(Fixtures.path("data/people.csv")):5:23: error: more than 1 record was rejected") == true)
    }

    // MARK: - store info and model show

    @Test("store info prints the model, counts and recent runs, as text and JSON")
    func storeInfo() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        #expect(
            try Self.importPeople(BigFilesSmall.write(dir, ids: 1...1_234), store: store, ["--quiet"]).exitCode == 0)

        let text = try runFerry(["store", "info", store])
        #expect(text.exitCode == 0, "\(text)")
        let textLines = text.stdout.split(separator: "\n").map(String.init)
        #expect(textLines.count == 8, "\(text)")
        #expect(textLines.first == "store:    \(store)")
        #expect(textLines.contains("model:    People version 1"))
        #expect(textLines.contains("hash:     89c70abf37d987f4efac638695f835bc3b3e7478f412f47ace86dd01ff72e05c"))
        #expect(textLines.contains("  Person         1,234"))
        #expect(
            textLines.last?.hasSuffix(
                "ferry import import Person: succeeded, read 1234, inserted 1234, updated 0, skipped 0, rejected 0")
                == true)

        let json = try jsonObject(text: try runFerry(["store", "info", store, "--json"]).stdout)
        #expect(json["model"] as? String == "People")
        #expect(json["version"] as? String == "1")
        #expect(json["model_hash"] as? String == "89c70abf37d987f4efac638695f835bc3b3e7478f412f47ace86dd01ff72e05c")
        #expect(json["format_version"] as? Int == 1)
        let entity = (json["entities"] as? [[String: Any]])?.first
        #expect(entity?["name"] as? String == "Person")
        #expect(entity?["count"] as? Int == 1_234)
        let run = (json["runs"] as? [[String: Any]])?.first
        #expect(run?["outcome"] as? String == "succeeded")
        #expect(run?["inserted"] as? Int == 1_234)
    }

    @Test("store info on a missing file or a plain SQLite database exits 1 with a clear message")
    func storeInfoErrors() throws {
        let dir = TemporaryDirectory()
        let missing = try runFerry(["store", "info", dir.file("nothere.sqlite")])
        #expect(missing.exitCode == 1)
        #expect(missing.errorLines == ["error: store '\(dir.file("nothere.sqlite"))' does not exist"])
        let plain = try dir.write("plain.sqlite", bytes: [])
        let notStore = try runFerry(["store", "info", plain])
        #expect(notStore.exitCode == 1)
        #expect(notStore.errorLines == ["error: '\(plain)' is not a ferry store (it has no ferry metadata)"])
    }

    @Test("model show lists versions, entities and hashes; the store's hash is its version's")
    func modelShow() throws {
        let bundle = Fixtures.path("models/PeopleBundle")
        let text = try runFerry(["model", "show", bundle])
        #expect(text.exitCode == 0, "\(text)")
        #expect(
            text.stdout == """
                model People (current version 2)
                version 1  hash 89c70abf37d987f4efac638695f835bc3b3e7478f412f47ace86dd01ff72e05c
                  Person  hash 6d0abb0030884b34
                    id: int64
                    email: string?
                    name: string?
                    age: int16?
                    unique (id)
                version 2 (current)  hash a6977ddb7e0cc724cea13ebfe22d71498067b8595a6a621572b2240d798af9c0
                  Person  hash 77de202bd2333969
                    id: int64
                    email: string?
                    name: string?
                    age: int16?
                    city: string?
                    unique (id)

                """)
        let json = try jsonObject(text: try runFerry(["model", "show", bundle, "--json"]).stdout)
        #expect(json["name"] as? String == "People")
        #expect(json["current"] as? String == "2")
        let versions = json["versions"] as? [[String: Any]]
        #expect(versions?.map { $0["version"] as? String } == ["1", "2"])
        #expect(versions?.map { $0["current"] as? Bool } == [false, true])

        // A store made with the single-file model of the same shape has version 1's hash.
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        #expect(try Self.importPeople(BigFilesSmall.write(dir, ids: 1...3), store: store, ["--quiet"]).exitCode == 0)
        let info = try jsonObject(text: try runFerry(["store", "info", store, "--json"]).stdout)
        #expect(info["model_hash"] as? String == versions?.first?["hash"] as? String)
    }

    @Test("model show of a missing model names it")
    func modelShowMissing() throws {
        let result = try runFerry(["model", "show", "/nonexistent/Model"])
        #expect(result.exitCode == 64, "\(result)")  // a missing model is a configuration error
        #expect(
            result.errorLines == [
                "/nonexistent/Model: error: no model at '/nonexistent/Model': No such file or directory"
            ])
    }

    // MARK: - run: parameters, exit codes

    @Test("--param overrides a job's params and the environment")
    func paramOverrides() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let copy = try BigFilesSmall.write(dir, ids: 101...107)
        let base = [
            "run", Fixtures.peopleJob, "--param", "store=\(store)", "--param", "rejects=\(dir.file("r.ndjson"))",
            "--quiet",
        ]
        // params: data is ../data/people.csv; the environment wins over it, --param over both.
        let fromEnvironment = try runFerry(base, env: ["data": copy])
        #expect(fromEnvironment.exitCode == 0, "\(fromEnvironment)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Person") == [7])
        let fromParam = try runFerry(
            base + ["--param", "data=\(Fixtures.path("data/people.csv"))"], env: ["data": copy])
        #expect(fromParam.exitCode == 0, "\(fromParam)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Person") == [11])
    }

    @Test("a missing input file: exit 66 (EX_NOINPUT), the path and the cause")
    func missingInput() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let missing = dir.file("nothere.csv")
        let run = try runFerry([
            "run", Fixtures.peopleJob, "--param", "store=\(store)", "--param", "rejects=r.ndjson", "--param",
            "data=\(missing)", "--quiet",
        ])
        #expect(run.exitCode == 66, "\(run)")
        #expect(run.errorLines == ["\(missing): error: cannot open '\(missing)': No such file or directory"])

        let importResult = try runFerry(["import", missing, "--store", store])
        #expect(importResult.exitCode == 66, "\(importResult)")
        #expect(importResult.errorLines == ["\(missing): error: cannot open '\(missing)': No such file or directory"])
    }

    @Test("exit codes: 0 ok, 2 over budget, 64 configuration, 66 missing input")
    func exitCodes() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        func run(_ params: [String]) throws -> Int32 {
            try runFerry(
                [
                    "run", Fixtures.peopleJob, "--param", "store=\(store)", "--param",
                    "rejects=\(dir.file("r.ndjson"))", "--quiet",
                ] + params.flatMap { ["--param", $0] }
            ).exitCode
        }
        #expect(try run(["budget=1"]) == 2)
        #expect(try run([]) == 0)
        #expect(try run(["data=\(dir.file("missing.csv"))"]) == 66)
        #expect(try run(["budget=lots"]) == 64)
        // Running the same job again: every good record is now a duplicate id (on_conflict: error).
        #expect(try run(["budget=2"]) == 2)
    }

    @Test("a store made with another model is refused, naming both versions")
    func modelMismatch() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        #expect(try runFerry(["import", Fixtures.path("data/items.csv"), "--store", store, "--quiet"]).exitCode == 0)
        let result = try Self.importPeople(Fixtures.path("data/people.csv"), store: store)
        #expect(result.exitCode == 64 || result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("is at model items version 1"), "\(result)")
        #expect(result.stderr.contains("model given is People version 1"), "\(result)")
    }
}

/// Small generated people files.
enum BigFilesSmall {
    static func write(_ dir: TemporaryDirectory, ids: ClosedRange<Int>) throws -> String {
        try dir.write("people-\(ids.lowerBound)-\(ids.upperBound).csv", bytes: BigFiles.csv(ids: ids))
    }
}
