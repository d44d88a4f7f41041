import FerryCore
import FerryPostgresStore
import FerryTestSupport
import Foundation
import Testing

/// The server ends ferry's connection in the middle of a migration or a copy, as an
/// administrator's `pg_terminate_backend`, a failover or a server-side timeout does: ferry fails
/// at once (never hangs) with an error naming the store and what was in progress; the store is
/// as it was (the step's transaction rolled back) and the same command, run again, finishes.
@Suite(
    "PostgreSQL connection lost mid-migration and mid-copy (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresConnectionLossTests {
    /// Waits (up to a minute) until `condition` holds or `process` ended; whether it held.
    static func wait(for process: FerryProcess, until condition: () throws -> Bool) throws -> Bool {
        let started = ContinuousClock.now
        while process.isRunning, ContinuousClock.now - started < .seconds(60) {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return false
    }

    @Test(
        "the connection ended during an in-server migration's INSERT … SELECT: exit 1 naming the store and the migration; the store keeps its version and objects; a rerun migrates"
    )
    func lostDuringMigration() throws {
        let directory = TemporaryDirectory()
        let (schema, url) = try PostgresMigrateCLITests.freshSchema("lost")
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        let rows = 1...60_000
        let bundle = try PostgresMigrateCLITests.serverBundle(in: directory)
        try PostgresMigrateCLITests.peopleStore(url, rows: rows, in: directory)
        let original = try PostgresStoreLoader.exports(url, cwd: directory.path)

        var result: ProcessResult?
        for _ in 1...5 where result == nil {
            let process = try FerryProcess(["migrate", url, "--model", bundle])
            let seen = try Self.wait(for: process) {
                try PostgresStoreLoader.terminateSessions(runningStatementLike: "INSERT INTO \"\(schema)_next%") > 0
                    || PostgresStoreLoader.terminateSessions(
                        runningStatementLike: "CREATE TABLE \"\(schema)_next%\" AS SELECT %") > 0
            }
            let ended = try process.wait(timeout: .seconds(90))
            // A statement that ended between two looks (a loaded machine) is tried again on the
            // original store: a finished run migrated it, so start over.
            if seen {
                result = ended
            } else {
                PostgresStoreLoader.dropSchemas(startingWith: schema)
                try PostgresMigrateCLITests.peopleStore(url, rows: rows, in: directory)
            }
        }
        let lost = try #require(result, "no run's INSERT … SELECT was seen in five tries")
        #expect(!lost.wasSignaled, "\(lost)")
        #expect(lost.exitCode == 1, "\(lost)")
        #expect(lost.stderr.contains(schema), "the error names the store: \(lost.stderr)")
        #expect(lost.stderr.lowercased().contains("migrat"), "the error says a migration was running: \(lost.stderr)")
        #expect(lost.stderr.contains("terminat"), "the error gives the server's cause: \(lost.stderr)")
        #expect(try PostgresStoreLoader.exports(url, cwd: directory.path) == original, "the store is as it was")

        let rerun = try runFerry(["migrate", url, "--model", bundle, "--quiet"], cwd: directory.path)
        #expect(rerun.exitCode == 0, "\(rerun)")
        #expect(try PostgresStoreLoader.exports(url, cwd: directory.path)["version"] == "3")
        #expect(try PostgresStoreLoader.schemas(startingWith: schema + "_next") == [])
    }

    @Test(
        "the connection ended during ferry copy's COPY into PostgreSQL: exit 1 naming the destination; the destination is as it was; a rerun copies"
    )
    func lostDuringCopy() throws {
        let directory = TemporaryDirectory()
        let (schema, url) = try PostgresWorkSchemaKillTests.freshSchema("lostcopy")
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        let source = directory.file("source.sqlite")
        let large = try directory.write("large.csv", bytes: BigFiles.csv(ids: 1...60_000))
        let small = try directory.write("small.csv", bytes: BigFiles.csv(ids: 1...50))
        for (store, data) in [(source, large), (url, small)] {
            let imported = try runFerry([
                "import", data, "--store", store, "--model", Fixtures.peopleModel, "--entity", "Person", "--quiet",
            ])
            #expect(imported.exitCode == 0, "\(imported)")
        }
        let original = try PostgresStoreLoader.exports(url)
        let scratch = Store.postgreSQLCopyScratchSchema(of: schema)
        let process = try FerryProcess(["copy", source, url, "--replace"])
        let seen = try Self.wait(for: process) {
            try PostgresStoreLoader.terminateSessions(runningStatementLike: "COPY \"\(scratch)\".%") > 0
        }
        let lost = try process.wait(timeout: .seconds(90))
        try #require(seen, "the copy ended before its COPY was seen: \(lost)")
        #expect(!lost.wasSignaled, "\(lost)")
        #expect(lost.exitCode == 1, "\(lost)")
        #expect(lost.stderr.contains(schema), "the error names the destination: \(lost.stderr)")
        #expect(lost.stderr.contains("terminat"), "the error gives the server's cause: \(lost.stderr)")
        #expect(try PostgresStoreLoader.exports(url) == original, "the destination is as it was")

        let again = try runFerry(["copy", source, url, "--replace", "--quiet"])
        #expect(again.exitCode == 0, "\(again)")
        #expect(try PostgresStoreLoader.exports(url)["Person"]?.split(separator: "\n").count == 60_000)
        #expect(try PostgresStoreLoader.schemas(startingWith: schema).filter { $0 != schema } == [])
    }
}
