import FerryTestSupport
import Foundation
import Testing

/// Issue 25: what a later step cannot do was reported only when that step ran, after the earlier
/// steps had done their work: a policy that is not registered, a Core Data version with a derived
/// attribute (a new store cannot get its triggers). Both are now refused before the first step.
@Suite("what a later migration step cannot do is refused before the first step, through the real binary")
struct MigrationPolicyCheckCLITests {
    @Test(
        "PeopleSteps 1 → 3 with step 2 → 3 naming an unregistered policy: refused before step 1 starts, store unchanged"
    )
    func refusedBeforeFirstStep() throws {
        let dir = TemporaryDirectory()
        let store = try MigrationCrashTests.v1Store(in: dir, rows: 1...2_000)
        let before = try StoreSnapshot.take(store, excluding: [])
        let mappings = dir.file("mappings")
        try FileManager.default.createDirectory(atPath: mappings, withIntermediateDirectories: true)
        let file = try dir.write(
            "mappings/2-to-3.yml", "from: \"2\"\nto: \"3\"\nentities:\n  Person:\n    policy: NoSuchPolicy\n")

        let refused = try runFerry([
            "migrate", store, "--model", MigrationCrashTests.bundle, "--mappings", mappings, "--verbose",
        ])
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(
            refused.stderr.contains("\(file):5:13: error: no migration policy named 'NoSuchPolicy' is registered"),
            "\(refused)")
        #expect(!refused.stderr.contains("[1/2]"), "step 1 started: \(refused)")
        #expect(try MigrationCrashTests.version(of: store) == "1")
        #expect(try StoreSnapshot.take(store, excluding: []) == before)

        // The dry run plans both steps and warns that the migration would be refused.
        let planned = try runFerry([
            "migrate", store, "--model", MigrationCrashTests.bundle, "--mappings", mappings, "--dry-run",
        ])
        #expect(planned.exitCode == 0, "\(planned)")
        #expect(
            planned.stderr.contains(
                "warning: the migration would be refused: \(file):5:13: error: no migration policy named 'NoSuchPolicy'"
            ),
            "\(planned)")
        #expect(try StoreSnapshot.take(store, excluding: []) == before)
    }

    @Test(
        "a Core Data store 1 → 3 where version 3 has a derived attribute: refused before step 1, store unchanged; --to 2 migrates"
    )
    func derivedAttributeRefusedBeforeFirstStep() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("Lib"), withIntermediateDirectories: true)
        _ = try dir.write("Lib/model.yml", "name: Lib\ncurrent: \"3\"\nversions: [v1.yml, v2.yml, v3.yml]\n")
        let title = "entities:\n  Book:\n    attributes:\n      title: string\n"
        _ = try dir.write("Lib/v1.yml", "version: \"1\"\n" + title)
        _ = try dir.write("Lib/v2.yml", "version: \"2\"\n" + title + "      pages: int64\n")
        let v3 = try dir.write(
            "Lib/v3.yml",
            "version: \"3\"\n" + title
                + "      pages: int64\n      touched: {type: date, optional: true, derived: \"now()\"}\n")
        let data = try dir.write("books.csv", "title\nDune\nEmma\n")
        let store = dir.file("books.sqlite")
        let imported = try runFerry([
            "import", data, "--store", store, "--model", dir.file("Lib/v1.yml"), "--entity", "Book", "--layout",
            "coredata", "--quiet",
        ])
        #expect(imported.exitCode == 0, "\(imported)")
        let before = try Data(contentsOf: URL(fileURLWithPath: store))

        let refused = try runFerry(["migrate", store, "--model", dir.file("Lib"), "--verbose"])
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(
            refused.stderr.contains(
                "\(v3):7:7: error: cannot migrate to version 3: Book.touched is a derived attribute"),
            "\(refused)")
        #expect(refused.stderr.contains("nothing was changed"), "\(refused)")
        #expect(!refused.stderr.contains("[1/2]"), "step 1 started: \(refused)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)

        let partway = try runFerry(["migrate", store, "--model", dir.file("Lib"), "--to", "2", "--quiet"])
        #expect(partway.exitCode == 0, "\(partway)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT ZTITLE, ZPAGES FROM ZBOOK ORDER BY ZTITLE") == [
                ["Dune", nil], ["Emma", nil],
            ])
    }
}
