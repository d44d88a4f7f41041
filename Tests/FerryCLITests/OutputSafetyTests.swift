import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 14, "files destroyed with exit 0" and "never crash": through the real binary, an output
/// that is the store or an input is refused before anything is touched, exports write devices and
/// FIFOs in place, URLs are never file paths, dry runs write nothing, and a message that cannot
/// be written never kills ferry.
@Suite("outputs never destroy data (CLI)", .serialized)
struct OutputSafetyTests {
    static let people = """
        id,email,name,age
        1,ann@example.com,Ann,34
        2,bob@example.com,Bob,41
        3,cy(at)example.com,Cy,29

        """

    /// A folder with `people.csv` and a store `s.sqlite` holding two people.
    static func prepared() throws -> TemporaryDirectory {
        let directory = TemporaryDirectory()
        try directory.write("people.csv", people)
        try directory.write("ok.csv", "id,email,name,age\n1,ann@example.com,Ann,34\n2,bob@example.com,Bob,41\n")
        let result = try runFerry(
            [
                "import", "ok.csv", "--store", "s.sqlite", "--entity", "Person", "--model", Fixtures.peopleModel,
                "--quiet",
            ], cwd: directory.path)
        #expect(result.exitCode == 0, "\(result)")
        return directory
    }

    static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    // MARK: - Outputs that are the store or an input

    @Test("--rejects naming the input is refused (exit 64) and the input keeps its bytes")
    func rejectsIsTheInput() throws {
        let directory = try Self.prepared()
        let before = Self.bytes(directory.file("people.csv"))
        let storeBefore = try StoreSnapshot.take(directory.file("s.sqlite"))
        // The same file by another name: ./people.csv, and a hard link.
        #expect(link(directory.file("people.csv"), directory.file("linked.csv")) == 0)
        for rejects in ["people.csv", "./people.csv", "linked.csv", directory.file("people.csv")] {
            let result = try runFerry(
                [
                    "import", "people.csv", "--store", "s.sqlite", "--entity", "Person", "--model",
                    Fixtures.peopleModel, "--rejects", rejects,
                ], cwd: directory.path)
            #expect(result.exitCode == 64, "\(result)")
            #expect(
                result.stderr.contains("refusing to write --rejects '\(rejects)': it is the input 'people.csv'"),
                "\(result)")
            #expect(Self.bytes(directory.file("people.csv")) == before)
        }
        #expect(try StoreSnapshot.take(directory.file("s.sqlite")) == storeBefore)
    }

    @Test("--report, --output or --junit naming the store, its -wal or the model is refused (exit 64)")
    func outputsThatAreTheStore() throws {
        let directory = try Self.prepared()
        let store = directory.file("s.sqlite")
        let storeBytes = Self.bytes(store)
        let modelBytes = Self.bytes(Fixtures.peopleModel)
        try FileManager.default.createSymbolicLink(atPath: directory.file("alias.sqlite"), withDestinationPath: store)
        let cases: [(arguments: [String], message: String)] = [
            (
                [
                    "import", "people.csv", "--store", "s.sqlite", "--entity", "Person", "--model",
                    Fixtures.peopleModel, "--report", "s.sqlite",
                ], "--report 's.sqlite': it is the store"
            ),
            (
                [
                    "import", "people.csv", "--store", "s.sqlite", "--entity", "Person", "--model",
                    Fixtures.peopleModel, "--report", "alias.sqlite",
                ], "--report 'alias.sqlite': it is the store"
            ),
            (
                ["export", "--store", "s.sqlite", "--entity", "Person", "--format", "csv", "--output", "s.sqlite"],
                "--output 's.sqlite': it is the store"
            ),
            (
                ["export", "--store", "s.sqlite", "--entity", "Person", "--format", "csv", "--output", "s.sqlite-wal"],
                "it is the store's -wal file"
            ),
            (
                [
                    "export", "--store", "s.sqlite", "--entity", "Person", "--output", "people.csv", "--report",
                    "people.csv",
                ], "--report 'people.csv': it is also written as --output"
            ),
            (
                [
                    "export", "--store", "s.sqlite", "--entity", "Person", "--format", "csv", "--model",
                    Fixtures.peopleModel, "--output", Fixtures.peopleModel,
                ], "it is the model"
            ),
            (["verify", "s.sqlite", "--junit", "s.sqlite"], "--junit 's.sqlite': it is the store"),
            (["verify", "s.sqlite", "--report", "s.sqlite-shm"], "it is the store's -shm file"),
            (
                [
                    "update", "--store", "s.sqlite", "--entity", "Person", "--where", "id == 1", "--set", "name=X",
                    "--report", "alias.sqlite",
                ], "it is the store"
            ),
            (
                ["delete", "--store", "s.sqlite", "--entity", "Person", "--where", "id == 1", "--report", "s.sqlite"],
                "it is the store"
            ),
            (["migrate", "s.sqlite", "--model", Fixtures.peopleModel, "--report", "s.sqlite"], "it is the store"),
        ]
        for (arguments, message) in cases {
            let result = try runFerry(arguments, cwd: directory.path)
            #expect(result.exitCode == 64, "\(arguments): \(result)")
            #expect(result.stderr.contains(message), "\(arguments): \(result)")
            #expect(result.stderr.contains("nothing was written"), "\(result)")
            #expect(Self.bytes(store) == storeBytes, "\(arguments) changed the store")
            #expect(Self.bytes(Fixtures.peopleModel) == modelBytes)
        }
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Person") == [2])
    }

    @Test("a job whose rejects file or export output is the store or a source is refused by run and validate")
    func jobOutputsThatAreInputs() throws {
        let directory = try Self.prepared()
        let before = Self.bytes(directory.file("people.csv"))
        try directory.write(
            "job.yml",
            """
            job: unsafe
            store: s.sqlite
            model: \(Fixtures.peopleModel)
            steps:
              - import:
                  source: people.csv
                  entity: Person
                  on_conflict: keep
                  rejects: people.csv
              - export:
                  entity: Person
                  format: csv
                  output: s.sqlite

            """)
        for command in ["run", "validate"] {
            let result = try runFerry([command, "job.yml"], cwd: directory.path)
            #expect(result.exitCode == 64, "\(result)")
            let csv = directory.file("people.csv")
            let store = directory.file("s.sqlite")
            #expect(
                result.stderr.contains(
                    "job.yml:5:5: error: refusing to write the rejects file '\(csv)': it is the source '\(csv)'; nothing was written"
                ), "\(result)")
            #expect(
                result.stderr.contains(
                    "job.yml:10:5: error: refusing to write the export output '\(store)': it is the store '\(store)'; nothing was written"
                ), "\(result)")
        }
        #expect(Self.bytes(directory.file("people.csv")) == before)
        // A --report naming the job's source.
        try directory.write(
            "ok.yml",
            """
            job: fine
            store: s.sqlite
            model: \(Fixtures.peopleModel)
            steps:
              - import: {source: people.csv, entity: Person, on_conflict: keep, rejects: r.ndjson}

            """)
        let report = try runFerry(["run", "ok.yml", "--report", "people.csv"], cwd: directory.path)
        #expect(report.exitCode == 64, "\(report)")
        #expect(
            report.stderr.contains(
                "refusing to write --report 'people.csv': it is the source '\(directory.file("people.csv"))' (ok.yml:5:5)"
            ), "\(report)")
        #expect(Self.bytes(directory.file("people.csv")) == before)
    }

    // MARK: - Export targets that are not regular files

    @Test("export to /dev/full fails clearly (exit 1) and leaves the device a device")
    func exportToFullDevice() throws {
        let directory = try Self.prepared()
        let result = try runFerry(
            ["export", "--store", "s.sqlite", "--entity", "Person", "--format", "csv", "--output", "/dev/full"],
            cwd: directory.path)
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("cannot write '/dev/full': no space left on the device"), "\(result)")
        #expect(!result.stderr.contains(".ferry-"), "a temporary name leaked: \(result)")
        var info = stat()
        #expect(stat("/dev/full", &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFCHR)
    }

    @Test("export to a FIFO writes into the pipe; to a symlink replaces the file it points to")
    func exportToFIFOAndSymlink() throws {
        let directory = try Self.prepared()
        let fifo = directory.file("pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/cat")
        reader.arguments = [fifo]
        let pipe = Pipe()
        reader.standardOutput = pipe
        try reader.run()
        let result = try runFerry(
            [
                "export", "--store", "s.sqlite", "--entity", "Person", "--format", "ndjson", "--output", "pipe",
                "--quiet",
            ], cwd: directory.path)
        let received = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        reader.waitUntilExit()
        #expect(result.exitCode == 0, "\(result)")
        #expect(received.split(separator: "\n").count == 2)
        #expect(received.contains("\"email\":\"ann@example.com\""))
        var info = stat()
        #expect(lstat(fifo, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFIFO, "the FIFO was replaced by a regular file")

        try directory.write("real.csv", "old")
        try FileManager.default.createSymbolicLink(atPath: directory.file("link.csv"), withDestinationPath: "real.csv")
        let linked = try runFerry(
            ["export", "--store", "s.sqlite", "--entity", "Person", "--output", "link.csv", "--quiet"],
            cwd: directory.path)
        #expect(linked.exitCode == 0, "\(linked)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory.file("link.csv")) == "real.csv")
        #expect(
            try String(contentsOfFile: directory.file("real.csv"), encoding: .utf8).hasPrefix(
                "id,email,name,age\r\n1,ann@example.com"))
    }

    // MARK: - URLs are not paths

    @Test(
        "a PostgreSQL URL store is a server, never a folder; another URL store is refused (exit 64); nothing is created"
    )
    func urlStores() throws {
        let directory = try Self.prepared()
        // Nothing listens on port 1: the store is looked for on the server, not on disk.
        let cases: [[String]] = [
            [
                "import", "people.csv", "--store", "postgresql://127.0.0.1:1/shop", "--entity", "Person", "--model",
                Fixtures.peopleModel,
            ],
            ["export", "--store", "postgres://u@127.0.0.1:1/db", "--entity", "Person", "--format", "csv"],
            ["verify", "postgresql://127.0.0.1:1/db"],
            ["store", "info", "postgresql://127.0.0.1:1/db"],
        ]
        for arguments in cases {
            let result = try runFerry(arguments, cwd: directory.path)
            #expect(result.exitCode == 1, "\(arguments): \(result)")
            #expect(result.stderr.contains("cannot connect to postgres"), "\(result)")
        }
        let mysql = try runFerry(
            ["export", "--store", "mysql://h/db", "--entity", "Person", "--format", "csv"], cwd: directory.path)
        #expect(mysql.exitCode == 64, "\(mysql)")
        #expect(
            mysql.stderr.contains(
                "store 'mysql://h/db' is a mysql: URL, not a file path; a store is a SQLite file path or a postgresql:// URL"
            ), "\(mysql)")
        let https = try runFerry(
            [
                "export", "--store", "s.sqlite", "--entity", "Person", "--format", "csv", "--output",
                "https://example.com/x.csv",
            ], cwd: directory.path)
        #expect(https.exitCode == 64, "\(https)")
        #expect(
            https.stderr.contains("--output 'https://example.com/x.csv' is a https: URL, not a file path"), "\(https)")
        try directory.write(
            "pg.yml",
            """
            job: pg
            store: mysql://db.example.com/shop
            model: \(Fixtures.peopleModel)
            steps:
              - import: {source: people.csv, entity: Person}

            """)
        let job = try runFerry(["run", "pg.yml"], cwd: directory.path)
        #expect(job.exitCode == 64, "\(job)")
        #expect(
            job.stderr.contains(
                "pg.yml:2:8: error: store 'mysql://db.example.com/shop' is a mysql: URL, not a file path"), "\(job)")
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(
            !entries.contains {
                $0.hasPrefix("postgres") || $0.hasPrefix("mysql") || $0.hasPrefix("https") || $0.hasPrefix("127.0.0.1")
            }, "\(entries)")
    }

    // MARK: - Dry runs

    @Test("--dry-run neither writes nor truncates a rejects file, nor creates its folder")
    func dryRunWritesNoRejects() throws {
        let directory = try Self.prepared()
        try directory.write("old.ndjson", "keep me\n")
        let result = try runFerry(
            [
                "import", "people.csv", "--store", "s.sqlite", "--entity", "Person", "--model", Fixtures.peopleModel,
                "--on-conflict", "keep", "--rejects", "old.ndjson", "--dry-run",
            ],
            cwd: directory.path)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("rejected 1"), "\(result)")
        #expect(try String(contentsOfFile: directory.file("old.ndjson"), encoding: .utf8) == "keep me\n")
        let nested = try runFerry(
            [
                "import", "people.csv", "--store", "s.sqlite", "--entity", "Person", "--model", Fixtures.peopleModel,
                "--on-conflict", "keep", "--rejects", "new/dir/r.ndjson", "--dry-run",
            ],
            cwd: directory.path)
        #expect(nested.exitCode == 0, "\(nested)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("new")))
    }

    // MARK: - Standard streams that cannot be written

    /// Runs ferry through `sh` with a redirection applied to it (`2>/dev/full`, `2>&-`); the
    /// exit code is the one the shell saw (132 for SIGILL).
    static func ferryRedirected(
        _ arguments: [String], redirection: String, cwd: String
    ) throws -> (exitCode: Int32, output: String) {
        let result = try runFerryInShell("\"$0\" \"$@\" \(redirection); echo \"exit $?\"", arguments, cwd: cwd)
        let code =
            result.stdout.split(separator: "\n").last.flatMap { $0.hasPrefix("exit ") ? Int32($0.dropFirst(5)) : nil }
            ?? -1
        return (code, result.stdout)
    }

    @Test(
        "stderr or stdout on a full disk or closed: ferry finishes its work and exits with its own code",
        arguments: ["2>/dev/full", "2>&-", ">/dev/full 2>&1", ">&- 2>&-"])
    func unwritableStandardStreams(redirection: String) throws {
        let directory = try Self.prepared()
        // A failing step: its error message cannot be written either.
        let failing = try Self.ferryRedirected(
            [
                "import", "people.csv", "--store", "s.sqlite", "--entity", "Person", "--model", Fixtures.peopleModel,
                "--on-conflict", "keep",
            ],
            redirection: redirection, cwd: directory.path)
        #expect(failing.exitCode == 1 || failing.exitCode == 2, "\(failing)")
        // A succeeding import with a summary line and a progress observer.
        let succeeding = try Self.ferryRedirected(
            [
                "import", "people.csv", "--store", "s.sqlite", "--entity", "Person", "--model", Fixtures.peopleModel,
                "--on-conflict", "keep", "--rejects", "r.ndjson",
            ],
            redirection: redirection, cwd: directory.path)
        #expect(succeeding.exitCode == 0, "\(succeeding)")
        #expect(try StoreSnapshot.integers(directory.file("s.sqlite"), "SELECT count(*) FROM Person") == [2])
        #expect(try String(contentsOfFile: directory.file("r.ndjson"), encoding: .utf8).contains("\"record\":3"))
        // A usage error (printed by the argument parser).
        let usage = try Self.ferryRedirected(["import"], redirection: redirection, cwd: directory.path)
        #expect(usage.exitCode == 64, "\(usage)")
    }

    @Test("an export to closed standard output fails with exit 1 instead of dying of SIGPIPE or a trap")
    func exportToClosedPipe() throws {
        let directory = try Self.prepared()
        let result = try Self.ferryRedirected(
            ["export", "--store", "s.sqlite", "--entity", "Person", "--format", "csv"], redirection: ">&-",
            cwd: directory.path)
        #expect(result.exitCode == 1, "\(result)")
    }
}
