import FerryTestSupport
import Foundation
import Testing

/// `ferry store info`, `ferry store version`, `ferry model show` and `ferry model convert` on
/// real Core Data stores, through the real binary. Every store is a copy in a temporary folder;
/// each test proves that the copy it gave ferry (and the originals) kept their bytes and
/// modification times, and that no `-shm` appeared.
@Suite(
    "Core Data stores with store info, store version and model show, through the real binary", .serialized,
    .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
struct CoreDataStoreCLITests {
    static func sample(_ relative: String) -> String { CoreDataSamples.root.appendingPathComponent(relative).path }
    static let examples = "wibosco-CoreDataMigration-Example"
    static let revised = "wibosco-CoreDataMigrationRevised"
    static func store(_ project: String, _ file: String) -> String {
        sample("\(project)/CoreDataMigration-ExampleTests/Resources/SQLite/\(file)")
    }
    static func package(_ project: String) -> String {
        sample("\(project)/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld")
    }
    static let compiledModel = TestPaths.packageRoot.appendingPathComponent(
        "Tests/FerryPipelineTests/Fixtures/coredata/CoreDataMigration_Example.momd"
    ).path

    /// Every real store of both wibosco projects.
    static func allOriginals() -> [String] {
        ["1", "2", "3"].flatMap { n in [examples, revised].map { store($0, "CoreDataMigration_Example_\(n).sqlite") } }
            + [store(examples, "CoreDataMigration_Example_WAL.sqlite")]
    }

    /// A copy of a real store (and its `-wal`) named `name` in `directory`, read-only like a shipped file.
    static func copy(_ source: String, into directory: TemporaryDirectory, name: String) throws -> String {
        let target = directory.file(name)
        try FileManager.default.copyItem(atPath: source, toPath: target)
        if FileManager.default.fileExists(atPath: source + "-wal") {
            try FileManager.default.copyItem(atPath: source + "-wal", toPath: target + "-wal")
        }
        for file in [target, target + "-wal"] where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: file)
        }
        return target
    }

    /// A writable copy of a real store named `name` in `directory`, for a test to damage.
    static func writableCopy(_ source: String, into directory: TemporaryDirectory, name: String) throws -> String {
        let target = directory.file(name)
        try FileManager.default.copyItem(atPath: source, toPath: target)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target)
        return target
    }

    /// Runs ferry on `store` and checks that nothing beside it changed.
    static func runUntouched(_ arguments: [String], store: String) throws -> ProcessResult {
        let before = try FileFingerprint.of(store)
        let result = try runFerry(arguments)
        #expect(
            try FileFingerprint.of(store) == before,
            "ferry \(arguments.joined(separator: " ")) changed the store's files")
        return result
    }

    @Test("store info on the WAL store: 84 Post and 84 Color read from the -wal, metadata, journal; files untouched")
    func infoOnTheWALStore() throws {
        let originals = try FileFingerprint.of(Self.store(Self.examples, "CoreDataMigration_Example_WAL.sqlite"))
        let directory = TemporaryDirectory("ferry-cd-cli")
        // A .moody-like name: recognised by content, not by extension.
        let store = try Self.copy(
            Self.store(Self.examples, "CoreDataMigration_Example_WAL.sqlite"), into: directory, name: "Posts.data")
        let result = try Self.runUntouched(
            ["store", "info", store, "--model", Self.package(Self.examples)], store: store)
        #expect(result.exitCode == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("kind:       Core Data SQLite store (SQLite)"))
        #expect(lines.contains("uuid:       95E4B0A1-CBFB-4257-B10B-EE64F7558656"))
        #expect(lines.contains("framework:  Core Data 847, written by SQLite 3019003"))
        #expect(lines.contains("journal:    wal; the -wal holds 428 frames (read with the store)"))
        #expect(
            lines.contains(
                "version:    CoreDataMigration_Example CoreDataMigration_Example 4 (by the entity version hashes computed from the model)"
            ))
        #expect(lines.contains("cache:      2 entities (Z_MODELCACHE)"))
        #expect(lines.contains("    1 Color            84  ZCOLOR"))
        #expect(lines.contains("    2 Post             84  ZPOST"))
        #expect(!FileManager.default.fileExists(atPath: store + "-shm"))

        let json = try Self.runUntouched(["store", "info", "--json", store], store: store)
        #expect(json.exitCode == 0, "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["kind"] as? String == "core_data")
        #expect(object["journal_mode"] as? String == "wal")
        #expect(object["wal_has_data"] as? Bool == true)
        #expect(object["wal_frames"] as? Int == 428)
        #expect(object["framework_version"] as? Int == 847)
        #expect(object["version"] == nil)
        let entities = try #require(object["entities"] as? [[String: Any]])
        #expect(entities.map { $0["name"] as? String } == ["Color", "Post"])
        #expect(entities.map { $0["count"] as? Int } == [84, 84])
        #expect(entities.allSatisfy { ($0["hash"] as? String).flatMap { Data(base64Encoded: $0) }?.count == 32 })
        #expect(try FileFingerprint.of(Self.store(Self.examples, "CoreDataMigration_Example_WAL.sqlite")) == originals)
    }

    @Test("store version names each wibosco store's version in both model chains, by computed or compiled hashes")
    func versionOfEveryStore() throws {
        let directory = TemporaryDirectory("ferry-cd-version")
        let originals = try Self.allOriginals().map(FileFingerprint.of)
        defer {
            #expect((try? Self.allOriginals().map(FileFingerprint.of)) == originals, "the shared sample stores changed")
        }
        let cases: [(String, String, String)] = [
            (Self.revised, "CoreDataMigration_Example_1.sqlite", "CoreDataMigration_Example"),
            (Self.revised, "CoreDataMigration_Example_2.sqlite", "CoreDataMigration_Example 2"),
            (Self.revised, "CoreDataMigration_Example_3.sqlite", "CoreDataMigration_Example 3"),
            (Self.examples, "CoreDataMigration_Example_1.sqlite", "CoreDataMigration_Example"),
            (Self.examples, "CoreDataMigration_Example_2.sqlite", "CoreDataMigration_Example 2"),
            (Self.examples, "CoreDataMigration_Example_3.sqlite", "CoreDataMigration_Example 3"),
            (Self.examples, "CoreDataMigration_Example_WAL.sqlite", "CoreDataMigration_Example 4"),
        ]
        for (project, file, version) in cases {
            let store = try Self.copy(Self.store(project, file), into: directory, name: "\(project)-\(file)")
            let result = try Self.runUntouched(
                ["store", "version", store, "--model", Self.package(project), "--json"], store: store)
            #expect(result.exitCode == 0, "\(result)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            #expect(object["version"] as? String == version, "\(project) \(file)")
            #expect(object["method"] as? String == "version_hashes", "the computed hashes decide first")
            #expect(object["current"] as? String == "CoreDataMigration_Example 4")
            #expect(object["up_to_date"] as? Bool == (version == "CoreDataMigration_Example 4"))
            if project == Self.examples {
                let compiled = try Self.runUntouched(
                    [
                        "store", "version", store, "--model", Self.package(project), "--compiled-model",
                        Self.compiledModel,
                    ], store: store)
                #expect(compiled.exitCode == 0, "\(compiled)")
                #expect(
                    compiled.stdout.contains(
                        "version:  CoreDataMigration_Example \(version) (by the entity version hashes of the compiled model)"
                    ), "\(compiled)")
            }
        }
        let text = try runFerry([
            "store", "version", directory.file("\(Self.revised)-CoreDataMigration_Example_2.sqlite"), "--model",
            Self.package(Self.revised),
        ])
        #expect(
            text.stdout.contains(
                "status:   2 steps behind (CoreDataMigration_Example 2 → CoreDataMigration_Example 3 → CoreDataMigration_Example 4)"
            ), "\(text)")
    }

    @Test("store version with no matching version: exit 64, the closest version and what differs")
    func noMatchingVersion() throws {
        let directory = TemporaryDirectory("ferry-cd-nomatch")
        let store = try Self.copy(
            Self.store(Self.revised, "CoreDataMigration_Example_3.sqlite"), into: directory, name: "Revised3.sqlite")
        let result = try Self.runUntouched(
            ["store", "version", store, "--model", Self.package(Self.examples)], store: store)
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr.contains(
                "error: Core Data store '\(store)' matches no version of model CoreDataMigration_Example"))
        #expect(
            result.stderr.contains(
                "closest: version CoreDataMigration_Example 2 (by the cached model); what differs: entity Section is only in the store"
            ))
        let missing = try runFerry([
            "store", "version", store, "--model", Self.package(Self.revised), "--compiled-model",
            directory.file("none.momd"),
        ])
        #expect(missing.exitCode == 64, "\(missing)")
        #expect(missing.stderr.contains("no compiled model at"))
    }

    @Test(
        "a corrupt cache: store info says so, store version finds the version by its hashes, or without matching hashes by tables and columns; model show fails naming the store"
    )
    func corruptCache() throws {
        let directory = TemporaryDirectory("ferry-cd-corrupt")
        let store = try Self.writableCopy(
            Self.store(Self.revised, "CoreDataMigration_Example_3.sqlite"), into: directory, name: "corrupt.sqlite")
        let sqlite = try runFerryInShell(
            "sqlite3 \"$1\" \"UPDATE Z_MODELCACHE SET Z_CONTENT = substr(Z_CONTENT, 1, 100)\"", [store])
        #expect(sqlite.exitCode == 0, "\(sqlite)")
        let info = try Self.runUntouched(["store", "info", store], store: store)
        #expect(info.exitCode == 0, "\(info)")
        #expect(
            info.stdout.contains(
                "cache:      unreadable: the cached model (Z_MODELCACHE) of store '\(store)' is truncated: the compressed data ends early"
            ), "\(info)")
        let version = try Self.runUntouched(
            ["store", "version", store, "--model", Self.package(Self.revised)], store: store)
        #expect(version.exitCode == 0, "\(version)")
        #expect(
            version.stdout.contains(
                "CoreDataMigration_Example 3 (by the entity version hashes computed from the model)"),
            "\(version)")
        // With the other project's metadata (hashes of no version of this model), the tables and columns decide.
        let other = try Self.copy(
            Self.store(Self.examples, "CoreDataMigration_Example_1.sqlite"), into: directory, name: "other.sqlite")
        let swap = try runFerryInShell(
            "sqlite3 \"$1\" \"ATTACH '$2' AS o; UPDATE main.Z_METADATA SET Z_PLIST = (SELECT Z_PLIST FROM o.Z_METADATA)\"",
            [store, other])
        #expect(swap.exitCode == 0, "\(swap)")
        let structural = try Self.runUntouched(
            ["store", "version", store, "--model", Self.package(Self.revised)], store: store)
        #expect(structural.exitCode == 0, "\(structural)")
        #expect(
            structural.stdout.contains("CoreDataMigration_Example 3 (by the store's tables and columns)"),
            "\(structural)")
        let show = try Self.runUntouched(["model", "show", store], store: store)
        #expect(show.exitCode != 0)
        #expect(show.stderr.contains("of store '\(store)' is truncated"), "\(show)")
    }

    @Test("model show and model convert read a store's cached model")
    func modelFromAStore() throws {
        let directory = TemporaryDirectory("ferry-cd-model")
        let store = try Self.copy(
            Self.store(Self.revised, "CoreDataMigration_Example_3.sqlite"), into: directory, name: "Blog.sqlite")
        let show = try Self.runUntouched(["model", "show", store], store: store)
        #expect(show.exitCode == 0, "\(show)")
        #expect(show.stdout.hasPrefix("model Blog (current version cache)\n"), "\(show)")
        #expect(show.stdout.contains("    sections: [Section]\n"), "\(show)")
        #expect(show.stdout.contains("    index: int16?"), "\(show)")
        let out = directory.file("Blog.xcdatamodeld")
        let convert = try Self.runUntouched(["model", "convert", store, out], store: store)
        #expect(convert.exitCode == 0, "\(convert)")
        // The written package holds the same model as the store's version 3 in the real package.
        let diff = try runFerry([
            "model", "diff", "--json", Self.package(Self.revised) + "/CoreDataMigration_Example 3.xcdatamodel",
            out + "/cache.xcdatamodel",
        ])
        #expect(diff.exitCode == 0, "\(diff)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(diff.stdout.utf8)) as? [String: Any])
        let steps = try #require(object["steps"] as? [[String: Any]])
        #expect(steps.allSatisfy { ($0["changes"] as? [Any])?.isEmpty ?? false }, "\(diff.stdout)")
    }

    @Test("a SQLite file that is not a Core Data store nor a ferry store is refused")
    func plainSQLite() throws {
        let directory = TemporaryDirectory("ferry-cd-plain")
        let plain = directory.file("contacts.sqlite3")
        try FileManager.default.copyItem(atPath: Self.sample("ZeeQL3/data/contacts.sqlite3"), toPath: plain)
        let info = try runFerry(["store", "info", plain])
        #expect(info.exitCode != 0)
        #expect(info.stderr.contains("not a ferry store"), "\(info)")
        let show = try runFerry(["model", "show", plain])
        #expect(show.exitCode != 0)
    }

    @Test("store info shows sub-entities apart, each with its own count, in the root's table")
    func inheritance() throws {
        let directory = TemporaryDirectory("ferry-cd-inherit")
        let store = directory.file("Cars.sqlite")
        try CoreDataSamples.writeInheritanceStore(at: store)
        let model = Self.sample("3lvis-Sync/Tests/Sync/Models/239.xcdatamodeld")
        let result = try Self.runUntouched(["store", "info", store, "--model", model], store: store)
        #expect(result.exitCode == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("journal:    delete; no data in a -wal"))
        #expect(lines.contains("version:    239 239 (by the store's tables and columns)"))
        #expect(lines.contains("    1 Car                   1  ZCAR"), "\(result)")
        #expect(lines.contains("    2 Racecar               2  ZCAR  sub-entity of Car"), "\(result)")
        #expect(lines.contains("    3 Sedan                 3  ZCAR  sub-entity of Car"), "\(result)")
        #expect(lines.contains("    4 Passenger             4  ZPASSENGER"), "\(result)")
        #expect(
            result.stdout.contains(
                "cache:      unreadable: store '\(store)' has no cached model (Z_MODELCACHE is missing or empty)"))
    }

    @Test(
        "a job writing a read-only Core Data store is refused before any file is made; migrate with nothing to do opens nothing: its -wal and -shm stay as they were"
    )
    func inPlaceCommandsRefuse() throws {
        let directory = TemporaryDirectory("ferry-cd-refuse")
        let store = try Self.copy(
            Self.store(Self.examples, "CoreDataMigration_Example_WAL.sqlite"), into: directory, name: "App.sqlite")
        // A job writing the read-only store is refused as read-only, before any file is made.
        let run = try Self.runUntouched(
            [
                "run", Fixtures.path("jobs/people.yml"), "--param", "store=\(store)", "--param",
                "rejects=\(directory.file("rejects.csv"))",
            ], store: store)
        #expect(run.exitCode != 0 && (run.stdout + run.stderr).contains("read-only"), "\(run)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                "App.sqlite", "App.sqlite-wal",
            ])
        // migrate works on Core Data stores: this one is at the current version, so nothing is opened.
        let migrate = try Self.runUntouched(["migrate", store, "--model", Self.package(Self.examples)], store: store)
        #expect(migrate.exitCode == 0, "\(migrate)")
        #expect(
            migrate.stdout.contains("is already at CoreDataMigration_Example version CoreDataMigration_Example 4"),
            "\(migrate)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                "App.sqlite", "App.sqlite-wal",
            ])
    }

    @Test(
        "the private copy is removed after each command; copies abandoned by processes that no longer run are removed too"
    )
    func privateCopiesAreCleanedUp() throws {
        let directory = TemporaryDirectory("ferry-cd-tmp")
        let temporary = directory.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        let abandoned = "ferry-coredata-\(finished.processIdentifier)-ABANDONED"
        let alive = "ferry-coredata-\(ProcessInfo.processInfo.processIdentifier)-ALIVE"
        for name in [abandoned, alive, "ferry-coredata-notapid-KEEP"] {
            try FileManager.default.createDirectory(atPath: temporary + "/" + name, withIntermediateDirectories: false)
        }
        let store = try Self.copy(
            Self.store(Self.examples, "CoreDataMigration_Example_WAL.sqlite"), into: directory, name: "App.sqlite")
        let result = try runFerry(["store", "info", store], env: ["TMPDIR": temporary])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("    2 Post             84  ZPOST"), "\(result)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: temporary).sorted() == [
                alive, "ferry-coredata-notapid-KEEP",
            ])
    }

    @Test(
        "ferry check on a Core Data snapshot names its version and migrates a private copy of it; a store of another app matches no version"
    )
    func checkACoreDataSnapshot() throws {
        let directory = TemporaryDirectory("ferry-cd-check")
        let store = try Self.copy(
            Self.store(Self.examples, "CoreDataMigration_Example_3.sqlite"), into: directory, name: "v3.sqlite")
        let junit = directory.file("check.xml")
        let result = try Self.runUntouched(
            ["check", store, "--model", Self.package(Self.examples), "--junit", junit], store: store)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("\(store): ok"), "\(result)")
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains("<testcase classname=\"ferry.check.store\" name=\"version\" time="), "\(xml)")
        #expect(
            xml.contains(
                "<testcase classname=\"ferry.check.store\" name=\"migrate CoreDataMigration_Example 3 → CoreDataMigration_Example 4\" time="
            ), "\(xml)")
        #expect(xml.contains("failures=\"0\" errors=\"0\""), "\(xml)")

        let other = try Self.copy(
            Self.store(Self.revised, "CoreDataMigration_Example_3.sqlite"), into: directory, name: "revised.sqlite")
        let mismatch = try Self.runUntouched(["check", other, "--model", Self.package(Self.examples)], store: other)
        #expect(mismatch.exitCode != 0)
        #expect(
            mismatch.stdout.contains(
                "version: error: Core Data store '\(other)' matches no version of model CoreDataMigration_Example"),
            "\(mismatch)")
    }
}
