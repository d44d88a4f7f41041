import FerryTestSupport
import Foundation
import Testing

/// Issue 23: `ferry migrate` must hold SQLite's write lock on the store from before it reads it
/// until the new file is in place, against programs that do not know ferry's lock file (the
/// `sqlite3` shell, an app). Before, a write by `sqlite3` during a migration of a rollback-journal
/// store succeeded and was missing afterwards: the migration's connection lost its POSIX lock as
/// soon as ferry read the store's header through another descriptor. Each case stops the
/// migration (SIGSTOP) while its first scratch file exists, writes with `sqlite3`, and lets it go.
@Suite("ferry migrate holds SQLite's write lock against other programs", .serialized)
struct MigrationSQLiteLockTests {
    /// What happened to `sqlite3` writes made while a migration was stopped midway.
    struct Outcome {
        var migration: ProcessResult
        /// The write without a busy timeout, made while the migration was stopped.
        var immediate: ProcessResult
        /// A write that waits for the lock (`.timeout 20000`), started while the migration was
        /// stopped, finished after it.
        var waiting: ProcessResult
    }

    /// Migrates `store` with `arguments`, stopping ferry while `store.ferry-migrating-1` exists to
    /// run `insert(id)` through `sqlite3` (once at once, once waiting for the lock).
    static func writeDuringMigration(
        _ store: String, arguments: [String], insert: (Int) -> String
    ) throws -> Outcome {
        let migration = try FerryProcess(arguments)
        let scratch = store + ".ferry-migrating-1"
        let deadline = ContinuousClock.now + .seconds(60)
        while migration.isRunning && !FileManager.default.fileExists(atPath: scratch) && ContinuousClock.now < deadline
        {
            usleep(200)
        }
        migration.send(SIGSTOP)
        let stoppedMidway = FileManager.default.fileExists(atPath: scratch)
        let immediate = try runProgram("/usr/bin/sqlite3", [store, insert(1)])
        let waiting = try FerryProcess(
            ["-cmd", ".timeout 20000", store, insert(2)], executable: "/usr/bin/sqlite3")
        Thread.sleep(forTimeInterval: 0.3)
        migration.send(SIGCONT)
        let migrated = try migration.wait()
        let waited = try waiting.wait()
        #expect(stoppedMidway, "the migration ended before it could be stopped midway")
        return Outcome(migration: migrated, immediate: immediate, waiting: waited)
    }

    /// Checks the outcome: the immediate write failed as locked and is not in the store, and the
    /// waiting write either failed or is in the store. The migration succeeded, or (`wal`) it
    /// refused because the waiting writer had the store open when the new file was ready: in WAL
    /// mode a connection opened before the swap would commit into the replaced file's -wal, so
    /// the migration leaves the store as it was and the waiting write lands in it.
    static func check(_ outcome: Outcome, store: String, wal: Bool = false, count: (Int) throws -> Int) throws {
        let refusedForOpenConnection =
            wal && outcome.migration.exitCode == 1
            && outcome.migration.stderr.contains("another process has it open (pid ")
            && outcome.migration.stderr.contains("(sqlite3)")
        #expect(outcome.migration.exitCode == 0 || refusedForOpenConnection, "\(outcome.migration)")
        #expect(outcome.immediate.exitCode != 0, "the write during the migration succeeded: \(outcome.immediate)")
        #expect(outcome.immediate.stderr.contains("database is locked"), "\(outcome.immediate)")
        #expect(try count(1) == 0)
        let waited = try count(2)
        if outcome.waiting.exitCode == 0 {
            #expect(waited == 1, "a write that waited succeeded but is not in the store")
        } else {
            #expect(outcome.waiting.stderr.contains("attempt to write a readonly database"), "\(outcome.waiting)")
            #expect(waited == 0)
        }
        // Afterwards the migrated store takes writes as usual.
        let after = try runProgram("/usr/bin/sqlite3", [store, "SELECT 1"])
        #expect(after.exitCode == 0, "\(after)")
    }

    static func people(_ store: String) -> (Int) -> String {
        { id in "INSERT INTO Person (id, email, name, age) VALUES (\(900_000 + id), 'x\(id)@example.com', 'X', 1)" }
    }

    static func peopleCount(_ store: String) -> (Int) throws -> Int {
        { id in Int(try sqlite3(store, "SELECT count(*) FROM Person WHERE id = \(900_000 + id)").trimmed) ?? -1 }
    }

    @Test("a ferry store in rollback-journal mode: a sqlite3 write during the migration is refused, never lost")
    func ferryStoreRollbackJournal() throws {
        let directory = TemporaryDirectory("ferry-migrate-lock")
        let store = try MigrationCrashTests.v1Store(in: directory)
        let outcome = try Self.writeDuringMigration(
            store, arguments: MigrationCrashTests.migrateArguments(store), insert: Self.people(store))
        try Self.check(outcome, store: store, count: Self.peopleCount(store))
        #expect(try MigrationCrashTests.version(of: store) == "3")
    }

    @Test("a ferry store in WAL mode: a sqlite3 write during the migration is refused, never lost")
    func ferryStoreWAL() throws {
        let directory = TemporaryDirectory("ferry-migrate-lock")
        let store = try MigrationCrashTests.v1Store(in: directory)
        #expect(try sqlite3(store, "PRAGMA journal_mode = WAL").trimmed == "wal")
        let outcome = try Self.writeDuringMigration(
            store, arguments: MigrationCrashTests.migrateArguments(store), insert: Self.people(store))
        try Self.check(outcome, store: store, wal: true, count: Self.peopleCount(store))
        #expect(try sqlite3(store, "PRAGMA journal_mode").trimmed == "wal")
    }

    @Test("a job's 'migrate: auto' holds the lock too")
    func jobMigratingAutomatically() throws {
        let directory = TemporaryDirectory("ferry-migrate-lock")
        let store = try MigrationCrashTests.v1Store(in: directory)
        let job = try directory.write(
            "job.yml",
            """
            store: {path: \(store), migrate: auto}
            model: \(MigrationCrashTests.bundle)
            steps:
              - verify: {counts: {Person: \(BigFiles.rows)}}

            """)
        let outcome = try Self.writeDuringMigration(
            store, arguments: ["run", job, "--quiet"], insert: Self.people(store))
        try Self.check(outcome, store: store, count: Self.peopleCount(store))
    }

    /// The Revised app's version-3 Core Data store with 200,000 more posts (so that the migration
    /// takes long enough to be stopped midway), in `journalMode`.
    static func bigCoreDataStore(in directory: TemporaryDirectory, journalMode: String) throws -> String {
        let store = try CoreDataMigrateReadInPlaceTests.version3Store(in: directory)
        let filled = try runProgram(
            "/usr/bin/sqlite3",
            [
                store,
                """
                WITH RECURSIVE n(i) AS (SELECT 1000 UNION ALL SELECT i + 1 FROM n WHERE i < 201000)
                INSERT INTO ZPOST (Z_PK, Z_ENT, Z_OPT, ZDATE, ZHEXCOLOR, ZPOSTID)
                SELECT i, 1, 1, 600000000, 'ABCDEF', 'P-' || i FROM n;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 201000 WHERE Z_ENT = 1;
                PRAGMA journal_mode = \(journalMode);
                """,
            ])
        #expect(filled.exitCode == 0, "\(filled)")
        return store
    }

    static func posts(_ store: String) -> (Int) -> String {
        { id in
            "INSERT INTO ZPOST (Z_PK, Z_ENT, Z_OPT, ZDATE, ZHEXCOLOR, ZPOSTID) VALUES (\(900_000 + id), 1, 1, 1, 'X', 'X\(id)')"
        }
    }

    static func postCount(_ store: String) -> (Int) throws -> Int {
        { id in Int(try sqlite3(store, "SELECT count(*) FROM ZPOST WHERE Z_PK = \(900_000 + id)").trimmed) ?? -1 }
    }

    @Test(
        "a Core Data store, rollback journal and WAL: a sqlite3 write during the migration is refused, never lost",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)),
        arguments: ["delete", "wal"])
    func coreDataStore(journalMode: String) throws {
        let directory = TemporaryDirectory("ferry-migrate-lock")
        let store = try Self.bigCoreDataStore(in: directory, journalMode: journalMode)
        let outcome = try Self.writeDuringMigration(
            store,
            arguments: [
                "migrate", store, "--model", CoreDataCheckCLITests.package(CoreDataCheckCLITests.revised), "--quiet",
            ],
            insert: Self.posts(store))
        try Self.check(outcome, store: store, wal: journalMode == "wal", count: Self.postCount(store))
        // Every post of the store, and the waiting write when it succeeded.
        let waited = try Self.postCount(store)(2)
        #expect(try sqlite3(store, "SELECT count(*) FROM ZPOST").trimmed == "\(200_013 + waited)")
    }
}

extension String {
    fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
