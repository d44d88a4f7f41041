import FerryTestSupport
import Foundation
import Testing

/// `atomic: false` imports killed with SIGKILL at random moments, then resumed (`--resume`,
/// itself killed again) until done: the store must equal a clean run's row for row, the rejects
/// file line for line, and the reported counts must be the clean run's.
///
/// Each scenario runs `FERRY_RESUME_TRIALS` trials (default 3) of two kills each; set it higher
/// for a longer hunt (`FERRY_RESUME_TRIALS=50 swift test --filter ResumeKillTests`).
@Suite("SIGKILL at any moment, then --resume (CLI)", .serialized)
struct ResumeKillTests {
    static let trials = Int(ProcessInfo.processInfo.environment["FERRY_RESUME_TRIALS"] ?? "") ?? 3
    static let rows = 12_000

    /// Record `i`'s fields: every 7th record updates an earlier id (on_conflict: update), every
    /// 101st has an age the model refuses (a reject).
    static func person(_ i: Int) -> (id: Int, email: String, name: String, age: Int) {
        (i % 7 == 0 ? i - 3 : i, "p\(i)@example.com", "Name \(i)", i % 101 == 0 ? 200 : i % 90)
    }

    static func csv(_ range: ClosedRange<Int>) -> String {
        "id,email,name,age\n"
            + range.map { i in
                let p = person(i)
                return "\(p.id),\(p.email),\(p.name),\(p.age)\n"
            }.joined()
    }

    static func ndjson(_ range: ClosedRange<Int>) -> String {
        range.map { i in
            let p = person(i)
            return "{\"id\":\(p.id),\"email\":\"\(p.email)\",\"name\":\"\(p.name)\",\"age\":\(p.age)}\n"
        }.joined()
    }

    static func gzip(_ path: String) throws -> String {
        let gzip = try runProgram("/usr/bin/gzip", ["-kf", path])
        #expect(gzip.exitCode == 0, "\(gzip)")
        return path + ".gz"
    }

    /// The tables that hold data and the model (the run log, the checkpoints and the metadata,
    /// which holds the store's creation time, are bookkeeping).
    static func snapshot(_ store: String) throws -> StoreSnapshot {
        try StoreSnapshot.take(store, excluding: ["ferry_runs", "ferry_import_progress", "ferry_metadata"])
    }

    static func tableExists(_ store: String, _ table: String) throws -> Bool {
        try StoreSnapshot.integers(
            store, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '\(table)'") == [1]
    }

    /// What to run next on `store`: resume when a checkpoint is there, nothing when the import
    /// succeeded, else start afresh (a kill before the first batch committed).
    static func nextCommand(store: String, start: [String]) throws -> [String]? {
        guard FileManager.default.fileExists(atPath: store) else { return start }
        if try tableExists(store, "ferry_import_progress"),
            try StoreSnapshot.integers(store, "SELECT count(*) FROM ferry_import_progress") != [0]
        {
            return start + ["--resume"]
        }
        if try tableExists(store, "ferry_runs"),
            try StoreSnapshot.integers(
                store,
                "SELECT count(*) FROM ferry_runs WHERE outcome = 'succeeded' AND step = 'import' AND step_index = \(start[0] == "run" ? 2 : 1)"
            ) != [0]
        {
            return nil
        }
        return start
    }

    /// Runs `start`, killing it with SIGKILL after each of `delays` (each next run is what `next`
    /// says: a resume, a fresh start, or nil when done), then runs what `next` says until done (at
    /// most three runs), expecting each to succeed; returns how many of the killed runs were
    /// followed by a resume.
    static func killThenFinish(
        _ start: [String], delays: [Double], label: String, next: () throws -> [String]?
    ) throws -> Int {
        var resumed = 0
        var command: [String]? = start
        for delay in delays {
            guard let current = command else { break }
            let process = try FerryProcess(current)
            Thread.sleep(forTimeInterval: delay)
            process.kill()
            let result = try process.wait()
            #expect(result.wasSignaled || result.exitCode == 0, "\(label), killed after \(delay) s: \(result)")
            command = try next()
            if command?.last == "--resume" { resumed += 1 }
        }
        var runs = 0
        while let current = command, runs < 3 {
            let result = try runFerry(current)
            #expect(
                result.exitCode == 0,
                "\(label) (kills after \(delays) s): \(current.joined(separator: " ")): \(result)")
            command = try next()
            runs += 1
        }
        #expect(command == nil, "\(label): still unfinished")
        return resumed
    }

    /// One scenario: a clean run, then trials of kills at random moments and resumes.
    static func check(
        _ name: String, in directory: TemporaryDirectory, arguments: (_ store: String, _ rejects: String) -> [String]
    ) throws {
        let cleanStore = directory.file("\(name)-clean.sqlite")
        let cleanRejects = directory.file("\(name)-clean.rejects")
        let started = ContinuousClock.now
        let clean = try runFerry(
            arguments(cleanStore, cleanRejects) + ["--report", directory.file("\(name)-clean.json")])
        let duration = started.duration(to: .now)
        try #require(clean.exitCode == 0, "\(clean)")
        let expected = try snapshot(cleanStore)
        let expectedRejects = try String(contentsOfFile: cleanRejects, encoding: .utf8)
        #expect(expectedRejects.split(separator: "\n").count > 10, "the scenario has rejects")
        let expectedCounts = try StoreSnapshot.texts(
            cleanStore,
            "SELECT read, inserted, updated, skipped, rejected FROM ferry_runs WHERE step = 'import' ORDER BY id DESC LIMIT 1"
        )
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        var resumedRuns = 0
        for trial in 0..<trials {
            let store = directory.file("\(name)-\(trial).sqlite")
            let rejects = directory.file("\(name)-\(trial).rejects")
            let start = arguments(store, rejects)
            let delays = (0..<2).map { _ in Double.random(in: 0.02...max(0.05, seconds * 0.9)) }
            resumedRuns += try killThenFinish(start, delays: delays, label: "\(name) trial \(trial)") {
                try nextCommand(store: store, start: start)
            }
            let found = try snapshot(store)
            #expect(
                found == expected,
                "\(name) trial \(trial) (kills after \(delays) s): the store differs from a clean run's: \(found) vs \(expected)"
            )
            #expect(
                try String(contentsOfFile: rejects, encoding: .utf8) == expectedRejects,
                "\(name) trial \(trial) (kills after \(delays) s): the rejects differ")
            #expect(
                try StoreSnapshot.texts(
                    store,
                    "SELECT read, inserted, updated, skipped, rejected FROM ferry_runs WHERE step = 'import' ORDER BY id DESC LIMIT 1"
                ) == expectedCounts,
                "\(name) trial \(trial): the counts differ from a clean run's")
            #expect(
                try StoreSnapshot.integers(store, "SELECT count(*) FROM ferry_import_progress") == [0],
                "a finished import leaves no checkpoint")
        }
        #expect(resumedRuns > 0, "\(name): no kill landed between two committed batches")
    }

    static func importArguments(_ file: String, format: String? = nil) -> (String, String) -> [String] {
        { store, rejects in
            [
                "import", file, "--store", store, "--model", Fixtures.peopleModel, "--entity", "Person",
                "--on-conflict", "update", "--atomic", "false",
                "--batch-size", "400", "--rejects", rejects, "--max-rejects", "100%", "--quiet",
            ] + (format.map { ["--format", $0] } ?? [])
        }
    }

    @Test("CSV: killed at random moments, resumed until done, equals a clean run")
    func csvFile() throws {
        let directory = TemporaryDirectory()
        let file = try directory.write("people.csv", Self.csv(1...Self.rows))
        try Self.check("csv", in: directory, arguments: Self.importArguments(file))
    }

    @Test("NDJSON: killed at random moments, resumed until done, equals a clean run")
    func ndjsonFile() throws {
        let directory = TemporaryDirectory()
        let file = try directory.write("people.ndjson", Self.ndjson(1...Self.rows))
        try Self.check("ndjson", in: directory, arguments: Self.importArguments(file))
    }

    @Test("gzip-compressed CSV: re-read up to where it stopped, equals a clean run")
    func gzipFile() throws {
        let directory = TemporaryDirectory()
        let file = try Self.gzip(try directory.write("people.csv", Self.csv(1...Self.rows)))
        try Self.check("gzip", in: directory, arguments: Self.importArguments(file))
    }

    @Test(
        "a job importing a 2-file glob after an atomic step: ferry run --resume skips the done step, equals a clean run"
    )
    func globJob() throws {
        let directory = TemporaryDirectory()
        _ = try directory.write("part1.csv", Self.csv(1...(Self.rows / 2)))
        _ = try directory.write("part2.csv", Self.csv((Self.rows / 2 + 1)...Self.rows))
        _ = try directory.write("seed.csv", "id,email,name,age\n900001,a@example.com,A,1\n900002,b@example.com,B,2\n")
        let job = try directory.write(
            "job.yml",
            """
            job: resume-glob
            store: ${store}
            model: \(Fixtures.peopleModel)
            steps:
              - import: {source: \(directory.file("seed.csv")), entity: Person, on_conflict: update}
              - import:
                  source: \(directory.path)/part*.csv
                  entity: Person
                  on_conflict: update
                  atomic: false
                  batch_size: 400
                  rejects: ${rejects}
                  max_rejects: unlimited
            """)
        try Self.check("glob", in: directory) { store, rejects in
            ["run", job, "--param", "store=\(store)", "--param", "rejects=\(rejects)", "--quiet"]
        }
    }
}
