import FerryTestSupport
import Foundation
import Testing

/// `ferry copy SRC DST` through the real binary: the Shop snapshot and a real Core Data store
/// copied with their keys and relationships, verified; and the refusals (a non-empty
/// destination, a plain SQLite file, a missing source) that leave every file as it was.
@Suite("ferry copy: a store into a new store of the same model")
struct CopyCommandTests {
    static var snapshot: String { Fixtures.repository("samples/snapshots/shop-v2.sqlite") }

    @Test(
        "the Shop v2 snapshot: every row with its key, relationships and values; counts and checksums reported; verify passes"
    )
    func copiesShopSnapshot() throws {
        let dir = TemporaryDirectory()
        let source = dir.file("shop.sqlite")
        try FileManager.default.copyItem(atPath: Self.snapshot, toPath: source)
        let before = try FileFingerprint.of(source)
        let copy = dir.file("out/copy.sqlite")
        let report = dir.file("copy.json")
        let result = try runFerry(["copy", source, copy, "--report", report])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("LineItem: 1472 of 1472 objects copied"), "\(result)")
        #expect(result.stdout.contains("Shop v2, 2235 objects in 5 entities, checksums agree for 5"), "\(result)")
        for table in ["Customer", "Product", "\"Order\"", "LineItem", "Review"] {
            let sql = "SELECT * FROM \(table) ORDER BY ferry_pk"
            #expect(
                try StoreSnapshot.texts(copy, sql) == StoreSnapshot.texts(source, sql), "\(table): same rows, same keys"
            )
        }
        #expect(try FileFingerprint.of(source) == before, "the source is only read")
        let json = try jsonObject(file: report)
        #expect((json["entities"] as? [[String: Any]])?.count == 5)
        let verify = try runFerry(["verify", copy, "--quiet"])
        #expect(verify.exitCode == 0, "\(verify)")
        #expect(
            !(try FileManager.default.contentsOfDirectory(atPath: dir.file("out")).contains {
                $0.contains(".ferry-copy")
            }), "no work file is left")
    }

    @Test(
        "a Core Data store becomes a ferry store: objects, keys (Z_PK) and the Section.post relationship kept",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
    func copiesCoreDataStore() throws {
        let dir = TemporaryDirectory()
        let original = CoreDataStoreCLITests.store(CoreDataStoreCLITests.revised, "CoreDataMigration_Example_3.sqlite")
        let app = try CoreDataStoreCLITests.copy(original, into: dir, name: "App.sqlite")
        let before = try FileFingerprint.of(app)
        let copy = dir.file("copy.sqlite")
        let result = try runFerry(["copy", app, copy])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("Post: 12 of 12 objects copied"), "\(result)")
        #expect(result.stdout.contains("Section: 14 of 14 objects copied"), "\(result)")
        #expect(
            try StoreSnapshot.texts(copy, "SELECT count(*) FROM Section JOIN Post ON Post.ferry_pk = Section.post") == [
                ["14"]
            ])
        #expect(
            try StoreSnapshot.texts(
                copy, "SELECT hexColor FROM Post WHERE postID = '7BC43935-3209-404E-836A-06F3C6518CB1'") == [["BAEFB6"]]
        )
        #expect(try FileFingerprint.of(app) == before)
        let verify = try runFerry(["verify", copy, "--quiet"])
        #expect(verify.exitCode == 0, "\(verify)")
    }

    @Test(
        "refusals: a destination with objects (unless --replace), a file that is not a store, a missing source; nothing changes"
    )
    func refusals() throws {
        let dir = TemporaryDirectory()
        let source = dir.file("shop.sqlite")
        try FileManager.default.copyItem(atPath: Self.snapshot, toPath: source)
        let existing = dir.file("existing.sqlite")
        #expect(try runFerry(["copy", source, existing, "--quiet"]).exitCode == 0)
        let kept = try FileFingerprint.of(existing)
        let again = try runFerry(["copy", source, existing])
        #expect(again.exitCode == 64, "\(again)")
        #expect(again.stderr.contains("already holds 2235 objects"), "\(again)")
        #expect(try FileFingerprint.of(existing) == kept)
        let replaced = try runFerry(["copy", source, existing, "--replace", "--quiet"])
        #expect(replaced.exitCode == 0, "\(replaced)")
        #expect(try StoreSnapshot.texts(existing, "SELECT count(*) FROM LineItem") == [["1472"]])

        let notes = try dir.write("notes.txt", "my notes\n")
        let overwrite = try runFerry(["copy", source, notes])
        #expect(overwrite.exitCode == 64, "\(overwrite)")
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "my notes\n")

        let plain = dir.file("plain.db")
        try StoreConnection(plain, create: true).execute("CREATE TABLE t(x)")
        let notAStore = try runFerry(["copy", plain, dir.file("x.sqlite")])
        #expect(notAStore.exitCode != 0, "\(notAStore)")
        #expect(notAStore.stderr.contains("ferry import"), "points to importing the tables: \(notAStore)")
        let missing = try runFerry(["copy", dir.file("absent.sqlite"), dir.file("y.sqlite")])
        #expect(missing.exitCode == 66, "\(missing)")
        let same = try runFerry(["copy", source, source])
        #expect(same.exitCode == 64, "\(same)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.sqlite")))
        #expect(!FileManager.default.fileExists(atPath: dir.file("y.sqlite")))
    }
}
