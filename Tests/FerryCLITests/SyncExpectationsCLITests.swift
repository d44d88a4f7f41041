import FerryTestSupport
import Foundation
import Testing

/// What a nightly sync's verify step can say: `equals: imported` counts only the records
/// imported, so a night whose rejected record kept its row failed with exit 3; `equals: synced`
/// counts the kept rows too, and `max_kept` bounds them.
@Suite("verify after a sync: equals: synced and max_kept", .serialized)
struct SyncExpectationsCLITests {
    /// A store synced from day1.csv (customers 1–3), and a job syncing `${day}` then checking `counts`.
    func prepared(counts: String, firstNight: Bool = true) throws -> TemporaryDirectory {
        let directory = TemporaryDirectory("ferry-cli-sync-expect")
        try directory.write(
            "model.yml",
            """
            entities:
              Customer:
                attributes:
                  id: {type: int64, optional: false, unique: true}
                  name: string
                  age: int64
            """)
        try directory.write("day1.csv", "id,name,age\n1,Ann,34\n2,Bob,41\n3,Cy,29\n")
        // Night 2: Bob's age is not a number; his record is rejected and his row kept.
        try directory.write("day2.csv", "id,name,age\n1,Ann,35\n2,Bob,abc\n3,Cy,29\n")
        try directory.write(
            "job.yml",
            """
            store: s.sqlite
            model: model.yml
            steps:
              - import: {source: "${day}", entity: Customer, mode: sync, rejects: "${day}.rejects", max_rejects: 1}
              - verify:
                  checks: cheap
                  counts: {Customer: \(counts)}

            """)
        if firstNight {
            let first = try runFerry(["run", "job.yml", "--param", "day=day1.csv", "--quiet"], cwd: directory.path)
            #expect(first.exitCode == 0, "\(first)")
        }
        return directory
    }

    @Test("equals: imported fails a sync whose rejected record kept its row (exit 3): it counts imports only")
    func importedFailsWithKeptRow() throws {
        let directory = try prepared(counts: "{equals: imported}")
        let result = try runFerry(["run", "job.yml", "--param", "day=day2.csv", "--quiet"], cwd: directory.path)
        #expect(result.exitCode == 3, "\(result)")
    }

    @Test("equals: synced passes the night with one bad record; the line and the report say a row was kept")
    func syncedPasses() throws {
        let directory = try prepared(counts: "{equals: synced}")
        let result = try runFerry(
            ["run", "job.yml", "--param", "day=day2.csv", "--report", "r.json"], cwd: directory.path)
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.contains("kept 1 Customer row that rejected records stand for"), "\(result.stdout)")
        #expect(result.stdout.contains("synced by step 1: 2 imported + 1 kept by rejected records"), "\(result.stdout)")
        let report = try jsonObject(file: directory.file("r.json"))
        let steps = try #require(report["steps"] as? [[String: Any]])
        #expect(steps[0]["kept"] as? Int == 1)
        #expect(steps[0]["rejected"] as? Int == 1)
        #expect(
            try sqlite3(directory.file("s.sqlite"), "SELECT id, age FROM Customer ORDER BY id") == "1|35\n2|41\n3|29\n")
    }

    @Test("max_kept bounds the rows rejected records keep: max_kept: 0 fails the night with exit 3")
    func maxKept() throws {
        let strict = try prepared(counts: "{equals: synced, max_kept: 0}")
        let failed = try runFerry(["run", "job.yml", "--param", "day=day2.csv"], cwd: strict.path)
        #expect(failed.exitCode == 3, "\(failed)")
        #expect(failed.stdout.contains("max_kept 0"), "\(failed)")

        let allowing = try prepared(counts: "{equals: synced, max_kept: 1}")
        let passed = try runFerry(["run", "job.yml", "--param", "day=day2.csv", "--quiet"], cwd: allowing.path)
        #expect(passed.exitCode == 0, "\(passed)")

        let misplaced = try prepared(counts: "{at_least: 1, max_kept: 1}", firstNight: false)
        let refused = try runFerry(["validate", "job.yml", "--param", "day=day2.csv"], cwd: misplaced.path)
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(refused.stderr.contains("'max_kept' goes with 'equals: synced'"), "\(refused)")
    }
}
