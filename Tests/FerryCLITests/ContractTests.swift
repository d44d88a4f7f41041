import FerryTestSupport
import Foundation
import Testing

/// The contracts of DESIGN.md ("Nothing lost", "One writer"), checked against the real binary:
/// failed and killed imports, counts that add up, reject budgets, two writers at once.
///
/// Serialized: the kill and two-writer tests each keep a core busy, and their timing matters.
@Suite("CLI contracts", .serialized)
struct ContractTests {
    // MARK: - Helpers

    /// Creates a people store at `dir/name` holding the generated rows `ids` (none when nil).
    static func peopleStore(
        in dir: TemporaryDirectory, _ name: String = "people.sqlite", ids: ClosedRange<Int>?
    ) throws -> String {
        let store = dir.file(name)
        let data = try dir.write(
            "seed-\(name).csv", bytes: ids.map { BigFiles.csv(ids: $0) } ?? Array("id,email,name,age\n".utf8))
        let result = try runFerry([
            "import", data, "--store", store, "--model", Fixtures.peopleModel, "--entity", "Person", "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result)")
        return store
    }

    static func importArguments(_ file: String, store: String, _ more: [String] = []) -> [String] {
        ["import", file, "--store", store, "--model", Fixtures.peopleModel, "--entity", "Person", "--quiet"] + more
    }

    /// When to kill a running import.
    enum KillMoment: CustomStringConvertible {
        /// As soon as the rollback journal exists: the step's transaction has begun writing.
        case journalExists
        case after(Duration)
        /// Once the store file has grown by this many bytes: pages were written into it, so only
        /// the journal can undo them.
        case storeGrown(by: Int)

        var description: String {
            switch self {
            case .journalExists: return "once the journal exists"
            case .after(let duration): return "after \(duration)"
            case .storeGrown(let bytes): return "once the store grew by \(bytes / 1_000_000) MB"
            }
        }
    }

    /// Starts `ferry args…`, waits for `moment`, sends SIGKILL and returns the result; records an
    /// issue when the process ended on its own before it could be killed.
    static func runAndKill(_ arguments: [String], store: String, at moment: KillMoment) throws -> ProcessResult {
        let startSize = fileSize(store) ?? 0
        let started = ContinuousClock.now
        let process = try FerryProcess(arguments)
        let deadline = started + .seconds(60)
        func reached() -> Bool {
            switch moment {
            case .journalExists: return fileSize(store + "-journal") != nil
            case .after(let duration): return ContinuousClock.now - started >= duration
            case .storeGrown(let bytes): return (fileSize(store) ?? 0) >= startSize + bytes
            }
        }
        while process.isRunning && !reached() && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.002)
        }
        let wasRunning = process.isRunning
        process.kill()
        let result = try process.wait()
        #expect(wasRunning && result.wasSignaled, "the import ended before it was killed \(moment): \(result)")
        return result
    }

    /// `ferry store info --json` opens the store first thing after a kill (rolling back the
    /// journal the killed process left) and reports `count` people.
    static func expectStoreInfoCount(
        _ store: String, _ count: Int, _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let info = try runFerry(["store", "info", store, "--json"])
        #expect(info.exitCode == 0, "\(comment): \(info)", sourceLocation: sourceLocation)
        let entities = try jsonObject(text: info.stdout)["entities"] as? [[String: Any]]
        #expect(entities?.first?["count"] as? Int == count, comment, sourceLocation: sourceLocation)
    }

    // MARK: - Nothing lost: failed steps

    @Test("a step that fails at a malformed last line leaves the store as it was")
    func atomicFailureAtTheEnd() throws {
        let dir = TemporaryDirectory()
        let store = try Self.peopleStore(in: dir, ids: 100_001...101_000)
        let before = try StoreSnapshot.take(store)
        // 5,000 good records, then a quoted field that is never closed.
        let data = try dir.write(
            "cut.csv",
            bytes: BigFiles.csv(ids: 1...5_000) + Array("5001,user5001@example.com,\"User 5001 cut off,1\n".utf8))

        let result = try runFerry(Self.importArguments(data, store: store))

        // The unclosed quote is one rejected record; the step allows none, so it is rolled back.
        #expect(result.exitCode == 2, "\(result)")
        #expect(
            result.errorLines == [
                "\(data):5002:27: error: quoted field is not closed before the end of the input (reading went on at the next line) (record 5001)",
                "  the step allows no rejected records; add `rejects: FILE` and `max_rejects:` to the step to set them aside and go on",
            ])
        let after = try StoreSnapshot.take(store)
        #expect(after == before)
        #expect(after.integrity == "ok")
        #expect(after.rows("Person") == 1_000)
        // The audit log records the failed run (outside the rolled-back transaction).
        #expect(
            try StoreSnapshot.texts(store, "SELECT outcome, read, inserted FROM ferry_runs ORDER BY id DESC LIMIT 1")
                == [["failed", "5001", "5000"]])
    }

    @Test("a JSON array cut off at the end leaves the store as it was")
    func atomicFailureInJSON() throws {
        let dir = TemporaryDirectory()
        let store = try Self.peopleStore(in: dir, ids: 100_001...100_100)
        let before = try StoreSnapshot.take(store)
        var text = "[\n"
        for id in 1...2_000 {
            text += #"{"id": \#(id), "email": "p\#(id)@example.com", "name": "P \#(id)", "age": 30},"# + "\n"
        }
        text += #"{"id": 2001, "email": "cut@exa"#
        let data = try dir.write("cut.json", text)

        let result = try runFerry(Self.importArguments(data, store: store))

        #expect(result.exitCode == 1, "\(result)")
        #expect(result.errorLines == ["\(data):2002:31: error: unexpected end of input in a string (record 2001)"])
        #expect(try StoreSnapshot.take(store) == before)
    }

    // MARK: - Nothing lost: SIGKILL

    static let killMoments: [KillMoment] = [.journalExists, .after(.milliseconds(500)), .storeGrown(by: 4_000_000)]

    @Test("SIGKILL during an atomic import into an empty store leaves it empty and sound")
    func killEmptyStore() throws {
        let dir = TemporaryDirectory()
        let store = try Self.peopleStore(in: dir, ids: nil)
        let before = try StoreSnapshot.take(store, excluding: [])
        for moment in Self.killMoments {
            _ = try Self.runAndKill(Self.importArguments(BigFiles.big, store: store), store: store, at: moment)
            try Self.expectStoreInfoCount(store, before.rows("Person"), "killed \(moment)")
            let after = try StoreSnapshot.take(store, excluding: [])
            #expect(after.integrity == "ok", "killed \(moment)")
            #expect(after.rows("Person") == 0, "killed \(moment)")
            #expect(after == before, "killed \(moment)")
        }
    }

    @Test("SIGKILL during an atomic import into a store with rows keeps exactly those rows")
    func killStoreWithRows() throws {
        let dir = TemporaryDirectory()
        let store = try Self.peopleStore(in: dir, ids: 500_001...502_000)
        let before = try StoreSnapshot.take(store, excluding: [])
        for moment in Self.killMoments {
            _ = try Self.runAndKill(Self.importArguments(BigFiles.big, store: store), store: store, at: moment)
            try Self.expectStoreInfoCount(store, before.rows("Person"), "killed \(moment)")
            let after = try StoreSnapshot.take(store, excluding: [])
            #expect(after.integrity == "ok", "killed \(moment)")
            #expect(after.rows("Person") == 2_000, "killed \(moment)")
            #expect(after == before, "killed \(moment)")
        }
        // Still a usable store: ferry imports into it.
        let more = try dir.write("more.csv", bytes: BigFiles.csv(ids: 1...10))
        #expect(try runFerry(Self.importArguments(more, store: store)).exitCode == 0)
        #expect(try StoreSnapshot.take(store).rows("Person") == 2_010)
    }

    @Test("SIGKILL during a checkpointed import keeps whole batches only")
    func killCheckpointed() throws {
        let dir = TemporaryDirectory()
        let store = try Self.peopleStore(in: dir, ids: nil)
        _ = try Self.runAndKill(
            [
                "run", Fixtures.path("jobs/people-checkpointed.yml"), "--param", "store=\(store)", "--param",
                "data=\(BigFiles.big)", "--quiet",
            ],
            store: store, at: .storeGrown(by: 2_000_000))
        let after = try StoreSnapshot.take(store)
        #expect(after.integrity == "ok")
        let count = after.rows("Person")
        #expect(count > 0 && count < BigFiles.rows, "\(count) rows")
        #expect(count % 1_000 == 0, "\(count) rows is not a whole number of 1,000-record batches")
        // The committed batches are the first records of the file, in order.
        #expect(
            try StoreSnapshot.integers(store, "SELECT min(id) FROM Person UNION ALL SELECT max(id) FROM Person") == [
                1, Int64(count),
            ])
        // The killed run never finished, so it is not recorded as succeeded.
        #expect(
            try StoreSnapshot.integers(store, "SELECT count(*) FROM ferry_runs WHERE job = 'people-checkpointed'") == [
                0
            ])
    }

    // MARK: - Counts add up

    @Test("read = inserted + updated + skipped + rejected, and every reject is in the rejects file")
    func countsAddUp() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("people.sqlite")
        let people = Fixtures.path("data/people.csv")
        let expected: [(policy: String, inserted: Int, updated: Int, skipped: Int)] = [
            ("error", 4, 0, 0), ("keep", 0, 0, 4), ("update", 0, 4, 0),
        ]
        for (index, run) in expected.enumerated() {
            let rejects = dir.file("rejects-\(index).ndjson")
            let report = dir.file("report-\(index).json")
            let result = try runFerry(
                Self.importArguments(
                    people, store: store,
                    [
                        "--on-conflict", run.policy, "--rejects", rejects, "--max-rejects", "2", "--report", report,
                    ]))
            #expect(result.exitCode == 0, "\(result)")
            let step = try #require((try jsonObject(file: report)["steps"] as? [[String: Any]])?.first)
            let counts = ["read", "inserted", "updated", "skipped", "rejected"].map { step[$0] as? Int ?? -1 }
            #expect(counts == [6, run.inserted, run.updated, run.skipped, 2], "on_conflict \(run.policy)")
            #expect(counts[0] == counts[1] + counts[2] + counts[3] + counts[4])
            try Self.expectRejectsFile(rejects, count: 2)
        }
        #expect(try StoreSnapshot.take(store).rows("Person") == 4)
    }

    /// The rejects file has `count` lines, each an NDJSON object with record, line, column, reason, raw.
    static func expectRejectsFile(_ path: String, count: Int, sourceLocation: SourceLocation = #_sourceLocation) throws
    {
        let rejectLines = try lines(ofFile: path)
        #expect(rejectLines.count == count, "\(path)", sourceLocation: sourceLocation)
        for line in rejectLines {
            let object = try jsonObject(text: line)
            #expect(
                object["record"] is Int && object["line"] is Int && object["column"] is Int, "\(line)",
                sourceLocation: sourceLocation)
            #expect(object["reason"] is String && object["raw"] is String, "\(line)", sourceLocation: sourceLocation)
        }
    }

    @Test("the rejects of the people fixture, with lines, columns and reasons")
    func rejectsContent() throws {
        let dir = TemporaryDirectory()
        let rejects = dir.file("rejects.ndjson")
        let result = try runFerry([
            "run", Fixtures.peopleJob, "--param", "store=\(dir.file("s.sqlite"))", "--param", "rejects=\(rejects)",
            "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout == "")
        #expect(
            try lines(ofFile: rejects) == [
                #"{"record":3,"line":4,"column":3,"field":"email","reason":"email does not match the pattern [^@ ]+@[^@ ]+","raw":"3,cy(at)example.com,Cy,29"}"#,
                #"{"record":4,"line":5,"column":23,"field":"age","reason":"age: 'abc' is not an integer","raw":"4,dee@example.com,Dee,abc"}"#,
            ])
    }

    // MARK: - Reject budget

    @Test("over its reject budget a step fails with exit 2, names the budget and changes nothing")
    func rejectBudget() throws {
        let dir = TemporaryDirectory()
        let store = try Self.peopleStore(in: dir, ids: 1_000...1_099)
        let before = try StoreSnapshot.take(store)
        let rejects = dir.file("rejects.ndjson")
        let people = Fixtures.path("data/people.csv")
        func run(budget: String) throws -> ProcessResult {
            try runFerry([
                "run", Fixtures.peopleJob, "--param", "store=\(store)", "--param", "rejects=\(rejects)", "--param",
                "budget=\(budget)", "--quiet",
            ])
        }

        let count = try run(budget: "1")
        #expect(count.exitCode == 2, "\(count)")
        #expect(
            count.errorLines == [
                "\(people):5:23: error: more than 1 record was rejected; the step was rolled back (record 4)",
                "  last reject: age: 'abc' is not an integer",
                "  rejected records are in \(rejects)",
            ])
        #expect(try StoreSnapshot.take(store) == before)

        let percent = try run(budget: "1%")
        #expect(percent.exitCode == 2, "\(percent)")
        #expect(
            percent.errorLines == [
                "\(people): error: 2 of 6 records (33.33%) were rejected, more than the 1.0% allowed; the step was rolled back"
            ])
        #expect(try StoreSnapshot.take(store) == before)

        let within = try run(budget: "40%")
        #expect(within.exitCode == 0, "\(within)")
        #expect(try StoreSnapshot.take(store).rows("Person") == 104)
        try Self.expectRejectsFile(rejects, count: 2)
    }

    @Test("without a rejects file the budget is 0 and the first reject fails the step")
    func noRejectsFile() throws {
        let dir = TemporaryDirectory()
        let store = try Self.peopleStore(in: dir, ids: 1_000...1_009)
        let before = try StoreSnapshot.take(store)
        let people = Fixtures.path("data/people.csv")
        let result = try runFerry(Self.importArguments(people, store: store))
        #expect(result.exitCode == 2, "\(result)")
        #expect(
            result.errorLines == [
                "\(people):4:3: error: email does not match the pattern [^@ ]+@[^@ ]+ (record 3)",
                "  the step allows no rejected records; add `rejects: FILE` and `max_rejects:` to the step to set them aside and go on",
            ])
        #expect(try StoreSnapshot.take(store) == before)
    }

    // MARK: - One writer

    @Test("two imports into one new store at once: the second waits or fails clearly, never corrupts")
    func twoWriters() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("shared.sqlite")
        let first = try FerryProcess(
            Self.importArguments(BigFiles.other, store: store, ["--report", dir.file("first.json")]))
        let second = try FerryProcess(
            Self.importArguments(BigFiles.third, store: store, ["--report", dir.file("second.json")]))
        var inserted = 0
        var succeeded = 0
        for (name, process) in [("first", first), ("second", second)] {
            let result = try process.wait()
            if result.exitCode == 0 {
                let step = (try jsonObject(file: dir.file("\(name).json"))["steps"] as? [[String: Any]])?.first
                inserted += step?["inserted"] as? Int ?? 0
                succeeded += 1
            } else {
                #expect(result.exitCode == 1 && result.stderr.contains("locked"), "\(name): \(result)")
            }
        }
        let after = try StoreSnapshot.take(store)
        #expect(after.integrity == "ok")
        #expect(after.rows("Person") == inserted)
        // Usually both finish (the second waits up to 30 s for the lock); on a very slow machine
        // the second may give up, which the contract allows.
        #expect(succeeded >= 1)
        #expect(inserted == succeeded * BigFiles.otherRows)
    }

    @Test("an import waits for another writer's lock, then runs")
    func waitsForLock() throws {
        let dir = TemporaryDirectory()
        let store = try Self.peopleStore(in: dir, ids: 1...10)
        let lock = try StoreWriteLock(store)
        let data = try dir.write("more.csv", bytes: BigFiles.csv(ids: 11...20))
        let process = try FerryProcess(Self.importArguments(data, store: store))
        Thread.sleep(forTimeInterval: 1.0)
        #expect(process.isRunning, "ferry should still be waiting for the lock")
        try lock.release()
        let result = try process.wait()
        #expect(result.exitCode == 0, "\(result)")
        #expect(try StoreSnapshot.take(store).rows("Person") == 20)
    }

    @Test("two imports creating the same store at the same moment both succeed", arguments: 0..<4)
    func twoCreators(round: Int) throws {
        let dir = TemporaryDirectory()
        let store = dir.file("new.sqlite")
        let a = try dir.write("a.csv", bytes: BigFiles.csv(ids: 1...2_000))
        let b = try dir.write("b.csv", bytes: BigFiles.csv(ids: 2_001...4_000))
        let processes = try [a, b].map { try FerryProcess(Self.importArguments($0, store: store)) }
        for process in processes {
            let result = try process.wait()
            #expect(result.exitCode == 0, "\(result)")
        }
        let after = try StoreSnapshot.take(store)
        #expect(after.integrity == "ok")
        #expect(after.rows("Person") == 4_000)
    }
}
