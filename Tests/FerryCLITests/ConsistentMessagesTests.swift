import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 14, "say the same thing everywhere": exit codes as the README documents them, flags
/// that used to be accepted silently, and `--quiet`, through the real binary.
@Suite("exit codes, refused flags and --quiet (CLI)", .serialized)
struct ConsistentMessagesTests {
    static let people =
        "id,email,name,age\n1,ann@example.com,Ann,34\n2,bob@example.com,Bob,41\n3,cy(at)example.com,Cy,29\n"

    static func prepared() throws -> TemporaryDirectory {
        let directory = TemporaryDirectory()
        try directory.write("people.csv", people)
        let result = try runFerry(
            [
                "import", "people.csv", "--store", "s.sqlite", "--entity", "Person", "--model", Fixtures.peopleModel,
                "--rejects", "r.ndjson", "--quiet",
            ],
            cwd: directory.path)
        #expect(result.exitCode == 0, "\(result)")
        return directory
    }

    @Test("a missing job file or model file is a configuration error (64) naming where it was named")
    func missingDefinitions() throws {
        let directory = try Self.prepared()
        let job = try runFerry(["run", "nope.yml"], cwd: directory.path)
        #expect(job.exitCode == 64, "\(job)")
        #expect(job.stderr == "nope.yml: error: cannot read 'nope.yml': No such file or directory\n")
        let validate = try runFerry(["validate", "nope.yml"], cwd: directory.path)
        #expect(validate.exitCode == 64, "\(validate)")
        try directory.write(
            "j.yml",
            "job: j\nstore: s.sqlite\nmodel: missing.yml\nsteps:\n  - import: {source: people.csv, entity: Person}\n")
        let model = try runFerry(["run", "j.yml"], cwd: directory.path)
        #expect(model.exitCode == 64, "\(model)")
        #expect(model.stderr == "j.yml:3:8: error: model '\(directory.file("missing.yml"))' does not exist\n")
        let flag = try runFerry(
            ["import", "people.csv", "--store", "t.sqlite", "--model", "missing.yml"], cwd: directory.path)
        #expect(flag.exitCode == 64, "\(flag)")
        #expect(
            flag.stderr.contains("missing.yml: error: no model at 'missing.yml': No such file or directory"), "\(flag)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("t.sqlite")))
    }

    @Test(
        "a store that does not exist: exit 1 and the same message for export, update, delete, verify, migrate and store info"
    )
    func missingStore() throws {
        let directory = try Self.prepared()
        let commands: [[String]] = [
            ["export", "--store", "nope.sqlite", "--entity", "Person", "--format", "csv"],
            ["update", "--store", "nope.sqlite", "--entity", "Person", "--where", "id == 1", "--set", "age=3"],
            ["delete", "--store", "nope.sqlite", "--entity", "Person", "--where", "id == 1"],
            ["verify", "nope.sqlite"],
            ["migrate", "nope.sqlite", "--model", Fixtures.peopleModel],
            ["store", "info", "nope.sqlite"],
            ["store", "version", "nope.sqlite", "--model", Fixtures.peopleModel],
        ]
        for arguments in commands {
            let result = try runFerry(arguments, cwd: directory.path)
            #expect(result.exitCode == 1, "\(arguments): \(result)")
            #expect(result.stderr == "error: store 'nope.sqlite' does not exist\n", "\(arguments): \(result)")
            #expect(!FileManager.default.fileExists(atPath: directory.file("nope.sqlite")))
        }
    }

    @Test("flags that were silently accepted are refused with exit 64")
    func refusedFlags() throws {
        let directory = try Self.prepared()
        let base = ["--store", "s.sqlite", "--entity", "Person", "--model", Fixtures.peopleModel]
        let cases: [(arguments: [String], message: String)] = [
            (
                ["import", "people.csv"] + base + ["--json-pointer", "/items"],
                "error: --json-pointer applies to JSON documents, not to csv input 'people.csv'"
            ),
            (
                ["import", "people.csv"] + base + ["--rejects", "x.ndjson", "--max-rejects", "150%"],
                "error: --max-rejects takes a percentage from 0% to 100%, got '150%'"
            ),
            (
                [
                    "update", "--store", "s.sqlite", "--entity", "Person", "--where", "id == 1", "--set", "age=3",
                    "--set", "age=4",
                ], "error: --set gives 'age' twice (#2 'age=4'); set each attribute once"
            ),
        ]
        for (arguments, message) in cases {
            let result = try runFerry(arguments, cwd: directory.path)
            #expect(result.exitCode == 64, "\(arguments): \(result)")
            #expect(result.stderr == message + "\n", "\(arguments): \(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("x.ndjson")))
        #expect(try StoreSnapshot.integers(directory.file("s.sqlite"), "SELECT age FROM Person WHERE id = 1") == [34])
    }

    @Test("--format that contradicts the output's extension warns, and still writes what was asked")
    func formatAgainstExtension() throws {
        let directory = try Self.prepared()
        let result = try runFerry(
            ["export", "--store", "s.sqlite", "--entity", "Person", "--format", "csv", "--output", "x.json"],
            cwd: directory.path)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr.hasPrefix("warning: writing csv to 'x.json', whose extension says json\n"), "\(result)")
        #expect(
            try String(contentsOfFile: directory.file("x.json"), encoding: .utf8).hasPrefix("id,email,name,age\r\n"))
        let quiet = try runFerry(
            [
                "export", "--store", "s.sqlite", "--entity", "Person", "--format", "csv", "--output", "y.json",
                "--quiet",
            ], cwd: directory.path)
        #expect(quiet.exitCode == 0 && quiet.stderr.isEmpty, "\(quiet)")
    }

    @Test("a job with 'steps: []' is refused; validate reports a missing source")
    func emptyStepsAndMissingSources() throws {
        let directory = try Self.prepared()
        try directory.write("empty.yml", "job: e\nstore: s.sqlite\nmodel: \(Fixtures.peopleModel)\nsteps: []\n")
        for command in ["run", "validate"] {
            let result = try runFerry([command, "empty.yml"], cwd: directory.path)
            #expect(result.exitCode == 64, "\(result)")
            #expect(
                result.stderr
                    == "empty.yml:4:8: error: the job's 'steps' list is empty: a job needs at least one step\n",
                "\(result)")
        }
        try directory.write(
            "missing.yml",
            """
            job: m
            store: s.sqlite
            model: \(Fixtures.peopleModel)
            steps:
              - export: {entity: Person, format: csv, output: made.csv}
              - import: {source: made.csv, entity: Person, on_conflict: keep}
              - import: {source: nothere.csv, entity: Person}

            """)
        let result = try runFerry(["validate", "missing.yml"], cwd: directory.path)
        #expect(result.exitCode == 66, "\(result)")
        #expect(
            result.stderr == "missing.yml:7:5: error: source '\(directory.file("nothere.csv"))' does not exist\n",
            "\(result)")
    }

    @Test("a missing input file exits 66 (EX_NOINPUT) in import, run and validate, like a pattern matching nothing")
    func missingInputFileExits66() throws {
        let directory = try Self.prepared()
        let importResult = try runFerry(["import", "nothere.csv", "--store", "fresh.sqlite"], cwd: directory.path)
        #expect(importResult.exitCode == 66, "\(importResult)")
        #expect(
            importResult.errorLines.first == "nothere.csv: error: cannot open 'nothere.csv': No such file or directory",
            "\(importResult)")
        #expect(
            !FileManager.default.fileExists(atPath: directory.file("fresh.sqlite")),
            "nothing is created for a missing input")
        let modelled = try runFerry(
            ["import", "nothere.csv", "--store", "s.sqlite", "--model", Fixtures.peopleModel, "--entity", "Person"],
            cwd: directory.path)
        #expect(modelled.exitCode == 66, "\(modelled)")

        try directory.write(
            "gone.yml",
            """
            job: g
            store: s.sqlite
            model: \(Fixtures.peopleModel)
            steps:
              - import: {source: gone.csv, entity: Person}

            """)
        let run = try runFerry(["run", "gone.yml"], cwd: directory.path)
        #expect(run.exitCode == 66, "\(run)")
        #expect(
            run.errorLines.first
                == "\(directory.file("gone.csv")): error: cannot open '\(directory.file("gone.csv"))': No such file or directory",
            "\(run)")
        let validate = try runFerry(["validate", "gone.yml"], cwd: directory.path)
        #expect(validate.exitCode == 66, "\(validate)")
        #expect(
            validate.stderr == "gone.yml:5:5: error: source '\(directory.file("gone.csv"))' does not exist\n",
            "\(validate)")

        // A definition error beside the missing source: the configuration error's 64 wins.
        try directory.write(
            "both.yml",
            """
            job: b
            store: s.sqlite
            model: \(Fixtures.peopleModel)
            steps:
              - import: {source: gone.csv, entity: Persn}

            """)
        let both = try runFerry(["validate", "both.yml"], cwd: directory.path)
        #expect(both.exitCode == 64, "\(both)")
    }

    @Test("--quiet prints nothing on success: verify, migrate --dry-run, import, export")
    func quietEverywhere() throws {
        let directory = try Self.prepared()
        let commands: [[String]] = [
            ["verify", "s.sqlite", "--quiet"],
            ["migrate", "s.sqlite", "--model", Fixtures.peopleModel, "--dry-run", "--quiet"],
            ["migrate", "s.sqlite", "--model", Fixtures.peopleModel, "--quiet"],
            ["export", "--store", "s.sqlite", "--entity", "Person", "--output", "o.csv", "--quiet"],
            [
                "import", "people.csv", "--store", "s.sqlite", "--entity", "Person", "--on-conflict", "keep",
                "--rejects", "r.ndjson", "--quiet",
            ],
            ["update", "--store", "s.sqlite", "--entity", "Person", "--where", "id == 1", "--set", "age=3", "--quiet"],
        ]
        for arguments in commands {
            let result = try runFerry(arguments, cwd: directory.path)
            #expect(result.exitCode == 0, "\(arguments): \(result)")
            #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(arguments): \(result)")
        }
        // A failed check still prints under --quiet.
        try directory.write("expect.yml", "checks: none\ncounts: {Person: 5}\n")
        let failing = try runFerry(["verify", "s.sqlite", "--expect", "expect.yml", "--quiet"], cwd: directory.path)
        #expect(failing.exitCode == 3, "\(failing)")
        #expect(failing.stdout.contains("count Person"), "\(failing)")
    }

    // MARK: - Running out of disk

    /// 20,000 people: a store of about 2 MB.
    static func manyPeople(in directory: TemporaryDirectory) throws {
        var text = "id,email,name,age\n"
        for id in 1...20_000 {
            text += "\(id),user\(id)@example.com,User \(id) \(String(repeating: "x", count: 40)),\(id % 100)\n"
        }
        try directory.write("many.csv", text)
    }

    /// Checks the message of a store write that failed for lack of room: it names the store,
    /// says the changes were rolled back, and shows no SQL, no SQLite error number, no hidden name.
    static func expectPlainStoreFailure(_ result: ProcessResult, store: String) {
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("store '\(store)'"), "\(result)")
        #expect(result.stderr.contains("rolled back"), "\(result)")
        for raw in ["SQLite error", "INSERT", "UPDATE", "while executing", "NSCocoaErrorDomain", ".ferry-"] {
            #expect(!result.stderr.contains(raw), "'\(raw)' in: \(result)")
        }
    }

    @Test("a store write beyond the file size limit fails in words, names the store and changes nothing")
    func fileSizeLimit() throws {
        let directory = try Self.prepared()
        try Self.manyPeople(in: directory)
        let before = try StoreSnapshot.take(directory.file("s.sqlite"))
        // 512-byte blocks: the 2 MB the import needs do not fit; SIGXFSZ ignored, so writes fail with EFBIG.
        let result = try runFerryInShell(
            "trap '' XFSZ; ulimit -f 300; exec \"$0\" \"$@\"",
            ["import", "many.csv", "--store", "s.sqlite", "--entity", "Person", "--on-conflict", "keep", "--quiet"],
            cwd: directory.path)
        Self.expectPlainStoreFailure(result, store: "s.sqlite")
        #expect(try StoreSnapshot.take(directory.file("s.sqlite")) == before)
    }

    /// True when this process may mount a tmpfs (root outside a locked-down container).
    static let canMountTmpfs: Bool = {
        let probe = NSTemporaryDirectory() + "/ferry-mount-probe-\(getpid())"
        try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard shell("mount -t tmpfs -o size=64k tmpfs '\(probe)'") == 0 else { return false }
        _ = shell("umount '\(probe)'")
        return true
    }()

    @discardableResult
    static func shell(_ command: String) -> Int32 {
        (try? runShell(command + " 2>/dev/null"))?.exitCode ?? -1
    }

    @Test(
        "a full disk: the message says the disk is full, where, and that the store is as it was",
        .enabled(if: canMountTmpfs))
    func diskFull() throws {
        let directory = try Self.prepared()
        try Self.manyPeople(in: directory)
        let small = directory.file("small")
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        #expect(Self.shell("mount -t tmpfs -o size=1m tmpfs '\(small)'") == 0)
        defer { Self.shell("umount '\(small)'") }
        let store = "small/s.sqlite"
        try FileManager.default.copyItem(atPath: directory.file("s.sqlite"), toPath: directory.file(store))
        let before = try StoreSnapshot.take(directory.file(store))
        let result = try runFerry(
            ["import", "many.csv", "--store", store, "--entity", "Person", "--on-conflict", "keep", "--quiet"],
            cwd: directory.path)
        Self.expectPlainStoreFailure(result, store: store)
        #expect(
            result.stderr.contains("error: the disk is full: there is no space left to write store '\(store)'"),
            "\(result)")
        #expect(try StoreSnapshot.take(directory.file(store)) == before)
    }
}
