import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// The `Z_MODELCACHE` of every Core Data store ferry creates or migrates, through the real
/// binary: the store describes itself (`export`, `verify`, `model show` need no `--model`), its
/// cached model is the Xcode version it came from and the one Core Data cached in the real
/// store of that version (`ferry model diff` finds no change), and version detection finds a
/// migrated intermediate store's version from its cache alone.
@Suite("Core Data model caches written by ferry, through the real binary", .serialized)
struct CoreDataModelCacheCLITests {
    typealias Samples = CoreDataStoreCLITests
    typealias Hashes = CoreDataVersionHashCLITests

    /// The changes `ferry model diff OLD NEW --json` lists between two models (stores stand
    /// for the model they cache).
    static func changes(_ old: String, _ new: String) throws -> [Any] {
        let result = try runFerry(["model", "diff", old, new, "--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
        let steps = try #require(object["steps"] as? [[String: Any]], "\(result)")
        return steps.flatMap { $0["changes"] as? [Any] ?? [] }
    }

    /// The store's metadata without its version hashes, digest and checksum, as a store whose
    /// hashes no version has: detection must fall back to the cached model.
    static func dropVersionHashes(_ store: String) throws {
        let connection = try Connection(path: store, create: false)
        let plist = try connection.scalar("SELECT Z_PLIST FROM Z_METADATA")
        guard case .blob(let bytes)? = plist else {
            Issue.record("no metadata in \(store)")
            return
        }
        var dictionary = try #require(try BinaryPropertyList.decode(bytes, source: store).dictionary)
        for key in [
            "NSStoreModelVersionHashes", "NSStoreModelVersionHashesDigest", "NSStoreModelVersionChecksumKey",
        ] {
            dictionary[key] = nil
        }
        try connection.execute(
            "UPDATE Z_METADATA SET Z_PLIST = ?", [.blob(BinaryPropertyListWriter.encode(.dictionary(dictionary)))])
    }

    /// `ferry store version` as JSON.
    static func detect(_ store: String, model: String) throws -> [String: Any] {
        let result = try runFerry(["store", "version", store, "--model", model, "--json"])
        #expect(result.exitCode == 0, "\(result)")
        return try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
    }

    @Test(
        "a new store of each real store's version caches that version: model diff against the Xcode version and against the real store (a copy) finds no change; export, verify and model show need no --model",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func newStores() throws {
        let directory = TemporaryDirectory("ferry-cdcache-new")
        let posts = try directory.write("posts.csv", "postID\nP-1\n")
        for (index, real) in Hashes.stores.enumerated() {
            let label = "\(real.project) \(real.file)"
            let path = directory.file("new-\(index).sqlite")
            let version = Hashes.versionFolder(real.project, real.version)
            let created = try runFerry([
                "import", posts, "--store", path, "--model", version, "--entity", "Post", "--layout", "coredata",
                "--quiet",
            ])
            #expect(created.exitCode == 0, "\(created)")
            let cache = try Connection(path: path, readOnly: true, create: false).scalar(
                "SELECT Z_CONTENT FROM Z_MODELCACHE")
            guard case .blob(let blob)? = cache else {
                Issue.record("\(label): no Z_MODELCACHE blob")
                continue
            }
            #expect(!blob.isEmpty)
            let copy = try Samples.copy(
                Samples.store(real.project, real.file), into: directory, name: "real-\(index).sqlite")
            #expect(try Self.changes(version, path).isEmpty, "\(label): the Xcode version → ferry's cache")
            #expect(try Self.changes(copy, path).isEmpty, "\(label): Core Data's cache → ferry's cache")
            #expect(try Self.changes(path, copy).isEmpty, "\(label): ferry's cache → Core Data's cache")

            let export = try runFerry(["export", "--store", path, "--entity", "Post", "--format", "csv", "--quiet"])
            #expect(export.exitCode == 0, "\(export)")
            #expect(export.stdout.contains("P-1"), "\(export)")
            // Verification from the cache alone is verification against the Xcode version (a
            // required to-one without a value fails both alike).
            let verify = try runFerry(["verify", path])
            let withModel = try runFerry(["verify", path, "--model", version])
            #expect(verify.exitCode == withModel.exitCode && [0, 3].contains(verify.exitCode), "\(verify)")
            func failed(_ result: ProcessResult) -> [Substring] {
                result.stdout.split(separator: "\n").filter { $0.contains(" FAILED ") }
            }
            #expect(failed(verify) == failed(withModel), "\(verify)\n\(withModel)")
            let show = try runFerry(["model", "show", path])
            #expect(show.exitCode == 0 && show.stdout.contains("Post"), "\(show)")
        }
    }

    @Test(
        "a new store of a model with a hierarchy, ordered and many-to-many relationships caches it exactly and is read without --model"
    )
    func libraryModel() throws {
        let directory = TemporaryDirectory("ferry-cdcache-library")
        let store = try CoreDataWriteCLITests.libraryStore(in: directory)
        #expect(try Self.changes(CoreDataWriteCLITests.library, store).isEmpty)
        #expect(try Self.changes(store, CoreDataWriteCLITests.library).isEmpty)
        let verify = try runFerry(["verify", store, "--quiet"])
        #expect(verify.exitCode == 0, "\(verify)")
        let export = try runFerry(["export", "--store", store, "--entity", "Book", "--format", "json", "--quiet"])
        #expect(export.exitCode == 0 && !export.stdout.isEmpty, "\(export)")
        let withModel = try runFerry([
            "export", "--store", store, "--model", CoreDataWriteCLITests.library, "--entity", "Book", "--format",
            "json", "--quiet",
        ])
        #expect(export.stdout == withModel.stdout, "the cached model exports what the Xcode model exports")
    }

    @Test(
        "a store ferry migrated caches the version it migrated to: both wibosco chains, each intermediate and the last version; found from its cache alone once its hashes are gone",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func migratedStores() throws {
        for (project, set) in [(Samples.revised, "revised"), (Samples.examples, "original")] {
            let directory = TemporaryDirectory("ferry-cdcache-chain")
            let store = try CoreDataMigrateCLITests.store(project, "CoreDataMigration_Example_1", in: directory)
            for real in Hashes.stores where real.project == project && real.version != Hashes.v1 {
                let step = try CoreDataMigrateCLITests.migrate(
                    store, app: project, set: set, ["--to", real.version, "--no-backup"]
                ).wait()
                #expect(step.exitCode == 0, "\(project) → \(real.version): \(step)")
                let label = "\(project) migrated to \(real.version)"
                #expect(try Self.changes(Hashes.versionFolder(project, real.version), store).isEmpty, "\(label)")
                let copy = try Samples.copy(
                    Samples.store(project, real.file), into: directory, name: "real-\(real.version).sqlite")
                #expect(try Self.changes(copy, store).isEmpty, "\(label): Core Data's cache → ferry's cache")
                let verify = try runFerry(["verify", store, "--quiet"])
                #expect(verify.exitCode == 0, "\(label): \(verify)")

                // Without hashes, the cache alone tells the version.
                let bare = try Samples.writableCopy(store, into: directory, name: "bare-\(real.version).sqlite")
                if FileManager.default.fileExists(atPath: store + "-wal") {
                    try FileManager.default.copyItem(atPath: store + "-wal", toPath: bare + "-wal")
                }
                try Self.dropVersionHashes(bare)
                let found = try Self.detect(bare, model: Samples.package(project))
                #expect(found["version"] as? String == real.version, "\(label): \(found)")
                #expect(found["method"] as? String == "cached_model", "\(label): \(found)")
            }
        }
    }

    @Test(
        "versions that differ only in an ordered flag: a store migrated to the intermediate one is found at it by its cache, with or without hashes"
    )
    func orderedFlagOnly() throws {
        let directory = TemporaryDirectory("ferry-cdcache-ordered")
        let (package, store) = try Hashes.shopStoreMigratedToShop2(in: directory)
        let withHashes = try Self.detect(store, model: package)
        #expect(withHashes["version"] as? String == "Shop 2", "\(withHashes)")
        #expect(withHashes["also_matching"] as? [String] == [], "\(withHashes)")
        try Self.dropVersionHashes(store)
        let fromCache = try Self.detect(store, model: package)
        #expect(fromCache["version"] as? String == "Shop 2", "\(fromCache)")
        #expect(fromCache["method"] as? String == "cached_model", "\(fromCache)")
        #expect(fromCache["also_matching"] as? [String] == [], "\(fromCache)")
        let last = try runFerry(["migrate", store, "--model", package, "--no-backup"])
        #expect(last.exitCode == 0, "\(last)")
        #expect(last.stdout.contains("migrated from version Shop 2 to Shop 3"), "\(last)")
        #expect(try Self.changes(package + "/Shop 3.xcdatamodel", store).isEmpty)
    }
}
