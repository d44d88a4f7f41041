import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--resume` refuses, touching nothing, when there is nothing to resume, when the step is
/// atomic, when its definition or its source changed; it resumes after a SIGINT that named the
/// command to run.
@Suite("--resume refusals and resuming after SIGINT (CLI)")
struct ResumeRefusalTests {
    /// An interrupted import: 3,000 people, the 2,500th with an age the model refuses and no
    /// reject allowed, so that the step fails (exit 2) after committing six batches of 400.
    static func interrupted(
        _ directory: TemporaryDirectory
    ) throws -> (file: String, store: String, arguments: [String]) {
        let rows = (1...3000).map { i in "\(i),p\(i)@example.com,Name \(i),\(i == 2500 ? 200 : i % 90)\n" }
        let file = try directory.write("people.csv", "id,email,name,age\n" + rows.joined())
        let store = directory.file("s.sqlite")
        let arguments = [
            "import", file, "--store", store, "--model", Fixtures.peopleModel, "--entity", "Person", "--on-conflict",
            "update", "--atomic", "false",
            "--batch-size", "400",
        ]
        let result = try runFerry(arguments)
        try #require(result.exitCode == 2, "\(result)")
        try #require(try StoreSnapshot.integers(store, "SELECT count(*) FROM Person") == [2400])
        return (file, store, arguments)
    }

    /// Runs the resume and checks that it was refused with exit 64 and `message`, the store and
    /// its checkpoint as they were.
    static func expectRefusal(
        _ arguments: [String], store: String, _ message: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = try StoreSnapshot.take(store, excluding: [])
        let result = try runFerry(arguments)
        #expect(result.exitCode == 64, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(message), "\(result)", sourceLocation: sourceLocation)
        #expect(
            try StoreSnapshot.take(store, excluding: []) == before, "a refused resume touches nothing",
            sourceLocation: sourceLocation)
    }

    @Test("a source that grew, shrank or changed in its read part is refused, naming the file")
    func changedSource() throws {
        let directory = TemporaryDirectory()
        let (file, store, arguments) = try Self.interrupted(directory)
        let original = try String(contentsOfFile: file, encoding: .utf8)
        try (original + "3001,x@example.com,X,1\n").write(toFile: file, atomically: false, encoding: .utf8)
        try Self.expectRefusal(
            arguments + ["--resume"], store: store, "\(file): error: cannot resume: the file grew from")
        try String(original.dropLast(30)).write(toFile: file, atomically: false, encoding: .utf8)
        try Self.expectRefusal(arguments + ["--resume"], store: store, "cannot resume: the file shrank from")
        try original.replacingOccurrences(of: "Name 10,", with: "Nome 10,").write(
            toFile: file, atomically: false, encoding: .utf8)
        try Self.expectRefusal(arguments + ["--resume"], store: store, "bytes of the file changed")
        // The same bytes with a new modification time: the hash is the truth, the resume goes on
        // (and stops again at the refused record, exit 2).
        try original.write(toFile: file, atomically: false, encoding: .utf8)
        let resumed = try runFerry(arguments + ["--resume"])
        #expect(resumed.exitCode == 2, "\(resumed)")
        #expect(
            resumed.stderr.contains("people.csv:2501:"),
            "the refused record is located where a clean run finds it: \(resumed)")
    }

    @Test("a changed conflict policy is refused, naming the old and the new one")
    func changedDefinition() throws {
        let directory = TemporaryDirectory()
        let (_, store, arguments) = try Self.interrupted(directory)
        var changed = arguments
        changed[changed.firstIndex(of: "update")!] = "keep"
        try Self.expectRefusal(
            changed + ["--resume"], store: store,
            "cannot resume step 1 import Person: its on_conflict changed since the interrupted run")
    }

    @Test("nothing to resume, an atomic step, a job without an interrupted run: refused")
    func nothingToResume() throws {
        let directory = TemporaryDirectory()
        let (file, store, arguments) = try Self.interrupted(directory)
        var atomic = arguments
        atomic[atomic.firstIndex(of: "false")!] = "true"
        try Self.expectRefusal(
            atomic + ["--resume"], store: store,
            "step 1 import Person is atomic: an interrupted run committed nothing, so there is nothing to resume")
        let fresh = directory.file("fresh.sqlite")
        _ = try runFerry([
            "import", try directory.write("seed.csv", "id,email,name,age\n1,a@example.com,A,1\n"), "--store", fresh,
            "--model", Fixtures.peopleModel, "--entity", "Person",
        ])
        var other = arguments
        other[other.firstIndex(of: store)!] = fresh
        try Self.expectRefusal(
            other + ["--resume"], store: fresh,
            "no interrupted import of step 1 (import Person from \(file)) to resume; run without --resume")
        let job = try directory.write(
            "job.yml",
            "job: nothing\nstore: \(fresh)\nmodel: \(Fixtures.peopleModel)\nsteps:\n  - import: {source: \(file), entity: Person, atomic: false}\n"
        )
        try Self.expectRefusal(
            ["run", job, "--resume"], store: fresh, "no interrupted import of job nothing to resume")
    }

    @Test(
        "a job resumes at its interrupted step: the step before is reported with its logged counts, the counts go on from the checkpoint; a changed mapping is refused"
    )
    func jobResume() throws {
        let directory = TemporaryDirectory()
        let (file, _, _) = try Self.interrupted(directory)
        let seed = try directory.write(
            "seed.csv", "id,email,name,age\n900001,a@example.com,A,1\n900002,b@example.com,B,2\n")
        let store = directory.file("job.sqlite")
        func job(_ extra: String) throws -> String {
            try directory.write(
                "job.yml",
                "job: people\nstore: \(store)\nmodel: \(Fixtures.peopleModel)\nsteps:\n  - import: {source: \(seed), entity: Person}\n"
                    + "  - import: {source: \(file), entity: Person, atomic: false, batch_size: 400\(extra)}\n")
        }
        let first = try runFerry(["run", try job("")])
        try #require(first.exitCode == 2, "\(first)")
        let report = directory.file("report.json")
        let resumed = try runFerry(["run", try job(""), "--resume", "--report", report])
        #expect(resumed.exitCode == 2, "the resume goes on and meets the refused record again: \(resumed)")
        #expect(resumed.stderr.contains("people.csv:2501:"), "\(resumed)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        let steps = try #require(json["steps"] as? [[String: Any]])
        #expect(steps.count == 2)
        #expect(
            steps.first?["index"] as? Int == 1 && steps.first?["inserted"] as? Int == 2
                && steps.first?["outcome"] as? String == "succeeded", "\(steps)")
        // 2,400 committed before, 99 more inserted by the resume before the batch holding record 2,500 rolled back.
        #expect(
            steps.last?["read"] as? Int == 2500 && steps.last?["inserted"] as? Int == 2499,
            "the resumed step counts the committed records: \(steps)")
        #expect(
            try StoreSnapshot.integers(store, "SELECT count(*) FROM Person") == [2402],
            "the seed step was not run again")
        try Self.expectRefusal(
            ["run", try job(", fields: {name: email}"), "--resume"], store: store,
            "cannot resume step 2 import Person: its mapping changed since the interrupted run")
        let reordered = try directory.write(
            "reordered.yml",
            "job: people\nstore: \(store)\nmodel: \(Fixtures.peopleModel)\nsteps:\n  - import: {source: \(seed), entity: Person}\n  - verify: {counts: {Person: 2402}}\n"
        )
        try Self.expectRefusal(
            ["run", reordered, "--resume"], store: store,
            "its run was interrupted in step 2, which is no longer an import step")
    }

    @Test(
        "ferry import --resume repeats an inferring import's --type and --unique: accepted, the entity has them already"
    )
    func inferredResume() throws {
        let directory = TemporaryDirectory()
        let rows = (1...3000).map { i in "\(i == 2500 ? 7 : i),Name \(i)\n" }
        let file = try directory.write("items.csv", "id,name\n" + rows.joined())
        let store = directory.file("s.sqlite")
        let arguments = [
            "import", file, "--store", store, "--unique", "id", "--type", "name=string", "--atomic", "false",
            "--batch-size", "400",
        ]
        let first = try runFerry(arguments)
        try #require(first.exitCode == 2, "the duplicate id 7 at record 2500 fails the import: \(first)")
        let committed = try StoreSnapshot.integers(store, "SELECT count(*) FROM items")
        #expect(committed.first ?? 0 > 0)
        let resumed = try runFerry(arguments + ["--resume"])
        #expect(resumed.exitCode == 2, "\(resumed)")
        #expect(resumed.stderr.contains("items.csv:2501:"), "\(resumed)")
        #expect(
            try StoreSnapshot.integers(store, "SELECT count(*) FROM items") == committed,
            "the resume's batch with the duplicate rolled back")
        let other = try runFerry([
            "import", file, "--store", store, "--unique", "name", "--atomic", "false", "--resume",
        ])
        #expect(
            other.exitCode == 64 && other.stderr.contains("--unique applies only when a model is inferred"), "\(other)")
    }

    @Test("a JSON document resumes by record number: the record that stops it again is located as in the first run")
    func jsonDocument() throws {
        let directory = TemporaryDirectory()
        let records = (1...3000).map { i in
            "{\"id\": \(i), \"email\": \"p\(i)@example.com\", \"age\": \(i == 2500 ? 200 : i % 90)}"
        }
        let file = try directory.write("people.json", "{\"people\": [\n" + records.joined(separator: ",\n") + "\n]}\n")
        let store = directory.file("s.sqlite")
        let arguments = [
            "import", file, "--store", store, "--model", Fixtures.peopleModel, "--entity", "Person", "--json-pointer",
            "/people", "--atomic", "false",
            "--batch-size", "400",
        ]
        let first = try runFerry(arguments)
        try #require(first.exitCode == 2, "\(first)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Person") == [2400])
        let resumed = try runFerry(arguments + ["--resume"])
        #expect(resumed.exitCode == 2, "\(resumed)")
        #expect(resumed.stderr == first.stderr, "the same error at the same place")
        #expect(resumed.stderr.contains("people.json:2501:"), "\(resumed)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Person") == [2400])
    }

    @Test("SIGINT names the command that resumes; running it completes the import as a clean run would")
    func afterInterrupt() throws {
        let directory = TemporaryDirectory()
        let file = try directory.write("people.csv", ResumeKillTests.csv(1...60_000))
        let store = directory.file("s.sqlite")
        let arguments = [
            "import", file, "--store", store, "--model", Fixtures.peopleModel, "--entity", "Person", "--on-conflict",
            "update", "--atomic", "false",
            "--batch-size", "500", "--rejects", directory.file("rejects.ndjson"), "--max-rejects", "100%",
        ]
        let process = try FerryProcess(arguments)
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning && ContinuousClock.now < deadline {
            if FileManager.default.fileExists(atPath: store),
                try ResumeKillTests.tableExists(store, "ferry_import_progress"),
                try StoreSnapshot.integers(store, "SELECT count(*) FROM ferry_import_progress") == [1]
            {
                break
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        process.send(SIGINT)
        let stopped = try process.wait()
        try #require(stopped.exitCode == 130, "\(stopped)")
        #expect(
            stopped.stderr.contains("to continue after them, run: ferry \(arguments.joined(separator: " ")) --resume"),
            "\(stopped)")
        let resumed = try runFerry(arguments + ["--resume"])
        #expect(resumed.exitCode == 0, "\(resumed)")
        let cleanStore = directory.file("clean.sqlite")
        var clean = arguments
        clean[clean.firstIndex(of: store)!] = cleanStore
        clean[clean.firstIndex(of: directory.file("rejects.ndjson"))!] = directory.file("clean.ndjson")
        #expect(try runFerry(clean).exitCode == 0)
        #expect(try ResumeKillTests.snapshot(store) == ResumeKillTests.snapshot(cleanStore))
        #expect(
            try String(contentsOfFile: directory.file("rejects.ndjson"), encoding: .utf8)
                == String(contentsOfFile: directory.file("clean.ndjson"), encoding: .utf8))
    }
}
