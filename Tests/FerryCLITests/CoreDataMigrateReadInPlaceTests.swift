import FerryTestSupport
import Foundation
import Testing

/// `ferry migrate` reads a Core Data store where it is when its main file holds every commit,
/// instead of through a private copy in the temporary folder: proved by a `TMPDIR` in which no
/// copy can be made. A store whose `-wal` holds frames still needs its copy (to plan without
/// touching the store), and says so when none can be made, changing nothing.
@Suite("ferry migrate reads a complete Core Data store in place", .serialized)
struct CoreDataMigrateReadInPlaceTests {
    static let revised = CoreDataCheckCLITests.revised

    /// A temporary folder that does not exist (nor its parent): no private copy can be made there.
    static func missingTemporaryFolder(in directory: TemporaryDirectory) -> [String: String] {
        ["TMPDIR": directory.file("no-such-folder/tmp")]
    }

    /// A writable copy of the Revised app's version-3 store (12 Posts, 14 Sections, rollback journal).
    static func version3Store(in directory: TemporaryDirectory) throws -> String {
        try CoreDataStoreCLITests.writableCopy(
            CoreDataCheckCLITests.snapshot(revised, "CoreDataMigration_Example_3"), into: directory, name: "App.sqlite")
    }

    /// Two WAL stores of an app that committed one more post (`WAL-1`) to the version-3 store:
    /// `App.sqlite` checkpointed it into the main file, `Pending.sqlite` keeps it in its `-wal`.
    static func writeAheadLogStores(
        in directory: TemporaryDirectory
    ) throws -> (
        checkpointed: String, pending: String
    ) {
        let store = try version3Store(in: directory)
        let pending = directory.file("Pending.sqlite")
        let writer = try StoreConnection(store)
        try writer.execute("PRAGMA journal_mode = WAL")
        try writer.execute("PRAGMA wal_autocheckpoint = 0")
        try writer.execute(
            "INSERT INTO ZPOST (Z_PK, Z_ENT, Z_OPT, ZDATE, ZHEXCOLOR, ZPOSTID) VALUES (201, 1, 1, 600000000, 'ABCDEF', 'WAL-1')"
        )
        try FileManager.default.copyItem(atPath: store, toPath: pending)
        try FileManager.default.copyItem(atPath: store + "-wal", toPath: pending + "-wal")
        try writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        withExtendedLifetime(writer) {}
        return (store, pending)
    }

    static func migrate(_ store: String, env: [String: String]) throws -> ProcessResult {
        try runFerry(
            ["migrate", store, "--model", CoreDataCheckCLITests.package(revised), "--quiet"], env: env)
    }

    @Test(
        "a rollback-journal store at version 3 migrates to 4 read in place: no private copy, values kept, the backup is the original byte for byte",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func rollbackJournalStore() throws {
        let directory = TemporaryDirectory("ferry-cd-in-place")
        let store = try Self.version3Store(in: directory)
        let pristine = try Data(contentsOf: URL(fileURLWithPath: store))
        let posts = try StoreSnapshot.texts(store, "SELECT Z_PK, ZPOSTID, ZHEXCOLOR, ZDATE FROM ZPOST ORDER BY Z_PK")
        let sections = try StoreSnapshot.texts(
            store, "SELECT Z_PK, ZPOST, ZTITLE, ZBODY, ZINDEX FROM ZSECTION ORDER BY Z_PK")

        let result = try Self.migrate(store, env: Self.missingTemporaryFolder(in: directory))
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT Z_PK, ZPOSTID, ZHEXCOLOR, ZDATE FROM ZPOST ORDER BY Z_PK") == posts)
        #expect(
            try StoreSnapshot.texts(store, "SELECT Z_PK, ZPOST, ZTITLE, ZBODY, ZINDEX FROM ZSECTION ORDER BY Z_PK")
                == sections)
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM ZPOST WHERE ZSOFTDELETED = 0") == [12])
        #expect(try StoreSnapshot.texts(store, "PRAGMA integrity_check") == [["ok"]])
        #expect(try StoreSnapshot.texts(store, "PRAGMA journal_mode") == [["delete"]])
        let backup = try #require(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).first {
                $0.hasPrefix("App.sqlite.backup-")
            })
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.file(backup))) == pristine)
        #expect(try MigrationCrashTests.leftovers(of: store).scratch.isEmpty)
    }

    @Test(
        "a WAL store whose -wal was checkpointed migrates read in place and stays in WAL mode; one whose -wal holds frames fails clearly without a private copy, unchanged",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func writeAheadLogStore() throws {
        let directory = TemporaryDirectory("ferry-cd-in-place")
        let (store, pending) = try Self.writeAheadLogStores(in: directory)
        // The app closed: its -wal is empty (as a closed app may leave it), its -shm gone.
        try? FileManager.default.removeItem(atPath: store + "-shm")
        try Data().write(to: URL(fileURLWithPath: store + "-wal"))

        let result = try Self.migrate(store, env: Self.missingTemporaryFolder(in: directory))
        #expect(result.exitCode == 0, "\(result)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM ZPOST WHERE ZSOFTDELETED = 0") == [13])
        #expect(try StoreSnapshot.texts(store, "SELECT ZHEXCOLOR FROM ZPOST WHERE ZPOSTID = 'WAL-1'") == [["ABCDEF"]])
        #expect(try StoreSnapshot.texts(store, "PRAGMA journal_mode") == [["wal"]])
        #expect(try StoreSnapshot.texts(store, "PRAGMA integrity_check") == [["ok"]])

        // Frames in the -wal: the plan reads a private copy, which this TMPDIR cannot hold.
        let before = try FileFingerprint.of(pending)
        let walBefore = try Data(contentsOf: URL(fileURLWithPath: pending + "-wal"))
        let refused = try Self.migrate(pending, env: Self.missingTemporaryFolder(in: directory))
        #expect(refused.exitCode != 0, "\(refused)")
        #expect(refused.stderr.contains("cannot make a private copy of store '\(pending)'"), "\(refused.stderr)")
        #expect(try FileFingerprint.of(pending) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: pending + "-wal")) == walBefore)
        // With a temporary folder, the same store migrates with the row only its -wal held.
        let migrated = try Self.migrate(pending, env: [:])
        #expect(migrated.exitCode == 0, "\(migrated)")
        #expect(try StoreSnapshot.texts(pending, "SELECT ZHEXCOLOR FROM ZPOST WHERE ZPOSTID = 'WAL-1'") == [["ABCDEF"]])
        #expect(try StoreSnapshot.integers(pending, "SELECT count(*) FROM ZPOST WHERE ZSOFTDELETED = 0") == [13])
    }
}
