import FerryTestSupport
import Foundation
import Testing

/// ferry's diagnostics through the binary: swift-log lines on standard error at the level
/// `FERRY_LOG_LEVEL` or `--verbose` / `-v` chooses; none at the default level (`warning`); an
/// unknown level refused as a usage error before anything runs.
@Suite("ferry logs diagnostics on standard error", .serialized)
struct DiagnosticsLogTests {
    static let revised = CoreDataCheckCLITests.revised

    /// The diagnostic a Core Data store whose `-wal` holds commits gets: it is read through a
    /// private copy instead of in place.
    static func privateCopyLine(_ store: String) -> String {
        "reading Core Data store '\(store)' through a private copy: its -wal holds 1 frame(s) not yet in the main file"
    }

    /// The Revised app's version-3 store with one more post committed only to its `-wal`.
    static func storeWithPendingWAL(in directory: TemporaryDirectory) throws -> String {
        try CoreDataMigrateReadInPlaceTests.writeAheadLogStores(in: directory).pending
    }

    static func migrate(_ store: String, extra: [String] = [], env: [String: String]) throws -> ProcessResult {
        try runFerry(
            extra + ["migrate", store, "--model", CoreDataCheckCLITests.package(revised), "--quiet"], env: env)
    }

    @Test(
        "FERRY_LOG_LEVEL=debug: the private copy of a Core Data store with -wal frames is logged with its reason",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
    func debugLevelLogsThePrivateCopy() throws {
        let directory = TemporaryDirectory("ferry-log")
        let store = try Self.storeWithPendingWAL(in: directory)
        let result = try Self.migrate(store, env: ["FERRY_LOG_LEVEL": "debug"])
        #expect(result.exitCode == 0, "\(result)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let line = try #require(lines.first { $0.contains(Self.privateCopyLine(store)) }, "\(result.stderr)")
        #expect(line.contains(" debug ferry.migrate"), "\(line)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(try StoreSnapshot.texts(store, "SELECT ZHEXCOLOR FROM ZPOST WHERE ZPOSTID = 'WAL-1'") == [["ABCDEF"]])
    }

    @Test(
        "--verbose and -v log at debug, anywhere before the command's arguments end; the level name is case-insensitive",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func verboseFlag() throws {
        for (extra, env) in [
            (["--verbose"], [String: String]()), (["-v"], [:]), ([], ["FERRY_LOG_LEVEL": "DEBUG"]),
        ] {
            let directory = TemporaryDirectory("ferry-log")
            let store = try Self.storeWithPendingWAL(in: directory)
            let result = try Self.migrate(
                store, extra: extra, env: env.merging(["FERRY_LOG_LEVEL": ""]) { old, _ in old })
            #expect(result.exitCode == 0, "\(extra) \(env): \(result)")
            #expect(result.stderr.contains(Self.privateCopyLine(store)), "\(extra) \(env): \(result.stderr)")
        }
    }

    @Test(
        "the default level (warning, or FERRY_LOG_LEVEL unset, empty or above debug) writes no log line",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
    func defaultLevelIsSilent() throws {
        for level in ["", "warning", "info"] {
            let directory = TemporaryDirectory("ferry-log")
            let store = try Self.storeWithPendingWAL(in: directory)
            let result = try Self.migrate(store, env: ["FERRY_LOG_LEVEL": level])
            #expect(result.exitCode == 0, "'\(level)': \(result)")
            #expect(result.stderr.isEmpty, "'\(level)': \(result.stderr)")
            #expect(result.stdout.isEmpty, "'\(level)': \(result)")
        }
    }

    @Test(
        "an unknown FERRY_LOG_LEVEL is a usage error (exit 64) naming the value and the levels; nothing runs",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
    func invalidLevelIsRefused() throws {
        let directory = TemporaryDirectory("ferry-log")
        let store = try Self.storeWithPendingWAL(in: directory)
        let before = try FileFingerprint.of(store)
        let result = try Self.migrate(store, env: ["FERRY_LOG_LEVEL": "loud"])
        #expect(result.exitCode == 64, "\(result)")
        #expect(
            result.stderr
                == "error: FERRY_LOG_LEVEL='loud' is not a log level; use one of trace, debug, info, notice, warning, error, critical\n",
            "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try FileFingerprint.of(store) == before)
        #expect(!FileManager.default.fileExists(atPath: store + ".backup"))
    }
}
