import FerryTestSupport
import Foundation
import Testing

/// Issue 23: a file ferry replaces (a migration's and a rebuild's swap, an export's atomic
/// replace, a copy with `--replace`) keeps the mode, owner and group of the file it replaces:
/// before, a 0600 store became 0644 after `migrate`, and a 0640 store and a 0600 export target
/// after a rebuild and an export. A read-only store is refused before any work (a migration
/// replaced a 0444 store).
@Suite("Replaced files keep their permissions; read-only stores are refused", .serialized)
struct ReplacedFilePermissionsTests {
    /// A group id no one uses, to see that the group is kept (the tests may run as root, who can
    /// give files any group; otherwise the user's own group).
    static let otherGroup: UInt32 = getuid() == 0 ? 4242 : getgid()

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    static func group(_ path: String) throws -> UInt32 {
        var info = stat()
        #expect(stat(path, &info) == 0)
        return info.st_gid
    }

    /// Gives `path` `mode` and the other group.
    static func restrict(_ path: String, mode: Int) throws {
        #expect(chown(path, UInt32.max, otherGroup) == 0)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    static func expectKept(_ path: String, mode: Int, _ comment: Comment) throws {
        #expect(try Self.mode(path) == mode, comment)
        #expect(try Self.group(path) == otherGroup, comment)
    }

    @Test("ferry migrate: a 0600 store stays 0600 with its group; a 0440 store is refused and unchanged")
    func migrate() throws {
        let directory = TemporaryDirectory("ferry-permissions")
        let store = try MigrationCrashTests.v1Store(in: directory, rows: 1...50)
        try Self.restrict(store, mode: 0o600)
        let migrated = try runFerry(MigrationCrashTests.migrateArguments(store))
        #expect(migrated.exitCode == 0, "\(migrated)")
        #expect(try MigrationCrashTests.version(of: store) == "3")
        try Self.expectKept(store, mode: 0o600, "the migrated store")

        let readOnly = try MigrationCrashTests.v1Store(in: directory, "ro.sqlite", rows: 1...50)
        try FileManager.default.setAttributes([.posixPermissions: 0o440], ofItemAtPath: readOnly)
        try FileManager.default.removeItem(atPath: readOnly + ".ferry-lock")
        let before = try Data(contentsOf: URL(fileURLWithPath: readOnly))
        let refused = try runFerry(MigrationCrashTests.migrateArguments(readOnly))
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(
            refused.errorLines.first
                == "error: cannot write store '\(readOnly)': the file is read-only (permission denied); nothing was changed",
            "\(refused)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: readOnly)) == before)
        #expect(try Self.mode(readOnly) == 0o440)
        #expect(!FileManager.default.fileExists(atPath: readOnly + ".ferry-lock"), "nothing was made beside it")
        #expect(try MigrationCrashTests.leftovers(of: readOnly).backups.isEmpty)
    }

    @Test("rebuild: true: a 0640 store stays 0640 with its group; a 0444 store is refused and unchanged")
    func rebuild() throws {
        let directory = TemporaryDirectory("ferry-permissions")
        let data = try directory.write("people.csv", bytes: BigFiles.csv(ids: 1...20))
        let job = try directory.write(
            "job.yml",
            """
            store: {path: s.sqlite, rebuild: true}
            model: \(Fixtures.peopleModel)
            steps:
              - import: {source: \(data), entity: Person}

            """)
        let first = try runFerry(["run", job, "--quiet"], cwd: directory.path)
        #expect(first.exitCode == 0, "\(first)")
        let store = directory.file("s.sqlite")
        try Self.restrict(store, mode: 0o640)
        let rebuilt = try runFerry(["run", job, "--quiet"], cwd: directory.path)
        #expect(rebuilt.exitCode == 0, "\(rebuilt)")
        try Self.expectKept(store, mode: 0o640, "the rebuilt store")

        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: store)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let refused = try runFerry(["run", job], cwd: directory.path)
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(
            refused.stderr.contains(
                "cannot write store '\(store)': the file is read-only (permission denied); nothing was changed"),
            "\(refused)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        #expect(try Self.mode(store) == 0o444)
    }

    @Test("ferry export over a 0600 file keeps 0600 and its group; a new output gets the umask's mode")
    func export() throws {
        let directory = TemporaryDirectory("ferry-permissions")
        let store = try MigrationCrashTests.v1Store(in: directory, rows: 1...20)
        let output = try directory.write("people.csv", "old\n")
        try Self.restrict(output, mode: 0o600)
        let exported = try runFerry(
            ["export", "--store", store, "--entity", "Person", "--format", "csv", "--output", output, "--quiet"])
        #expect(exported.exitCode == 0, "\(exported)")
        #expect(try String(contentsOfFile: output, encoding: .utf8).hasPrefix("id,"))
        try Self.expectKept(output, mode: 0o600, "the replaced export")

        let fresh = directory.file("new.csv")
        let created = try runFerryInShell(
            "umask 027; exec \"$0\" \"$@\"",
            ["export", "--store", store, "--entity", "Person", "--format", "csv", "--output", fresh, "--quiet"])
        #expect(created.exitCode == 0, "\(created)")
        #expect(try Self.mode(fresh) == 0o640)
    }

    @Test("ferry copy --replace over a 0600 store keeps 0600 and its group; a 0400 destination is refused")
    func copy() throws {
        let directory = TemporaryDirectory("ferry-permissions")
        let source = try MigrationCrashTests.v1Store(in: directory, rows: 1...20)
        let destination = try MigrationCrashTests.v1Store(in: directory, "old.sqlite", rows: 1...5)
        try Self.restrict(destination, mode: 0o600)
        let copied = try runFerry(["copy", source, destination, "--replace", "--quiet"])
        #expect(copied.exitCode == 0, "\(copied)")
        #expect(try sqlite3(destination, "SELECT count(*) FROM Person") == "20\n")
        try Self.expectKept(destination, mode: 0o600, "the replaced copy")

        try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: destination)
        let refused = try runFerry(["copy", source, destination, "--replace"])
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.stderr.contains("the file is read-only (permission denied); nothing was changed"), "\(refused)")
        #expect(try Self.mode(destination) == 0o400)
    }

    @Test("ferry import, update and delete refuse a read-only ferry store before any work")
    func writersInPlace() throws {
        let directory = TemporaryDirectory("ferry-permissions")
        let store = try MigrationCrashTests.v1Store(in: directory, rows: 1...20)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: store)
        let data = try directory.write("more.csv", bytes: BigFiles.csv(ids: 21...30))
        for arguments in [
            ["import", data, "--store", store, "--model", Fixtures.peopleModel, "--entity", "Person"],
            ["delete", "--store", store, "--entity", "Person", "--where", "id = 1"],
        ] {
            let refused = try runFerry(arguments)
            #expect(refused.exitCode == 1, "\(refused)")
            #expect(
                refused.stderr.contains("cannot write store '\(store)': the file is read-only (permission denied)"),
                "\(refused)")
        }
        #expect(try sqlite3(store, "SELECT count(*) FROM Person") == "20\n")
    }
}
