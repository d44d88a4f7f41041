import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// ``ResumeKillTests`` on a PostgreSQL store: `atomic: false` imports killed with SIGKILL at
/// random moments, then resumed (`--resume`, itself killed again) until done. The store must hold
/// the objects of a clean run into ferry's SQLite store (compared through `ferry export`), the
/// rejects file must be the clean run's line for line, and the reported counts the clean run's.
@Suite(
    "SIGKILL at any moment, then --resume, on a PostgreSQL store (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct ResumeKillPostgresTests {
    static let countsQuery =
        "SELECT read, inserted, updated, skipped, rejected FROM ferry_runs WHERE step = 'import' ORDER BY id DESC LIMIT 1"

    /// A session on `schema` of the test server.
    static func session(_ schema: String) throws -> PostgresConnection {
        let connection = try PostgresConnection(try PostgresTestServer.requireURL())
        try connection.execute("SET search_path TO \"\(schema)\"")
        return connection
    }

    static func exists(_ table: String, in connection: PostgresConnection) throws -> Bool {
        try connection.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1", [.text(table)]
        ).rows.first?.int(0) == 1
    }

    /// What to run next on the store in `schema`: resume when a checkpoint is there, nothing when
    /// the import succeeded, else start afresh (a kill before the first batch committed).
    static func nextCommand(schema: String, start: [String]) throws -> [String]? {
        let connection = try session(schema)
        defer { connection.close() }
        if try exists("ferry_import_progress", in: connection),
            try connection.execute("SELECT count(*) FROM ferry_import_progress").rows.first?.int(0) != 0
        {
            return start + ["--resume"]
        }
        if try exists("ferry_runs", in: connection),
            try connection.execute(
                "SELECT count(*) FROM ferry_runs WHERE outcome = 'succeeded' AND step = 'import'"
            ).rows.first?.int(0) != 0
        {
            return nil
        }
        return start
    }

    /// The store's people as NDJSON lines by id (through `ferry export`).
    static func people(_ store: String) throws -> String {
        let export = try runFerry([
            "export", "--store", store, "--entity", "Person", "--format", "ndjson", "--sort", "id", "--output", "-",
            "--quiet",
        ])
        #expect(export.exitCode == 0, "\(export)")
        return export.stdout
    }

    static func counts(_ schema: String) throws -> [String] {
        let connection = try session(schema)
        defer { connection.close() }
        return try connection.execute(Self.countsQuery).rows.first.map { row in
            try (0..<5).map { String(try row.int($0)) }
        } ?? []
    }

    @Test("CSV into PostgreSQL: killed at random moments, resumed until done, equals a clean SQLite run")
    func csvIntoPostgres() throws {
        let directory = TemporaryDirectory()
        let file = try directory.write("people.csv", ResumeKillTests.csv(1...ResumeKillTests.rows))
        let arguments = ResumeKillTests.importArguments(file)
        let base = try PostgresTestServer.requireURL()
        let prefix = "ferry_resume_kill_" + UUID().uuidString.lowercased().replacing("-", with: "").prefix(10)
        defer { PostgresStoreLoader.dropSchemas(startingWith: prefix) }

        // The reference: a clean run into ferry's SQLite store.
        let cleanStore = directory.file("clean.sqlite")
        let cleanRejects = directory.file("clean.rejects")
        let clean = try runFerry(arguments(cleanStore, cleanRejects))
        try #require(clean.exitCode == 0, "\(clean)")
        let expected = try Self.people(cleanStore)
        let expectedRejects = try String(contentsOfFile: cleanRejects, encoding: .utf8)
        let expectedCounts = (try StoreSnapshot.texts(cleanStore, Self.countsQuery).first ?? []).map { $0 ?? "" }
        // The kills are spread over an uninterrupted run into PostgreSQL on this machine now (its
        // set-up, batches and commit), so that they land while batches commit, whatever the load.
        let started = ContinuousClock.now
        let timed = try runFerry(arguments(base + "?schema=\(prefix)_timed", directory.file("timed.rejects")))
        try #require(timed.exitCode == 0, "\(timed)")
        let duration = started.duration(to: .now)
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18

        var resumedRuns = 0
        for trial in 0..<ResumeKillTests.trials {
            let schema = "\(prefix)_\(trial)"
            let store = base + "?schema=" + schema
            let rejects = directory.file("pg-\(trial).rejects")
            let start = arguments(store, rejects)
            let delays = (0..<2).map { _ in Double.random(in: 0.05...max(0.1, seconds)) }
            resumedRuns += try ResumeKillTests.killThenFinish(start, delays: delays, label: "trial \(trial)") {
                try Self.nextCommand(schema: schema, start: start)
            }
            #expect(try Self.people(store) == expected, "trial \(trial) (kills after \(delays) s): the objects differ")
            #expect(
                try String(contentsOfFile: rejects, encoding: .utf8) == expectedRejects,
                "trial \(trial) (kills after \(delays) s): the rejects differ")
            #expect(try Self.counts(schema) == expectedCounts, "trial \(trial): the counts differ from a clean run's")
        }
        // A kill that lands between two committed batches is likely but not certain per trial.
        #expect(resumedRuns > 0, "no kill landed between two committed batches")
    }
}
