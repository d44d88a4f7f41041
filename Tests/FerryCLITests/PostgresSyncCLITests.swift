import FerryTestSupport
import Foundation
import Testing

/// `mode: sync` imports into PostgreSQL stores, run through the binary on the same jobs as into
/// SQLite stores and compared: exit codes, report lines (with the keys inserted, updated and
/// deleted), the JSON reports' counts and sync objects, rejects files and every object left.
@Suite(
    "PostgreSQL sync imports (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresSyncCLITests {
    /// Customers with orders (the delete rule of `orders` is `rule`), stock keyed by two
    /// attributes, and tags whose sync key is not unique in the model.
    static func model(rule: String = "cascade") -> String {
        """
        version: "1"
        entities:
          Customer:
            attributes:
              id: {type: int64, optional: false, unique: true}
              email: {type: string, optional: true, unique: true}
              name: {type: string, optional: false, min_length: 1}
              city: {type: string, optional: true}
              tier: {type: string, optional: true, default: basic}
            relationships:
              orders: {destination: Order, to_many: true, inverse: customer, delete_rule: \(rule)}
          Order:
            attributes:
              number: {type: string, optional: false, unique: true}
              total: {type: decimal, optional: true}
            relationships:
              customer: {destination: Customer, inverse: orders, optional: true}
          Stock:
            attributes:
              sku: {type: string, optional: false}
              store: {type: int32, optional: false}
              qty: {type: int32, optional: true}
            unique: [[sku, store]]
          Tag:
            attributes:
              label: {type: string, optional: true}
              color: {type: string, optional: true}
        """
    }

    /// A job syncing `entity` from `${day}`, with rejects under `${out}`; `extra` adds step keys.
    /// These cases compare the backends' deletions: `max_delete: none` unless `maxDelete` says
    /// otherwise (nil: the default limit).
    static func syncJob(
        entity: String, extra: String = "", maxRejects: String = "unlimited", maxDelete: String? = "none"
    ) -> String {
        let limit = maxDelete.map { ", max_delete: \($0)" } ?? ""
        return """
            store: "${store}"
            model: model.yml
            steps:
              - import: {source: "${day}", entity: \(entity), mode: sync, rejects: "${out}/\(entity).rejects", max_rejects: \(maxRejects)\(limit)\(extra)}

            """
    }

    /// The orders job: orders synced too, their customers resolved by id.
    static let ordersJob = """
        store: "${store}"
        model: model.yml
        steps:
          - import: {source: "${day}", entity: Order, mode: sync, key: number, relationships: {customer: {match: id, missing: reject}}, rejects: "${out}/Order.rejects", max_rejects: unlimited, max_delete: none}

        """

    /// One run of a comparison: a job file, its `${day}` and other arguments.
    struct Run {
        var job: String
        var day: String
        var arguments: [String] = []
    }

    /// What a backend gave for one run: the exit code, the report lines (timings and the
    /// backend's folder left out), the steps of the JSON report and the rejects files.
    struct Outcome: Equatable, CustomStringConvertible {
        var exitCode: Int32
        var lines: [String]
        var steps: String
        var rejects: [String]
        var description: String {
            "exit \(exitCode)\n\(lines.joined(separator: "\n"))\n\(steps)\n\(rejects.joined(separator: "\n"))"
        }
    }

    /// The lines of a run that must agree: step lines, their detail lines and errors, without
    /// timings and the backend's folder.
    static func reportLines(_ output: String) -> [String] {
        output.split(separator: "\n").map(String.init).filter {
            $0.hasPrefix("step ") || $0.hasPrefix("  ") || $0.contains("error:")
        }.map { line in
            line.replacing(#/ in [0-9.]+ s( \([0-9,]+ records\/s\))?/#, with: "").replacing(#/(sq|pg)\//#, with: "")
        }.filter { !$0.contains("→") }
    }

    /// The steps of a JSON report without timings, paths and the verification's details.
    static func reportSteps(_ path: String) throws -> String {
        guard FileManager.default.fileExists(atPath: path) else { return "no report" }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let steps = (report["steps"] as? [[String: Any]]) ?? []
        let kept = steps.map { step -> [String: Any] in
            var step = step
            for key in ["elapsed_seconds", "records_per_second", "rejects_file", "source"] { step[key] = nil }
            if let verification = step["verification"] as? [String: Any] {
                step["verification"] = [
                    "failures": verification["failures"] ?? 0, "passed": verification["passed"] ?? 0,
                ]
            }
            return step
        }
        let text = try JSONSerialization.data(withJSONObject: kept, options: [.sortedKeys])
        return String(decoding: text, as: UTF8.self).replacing("\\/", with: "/").replacing(#/(sq|pg)\//#, with: "")
    }

    /// Every object of the model's entities, exported in a fixed order.
    static func objects(_ store: String, in directory: TemporaryDirectory) throws -> String {
        var all = ""
        let entities = [
            ("Customer", ["id"]), ("Order", ["number"]), ("Stock", ["sku", "store"]), ("Tag", ["label", "color"]),
        ]
        for (entity, sort) in entities {
            let result = try runFerry(
                ["export", "--store", store, "--entity", entity, "--format", "csv", "--quiet"]
                    + sort.flatMap { ["--sort", $0] },
                cwd: directory.path)
            #expect(result.exitCode == 0, "\(entity): \(result.stderr)")
            all += "\(entity):\n\(result.stdout)"
        }
        return all
    }

    /// Runs `runs` in order into a SQLite store under `sq/` and into the PostgreSQL store `url`
    /// (rejects and reports under `pg/`) and checks that every run gives the same outcome and
    /// that the stores hold the same objects after each. Returns the PostgreSQL outcomes.
    @discardableResult
    static func compare(_ directory: TemporaryDirectory, url: String, runs: [Run]) throws -> [Outcome] {
        var outcomes: [String: [Outcome]] = [:]
        var stores: [String: [String]] = [:]
        for (store, folder) in [("sq/store.sqlite", "sq"), (url, "pg")] {
            try FileManager.default.createDirectory(atPath: directory.file(folder), withIntermediateDirectories: true)
            for (index, run) in runs.enumerated() {
                let report = "\(folder)/report\(index).json"
                try? FileManager.default.removeItem(atPath: directory.file(report))
                let result = try runFerry(
                    [
                        "run", run.job, "--param", "store=\(store)", "--param", "out=\(folder)", "--param",
                        "day=\(run.day)",
                    ]
                        + run.arguments + ["--report", report],
                    cwd: directory.path, timeout: .seconds(300))
                let rejects = try ["Customer", "Order", "Stock", "Tag"].map { entity in
                    let path = directory.file("\(folder)/\(entity).rejects")
                    guard FileManager.default.fileExists(atPath: path) else { return "\(entity): none" }
                    defer { try? FileManager.default.removeItem(atPath: path) }
                    return "\(entity): " + (try String(contentsOfFile: path, encoding: .utf8))
                }
                outcomes[folder, default: []].append(
                    Outcome(
                        exitCode: result.exitCode, lines: reportLines(result.stdout + result.stderr),
                        steps: try reportSteps(directory.file(report)), rejects: rejects))
                stores[folder, default: []].append(try objects(store, in: directory))
            }
        }
        let sqlite = try #require(outcomes["sq"])
        let postgres = try #require(outcomes["pg"])
        for index in runs.indices {
            let name = "run \(index + 1) (\(runs[index].job) \(runs[index].day))"
            #expect(
                postgres[index] == sqlite[index], "\(name)\nSQLite:\n\(sqlite[index])\nPostgreSQL:\n\(postgres[index])")
            #expect(stores["pg"]?[index] == stores["sq"]?[index], "\(name): objects")
        }
        return postgres
    }

    /// A directory with the model, the jobs and the first day's customers and orders.
    static func prepared(rule: String = "cascade") throws -> TemporaryDirectory {
        let directory = TemporaryDirectory("ferry-pg-sync")
        try directory.write("model.yml", model(rule: rule))
        try directory.write("customers.yml", syncJob(entity: "Customer"))
        try directory.write("orders.yml", ordersJob)
        try directory.write(
            "day1.csv",
            """
            id,email,name,city
            1,ann@x,Ann,Oslo
            2,bob@x,Bob,Rome
            3,cy@x,Cy,Lima
            5,eve@x,Eve,Bern

            """)
        try directory.write("orders1.csv", "number,total,customer\nA1,10.50,1\nA2,3,3\nA3,7.25,5\n")
        return directory
    }

    static let loadRuns = [Run(job: "customers.yml", day: "day1.csv"), Run(job: "orders.yml", day: "orders1.csv")]

    @Test(
        "a sync inserts, updates, leaves unchanged and deletes with cascade as on SQLite; a second run changes nothing; repeated keys, null keys, bad values and rejected records' rows agree"
    )
    func syncAgreesWithSQLite() throws {
        let directory = try Self.prepared()
        let (url, drop) = try PostgresImportCLITests.freshStore("sync")
        defer { drop() }
        // 1 unchanged, 2 updated, 3 and 5 gone (3's order cascades), 4 and 6 new; 4 again is a
        // repeat; 7 breaks a rule (its key is readable: nothing to keep), then comes again and
        // is inserted; 5 breaks a rule first, so 5's row stays and the 5 after it is a repeat;
        // 8 takes Ann's e-mail (rejected, uniqueness); a key that is not a number is unkeyed.
        try directory.write(
            "day2.csv",
            """
            id,email,name,city
            1,ann@x,Ann,Oslo
            2,bob@x,Bob,Paris
            4,dee@x,Dee,Kyiv
            4,dup@x,Dup,Kyiv
            7,gus@x,,Nowhere
            7,gus@x,Gus,Riga
            5,eve@x,,Bern
            5,eve@x,Eve,Basel
            8,ann@x,Hal,Oslo
            6,fay@x,Fay,Lima

            """)
        try directory.write("day2b.csv", "id,email,name,city\n1,ann@x,Ann,Oslo\n2,bob@x,Bob,Paris\nx,bad@x,Bad,Oslo\n")
        try directory.write("delete.yml", Self.syncJob(entity: "Customer", extra: ", unkeyed_rejects: delete"))
        let outcomes = try Self.compare(
            directory, url: url,
            runs: Self.loadRuns + [
                Run(job: "customers.yml", day: "day2.csv"),
                Run(job: "customers.yml", day: "day2.csv"),
                Run(job: "customers.yml", day: "day2b.csv"),
                Run(job: "delete.yml", day: "day2b.csv"),
            ])
        #expect(outcomes[2].exitCode == 0, "\(outcomes[2])")
        #expect(
            outcomes[2].lines.first?.contains(
                "read 10, inserted 3, updated 1, unchanged 1, deleted 1, skipped 0, rejected 5") == true,
            "\(outcomes[2])")
        #expect(outcomes[2].lines.contains("; cascade 1 Order") || outcomes[2].lines[0].hasSuffix("cascade 1 Order"))
        #expect(outcomes[2].rejects[0].contains("an earlier record of the source has the same key (id=4)"))
        #expect(outcomes[2].rejects[0].contains("an earlier record of the source has the same key (id=5)"))
        #expect(outcomes[2].rejects[0].contains("another Customer already has the same email (uniqueness constraint)"))
        #expect(
            outcomes[3].lines.first?.contains(
                "read 10, inserted 0, updated 0, unchanged 4, deleted 0, skipped 0, rejected 6")
                == true, "\(outcomes[3])")
        #expect(outcomes[4].lines.contains { $0.contains("deleted nothing: 1 rejected record has no readable key") })
        #expect(outcomes[5].lines.first?.contains("unchanged 2, deleted 4") == true, "\(outcomes[5])")
    }

    @Test(
        "a dry run reports what a sync would do and changes nothing; an empty source is refused unless allowed; the reject budget fails the step at the same record"
    )
    func dryRunEmptyAndBudget() throws {
        let directory = try Self.prepared()
        let (url, drop) = try PostgresImportCLITests.freshStore("sync")
        defer { drop() }
        try directory.write("day2.csv", "id,email,name,city\n1,ann@x,Ann,Oslo\n2,bob@x,Bob,Paris\n4,dee@x,Dee,Kyiv\n")
        try directory.write("empty.csv", "id,email,name,city\n")
        try directory.write(
            "bad.csv", "id,email,name,city\n1,ann@x,Ann,Oslo\n2,bob@x,,Paris\n4,dee@x,Dee,Kyiv\n4,dee@x,Dee,Kyiv\n")
        try directory.write("budget.yml", Self.syncJob(entity: "Customer", maxRejects: "1"))
        let outcomes = try Self.compare(
            directory, url: url,
            runs: Self.loadRuns + [
                Run(job: "customers.yml", day: "day2.csv", arguments: ["--dry-run"]),
                Run(job: "customers.yml", day: "empty.csv"),
                Run(job: "customers.yml", day: "empty.csv", arguments: ["--dry-run", "--allow-empty-sync"]),
                Run(job: "budget.yml", day: "bad.csv"),
                Run(job: "customers.yml", day: "empty.csv", arguments: ["--allow-empty-sync"]),
            ])
        #expect(outcomes[2].lines.contains("  would insert 1: id=4"), "\(outcomes[2])")
        #expect(outcomes[2].lines.contains("  would update 1: id=2"), "\(outcomes[2])")
        #expect(outcomes[2].lines.contains("  would delete 2: id=3, id=5"), "\(outcomes[2])")
        #expect(outcomes[3].exitCode == 1)
        #expect(
            outcomes[3].lines.contains {
                $0.contains("the source has no records: a sync would delete all 4 Customer rows")
            })
        #expect(outcomes[5].exitCode != 0)
        #expect(outcomes[5].lines.contains { $0.contains("more than 1 record was rejected") }, "\(outcomes[5])")
        #expect(outcomes[6].exitCode == 0)
        #expect(outcomes[6].lines.first?.contains("deleted 4") == true, "\(outcomes[6])")
    }

    @Test(
        "delete rules: deny fails the step and leaves every change undone, nullify clears the orders' customer, as on SQLite"
    )
    func deleteRules() throws {
        for rule in ["deny", "nullify", "cascade"] {
            let directory = try Self.prepared(rule: rule)
            let (url, drop) = try PostgresImportCLITests.freshStore("sync")
            defer { drop() }
            try directory.write("day2.csv", "id,email,name,city\n1,ann@x,Ann,Oslo\n2,bob@x,Bob,Paris\n")
            let outcomes = try Self.compare(
                directory, url: url, runs: Self.loadRuns + [Run(job: "customers.yml", day: "day2.csv")])
            if rule == "deny" {
                #expect(outcomes[2].exitCode == 1, "\(outcomes[2])")
                #expect(
                    outcomes[2].lines.contains {
                        $0.contains(
                            "relationship Customer.orders has delete rule deny and 2 related Order objects refer to them"
                        )
                    }, "\(outcomes[2])")
            } else {
                #expect(outcomes[2].exitCode == 0, "\(outcomes[2])")
            }
        }
    }

    @Test(
        "keys of two attributes, a key that is not unique in the model, orders synced with references to synced customers, and a key field the source lacks, as on SQLite"
    )
    func compositeKeysAndReferences() throws {
        let directory = try Self.prepared()
        let (url, drop) = try PostgresImportCLITests.freshStore("sync")
        defer { drop() }
        try directory.write("stock.yml", Self.syncJob(entity: "Stock", extra: ", key: [sku, store]"))
        try directory.write("tags.yml", Self.syncJob(entity: "Tag", extra: ", key: label"))
        try directory.write("stock1.csv", "sku,store,qty\nA,1,5\nA,2,6\nB,1,7\nC,3,\n")
        try directory.write("stock2.csv", "sku,store,qty\nA,1,5\nA,2,9\nA,2,10\nB,2,1\nC,x,3\n,4,4\nD,4,4\n")
        try directory.write("tags1.csv", "label,color\nred,r\nblue,b\ngreen,g\n")
        try directory.write("tags2.csv", "label,color\nred,r\nblue,navy\nblue,sky\n,none\nteal,t\n")
        try directory.write("orders2.csv", "number,total,customer\nA1,10.5,1\nA3,8,5\nA4,1,9\nA5,2,2\nA5,3,2\n")
        try directory.write("nokey.csv", "email,name\nann@x,Ann\n")
        let outcomes = try Self.compare(
            directory, url: url,
            runs: Self.loadRuns + [
                Run(job: "stock.yml", day: "stock1.csv"),
                Run(job: "stock.yml", day: "stock2.csv"),
                Run(job: "stock.yml", day: "stock2.csv"),
                Run(job: "tags.yml", day: "tags1.csv"),
                Run(job: "tags.yml", day: "tags2.csv"),
                Run(job: "orders.yml", day: "orders2.csv"),
                Run(job: "orders.yml", day: "orders2.csv"),
                Run(job: "customers.yml", day: "nokey.csv"),
            ])
        #expect(
            outcomes[3].rejects[2].contains("an earlier record of the source has the same key ((sku=A, store=2))"),
            "\(outcomes[3])")
        #expect(outcomes[4].lines.first?.contains("updated 0") == true, "\(outcomes[4])")
        #expect(outcomes[7].rejects[1].contains("customer: no Customer with id = 9"), "\(outcomes[7])")
        #expect(outcomes[9].exitCode != 0)
        #expect(outcomes[9].lines.contains { $0.contains("which is part of the sync key (id)") }, "\(outcomes[9])")
        // A key that is not unique in the model is refused before any work, on both (issue 23).
        for index in [5, 6] {
            #expect(outcomes[index].exitCode == 64, "\(outcomes[index])")
            #expect(
                outcomes[index].lines.contains { $0.contains("[label] is not unique in the model") },
                "\(outcomes[index])")
        }
    }

    @Test(
        "issue 23's guards as on SQLite: a truncated file over max_delete is rolled back (exit 3), a key that is not unique is refused, max_delete allows"
    )
    func deletionGuards() throws {
        let directory = try Self.prepared()
        let (url, drop) = try PostgresImportCLITests.freshStore("syncguard")
        defer { drop() }
        try directory.write("cut.csv", "id,email,name,city\n1,ann@x,Ann,Paris\n")
        try directory.write("customers.yml", Self.syncJob(entity: "Customer", maxDelete: nil))
        try directory.write("allowed.yml", Self.syncJob(entity: "Customer", maxDelete: "75%"))
        try directory.write("byname.yml", Self.syncJob(entity: "Customer", extra: ", key: name", maxDelete: nil))
        let outcomes = try Self.compare(
            directory, url: url,
            runs: [
                Run(job: "customers.yml", day: "day1.csv"),
                Run(job: "customers.yml", day: "cut.csv"),
                Run(job: "byname.yml", day: "day1.csv"),
                Run(job: "allowed.yml", day: "cut.csv"),
            ])
        #expect(outcomes[1].exitCode == 3, "\(outcomes[1])")
        #expect(
            outcomes[1].lines.contains {
                $0.contains(
                    "a sync would delete 3 of 4 Customer rows (75.0%), more than max_delete allows (10% of 4, at least 1: 1 row); the step was rolled back"
                )
            }, "\(outcomes[1])")
        #expect(outcomes[2].exitCode == 64, "\(outcomes[2])")
        #expect(outcomes[2].lines.contains { $0.contains("[name] is not unique in the model") }, "\(outcomes[2])")
        #expect(outcomes[3].exitCode == 0, "\(outcomes[3])")
    }

    @Test(
        "JSON records: on_conflict update leaves absent attributes alone, replace resets them to their defaults, a record without its key is rejected, as on SQLite"
    )
    func jsonUpdateAndReplace() throws {
        let directory = try Self.prepared()
        let (url, drop) = try PostgresImportCLITests.freshStore("sync")
        defer { drop() }
        try directory.write("update.yml", Self.syncJob(entity: "Customer", extra: ", format: ndjson"))
        try directory.write(
            "replace.yml", Self.syncJob(entity: "Customer", extra: ", format: ndjson, on_conflict: replace"))
        try directory.write(
            "day1.ndjson",
            """
            {"id": 1, "email": "ann@x", "name": "Ann", "city": "Oslo", "tier": "gold"}
            {"id": 2, "email": "bob@x", "name": "Bob", "city": "Rome"}
            {"id": 3, "name": "Cy", "city": "Lima", "tier": "silver"}

            """)
        try directory.write(
            "day2.ndjson",
            """
            {"id": 1, "name": "Ann"}
            {"id": 2, "email": "bob@x", "name": "Bob", "city": "Rome", "tier": "basic"}
            {"name": "Nobody"}
            {"id": 3, "name": "Cy", "city": null, "tier": "silver"}
            {"id": 4, "name": "Dee"}

            """)
        try Self.compare(
            directory, url: url,
            runs: [
                Run(job: "update.yml", day: "day1.ndjson"),
                Run(job: "update.yml", day: "day2.ndjson"),
                Run(job: "update.yml", day: "day2.ndjson"),
                Run(job: "replace.yml", day: "day2.ndjson"),
                Run(job: "replace.yml", day: "day2.ndjson"),
                Run(job: "update.yml", day: "day1.ndjson"),
            ])
    }

    @Test(
        "many records over several batches: repeated keys across batch boundaries, then a second run that changes nothing"
    )
    func manyRecordsAcrossBatches() throws {
        let directory = try Self.prepared()
        let (url, drop) = try PostgresImportCLITests.freshStore("sync")
        defer { drop() }
        var first = "id,email,name,city\n"
        var second = "id,email,name,city\n"
        for id in 1...23_000 {
            first += "\(id),e\(id)@x,N\(id),C\(id % 7)\n"
            // Every third one changes city, every 1000th is gone, and some come twice, 9,990
            // records apart (across the batch of 10,000).
            guard id % 1000 != 0 else { continue }
            // A rejected record keeps its row and makes the record with its key after it a
            // repeat, in the same batch and two batches later.
            if id == 5 || id == 100 { second += "\(id == 5 ? 5 : 20_001),e@x,,Bad\n" }
            second += "\(id),e\(id)@x,N\(id),C\(id % 3 == 0 ? 9 : id % 7)\n"
            if id % 2500 == 17 { second += "\(id - 9_990 > 0 ? id - 9_990 : id),dup@x,Dup,X\n" }
        }
        second += "30000,new@x,New,Y\n"
        // 9,999 records and a rejected record's claim fill a batch of 10,000 exactly; the record
        // after it repeats the claimed key.
        var third = "id,email,name,city\n"
        for id in 1...9_999 { third += "\(id),e\(id)@x,N\(id),Z\n" }
        third += "1,e1@x,,Bad\n1,e1@x,N1,Again\n30001,f@x,F,Y\n"
        try directory.write("big1.csv", first)
        try directory.write("big2.csv", second)
        try directory.write("big3.csv", third)
        let outcomes = try Self.compare(
            directory, url: url,
            runs: [
                Run(job: "customers.yml", day: "big1.csv"),
                Run(job: "customers.yml", day: "big2.csv"),
                Run(job: "customers.yml", day: "big2.csv"),
                Run(job: "customers.yml", day: "big3.csv"),
            ])
        #expect(outcomes[1].lines.first?.contains("deleted 23,") == true, "\(outcomes[1])")
        #expect(outcomes[1].rejects[0].contains("same key (id=20001)"), "\(outcomes[1])")
        #expect(outcomes[2].lines.first?.contains("inserted 0, updated 0, unchanged") == true, "\(outcomes[2])")
        #expect(outcomes[3].rejects[0].contains("same key (id=1)"), "\(outcomes[3])")
        #expect(
            outcomes[3].lines.first?.contains(
                "read 10,002, inserted 10, updated 9,990, unchanged 0, deleted 12,988, skipped 0, rejected 2") == true,
            "\(outcomes[3])")
    }

    @Test(
        "ferry import --mode sync (no job) into PostgreSQL prints SQLite's lines and leaves SQLite's objects, with --key, --dry-run and --allow-empty-sync"
    )
    func importCommand() throws {
        let directory = try Self.prepared()
        let (url, drop) = try PostgresImportCLITests.freshStore("sync")
        defer { drop() }
        try directory.write("day2.csv", "sku,store,qty\nA,1,5\nA,2,9\nB,1,7\n")
        try directory.write("stock.csv", "sku,store,qty\nA,1,5\nA,2,6\nC,3,1\n")
        try directory.write("none.csv", "sku,store,qty\n")
        let runs: [[String]] = [
            ["stock.csv", "--model", "model.yml"],
            ["day2.csv", "--dry-run"],
            ["day2.csv", "--rejects", "OUT/r.ndjson", "--max-rejects", "5"],
            ["day2.csv"],
            ["none.csv"],
            ["none.csv", "--allow-empty-sync"],
        ]
        var outputs: [String: [String]] = [:]
        for (store, folder) in [("sq/store.sqlite", "sq"), (url, "pg")] {
            try FileManager.default.createDirectory(atPath: directory.file(folder), withIntermediateDirectories: true)
            for arguments in runs {
                let result = try runFerry(
                    ["import"] + arguments.map { $0.replacing("OUT", with: folder) }
                        + ["--store", store, "--entity", "Stock", "--mode", "sync", "--key", "sku,store"],
                    cwd: directory.path)
                outputs[folder, default: []].append(
                    "exit \(result.exitCode)\n"
                        + Self.reportLines(result.stdout + result.stderr).joined(separator: "\n")
                        + "\n" + (try Self.objects(store, in: directory)))
            }
        }
        let sqlite = try #require(outputs["sq"])
        let postgres = try #require(outputs["pg"])
        for index in runs.indices {
            #expect(postgres[index] == sqlite[index], "\(runs[index])")
        }
        #expect(postgres[1].contains("  would update 1: (sku=A, store=2)"), "\(postgres[1])")
        #expect(postgres[2].contains("inserted 1, updated 1, unchanged 1, deleted 1"), "\(postgres[2])")
        #expect(postgres[3].contains("unchanged 3, deleted 0"), "\(postgres[3])")
        #expect(postgres[4].hasPrefix("exit 1"), "\(postgres[4])")
        #expect(postgres[5].contains("deleted 3"), "\(postgres[5])")
    }

    @Test(
        "nested: with mode: sync agrees with SQLite (report, JSON report, rejects, objects): unchanged on a second run, a customer gone deletes its orders, repeated and null keys, rejects inside nested orders, a dry run, replace"
    )
    func nestedSync() throws {
        let directory = try Self.prepared()
        let (url, drop) = try PostgresImportCLITests.freshStore("sync")
        defer { drop() }
        try directory.write("nested.yml", Self.syncJob(entity: "Customer", extra: ", format: ndjson, nested: true"))
        try directory.write(
            "day1.ndjson",
            """
            {"id": 1, "email": "ann@x", "name": "Ann", "orders": [{"number": "A1", "total": "10.50"}, {"number": "A2"}]}
            {"id": 2, "name": "Bob", "orders": []}
            {"id": 3, "name": "Cy", "orders": [{"number": "C1", "total": "lots"}]}
            {"id": 2, "name": "Bob twice"}
            {"id": 5, "name": "Eve", "city": "Bern", "orders": [{"number": "E1", "total": "3"}]}
            {"id": 6, "name": "", "orders": [{"number": "F1"}]}
            {"id": null, "name": "Nul"}

            """)
        try directory.write(
            "day2.ndjson",
            """
            {"id": 1, "email": "ann@x", "name": "Ann B", "orders": [{"number": "A1", "total": "10.50"}]}
            {"id": 2, "name": "Bob", "orders": []}
            {"id": 3, "name": "Cy", "orders": [{"number": "C1", "total": "1"}]}

            """)
        // Bob's order is bad: his record is rejected, and he stays (his key could be read).
        try directory.write(
            "day4.ndjson",
            """
            {"id": 1, "name": "Ann B", "orders": [{"number": "A1", "total": "10.50"}]}
            {"id": 2, "name": "Bob", "orders": [{"number": "B1", "total": "lots"}]}
            {"id": 3, "name": "Cy", "orders": [{"number": "C1", "total": "1"}]}

            """)
        // Without Ann's email: `update` leaves it, `replace` clears it.
        try directory.write(
            "day3.ndjson",
            """
            {"id": 1, "name": "Ann B", "orders": [{"number": "A1", "total": "10.50"}]}
            {"id": 2, "name": "Bob", "orders": []}
            {"id": 3, "name": "Cy", "orders": [{"number": "C1", "total": "1"}]}

            """)
        try directory.write(
            "replace.yml",
            Self.syncJob(entity: "Customer", extra: ", format: ndjson, nested: true, on_conflict: replace"))
        let outcomes = try Self.compare(
            directory, url: url,
            runs: [
                Run(job: "nested.yml", day: "day1.ndjson"), Run(job: "nested.yml", day: "day1.ndjson"),
                Run(job: "nested.yml", day: "day2.ndjson", arguments: ["--dry-run"]),
                Run(job: "nested.yml", day: "day2.ndjson"), Run(job: "nested.yml", day: "day2.ndjson"),
                Run(job: "nested.yml", day: "day3.ndjson"), Run(job: "replace.yml", day: "day3.ndjson"),
                Run(job: "replace.yml", day: "day3.ndjson"), Run(job: "nested.yml", day: "day4.ndjson"),
            ])
        #expect(outcomes[0].exitCode == 0, "\(outcomes[0])")
        #expect(outcomes[0].rejects[0].contains("same key (id=2)"), "\(outcomes[0])")
        #expect(
            outcomes[1].lines.first?.contains("inserted 0, updated 0, unchanged 3, deleted 0") == true, "\(outcomes[1])"
        )
        #expect(
            outcomes[3].lines.first?.contains("inserted 1, updated 1, unchanged 1, deleted 1") == true, "\(outcomes[3])"
        )
        #expect(
            outcomes[4].lines.first?.contains("inserted 0, updated 0, unchanged 3, deleted 0") == true, "\(outcomes[4])"
        )
        for (index, counts) in [
            (5, "inserted 0, updated 0, unchanged 3, deleted 0"), (6, "inserted 0, updated 1, unchanged 2, deleted 0"),
            (7, "inserted 0, updated 0, unchanged 3, deleted 0"), (8, "unchanged 2, deleted 0, skipped 0, rejected 1"),
        ] {
            #expect(outcomes[index].lines.first?.contains(counts) == true, "\(outcomes[index])")
        }
    }
}
