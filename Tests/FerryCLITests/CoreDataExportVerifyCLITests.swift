import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `ferry export` and `ferry verify` on Core Data stores, through the real binary: copies of the
/// real wibosco stores (values from their EXPECTED.md) and a Core Data-shaped store with
/// sub-entities sharing their root's table. Every test proves that the store it gave ferry, and
/// the originals, kept their bytes and modification times.
@Suite(
    "ferry export and ferry verify on Core Data stores, through the real binary", .serialized,
    .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
struct CoreDataExportVerifyCLITests {
    typealias Samples = CoreDataStoreCLITests
    static let inheritanceModel = Samples.sample("3lvis-Sync/Tests/Sync/Models/239.xcdatamodeld")

    /// The records of a JSON export.
    static func records(_ output: String) throws -> [[String: Any]] {
        let parsed = try JSONSerialization.jsonObject(with: Data(output.utf8))
        return try #require(parsed as? [[String: Any]], "not an array of objects: \(output)")
    }

    /// Runs ferry on `store` and checks that neither it nor the original it was copied from changed.
    static func run(_ arguments: [String], store: String, original: String? = nil) throws -> ProcessResult {
        let before = try original.map(FileFingerprint.of)
        let result = try Samples.runUntouched(arguments, store: store)
        if let original, let before {
            #expect(try FileFingerprint.of(original) == before, "the original \(original) changed")
        }
        return result
    }

    /// The private copies ferry made in `temporary` (none must be left).
    static func leftCopies(in temporary: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasPrefix("ferry-coredata-") }
    }

    @Test(
        "export of the WAL store reads the 84 Posts that live only in its -wal, in JSON and CSV; no private copy is left"
    )
    func exportWALStore() throws {
        let original = Samples.store(Samples.examples, "CoreDataMigration_Example_WAL.sqlite")
        let directory = TemporaryDirectory("ferry-cdx-wal")
        let temporary = directory.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
        let store = try Samples.copy(original, into: directory, name: "App.sqlite")
        let before = try FileFingerprint.of(original)
        let json = try FerryProcess(
            ["export", "--store", store, "--entity", "Post", "--format", "json", "--quiet"], env: ["TMPDIR": temporary]
        ).wait(timeout: .seconds(120))
        #expect(json.exitCode == 0, "\(json)")
        let posts = try Self.records(json.stdout)
        #expect(posts.count == 84)
        #expect(posts.first?["postID"] as? String == "22F82B9B-304B-4A1E-B870-A86C1AA9BA7F")
        #expect(posts.first?["date"] as? String == "2017-09-12T16:46:28.940283Z", "every digit Core Data keeps")
        #expect(posts.first?["hide"] as? Bool == false)
        #expect(
            posts.first?["color"] as? Int == 1,
            "a to-one is written as the related object's key (Z_PK without a unique attribute)")
        let csv = try Self.run(
            ["export", "--store", store, "--entity", "Post", "--format", "csv", "--quiet"], store: store)
        #expect(csv.exitCode == 0, "\(csv)")
        // CSV rows end in CRLF (RFC 4180).
        let lines = csv.stdout.split(whereSeparator: \.isNewline).map(String.init)
        #expect(lines.count == 85)
        #expect(lines.first == "date,hide,postID,color")
        #expect(lines.dropFirst().first == "2017-09-12T16:46:28.940283Z,false,22F82B9B-304B-4A1E-B870-A86C1AA9BA7F,1")
        #expect(try FileFingerprint.of(original) == before)
        #expect(try Self.leftCopies(in: temporary).isEmpty)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                "App.sqlite", "App.sqlite-wal", "tmp",
            ])
    }

    @Test(
        "export with --model reads the version the store is at: store 1 of the revised project at v1, EXPECTED.md's post"
    )
    func exportAtDetectedVersion() throws {
        let original = Samples.store(Samples.revised, "CoreDataMigration_Example_1.sqlite")
        let directory = TemporaryDirectory("ferry-cdx-v1")
        let store = try Samples.copy(original, into: directory, name: "App.sqlite")
        let result = try Self.run(
            [
                "export", "--store", store, "--model", Samples.package(Samples.revised), "--entity", "Post", "--format",
                "json", "--sort", "postID:desc", "--quiet",
            ],
            store: store, original: original)
        #expect(result.exitCode == 0, "\(result)")
        let posts = try Self.records(result.stdout)
        #expect(posts.count == 10)
        let newest = try #require(posts.first)
        #expect(newest["postID"] as? String == "FFFECB21-6645-4FDD-B8B0-B960D0E61F5A")
        // Unix 1547494150.058821 (ZDATE 569186950.058821 seconds since 2001), every digit kept.
        #expect(newest["date"] as? String == "2019-01-14T19:29:10.058821Z")
        #expect(newest["color"] as? String == "1BB732", "v1 calls it color (v2 renames it hexColor)")
        #expect(newest["content"] as? String == "Test body")
    }

    @Test("--where on a Core Data store: dates compared as seconds since 2001, key paths through to-one relationships")
    func exportWithPredicates() throws {
        let original = Samples.store(Samples.revised, "CoreDataMigration_Example_3.sqlite")
        let directory = TemporaryDirectory("ferry-cdx-where")
        let store = try Samples.copy(original, into: directory, name: "App.sqlite")
        let model = Samples.package(Samples.revised)
        let sections = try Self.run(
            [
                "export", "--store", store, "--model", model, "--entity", "Section", "--where",
                "post.postID == '7BC43935-3209-404E-836A-06F3C6518CB1'",
                "--sort", "index", "--fields", "index,title,body", "--format", "json", "--quiet",
            ],
            store: store, original: original)
        #expect(sections.exitCode == 0, "\(sections)")
        let rows = try Self.records(sections.stdout)
        #expect(rows.count == 2)
        #expect(rows.first?["index"] as? Int == 0)
        #expect(rows.first?["title"] as? String == "This post will have 2 sections")
        #expect((rows.first?["body"] as? String)?.hasPrefix("Nam sapien nibh, ornare vitae cursus vehicula") == true)
        // The newest post (EXPECTED.md: Unix 1547764015.200076) is the only one on or after that second.
        let newest = try Self.run(
            [
                "export", "--store", store, "--model", model, "--entity", "Post", "--where",
                "date >= CAST('2019-01-17T22:26:55Z', 'NSDate')",
                "--fields", "postID,date,hexColor", "--format", "csv", "--quiet",
            ],
            store: store)
        #expect(newest.exitCode == 0, "\(newest)")
        #expect(
            newest.stdout
                == "postID,date,hexColor\r\n7BC43935-3209-404E-836A-06F3C6518CB1,2019-01-17T22:26:55.200076Z,BAEFB6\r\n"
        )
        let withSections = try Self.run(
            [
                "export", "--store", store, "--model", model, "--entity", "Post", "--where", "sections.@count == 2",
                "--fields", "postID", "--format", "csv", "--quiet",
            ],
            store: store)
        #expect(withSections.stdout.contains("7BC43935-3209-404E-836A-06F3C6518CB1"), "\(withSections)")
    }

    @Test(
        "verify on a real Core Data store: counts, integrity, types in Core Data's forms, relationships through Z_PK; model_hash skipped"
    )
    func verifyRealStore() throws {
        let original = Samples.store(Samples.revised, "CoreDataMigration_Example_3.sqlite")
        let directory = TemporaryDirectory("ferry-cdx-verify")
        let store = try Samples.copy(original, into: directory, name: "App.sqlite")
        let report = directory.file("report.json")
        let result = try Self.run(
            ["verify", store, "--model", Samples.package(Samples.revised), "--report", report], store: store,
            original: original)
        #expect(result.exitCode == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map {
            String($0).split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        }
        #expect(lines.contains("count Post Post PASSED count=12 12 rows"), "\(result)")
        #expect(lines.contains("count Section Section PASSED count=14 14 rows"), "\(result)")
        #expect(lines.contains("integrity_check - PASSED problems=0 ok"), "\(result)")
        #expect(
            lines.contains(
                "relationship Section.post Section PASSED dangling=0 links=14 14 links, every one to an existing Post"),
            "\(result)")
        #expect(lines.contains { $0.hasPrefix("types Post Post PASSED rows=12 violations=0") }, "\(result)")
        #expect(
            lines.contains { $0.hasPrefix("model_hash - SKIPPED the store records no ferry model hash") }, "\(result)")
        #expect(!result.stdout.contains("FAILED"))
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        #expect(json["exit_code"] as? Int == 0)
        // The private copy goes when verify ends, also when it fails after opening the store.
        let temporary = directory.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
        let expectations = try directory.write("expect.yml", "counts:\n  Post: 13\n")
        let failed = try FerryProcess(["verify", store, "--expect", expectations], env: ["TMPDIR": temporary]).wait(
            timeout: .seconds(120))
        #expect(failed.exitCode == 3, "\(failed)")
        #expect(failed.stdout.contains("expected exactly 13 rows, found 12"), "\(failed)")
        let broken = try directory.write("broken.yml", "counts: [\n")
        let refused = try FerryProcess(["verify", store, "--expect", broken], env: ["TMPDIR": temporary]).wait(
            timeout: .seconds(120))
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(try Self.leftCopies(in: temporary).isEmpty)
    }

    @Test(
        "verify finds a dangling to-one (Z_PK of no Post) and a date that is not a number, naming the records; exit 3")
    func verifyFindsProblems() throws {
        let directory = TemporaryDirectory("ferry-cdx-broken")
        let store = try Samples.writableCopy(
            Samples.store(Samples.revised, "CoreDataMigration_Example_3.sqlite"), into: directory, name: "Broken.sqlite"
        )
        do {
            let connection = try Connection(path: store, create: false)
            try connection.execute("UPDATE ZSECTION SET ZPOST = 999 WHERE Z_PK = 3")
            try connection.execute("UPDATE ZPOST SET ZDATE = 'yesterday' WHERE Z_PK = 5")
        }
        let reportPath = directory.file("report.json")
        let result = try Self.run(
            ["verify", store, "--model", Samples.package(Samples.revised), "--report", reportPath], store: store)
        #expect(result.exitCode == 3, "\(result)")
        #expect(result.stdout.contains("1 link to a missing Post"), "\(result)")
        // The JSON report names the key column too: ferry_pk holds the Z_PK, key_column says so.
        let report = try String(contentsOfFile: reportPath, encoding: .utf8)
        #expect(report.contains("\"key_column\" : \"Z_PK\"") || report.contains("\"key_column\":\"Z_PK\""), "\(report)")
        #expect(result.stdout.contains("Section Z_PK=3: post refers to a missing Post"), "\(result)")
        #expect(!result.stdout.contains("ferry_pk"), "\(result)")
        #expect(
            result.stdout.contains(
                "date is not a date (a number of seconds since 2001-01-01, as Core Data stores dates)"), "\(result)")
    }

    @Test("a model none of whose versions matches the store is refused before anything is written; exit 64")
    func mismatchedModel() throws {
        let directory = TemporaryDirectory("ferry-cdx-mismatch")
        let store = try Samples.copy(
            Samples.store(Samples.revised, "CoreDataMigration_Example_3.sqlite"), into: directory, name: "App.sqlite")
        let output = directory.file("out.json")
        for arguments in [
            ["export", "--store", store, "--model", Self.inheritanceModel, "--entity", "Post", "--output", output],
            ["verify", store, "--model", Self.inheritanceModel],
        ] {
            let result = try Self.run(arguments, store: store)
            #expect(result.exitCode == 64, "\(result)")
            #expect(result.stderr.contains("Core Data store '\(store)' matches no version of model 239"), "\(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: output))
        let unknown = try Self.run(
            ["export", "--store", store, "--entity", "Comment", "--format", "csv"], store: store)
        #expect(unknown.exitCode != 0)
        #expect(unknown.stderr.contains("unknown entity 'Comment'"), "\(unknown)")
    }

    @Test("without --model, a store with no cached model is refused naming the store and saying to give its model")
    func noCachedModel() throws {
        let directory = TemporaryDirectory("ferry-cdx-nocache")
        let store = directory.file("Cars.sqlite")
        try CoreDataSamples.writeInheritanceStore(at: store)
        for arguments in [["export", "--store", store, "--entity", "Car", "--format", "csv"], ["verify", store]] {
            let result = try Self.run(arguments, store: store)
            #expect(result.exitCode == 1, "\(result)")
            #expect(
                result.stderr.contains("store '\(store)' has no cached model (Z_MODELCACHE is missing or empty)"),
                "\(result)")
            #expect(result.stderr.contains("give the model the store was made with (--model"), "\(result)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test(
        "sub-entities in their root's table: a parent's export includes its sub-entities' rows, a sub-entity's only its own, never a sibling's"
    )
    func inheritanceExport() throws {
        let directory = TemporaryDirectory("ferry-cdx-inherit")
        let store = directory.file("Cars.sqlite")
        try CoreDataSamples.writeInheritanceStore(at: store)
        func keys(_ entity: String, where predicate: String? = nil) throws -> [Int] {
            let result = try Self.run(
                [
                    "export", "--store", store, "--model", Self.inheritanceModel, "--entity", entity, "--format",
                    "json", "--quiet",
                ]
                    + (predicate.map { ["--where", $0] } ?? []), store: store)
            #expect(result.exitCode == 0, "\(result)")
            return try Self.records(result.stdout).map { ($0["remoteID"] as? Int) ?? ($0["maxSpeed"] as? Int) ?? -1 }
        }
        // Car and Sedan declare no attribute: the summary counts the records written.
        func written(_ entity: String) throws -> String {
            let result = try Self.run(
                ["export", "--store", store, "--model", Self.inheritanceModel, "--entity", entity, "--format", "csv"],
                store: store)
            #expect(result.exitCode == 0, "\(result)")
            return result.stderr
        }
        #expect(try written("Car").contains("read 6, written 6"), "a Car and its 2 Racecars and 3 Sedans")
        #expect(try written("Sedan").contains("read 3, written 3"), "3 Sedans, no Racecar")
        #expect(try written("Racecar").contains("read 2, written 2"))
        let racecars = try Self.run(
            [
                "export", "--store", store, "--model", Self.inheritanceModel, "--entity", "Racecar", "--format", "json",
                "--quiet",
            ], store: store)
        let racing = try Self.records(racecars.stdout)
        #expect(racing.map { $0["maxSpeed"] as? Int } == [300, 320])
        #expect(racing.map { $0["remoteID"] as? Int } == [7, 8])
        // A Passenger's car is a Car of any kind; a subquery over Car reads all of the table's cars.
        #expect(try keys("Passenger", where: "car != nil").sorted() == [1, 2, 4])
        // Racecar 7 has passenger Ann: the predicate's subquery over passengers starts from Racecars only.
        #expect(try keys("Racecar", where: "ANY passengers.name == 'Ann'") == [7])
        #expect(try keys("Racecar", where: "ANY passengers.name == 'Bo'") == [], "Bo rides a Sedan")
    }

    @Test(
        "verify counts each entity of a shared table on its own rows and checks relationships against the destination's rows"
    )
    func inheritanceVerify() throws {
        let directory = TemporaryDirectory("ferry-cdx-inherit-verify")
        let store = directory.file("Cars.sqlite")
        try CoreDataSamples.writeInheritanceStore(at: store)
        let result = try Self.run(["verify", store, "--model", Self.inheritanceModel], store: store)
        #expect(result.exitCode == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map {
            String($0).split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        }
        #expect(lines.contains("count Car Car PASSED count=6 6 rows"), "\(result)")
        #expect(lines.contains("count Racecar Racecar PASSED count=2 2 rows"), "\(result)")
        #expect(lines.contains("count Sedan Sedan PASSED count=3 3 rows"), "\(result)")
        #expect(lines.contains("count Passenger Passenger PASSED count=4 4 rows"), "\(result)")
        #expect(
            lines.contains { $0.hasPrefix("relationship Passenger.car Passenger PASSED dangling=0 links=3") },
            "\(result)")
    }
}
