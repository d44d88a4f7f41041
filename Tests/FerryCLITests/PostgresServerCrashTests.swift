import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// A PostgreSQL server that crashes mid-run, as a power cut or `kill -9` of the postmaster would,
/// on a server of the test's own run with fsync on (`DurablePostgresServer`): ferry fails at once
/// with a clear error naming the store, never hangs; after the restart, the store holds what was
/// committed and nothing half-written: an atomic step's rows are all gone, an `atomic: false`
/// step resumes from its last committed batch to the same result as an uninterrupted run.
@Suite(
    "PostgreSQL server crashes mid-run (a durable server, stopped as by a power cut)", .serialized,
    .enabled(if: DurablePostgresServer.shouldRun, Comment(rawValue: DurablePostgresServer.skipReason)))
struct PostgresServerCrashTests {
    static func importArguments(_ source: String, into url: String) -> [String] {
        [
            "import", source, "--store", url, "--model", Fixtures.peopleModel, "--entity", "Person", "--on-conflict",
            "keep",
        ]
    }

    /// How many people the store holds, and whether `ferry verify --checks all` accepts it.
    static func people(in url: String) throws -> Int {
        let export = try runFerry(
            ["export", "--store", url, "--entity", "Person", "--format", "csv", "--fields", "id", "--quiet"])
        #expect(export.exitCode == 0, "\(export)")
        let verify = try runFerry(["verify", url, "--model", Fixtures.peopleModel, "--checks", "all", "--quiet"])
        #expect(verify.exitCode == 0, "\(verify)")
        let ids = export.stdout.split(whereSeparator: \.isNewline).dropFirst()
        #expect(Set(ids).count == ids.count, "no person twice")
        return ids.count
    }

    /// Waits (up to a minute) until `condition` holds or `process` ended.
    static func wait(for process: FerryProcess, until condition: () throws -> Bool) throws {
        let started = ContinuousClock.now
        while process.isRunning, ContinuousClock.now - started < .seconds(60) {
            if try condition() { return }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    @Test(
        "a crash during an atomic import's COPY: ferry fails at once naming the store; after the restart the store holds exactly what it held before"
    )
    func crashDuringAtomicImport() throws {
        let server = try DurablePostgresServer()
        let directory = TemporaryDirectory("ferry-pg-crash")
        let url = server.url + "?schema=crash_atomic"
        let small = try directory.write("small.csv", bytes: BigFiles.csv(ids: 1...50))
        let first = try runFerry(Self.importArguments(small, into: url) + ["--quiet"])
        #expect(first.exitCode == 0, "\(first)")

        let process = try FerryProcess(Self.importArguments(BigFiles.big, into: url))
        try Self.wait(for: process) { try server.isRunning(statementLike: "%COPY %") }
        #expect(process.isRunning, "the import ended before its COPY was seen")
        let crashed = ContinuousClock.now
        try server.crash()
        let result = try process.wait(timeout: .seconds(90))
        #expect(ContinuousClock.now - crashed < .seconds(60), "ferry took too long to notice the crash")
        #expect(!result.wasSignaled, "\(result)")
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("crash_atomic"), "the error names the store: \(result.stderr)")

        try server.restart()
        let kept = try Self.people(in: url)
        #expect(kept == 50, "the atomic step left nothing of itself: \(kept) people")
        // The same import, run again, finishes.
        let again = try runFerry(Self.importArguments(BigFiles.big, into: url) + ["--quiet"], timeout: .seconds(300))
        #expect(again.exitCode == 0, "\(again)")
        let total = try Self.people(in: url)
        #expect(total == BigFiles.rows, "\(total) people")
    }

    @Test(
        "a crash during an atomic: false import: its committed batches survive; --resume continues from the last one to the uninterrupted result"
    )
    func crashDuringBatchedImportResumes() throws {
        let server = try DurablePostgresServer()
        let url = server.url + "?schema=crash_batches"
        let arguments = Self.importArguments(BigFiles.big, into: url) + ["--atomic", "false", "--batch-size", "20000"]
        let process = try FerryProcess(arguments)
        // Wait for a few committed batches (rows visible to another session are committed).
        try Self.wait(for: process) {
            guard
                let database = try? Store.inspectionSession(at: server.url + "?schema=public").session,
                let count = try? database.scalar(
                    "SELECT count(*) FROM pg_tables WHERE schemaname = 'crash_batches' AND tablename = 'Person'")?
                    .int64,
                count == 1
            else { return false }
            return try database.scalar("SELECT count(*) FROM crash_batches.\"Person\"")?.int64 ?? 0 >= 40_000
        }
        #expect(process.isRunning, "the import ended before two batches were seen")
        try server.crash()
        let result = try process.wait(timeout: .seconds(90))
        #expect(!result.wasSignaled, "\(result)")
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("crash_batches"), "the error names the store: \(result.stderr)")
        #expect(result.stderr.contains("--resume"), "the error names the command that resumes: \(result.stderr)")

        try server.restart()
        let kept = try Self.people(in: url)
        #expect(kept >= 40_000 && kept < BigFiles.rows, "committed batches survive: \(kept)")
        #expect(kept % 20_000 == 0, "whole batches only: \(kept)")
        let resumed = try runFerry(arguments + ["--resume", "--quiet"], timeout: .seconds(300))
        #expect(resumed.exitCode == 0, "\(resumed)")
        #expect(try Self.people(in: url) == BigFiles.rows)
    }
}

/// A whole-database import (a legacy SQLite database converted into a new PostgreSQL store)
/// killed with SIGKILL at moments spread over a measured run: the store is either absent or
/// complete, never half-made, and the next run converts it.
@Suite(
    "whole-database imports into PostgreSQL killed at any moment", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresWholeDatabaseKillTests {
    /// A legacy database of 20,000 customers and 40,000 orders referencing them.
    static func legacyDatabase(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("legacy.db")
        let made = try runProgram(
            "/usr/bin/sqlite3",
            [
                path,
                """
                CREATE TABLE customers (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT);
                CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), total NUMERIC);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
                  INSERT INTO customers SELECT i, 'c' || i || '@example.com', 'Customer ' || i FROM n;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000)
                  INSERT INTO orders SELECT i, 1 + (i % 20000), (i % 997) * 1.25 FROM n;
                """,
            ])
        #expect(made.exitCode == 0, "\(made)")
        return path
    }

    /// The store's customers and orders, or nil when the store does not exist.
    static func counts(_ url: String) throws -> [Int]? {
        var counts: [Int] = []
        for entity in ["customers", "orders"] {
            let export = try runFerry(
                ["export", "--store", url, "--entity", entity, "--format", "csv", "--fields", "id", "--quiet"])
            if export.exitCode != 0 {
                #expect(
                    export.stderr.contains("does not exist") || export.stderr.contains("is not a ferry store"),
                    "\(export)")
                return nil
            }
            counts.append(export.stdout.split(whereSeparator: \.isNewline).count - 1)
        }
        return counts
    }

    @Test("SIGKILL at moments spread over a conversion leaves no store or the whole one; a rerun converts")
    func killedConversion() throws {
        let directory = TemporaryDirectory("ferry-pg-whole-kill")
        let legacy = try Self.legacyDatabase(in: directory)
        let base = "ferry_whole_kill_" + UUID().uuidString.lowercased().replacing("-", with: "").prefix(10)
        defer { PostgresStoreLoader.dropSchemas(startingWith: base) }

        let reference = try PostgresTestServer.requireURL() + "?schema=\(base)_ref"
        let started = ContinuousClock.now
        let whole = try runFerry(["import", legacy, "--store", reference, "--quiet"], timeout: .seconds(300))
        let duration = ContinuousClock.now - started
        #expect(whole.exitCode == 0, "\(whole)")
        #expect(try Self.counts(reference) == [20_000, 40_000])

        var outcomes: [String] = []
        for (index, fraction) in [0.15, 0.4, 0.65, 0.9].enumerated() {
            let url = try PostgresTestServer.requireURL() + "?schema=\(base)_\(index)"
            let process = try FerryProcess(["import", legacy, "--store", url, "--quiet"])
            let moment = duration * fraction
            let begun = ContinuousClock.now
            while process.isRunning, ContinuousClock.now - begun < moment { Thread.sleep(forTimeInterval: 0.002) }
            process.kill()
            let result = try process.wait()
            let found = try Self.counts(url)
            #expect(found == nil || found == [20_000, 40_000], "killed at \(Int(fraction * 100)) %: \(found ?? [])")
            outcomes.append(
                "\(Int(fraction * 100)) %: \(result.wasSignaled ? "killed" : "finished"), \(found == nil ? "no store" : "whole store")"
            )
            let rerun = try runFerry(["import", legacy, "--store", url, "--quiet"], timeout: .seconds(300))
            if found == nil {
                #expect(rerun.exitCode == 0, "rerun after a kill at \(Int(fraction * 100)) %: \(rerun)")
                #expect(try Self.counts(url) == [20_000, 40_000])
            }
        }
        print(
            "whole-database import kill outcomes (a whole run took \(duration)):\n  "
                + outcomes.joined(separator: "\n  "))
        #expect(outcomes.contains { $0.contains("killed, no store") }, "\(outcomes)")
    }
}
