import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `ferry copy` of a Core Data store into PostgreSQL, in one command (before, it was refused:
/// "copy it into a ferry store file first"): read through the store's private copy, into a
/// private ferry file, into the schema, verified at each hand-over. A date whose Core Data double
/// is the one nearest to a whole millisecond (one in a thousand of a microsecond clock's
/// dates) is that millisecond in PostgreSQL, and the checksums agree.
@Suite(
    "ferry copy of a Core Data store into PostgreSQL (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresCopyCoreDataCLITests {
    static let garage = TestPaths.packageRoot.appendingPathComponent(
        "Tests/FerryCLITests/Fixtures/conformance/Garage.xcdatamodeld"
    ).path
    static func fixture(_ name: String) -> String {
        TestPaths.packageRoot.appendingPathComponent("Tests/FerryCLITests/Fixtures/conformance/\(name)").path
    }

    /// The people of `store`, as NDJSON sorted by key.
    static func people(_ store: String) throws -> String {
        let export = try runFerry([
            "export", "--store", store, "--model", garage, "--entity", "Person", "--format", "ndjson", "--sort",
            "personID", "--fields", "personID,name,born,active,height", "--quiet",
        ])
        #expect(export.exitCode == 0, "\(export)")
        return export.stdout
    }

    @Test("a Core Data store copies into a new schema; the objects are the store's, verified, nothing left behind")
    func copyCoreDataStore() throws {
        let directory = TemporaryDirectory()
        let store = directory.file("garage.sqlite")
        let imported = try runFerry([
            "import", Self.fixture("people.ndjson"), "--store", store, "--model", Self.garage, "--entity", "Person",
            "--layout", "coredata", "--on-new-field", "ignore", "--quiet",
        ])
        #expect(imported.exitCode == 0, "\(imported)")
        // Cy's birth as a microsecond clock gives Core Data a whole millisecond: the nearest double.
        let connection = try Connection(path: store, create: false)
        try connection.execute("UPDATE ZPERSON SET ZBORN = 526913891.308 WHERE ZPERSONID = 3")
        let (url, drop) = try PostgresImportCLITests.freshStore("copycd")
        defer { drop() }
        let temporaryBefore = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter {
            $0.hasPrefix("ferry-coredata-")
        }
        let copied = try runFerry(["copy", store, url, "--model", Self.garage])
        #expect(copied.exitCode == 0, "\(copied)")
        #expect(copied.stdout.contains("copied \(store) → "), "the report names the Core Data store: \(copied.stdout)")
        #expect(copied.stdout.contains("checksums agree"), "\(copied.stdout)")
        let temporaryAfter = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter {
            $0.hasPrefix("ferry-coredata-")
        }
        #expect(Set(temporaryAfter).isSubset(of: Set(temporaryBefore)), "no private copy left: \(temporaryAfter)")

        let fromCoreData = try Self.people(store)
        let fromServer = try Self.people(url)
        // The same objects; the nearest double's text keeps a fourth digit (it reads back bit for
        // bit), the server's millisecond has three.
        #expect(fromCoreData.contains("2017-09-12T12:58:11.3080Z"), "\(fromCoreData)")
        #expect(fromServer.contains("2017-09-12T12:58:11.308Z"), "\(fromServer)")
        #expect(fromServer == fromCoreData.replacing("11.3080Z", with: "11.308Z"))
        #expect(fromServer.contains("1980-02-03T04:05:06.123456Z"), "microseconds kept: \(fromServer)")
        let verified = try runFerry(["verify", url, "--model", Self.garage, "--checks", "all", "--quiet"])
        #expect(verified.exitCode == 0, "\(verified)")
    }

    @Test(
        "a real app's Core Data store (wibosco, 7,995 posts and colors) copies into PostgreSQL and migrates there to the app's next version",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
    func copyRealStore() throws {
        let directory = TemporaryDirectory()
        let store = directory.file("example3.sqlite")
        try FileManager.default.copyItem(
            atPath: CoreDataStoreCLITests.store(CoreDataStoreCLITests.examples, "CoreDataMigration_Example_3.sqlite"),
            toPath: store)
        let model = CoreDataStoreCLITests.package(CoreDataStoreCLITests.examples)
        let (url, drop) = try PostgresImportCLITests.freshStore("copycdreal")
        defer { drop() }
        let copied = try runFerry(["copy", store, url, "--quiet"])
        #expect(copied.exitCode == 0, "\(copied)")
        let migrated = try runFerry(["migrate", url, "--model", model, "--quiet"])
        #expect(migrated.exitCode == 0, "\(migrated)")
        let verified = try runFerry(["verify", url, "--model", model, "--checks", "all", "--quiet"])
        #expect(verified.exitCode == 0, "\(verified)")
    }
}
