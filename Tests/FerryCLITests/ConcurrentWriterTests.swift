import FerryTestSupport
import Foundation
import Testing

/// Writers that overlap (issue 14, "data lost with exit 0"), against the real binary: an import
/// started during a migration, two migrations, two rebuilds and two imports at once, and a WAL
/// store with a reader open while it migrates. Each case lost rows, or swapped in the wrong file,
/// with exit 0 before ferry held its writer lock (`STORE.ferry-lock`) from a migration's first read
/// to its swap. Serialized: the overlaps depend on timing.
@Suite("Concurrent writers", .serialized)
struct ConcurrentWriterTests {
    /// Waits until `condition` holds (or `process` ended, or 60 s passed).
    static func wait(for process: FerryProcess, until condition: () -> Bool) {
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning && !condition() && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.001)
        }
    }

    static func count(_ store: String) throws -> Int64? {
        try StoreSnapshot.integers(store, "SELECT count(*) FROM Person").first
    }

    @Test("an import that waited for a migration never writes into the retired file", arguments: 0..<2)
    func importDuringMigration(round: Int) throws {
        let dir = TemporaryDirectory()
        let store = try MigrationCrashTests.v1Store(in: dir)
        let migration = try FerryProcess(MigrationCrashTests.migrateArguments(store))
        Self.wait(for: migration) { FileManager.default.fileExists(atPath: store + ".ferry-migrating-\(round + 1)") }
        // Version 1's model: the store it opened is at version 1 until the migration swaps it.
        let importer = try FerryProcess([
            "import", BigFiles.other, "--store", store, "--model", Fixtures.peopleModel, "--entity", "Person",
            "--quiet",
        ])
        let migrated = try migration.wait()
        let imported = try importer.wait()

        #expect(migrated.exitCode == 0, "\(migrated)")
        #expect(try MigrationCrashTests.version(of: store) == "3")
        let backup = try #require(try MigrationCrashTests.leftovers(of: store).backups.first)
        // The backup is the original as it was: nothing was written into it.
        #expect(try Self.count(dir.file(backup)) == Int64(BigFiles.rows))
        if imported.exitCode == 0 {
            // It ran before the migration: the migrated store has its rows.
            #expect(try Self.count(store) == Int64(BigFiles.rows + BigFiles.otherRows), "\(imported)")
        } else {
            // It waited, then found the store at version 3: a clear refusal, nothing written.
            #expect(imported.exitCode == 64, "\(imported)")
            #expect(imported.stderr.contains("version 3"), "\(imported)")
            #expect(try Self.count(store) == Int64(BigFiles.rows))
        }
    }

    @Test("two migrations of one store at once: the second waits and finds nothing to do")
    func twoMigrations() throws {
        let dir = TemporaryDirectory()
        let store = try MigrationCrashTests.v1Store(in: dir)
        let first = try FerryProcess(MigrationCrashTests.migrateArguments(store))
        Self.wait(for: first) { FileManager.default.fileExists(atPath: store + ".ferry-migrating-1") }
        let second = try FerryProcess(MigrationCrashTests.migrateArguments(store))
        let results = [try first.wait(), try second.wait()]

        for result in results { #expect(result.exitCode == 0, "\(result)") }
        #expect(try MigrationCrashTests.version(of: store) == "3")
        #expect(try Self.count(store) == Int64(BigFiles.rows))
        #expect(try StoreSnapshot.texts(store, "PRAGMA integrity_check") == [["ok"]])
        let (scratch, backups) = try MigrationCrashTests.leftovers(of: store)
        #expect(scratch.isEmpty)
        #expect(backups.count == 1, "one migration ran, the other found the store at version 3: \(backups)")
    }

    @Test("overlapping rebuilds: each builds its own file and swaps it in whole", arguments: 0..<3)
    func overlappingRebuilds(round: Int) throws {
        let dir = TemporaryDirectory()
        let store = dir.file("people.sqlite")
        let arguments = [
            "run", Fixtures.path("jobs/people-rebuild.yml"), "--param", "store=\(store)", "--param",
            "data=\(BigFiles.big)", "--quiet",
        ]
        let first = try FerryProcess(arguments)
        Thread.sleep(forTimeInterval: 0.2 + 0.3 * Double(round))
        let second = try FerryProcess(arguments)
        let results = [try first.wait(), try second.wait()]

        for result in results { #expect(result.exitCode == 0, "\(result)") }
        #expect(try Self.count(store) == Int64(BigFiles.rows))
        #expect(try StoreSnapshot.texts(store, "PRAGMA integrity_check") == [["ok"]])
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
        #expect(names.filter { $0.contains("ferry-rebuild") }.isEmpty, "\(names)")
    }

    @Test("two imports into one store at once both succeed, and both after-import counts agree", arguments: 0..<3)
    func twoImports(round: Int) throws {
        let dir = TemporaryDirectory()
        let store = try MigrationCrashTests.v1Store(in: dir, rows: 1...1_000)
        let job = Fixtures.path("jobs/people.yml")
        func arguments(_ data: String) -> [String] {
            [
                "run", job, "--param", "store=\(store)", "--param", "data=\(data)", "--param",
                "rejects=\(dir.file("rejects-\(UUID()).ndjson"))", "--quiet",
            ]
        }
        let first = try FerryProcess(arguments(BigFiles.other))
        Thread.sleep(forTimeInterval: 0.05 * Double(round))
        let second = try FerryProcess(arguments(BigFiles.third))
        let results = [try first.wait(), try second.wait()]

        for result in results { #expect(result.exitCode == 0, "\(result)") }
        #expect(try Self.count(store) == Int64(1_000 + 2 * BigFiles.otherRows))
    }

    // MARK: - WAL stores with a reader open

    /// A version 1 store in WAL mode whose last 500 rows are only in its `-wal`.
    static func walStore(in dir: TemporaryDirectory) throws -> (store: String, writer: StoreConnection) {
        let store = try MigrationCrashTests.v1Store(in: dir, rows: 1...20_000)
        let writer = try appendPeopleInWALMode(store, ids: 900_001...900_500)
        return (store, writer)
    }

    @Test("a reader in a transaction on a WAL store: the migration refuses clearly and changes nothing")
    func walReaderInTransaction() throws {
        let dir = TemporaryDirectory()
        let (store, writer) = try Self.walStore(in: dir)
        let reader = try StoreConnection(store)
        try reader.execute("BEGIN")
        try reader.execute("SELECT count(*) FROM Person")
        let walBytes = fileSize(store + "-wal")

        let result = try runFerry(MigrationCrashTests.migrateArguments(store))

        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("another process is reading it"), "\(result)")
        #expect(!result.stderr.contains("ferry-migrating"), "no hidden file names: \(result)")
        try reader.execute("COMMIT")
        #expect(try MigrationCrashTests.version(of: store) == "1")
        #expect(try Self.count(store) == 20_500)
        #expect(fileSize(store + "-wal") ?? 0 <= walBytes ?? 0)
        let (scratch, backups) = try MigrationCrashTests.leftovers(of: store)
        #expect(scratch.isEmpty && backups.isEmpty)
        withExtendedLifetime(writer) {}
    }

    @Test(
        "a WAL store that another process has open: the migration refuses, naming the process, and changes nothing; once it is closed the migration runs, and the backup has the -wal's commits"
    )
    func walConnectionOpen() throws {
        let dir = TemporaryDirectory()
        var (store, writer): (String, StoreConnection?) = try Self.walStore(in: dir)
        var reader: StoreConnection? = try StoreConnection(store)
        try reader?.execute("SELECT count(*) FROM Person")

        // The open connections would keep the replaced file's -wal: their next write would be lost.
        let refused = try runFerry(MigrationCrashTests.migrateArguments(store))
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.stderr.contains("another process has it open (pid \(getpid())"), "\(refused)")
        #expect(!refused.stderr.contains("ferry-migrating"), "no hidden file names: \(refused)")
        #expect(try MigrationCrashTests.version(of: store) == "1")
        try reader?.execute("INSERT INTO Person (id, email, name, age) VALUES (900501, 'r@example.com', 'R', 1)")
        #expect(try Self.count(store) == 20_501)
        let (scratch, backups) = try MigrationCrashTests.leftovers(of: store)
        #expect(scratch.isEmpty && backups.isEmpty)

        // Closed, the store migrates with every row; the backup has them too.
        try writer?.execute("SELECT 1")
        reader = nil
        writer = nil
        let rerun = try runFerry(MigrationCrashTests.migrateArguments(store))
        #expect(rerun.exitCode == 0, "\(rerun)")
        #expect(try MigrationCrashTests.version(of: store) == "3")
        #expect(try Self.count(store) == 20_501)
        for backup in try MigrationCrashTests.leftovers(of: store).backups {
            #expect(try Self.count(dir.file(backup)) == 20_501, "\(backup) lacks commits of the -wal")
        }
    }
}

/// Messages name the user's store, never ferry's hidden work files (issue 14).
@Suite("Work files stay hidden in messages")
struct WorkFileNameTests {
    @Test("a failing verify step of a rebuild names the store being rebuilt, not its work file")
    func rebuildMessages() throws {
        let dir = TemporaryDirectory()
        let data = try dir.write(
            "people.csv", "id,email,name,age\n1,ann@example.com,Ann,34\n2,bob@example.com,Bob,41\n")
        let job = try dir.write(
            "rebuild.yml",
            """
            job: rebuild-and-verify
            store: {path: people.sqlite, rebuild: true}
            model: \(Fixtures.peopleModel)
            steps:
              - import: {source: \(data), entity: Person}
              - verify: {counts: {Person: 3}}
            """)

        let result = try runFerry(["run", job, "--report", dir.file("report.json")])

        #expect(result.exitCode == 3, "\(result)")
        #expect(!result.stdout.contains("ferry-rebuild") && !result.stderr.contains("ferry-rebuild"), "\(result)")
        let report = try String(contentsOfFile: dir.file("report.json"), encoding: .utf8)
        #expect(!report.contains("ferry-rebuild"), "\(report)")
        #expect(
            FileManager.default.fileExists(atPath: dir.file("people.sqlite")) == false,
            "a failed rebuild swaps nothing in")
    }
}
