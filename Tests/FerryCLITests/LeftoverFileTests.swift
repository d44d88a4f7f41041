import FerryTestSupport
import Foundation
import Testing

/// Issue 23's minor items through the real binary: files a killed export or a migration killed at
/// its swap left behind are removed by the next run, a hot journal does not make `export --model`
/// fail, a full disk during `migrate` and `copy` names the user's store (not `file:…?mode=ro` or
/// `.ferry-copy`), and `ferry validate` refuses a CSV delimiter equal to the quote (the reader
/// refused it only at run time).
@Suite("Leftovers of killed runs; CSV delimiter and quote; work files in messages")
struct LeftoverFileTests {
    /// The id of a process that has ended.
    static func endedProcessID() throws -> Int32 {
        let process = try FerryProcess(["-c", "exit 0"], executable: "/bin/sh")
        let pid = process.pid
        _ = try process.wait()
        return pid
    }

    @Test("a killed export's hidden temporary file is removed by the next export to that file; a running one's stays")
    func exportTemporaryFile() throws {
        let directory = TemporaryDirectory("ferry-leftovers")
        let store = try MigrationCrashTests.v1Store(in: directory, rows: 1...5)
        let abandoned = try directory.write(".people.csv.ferry-\(try Self.endedProcessID())", "partial")
        let running = try directory.write(".people.csv.ferry-\(getpid())", "someone else's")
        let exported = try runFerry(
            [
                "export", "--store", store, "--entity", "Person", "--format", "csv", "--output",
                directory.file("people.csv"),
                "--quiet",
            ])
        #expect(exported.exitCode == 0, "\(exported)")
        #expect(!FileManager.default.fileExists(atPath: abandoned))
        #expect(FileManager.default.fileExists(atPath: running))
    }

    @Test("a migration killed between its backup and its swap: the next one removes that backup and keeps one")
    func backupOfUnswappedStore() throws {
        let directory = TemporaryDirectory("ferry-leftovers")
        let store = try MigrationCrashTests.v1Store(in: directory, rows: 1...5)
        // What a kill right after the backup (a hard link) and before the rename leaves.
        let leftover = store + ".backup-v1-20260101T000000000Z"
        #expect(link(store, leftover) == 0)
        // A backup of another file (an earlier version's) is not a leftover.
        let earlier = store + ".backup-v0-20250101T000000000Z"
        try FileManager.default.copyItem(atPath: store, toPath: earlier)
        let migrated = try runFerry(MigrationCrashTests.migrateArguments(store))
        #expect(migrated.exitCode == 0, "\(migrated)")
        let backups = try MigrationCrashTests.leftovers(of: store).backups
        #expect(backups.count == 2, "\(backups)")
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(FileManager.default.fileExists(atPath: earlier))
    }

    @Test("a hot journal a killed writer left: export --model rolls it back and exports the committed rows")
    func hotJournal() throws {
        let directory = TemporaryDirectory("ferry-leftovers")
        let store = try MigrationCrashTests.v1Store(in: directory, rows: 1...3000)
        // sqlite3 killed in the middle of a transaction whose pages already reached the file.
        _ = try runProgram(
            "/usr/bin/sqlite3",
            [store, "PRAGMA cache_size = 10", "BEGIN", "UPDATE Person SET name = 'changed'", ".system kill -9 $PPID"])
        let journal = try #require(try FileManager.default.attributesOfItem(atPath: store + "-journal")[.size] as? Int)
        #expect(journal > 0, "a hot journal is left")
        let output = directory.file("people.csv")
        let exported = try runFerry(
            [
                "export", "--store", store, "--model", Fixtures.peopleModel, "--entity", "Person", "--format", "csv",
                "--output", output, "--quiet",
            ])
        #expect(exported.exitCode == 0, "\(exported)")
        let text = try String(contentsOfFile: output, encoding: .utf8)
        #expect(text.utf8.filter { $0 == 10 }.count == 3001, "a header and the 3,000 committed rows")
        #expect(!text.contains("changed"))
    }

    @Test(
        "a full disk during migrate and copy names the user's store, not ferry's file: URIs or work files",
        .enabled(if: ConsistentMessagesTests.canMountTmpfs))
    func diskFullNames() throws {
        let directory = TemporaryDirectory("ferry-leftovers")
        let source = try MigrationCrashTests.v1Store(in: directory, rows: 1...20000)
        let small = directory.file("small")
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        // Room for the store and half of a second one: the migrated copy (or the copy) cannot fit.
        let size = try #require(try FileManager.default.attributesOfItem(atPath: source)[.size] as? Int)
        #expect(
            ConsistentMessagesTests.shell("mount -t tmpfs -o size=\(size * 3 / 2 / 1024 + 1)k tmpfs '\(small)'") == 0)
        defer { ConsistentMessagesTests.shell("umount '\(small)'") }
        let store = directory.file("small/s.sqlite")
        try FileManager.default.copyItem(atPath: source, toPath: store)
        let migrated = try runFerry(MigrationCrashTests.migrateArguments(store))
        #expect(migrated.exitCode == 1, "\(migrated)")
        #expect(
            migrated.stderr.contains("error: the disk is full: there is no space left to write store '\(store)'"),
            "\(migrated)")
        #expect(!migrated.stderr.contains("file:") && !migrated.stderr.contains(".ferry-"), "\(migrated)")
        #expect(try MigrationCrashTests.version(of: store) == "1")

        let copy = directory.file("small/copy.sqlite")
        let copied = try runFerry(["copy", source, copy])
        #expect(copied.exitCode == 1, "\(copied)")
        #expect(
            copied.stderr.contains("error: the disk is full: there is no space left to write store '\(copy)'"),
            "\(copied)")
        #expect(!copied.stderr.contains("file:") && !copied.stderr.contains(".ferry-copy"), "\(copied)")
    }

    @Test("ferry validate refuses a CSV delimiter equal to the quote, at the quote")
    func delimiterEqualsQuote() throws {
        let directory = TemporaryDirectory("ferry-leftovers")
        try directory.write("people.csv", "id;email\n1;a@b\n")
        let job = try directory.write(
            "job.yml",
            """
            store: s.sqlite
            model: \(Fixtures.peopleModel)
            steps:
              - import: {source: people.csv, entity: Person, csv: {delimiter: ";", quote: ";"}}

            """)
        let result = try runFerry(["validate", job], cwd: directory.path)
        #expect(result.exitCode == 64, "\(result)")
        #expect(
            result.stderr.contains(
                "job.yml:4:79: error: CSV delimiter and quote must be two different characters other than a line break"),
            "\(result)")
    }
}
