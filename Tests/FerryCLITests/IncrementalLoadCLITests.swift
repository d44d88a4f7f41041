import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// Incremental loads through the real binary: a database source's `incremental: {column: …}`
/// (the mark kept in the store's run log, advanced with the rows), and a glob's `files: new`
/// (files recorded by path, size and SHA-256), on SQLite and PostgreSQL sources and stores,
/// with ties, kills and `--resume`.
@Suite("Incremental loads: incremental database sources and files: new (CLI)", .serialized)
struct IncrementalLoadCLITests {
    static let model = """
        name: Events
        version: "1"
        entities:
          Event:
            attributes:
              id: {type: int64, unique: true}
              name: string
              updated_at: string
        """

    /// A job reading `events` of the database `${source}` past `updated_at` into `${store}`.
    static func job(
        _ dir: TemporaryDirectory, source: String, column: String = "updated_at", extra: String = ""
    )
        throws -> String
    {
        try dir.write("model.yml", model)
        return try dir.write(
            "job.yml",
            """
            job: nightly
            store: ${store}
            model: \(dir.file("model.yml"))
            steps:
              - import:
                  source:
                    \(source): ${source}
                    table: events
                    incremental: {column: \(column)}
                  entity: Event
                  on_conflict: update
                  atomic: ${atomic:-true}
                  batch_size: ${batch:-10000}
            \(extra)
            """)
    }

    static func run(_ job: String, store: String, source: String, _ more: [String] = []) throws -> ProcessResult {
        try runFerry(["run", job, "--param", "store=\(store)", "--param", "source=\(source)"] + more)
    }

    /// The step's report in a `--report` file.
    static func stepReport(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let steps = try #require(report["steps"] as? [[String: Any]])
        return try #require(steps.first)
    }

    /// The store's events as `id name updated_at` lines, by id (through `ferry export`).
    static func events(_ store: String) throws -> [String] {
        let export = try runFerry([
            "export", "--store", store, "--entity", "Event", "--format", "csv", "--sort", "id", "--output", "-",
            "--quiet",
        ])
        #expect(export.exitCode == 0, "\(export)")
        // CSV lines end with CRLF (RFC 4180).
        return export.stdout.split(whereSeparator: \.isNewline).dropFirst().map(String.init)
    }

    static func sourceDatabase(_ dir: TemporaryDirectory) throws -> (path: String, connection: StoreConnection) {
        let path = dir.file("source.db")
        let connection = try StoreConnection(path, create: true)
        try connection.executeScript(
            """
            CREATE TABLE events(id INTEGER PRIMARY KEY, name TEXT NOT NULL, updated_at TEXT);
            INSERT INTO events VALUES (1, 'a', '2024-01-01 10:00:00'), (2, 'b', '2024-01-01 11:00:00'),
                (3, 'c', '2024-01-01 12:00:00'), (4, 'd', '2024-01-01 12:00:00'), (9, 'never', NULL);
            """)
        return (path, connection)
    }

    @Test(
        "SQLite source: a second run reads only the rows at or past the mark (ties at the mark included, deduplicated), counted and reported"
    )
    func twoRunsWithTies() throws {
        let dir = TemporaryDirectory()
        let (source, connection) = try Self.sourceDatabase(dir)
        let job = try Self.job(dir, source: "sqlite")
        let store = dir.file("store.sqlite")
        let first = try Self.run(job, store: store, source: source, ["--report", dir.file("first.json")])
        #expect(first.exitCode == 0, "\(first)")
        #expect(first.stdout.contains("read 4, inserted 4"), "\(first)")
        #expect(
            first.stdout.contains("incremental updated_at: from the start to 2024-01-01 12:00:00, 4 rows"), "\(first)")
        let firstReport = try #require(try Self.stepReport(dir.file("first.json"))["incremental"] as? [String: Any])
        #expect(firstReport["from"] == nil || firstReport["from"] is NSNull)
        #expect(firstReport["to"] as? String == "2024-01-01 12:00:00")
        #expect(firstReport["rows"] as? Int == 4)

        // New rows: one at the mark's very value (a tie that arrived late), one later, and an
        // update of an old row that moves its timestamp on.
        try connection.executeScript(
            """
            INSERT INTO events VALUES (5, 'e', '2024-01-01 12:00:00'), (6, 'f', '2024-01-01 13:00:00');
            UPDATE events SET name = 'a2', updated_at = '2024-01-01 14:00:00' WHERE id = 1;
            """)
        let second = try Self.run(job, store: store, source: source, ["--report", dir.file("second.json")])
        #expect(second.exitCode == 0, "\(second)")
        // 3, 4 (the ties at the mark, read again and left as they are), 5, 6 and 1: not 2.
        #expect(second.stdout.contains("read 5, inserted 2"), "\(second)")
        #expect(
            second.stdout.contains(
                "incremental updated_at: from 2024-01-01 12:00:00 to 2024-01-01 14:00:00, 5 rows"), "\(second)")
        let secondStep = try Self.stepReport(dir.file("second.json"))
        #expect(secondStep["read"] as? Int == 5)
        #expect(secondStep["inserted"] as? Int == 2)
        #expect((secondStep["incremental"] as? [String: Any])?["from"] as? String == "2024-01-01 12:00:00")
        #expect(
            try Self.events(store) == [
                "1,a2,2024-01-01 14:00:00", "2,b,2024-01-01 11:00:00", "3,c,2024-01-01 12:00:00",
                "4,d,2024-01-01 12:00:00", "5,e,2024-01-01 12:00:00", "6,f,2024-01-01 13:00:00",
            ], "every row once; the row whose column is null is never read")

        // Nothing new: only the row at the mark is read again.
        let third = try Self.run(job, store: store, source: source)
        #expect(third.exitCode == 0, "\(third)")
        #expect(third.stdout.contains("read 1, inserted 0"), "\(third)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT kind, value FROM ferry_incremental") == [
                ["text", "2024-01-01 14:00:00"]
            ])
    }

    @Test("initial: starts the first run at a value; an integer key binds as an integer")
    func initialValue() throws {
        let dir = TemporaryDirectory()
        let (source, _) = try Self.sourceDatabase(dir)
        let job = try Self.job(dir, source: "sqlite", column: "id, initial: 3")
        let store = dir.file("store.sqlite")
        let result = try Self.run(job, store: store, source: source)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("read 3, inserted 3"), "\(result)")
        #expect(result.stdout.contains("incremental id: from 3 to 9, 3 rows"), "\(result)")
        #expect(try StoreSnapshot.texts(store, "SELECT kind, value FROM ferry_incremental") == [["integer", "9"]])
    }

    @Test(
        "bad values: a column the source lacks, 'incremental' without a conflict policy, on a Core Data source: located errors, nothing written"
    )
    func badValues() throws {
        let dir = TemporaryDirectory()
        let (source, _) = try Self.sourceDatabase(dir)
        let job = try Self.job(dir, source: "sqlite", column: "updatd_at")
        let store = dir.file("store.sqlite")
        let missing = try Self.run(job, store: store, source: source)
        #expect(missing.exitCode == 64, "\(missing)")
        #expect(
            missing.stderr.contains(
                "job.yml:9:31: error: the incremental column 'updatd_at' is not a column of \(source) (table events); did you mean 'updated_at'?"
            ), "\(missing)")
        #expect(missing.stderr.contains("its columns: id, name, updated_at"), "\(missing)")
        if FileManager.default.fileExists(atPath: store) {
            #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Event") == [0], "nothing written")
        }

        let noPolicy = try dir.write(
            "nopolicy.yml",
            """
            store: \(store)
            model: \(dir.file("model.yml"))
            steps:
              - import:
                  source: {sqlite: \(source), table: events, incremental: updated_at}
                  entity: Event
            """)
        let refused = try runFerry(["run", noPolicy])
        let line = try String(contentsOfFile: noPolicy, encoding: .utf8).split(separator: "\n")[4]
        let column = try #require(line.range(of: "updated_at}")).lowerBound.utf16Offset(in: line) + 1
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(
            refused.stderr.contains(
                "nopolicy.yml:5:\(column): error: 'incremental' reads the rows at the last committed value"),
            "\(refused)")
        #expect(refused.stderr.contains("the step needs 'on_conflict: keep' or 'on_conflict: update'"), "\(refused)")
    }

    /// Runs `start` killed at a random moment, then resumes (or reruns) until done.
    static func killAndFinish(_ start: [String], store: String, within seconds: Double) throws -> Int {
        var resumed = 0
        let process = try FerryProcess(start)
        Thread.sleep(forTimeInterval: Double.random(in: 0.05...max(0.1, seconds * 0.8)))
        process.kill()
        let killed = try process.wait()
        #expect(killed.wasSignaled || killed.exitCode == 0, "\(killed)")
        for _ in 0..<3 {
            let interrupted =
                (try? StoreSnapshot.integers(store, "SELECT count(*) FROM ferry_import_progress")) ?? [0]
            let succeeded = try? StoreSnapshot.integers(
                store, "SELECT count(*) FROM ferry_runs WHERE outcome = 'succeeded' AND step = 'import'")
            if interrupted == [0], let succeeded, succeeded != [0] { break }
            let command = interrupted != [0] ? start + ["--resume"] : start
            if interrupted != [0] { resumed += 1 }
            let result = try runFerry(command)
            #expect(result.exitCode == 0, "\(command.joined(separator: " ")): \(result)")
        }
        return resumed
    }

    @Test(
        "atomic: false, killed at random moments then resumed: every row once, the mark at the last row; rows added later are read alone"
    )
    func killedThenResumed() throws {
        let dir = TemporaryDirectory()
        let rows = 30_000
        let source = dir.file("source.db")
        let connection = try StoreConnection(source, create: true)
        try connection.executeScript(
            """
            CREATE TABLE events(id INTEGER PRIMARY KEY, name TEXT NOT NULL, updated_at TEXT, seq INTEGER);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
            INSERT INTO events SELECT i, 'n' || i, 't', i / 3 FROM n;
            """)
        let job = try Self.job(dir, source: "sqlite", column: "seq")
        let clean = dir.file("clean.sqlite")
        let started = ContinuousClock.now
        let cleanRun = try Self.run(
            job, store: clean, source: source, ["--param", "atomic=false", "--param", "batch=500"])
        #expect(cleanRun.exitCode == 0, "\(cleanRun)")
        let duration = started.duration(to: .now)
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        var resumed = 0
        for trial in 0..<3 {
            let store = dir.file("store-\(trial).sqlite")
            let start = [
                "run", job, "--param", "store=\(store)", "--param", "source=\(source)", "--param", "atomic=false",
                "--param", "batch=500", "--quiet",
            ]
            resumed += try Self.killAndFinish(start, store: store, within: seconds)
            #expect(
                try StoreSnapshot.texts(store, "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM Event") == [
                    ["\(rows)", "\(rows)", "1", "\(rows)"]
                ], "trial \(trial): every row once")
            #expect(
                try StoreSnapshot.texts(store, "SELECT kind, value FROM ferry_incremental") == [
                    ["integer", "\(rows / 3)"]
                ], "trial \(trial): the mark is the last row's")
            #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM ferry_import_progress") == [0])
        }
        try connection.executeScript(
            "INSERT INTO events VALUES (\(rows + 1), 'late', 't', \(rows / 3 + 1)), (\(rows + 2), 'later', 't', \(rows / 3 + 2))"
        )
        let next = try Self.run(job, store: clean, source: source, ["--param", "atomic=false"])
        #expect(next.exitCode == 0, "\(next)")
        // The row at the mark (30000 / 3 = 10000: id 30000 alone) and the two new ones.
        #expect(next.stdout.contains("read 3, inserted 2"), "\(next)")
        #expect(resumed > 0, "no kill landed between two committed batches")
    }

    /// A job importing `in/*.csv` of a new directory with `files: new`, and `more` keys.
    static func filesJob(more: [String] = []) throws -> (TemporaryDirectory, String) {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("in"), withIntermediateDirectories: true)
        try dir.write("model.yml", model)
        let keys = (["files: new", "entity: Event", "on_conflict: update"] + more).map { "      \($0)\n" }.joined()
        let job = try dir.write(
            "files.yml",
            "job: files\nstore: ${store}\nmodel: \(dir.file("model.yml"))\nsteps:\n  - import:\n"
                + "      source: \(dir.file("in"))/*.csv\n" + keys)
        return (dir, job)
    }

    @Test(
        "files: new imports a new file and a changed one, skips an unchanged one, records each by path, size and SHA-256"
    )
    func newFiles() throws {
        let (dir, job) = try Self.filesJob()
        _ = try dir.write("in/a.csv", "id,name,updated_at\n1,a,x\n2,b,x\n")
        _ = try dir.write("in/b.csv", "id,name,updated_at\n3,c,x\n")
        let store = dir.file("store.sqlite")
        let first = try runFerry(["run", job, "--param", "store=\(store)", "--report", dir.file("first.json")])
        #expect(first.exitCode == 0, "\(first)")
        #expect(first.stdout.contains("read 3, inserted 3"), "\(first)")
        #expect(first.stdout.contains("files: 2 new, 0 already imported"), "\(first)")

        _ = try dir.write("in/c.csv", "id,name,updated_at\n4,d,y\n")
        _ = try dir.write("in/b.csv", "id,name,updated_at\n3,c2,y\n5,e,y\n")
        let second = try runFerry(["run", job, "--param", "store=\(store)", "--report", dir.file("second.json")])
        #expect(second.exitCode == 0, "\(second)")
        #expect(second.stdout.contains("read 3, inserted 2, updated 1"), "\(second)")
        #expect(second.stdout.contains("files: 2 new (1 changed), 1 already imported"), "\(second)")
        let selection = try #require(try Self.stepReport(dir.file("second.json"))["file_selection"] as? [String: Any])
        #expect(selection["new"] as? Int == 2)
        #expect(selection["changed"] as? Int == 1)
        #expect(selection["already_imported"] as? Int == 1)
        #expect(
            try Self.events(store) == ["1,a,x", "2,b,x", "3,c2,y", "4,d,y", "5,e,y"])
        #expect(
            try StoreSnapshot.integers(store, "SELECT count(*) FROM ferry_imported_files") == [4],
            "a.csv, both versions of b.csv, c.csv")

        let third = try runFerry(["run", job, "--param", "store=\(store)"])
        #expect(third.exitCode == 0, "\(third)")
        #expect(third.stdout.contains("read 0, inserted 0"), "\(third)")
        #expect(third.stdout.contains("files: 0 new, 3 already imported"), "\(third)")
    }

    @Test("files: new with atomic: false, killed then resumed: every file's rows once, every file recorded once")
    func newFilesKilledThenResumed() throws {
        let (dir, job) = try Self.filesJob(more: ["atomic: false", "batch_size: 500"])
        for part in 0..<4 {
            let lines = (1...8_000).map { "\(part * 8_000 + $0),n,x\n" }.joined()
            _ = try dir.write("in/part\(part).csv", "id,name,updated_at\n" + lines)
        }
        let clean = dir.file("clean.sqlite")
        let started = ContinuousClock.now
        #expect(try runFerry(["run", job, "--param", "store=\(clean)"]).exitCode == 0)
        let duration = started.duration(to: .now)
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        for trial in 0..<3 {
            let store = dir.file("store-\(trial).sqlite")
            _ = try Self.killAndFinish(
                ["run", job, "--param", "store=\(store)", "--quiet"], store: store, within: seconds)
            #expect(
                try StoreSnapshot.texts(store, "SELECT count(*), count(DISTINCT id) FROM Event") == [
                    ["32000", "32000"]
                ],
                "trial \(trial)")
            #expect(
                try StoreSnapshot.integers(store, "SELECT count(*), count(DISTINCT path) FROM ferry_imported_files")
                    == [4], "trial \(trial): four files recorded")
            let again = try runFerry(["run", job, "--param", "store=\(store)"])
            #expect(again.stdout.contains("files: 0 new, 4 already imported"), "trial \(trial): \(again)")
        }
    }
}

/// The same incremental reads with PostgreSQL as the source and as the store.
@Suite(
    "Incremental loads on PostgreSQL (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct IncrementalLoadPostgresCLITests {
    @Test(
        "PostgreSQL source (timestamptz with microseconds) into a PostgreSQL store and a SQLite store: two runs, ties, the same counts"
    )
    func postgresSourceAndStore() throws {
        let admin = try PostgresConnection(PostgresTestServer.requireURL())
        let schema = "ferry_incr_" + UUID().uuidString.lowercased().replacing("-", with: "").prefix(12)
        let storeSchema = schema + "_store"
        defer {
            _ = try? admin.execute("DROP SCHEMA IF EXISTS \(schema) CASCADE")
            _ = try? admin.execute("DROP SCHEMA IF EXISTS \(storeSchema) CASCADE")
        }
        try admin.executeScript(
            """
            CREATE SCHEMA \(schema);
            CREATE TABLE \(schema).events(id bigint PRIMARY KEY, name text NOT NULL, updated_at timestamptz);
            INSERT INTO \(schema).events VALUES (1, 'a', '2024-01-01 10:00:00.000001+00'),
                (2, 'b', '2024-01-01 11:00:00.123456+00'), (3, 'c', '2024-01-01 11:00:00.123456+00');
            """)
        let dir = TemporaryDirectory()
        try dir.write(
            "model.yml", IncrementalLoadCLITests.model.replacing("updated_at: string", with: "updated_at: date"))
        let job = try dir.write(
            "job.yml",
            """
            job: pg-nightly
            store: ${store}
            model: \(dir.file("model.yml"))
            steps:
              - import:
                  source:
                    postgresql: ${source}
                    table: events
                    incremental: {column: updated_at}
                  entity: Event
                  on_conflict: keep
            """)
        let base = try PostgresTestServer.requireURL()
        let source = base + "?schema=" + schema
        let stores = [base + "?schema=" + storeSchema, dir.file("store.sqlite")]
        for store in stores {
            let first = try IncrementalLoadCLITests.run(job, store: store, source: source)
            #expect(first.exitCode == 0, "\(first)")
            #expect(first.stdout.contains("read 3, inserted 3"), "\(first)")
            #expect(
                first.stdout.contains(
                    "incremental updated_at: from the start to 2024-01-01 11:00:00.123456+00, 3 rows"),
                "\(first)")
        }
        // A late row at the mark's exact microsecond, one a microsecond later, and none before.
        try admin.executeScript(
            """
            INSERT INTO \(schema).events VALUES (4, 'd', '2024-01-01 11:00:00.123456+00'),
                (5, 'e', '2024-01-01 11:00:00.123457+00'), (6, 'old', '2024-01-01 09:00:00+00');
            """)
        for store in stores {
            let second = try IncrementalLoadCLITests.run(job, store: store, source: source)
            #expect(second.exitCode == 0, "\(second)")
            // 2 and 3 (ties at the mark, kept), 4 and 5; not 1 nor the old 6.
            #expect(second.stdout.contains("read 4, inserted 2, updated 0, skipped 2"), "\(second)")
            #expect(
                second.stdout.contains(
                    "from 2024-01-01 11:00:00.123456+00 to 2024-01-01 11:00:00.123457+00, 4 rows"), "\(second)")
            let ids = try IncrementalLoadCLITests.events(store).map { $0.split(separator: ",").first.map(String.init) }
            #expect(ids == ["1", "2", "3", "4", "5"], "\(store)")
        }
    }
}
