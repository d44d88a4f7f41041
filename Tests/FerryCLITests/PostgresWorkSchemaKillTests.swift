import FerryCore
import FerryPostgresStore
import FerryTestSupport
import Foundation
import Testing

/// The work schemas ferry builds beside a PostgreSQL store (a `rebuild: true` job's, `ferry
/// copy`'s scratch) when the process building them is killed with SIGKILL, through the built
/// binary: the store stays as it was, and the next run, or the next opening of the store for
/// writing, drops the leftover (logged), never the work schema of a process still running.
@Suite(
    "PostgreSQL work schemas of killed runs (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresWorkSchemaKillTests {
    /// A job rebuilding the people store from `${data}`.
    static let rebuildJob = """
        job: rebuild-people
        model: {path: \(Fixtures.peopleModel)}
        store: {path: "${store}", rebuild: true}
        steps:
          - import: {source: "${data}", entity: Person}
        """

    /// A fresh schema's name and URL on the test server.
    static func freshSchema(_ prefix: String) throws -> (schema: String, url: String) {
        let schema = "ferry_work_\(prefix)_" + UUID().uuidString.lowercased().replacing("-", with: "").prefix(12)
        return (schema, try PostgresTestServer.requireURL() + "?schema=" + schema)
    }

    /// The schemas beside the store in `schema` (its own name left out).
    static func leftovers(of schema: String) throws -> [String] {
        try PostgresStoreLoader.schemas(startingWith: schema).filter { $0 != schema }
    }

    /// `ferry update` changing nothing (no object matches): it opens the store for writing.
    static func openForWriting(_ url: String) throws -> ProcessResult {
        try runFerry(["-v", "update", "--store", url, "--entity", "Person", "--where", "id == -1", "--set", "age=1"])
    }

    /// A fresh store (in `schema` at `url`) rebuilt by the rebuild job from 50 people, the job,
    /// and the 50-row and 60,000-row files in `directory`.
    static func rebuiltStore(
        _ prefix: String, in directory: TemporaryDirectory
    ) throws -> (schema: String, url: String, job: String, small: String, large: String) {
        let (schema, url) = try freshSchema(prefix)
        let job = try directory.write("rebuild.yml", rebuildJob)
        let small = try directory.write("small.csv", bytes: BigFiles.csv(ids: 1...50))
        let large = try directory.write("large.csv", bytes: BigFiles.csv(ids: 1...60_000))
        let first = try runFerry(["run", job, "--param", "store=\(url)", "--param", "data=\(small)", "--quiet"])
        #expect(first.exitCode == 0, "\(first)")
        return (schema, url, job, small, large)
    }

    @Test(
        "a rebuild: true run on PostgreSQL killed with SIGKILL at moments spread over a measured run (and during its COPY) leaves the store as it was; the next run, or the next opening for writing, drops the killed run's work schema and logs it"
    )
    func killedRebuild() throws {
        let directory = TemporaryDirectory()
        let (schema, url, job, small, large) = try Self.rebuiltStore("rebuild", in: directory)
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        let original = try PostgresStoreLoader.exports(url)

        // One whole rebuild from the large file, timed (and its result, to tell a finished run).
        let whole = ContinuousClock.now
        let untimed = try runFerry(["run", job, "--param", "store=\(url)", "--param", "data=\(large)", "--quiet"])
        #expect(untimed.exitCode == 0, "\(untimed)")
        let duration = ContinuousClock.now - whole
        let rebuilt = try PostgresStoreLoader.exports(url)
        #expect(rebuilt != original)
        #expect(try Self.leftovers(of: schema) == [], "a finished rebuild leaves no work schema")

        var outcomes: [String] = []
        let moments: [Duration?] = [2, 4, 6, 8].map { duration * $0 / 10 } + [nil]
        for (index, moment) in moments.enumerated() {
            let reset = try runFerry(["run", job, "--param", "store=\(url)", "--param", "data=\(small)", "--quiet"])
            #expect(reset.exitCode == 0, "\(reset)")
            let started = ContinuousClock.now
            let process = try FerryProcess(["run", job, "--param", "store=\(url)", "--param", "data=\(large)"])
            while process.isRunning, ContinuousClock.now - started < .seconds(60) {
                if let moment, ContinuousClock.now - started >= moment { break }
                if moment == nil, let work = try Self.leftovers(of: schema).first,
                    try PostgresStoreLoader.isCopying(into: work)
                {
                    break
                }
                Thread.sleep(forTimeInterval: 0.002)
            }
            process.kill()
            let result = try process.wait()
            let label = moment.map { "after \(Int(($0 / duration * 100).rounded())) % of a whole run" } ?? "during COPY"
            if !result.wasSignaled { #expect(result.exitCode == 0, "\(label): \(result)") }
            let found = try PostgresStoreLoader.exports(url)
            #expect(found == original || found == rebuilt, "\(label): neither the original nor the rebuilt store")
            let left = try Self.leftovers(of: schema)
            #expect(left.allSatisfy { $0.hasPrefix(schema + "_ferry_rebuild_") }, "\(label): \(left)")
            outcomes.append(
                "\(label): \(result.wasSignaled ? "killed" : "finished"), \(found == rebuilt ? "rebuilt" : "original"), \(left.isEmpty ? "nothing left" : "work schema left")"
            )
            // The next run drops it (even numbers), or the next opening for writing (odd ones).
            let next =
                index.isMultiple(of: 2)
                ? try runFerry(["-v", "run", job, "--param", "store=\(url)", "--param", "data=\(small)", "--quiet"])
                : try Self.openForWriting(url)
            #expect(next.exitCode == 0, "\(label): \(next)")
            #expect(try Self.leftovers(of: schema) == [], "\(label): the leftover is dropped")
            for name in left {
                #expect(
                    next.stderr.contains("dropped the work schema '\(name)' a killed ferry process left"),
                    "\(label): \(next.stderr)")
            }
        }
        print("PostgreSQL rebuild kill outcomes:\n  " + outcomes.joined(separator: "\n  "))
        #expect(outcomes.contains("during COPY: killed, original, work schema left"), "\(outcomes)")
    }

    @Test(
        "the work schema of a rebuild still running on PostgreSQL is never dropped by another process opening the store for writing or rebuilding it: both wait for the running rebuild (it holds the store's writer lock to its swap), which finishes, and then run on the store it swapped in"
    )
    func liveWorkSchemaKept() throws {
        let directory = TemporaryDirectory()
        let (schema, url, job, small, large) = try Self.rebuiltStore("live", in: directory)
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        let process = try FerryProcess(["run", job, "--param", "store=\(url)", "--param", "data=\(large)", "--quiet"])
        let started = ContinuousClock.now
        var work: String?
        while process.isRunning, work == nil, ContinuousClock.now - started < .seconds(60) {
            work = try Self.leftovers(of: schema).first
            Thread.sleep(forTimeInterval: 0.002)
        }
        let building = try #require(work, "the rebuild's work schema never appeared")
        // Another writer of the store, and another rebuild (of the small file) in the meantime.
        let writer = try Self.openForWriting(url)
        #expect(writer.exitCode == 0, "\(writer)")
        #expect(!writer.stderr.contains("dropped the work schema"), "\(writer.stderr)")
        #expect(!process.isRunning, "the writer waited for the running rebuild to finish")
        let other = try runFerry(["-v", "run", job, "--param", "store=\(url)", "--param", "data=\(small)", "--quiet"])
        #expect(other.exitCode == 0, "\(other)")
        #expect(!other.stderr.contains("dropped the work schema"), "\(other.stderr)")
        let result = try process.wait()
        #expect(result.exitCode == 0, "the running rebuild (\(building)) finished: \(result)")
        // The other rebuild ran last, on the store the running one had swapped in.
        #expect(try PostgresStoreLoader.exports(url)["Person"]?.split(separator: "\n").count == 50)
        #expect(try Self.leftovers(of: schema) == [])
    }

    @Test(
        "ferry copy into PostgreSQL killed with SIGKILL during its COPY leaves the destination as it was and its scratch schema; the next opening of the store for writing drops it, and the next copy succeeds"
    )
    func killedCopy() throws {
        let directory = TemporaryDirectory()
        let (schema, url) = try Self.freshSchema("copy")
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        let source = directory.file("source.sqlite")
        let large = try directory.write("large.csv", bytes: BigFiles.csv(ids: 1...60_000))
        let small = try directory.write("small.csv", bytes: BigFiles.csv(ids: 1...50))
        for (store, data) in [(source, large), (url, small)] {
            let result = try runFerry([
                "import", data, "--store", store, "--model", Fixtures.peopleModel, "--entity", "Person", "--quiet",
            ])
            #expect(result.exitCode == 0, "\(result)")
        }
        let original = try PostgresStoreLoader.exports(url)
        let scratch = Store.postgreSQLCopyScratchSchema(of: schema)
        let process = try FerryProcess(["copy", source, url, "--replace"])
        let started = ContinuousClock.now
        while process.isRunning, ContinuousClock.now - started < .seconds(60) {
            if try PostgresStoreLoader.isCopying(into: scratch) { break }
            Thread.sleep(forTimeInterval: 0.002)
        }
        process.kill()
        let result = try process.wait()
        #expect(result.wasSignaled, "the copy was killed during its COPY: \(result)")
        #expect(try PostgresStoreLoader.exports(url) == original)
        #expect(try Self.leftovers(of: schema) == [scratch])
        let writer = try Self.openForWriting(url)
        #expect(writer.exitCode == 0, "\(writer)")
        #expect(writer.stderr.contains("dropped the work schema '\(scratch)' a killed ferry process left"))
        #expect(try Self.leftovers(of: schema) == [])
        let copy = try runFerry(["copy", source, url, "--replace"])
        #expect(copy.exitCode == 0, "\(copy)")
        #expect(try PostgresStoreLoader.exports(url)["Person"]?.split(separator: "\n").count == 60_000)
        #expect(try Self.leftovers(of: schema) == [])
    }
}
