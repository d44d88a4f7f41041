import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `ferry update`, `ferry delete` and a job's `update` and `delete` steps on a PostgreSQL store
/// through the built binary, compared with the same commands on a SQLite store holding the same
/// objects: the same reports, exit codes, failures and stored objects (exports).
@Suite(
    "PostgreSQL updates and deletes (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresMutationCLITests {
    /// Output without timings (`in 0.02 s`) and with the store named the same way.
    static func normalized(_ output: String, store: String, cwd: String) -> String {
        output.replacing(cwd + "/", with: "").replacing(store, with: "STORE").replacing(#/ in [0-9.]+ s/#, with: "")
    }

    /// Every entity exported as NDJSON, without the JSON attributes (`jsonb` normalizes them).
    static func exports(_ store: String, cwd: String) throws -> [String] {
        let withoutJSON = [
            "Customer": "id,email,name,phone,age,balance,created_at,active,notes",
            "Product": "sku,name,price,weight_kg,uuid",
        ]
        return try ["Customer", "Product", "Order", "OrderItem"].map { entity in
            let fields = withoutJSON[entity].map { ["--fields", $0] } ?? []
            let result = try runFerry(
                ["export", "--store", store, "--entity", entity, "--format", "ndjson", "--quiet"] + fields, cwd: cwd)
            #expect(result.exitCode == 0, "\(result.stderr)")
            return result.stdout
        }
    }

    @Test(
        "ferry update, ferry delete and job update/delete steps give SQLite's reports, failures and objects on PostgreSQL"
    )
    func mutationsMatchSQLite() throws {
        let directory = TemporaryDirectory()
        let (url, drop) = try PostgresImportCLITests.freshStore("mutate")
        defer { drop() }
        try directory.write("shop.yml", try PostgresImportCLITests.shopJob { _ in #"store: {path: "${store}"}"# })
        try FileManager.default.createDirectory(atPath: directory.file("sq"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory.file("pg"), withIntermediateDirectories: true)
        let sqlite = "sq/shop.sqlite"
        for (store, out) in [(sqlite, "sq"), (url, "pg")] {
            let filled = try runFerry(
                ["run", "shop.yml", "--param", "store=\(store)", "--param", "out=\(out)"], cwd: directory.path)
            #expect(filled.exitCode == 0, "\(filled.stderr)")
        }
        try directory.write(
            "mutate.yml",
            """
            job: mutate
            model: {path: \(TestPaths.packageRoot.path)/samples/models/Shop, version: "1"}
            store: {path: "${store}"}
            steps:
              - update:
                  entity: Order
                  where: status ==[c] "PENDING" AND customer.age > 40
                  set: {status: shipped}
              - update:
                  entity: Customer
                  where: age > 20
                  set: {age: "=age - 1", notes: "=lowercase(name)"}
              - delete:
                  entity: Order
                  where: status == "cancelled" OR items.@sum.quantity > 40
              - delete:
                  entity: OrderItem
                  where: order == nil OR quantity > 9000
                  delete_rules: ignore
            """)
        // Each command, and whether it succeeds (on both backends).
        let commands: [(arguments: [String], succeeds: Bool)] = [
            // Selected by the server, and by ferry ([c], LIKE, MATCHES) through relationships.
            (
                ["update", "--entity", "Customer", "--where", "ANY orders.total > 500", "--set", "notes=big spender"],
                true
            ),
            (
                [
                    "update", "--entity", "Customer", "--where", "name LIKE[cd] '*e*' AND orders.@count == 0", "--set",
                    "active=false",
                ], true
            ),
            (
                [
                    "update", "--entity", "Customer", "--where", "email MATCHES '.*@example\\\\.(com|org)'", "--set",
                    "balance=12.50", "--dry-run",
                ], true
            ),
            // Expressions, evaluated by ferry per object (a to-one key path too), with a constant.
            (
                [
                    "update", "--entity", "Customer", "--where", "age != nil", "--set", "age==age + 1", "--set",
                    "notes==uppercase(coalesce(notes, name)) + ' #' + string(id)", "--set", "active=true",
                ], true
            ),
            (
                [
                    "update", "--entity", "Order", "--where", "total > 100", "--set",
                    "status==if(customer.active, 'paid', 'pending')",
                ], true
            ),
            (["update", "--entity", "Customer", "--where", "age < 40", "--set", "age==age * 2", "--dry-run"], true),
            // A broken rule, a value ferry cannot compute: the same message, nothing changed.
            (["update", "--entity", "Customer", "--where", "TRUEPREDICATE", "--set", "age==age * 10"], false),
            (["update", "--entity", "Customer", "--where", "TRUEPREDICATE", "--set", "age==age / (age - age)"], false),
            (["update", "--entity", "Customer", "--where", "TRUEPREDICATE", "--set", "email==name"], false),
            // A uniqueness conflict and a broken rule fail with the same message, changing nothing.
            (["update", "--entity", "Customer", "--where", "age > 30", "--set", "email=same@example.com"], false),
            (["update", "--entity", "Order", "--where", "TRUEPREDICATE", "--set", "status=lost"], false),
            // Delete rules: deny (customers with orders), cascade (orders to their items).
            (["delete", "--entity", "Customer", "--where", "name BEGINSWITH[c] 'a'"], false),
            (["delete", "--entity", "Customer", "--where", "orders.@count == 0 AND name != nil"], true),
            (
                [
                    "delete", "--entity", "Order", "--where", "SUBQUERY(items, $i, $i.quantity >= 3).@count > 0",
                    "--dry-run",
                ], true
            ),
            (["delete", "--entity", "Order", "--where", "customer.name CONTAINS[c] 'son' OR total < 20"], true),
            (["delete", "--entity", "Product", "--where", "TRUEPREDICATE", "--ignore-delete-rules"], false),
            (["run", "mutate.yml"], true),
        ]
        for (command, succeeds) in commands {
            var results: [(exitCode: Int32, output: String)] = []
            for store in [sqlite, url] {
                let arguments =
                    command[0] == "run" ? command + ["--param", "store=\(store)"] : command + ["--store", store]
                let result = try runFerry(arguments, cwd: directory.path)
                results.append(
                    (result.exitCode, Self.normalized(result.stdout + result.stderr, store: store, cwd: directory.path))
                )
            }
            #expect((results[0].exitCode == 0) == succeeds, "\(command): \(results[0].output)")
            #expect(results[1].exitCode == results[0].exitCode, "\(command): \(results[1].output)")
            #expect(results[1].output == results[0].output, "\(command)")
            #expect(
                try Self.exports(url, cwd: directory.path) == Self.exports(sqlite, cwd: directory.path),
                "after \(command)")
        }
        // Every update and delete that ran (not the dry runs, failures included) is in the run
        // log, as on SQLite: `ferry store info` lists the same runs on both backends.
        let sqliteRuns = try Self.runLog(sqlite, cwd: directory.path)
        #expect(try Self.runLog(url, cwd: directory.path) == sqliteRuns)
        let mutations = sqliteRuns.filter { $0.hasPrefix("update ") || $0.hasPrefix("delete ") }
        let succeeded = commands.filter {
            $0.succeeds && !$0.arguments.contains("--dry-run") && $0.arguments[0] != "run"
        }
        #expect(mutations.count >= succeeded.count + 4, "\(sqliteRuns)")
        #expect(mutations.contains("update Customer ferry update failed read 0 updated 0"), "\(sqliteRuns)")
        #expect(mutations.contains("delete OrderItem mutate succeeded read 0 updated 0"), "\(sqliteRuns)")
    }

    /// Every run `ferry store info --json` lists, oldest first, without its times and number:
    /// `step entity job outcome read N updated N`.
    static func runLog(_ store: String, cwd: String) throws -> [String] {
        let result = try runFerry(["store", "info", store, "--json", "--runs", "1000"], cwd: cwd)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let info = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let runs = info?["runs"] as? [[String: Any]] ?? []
        return runs.reversed().map { run in
            let fields: [String] = ["step", "entity", "job", "outcome"].map { "\(run[$0] ?? "nil")" }
            return (fields + ["read", "\(run["read"] ?? "nil")", "updated", "\(run["updated"] ?? "nil")"])
                .joined(separator: " ")
        }
    }
}
