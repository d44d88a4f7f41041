import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// Core Data entity version hashes computed from the model, through the real binary:
/// `ferry model show` prints them; every store `ferry import --layout coredata` creates and every
/// store `ferry migrate` writes carries the very hashes (digest and checksum) of the real Core
/// Data store of that version; a compiled model that disagrees stops the write; a store ferry
/// migrated to an intermediate version is recognised by its hashes and migrates on.
@Suite("Core Data version hashes computed from the model, through the real binary", .serialized)
struct CoreDataVersionHashCLITests {
    typealias Samples = CoreDataStoreCLITests
    static let v1 = CoreDataCheckCLITests.v1, v2 = CoreDataCheckCLITests.v2
    static let v3 = CoreDataCheckCLITests.v3, v4 = CoreDataCheckCLITests.v4

    /// The real stores and the version each is at.
    static let stores: [(project: String, file: String, version: String)] = [
        (Samples.revised, "CoreDataMigration_Example_1.sqlite", v1),
        (Samples.revised, "CoreDataMigration_Example_2.sqlite", v2),
        (Samples.revised, "CoreDataMigration_Example_3.sqlite", v3),
        (Samples.examples, "CoreDataMigration_Example_1.sqlite", v1),
        (Samples.examples, "CoreDataMigration_Example_2.sqlite", v2),
        (Samples.examples, "CoreDataMigration_Example_3.sqlite", v3),
        (Samples.examples, "CoreDataMigration_Example_WAL.sqlite", v4),
    ]

    /// The `.xcdatamodel` folder of one version.
    static func versionFolder(_ project: String, _ version: String) -> String {
        Samples.package(project) + "/\(version).xcdatamodel"
    }

    /// The metadata of a store, read from an independent copy.
    static func metadata(_ path: String) throws -> CoreDataStoreMetadata {
        try CoreDataStoreFile.read(path).metadata
    }

    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// The hashes, digest and checksum a store records must be the real store's, with the
    /// aggregates the real store's hashes give.
    static func expectSameHashes(_ written: String, as real: String, _ label: String) throws {
        let mine = try metadata(written)
        let theirs = try metadata(real)
        #expect(mine.versionHashes == theirs.versionHashes, "\(label)")
        #expect(mine.versionHashes.count == theirs.versionHashes.count && !mine.versionHashes.isEmpty)
        #expect(mine.hashesDigest == base64(CoreDataVersionHashes.digest(theirs.versionHashes)), "\(label)")
        #expect(mine.checksum == base64(CoreDataVersionHashes.checksum(theirs.versionHashes)), "\(label)")
    }

    @Test(
        "model show --json: each entity's core_data_version_hash is the real store's; the version's digest and checksum",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func modelShow() throws {
        for project in [Samples.revised, Samples.examples] {
            let result = try runFerry(["model", "show", Samples.package(project), "--json"])
            #expect(result.exitCode == 0, "\(result)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let versions = try #require(object["versions"] as? [[String: Any]])
            for store in Self.stores where store.project == project {
                let real = try Self.metadata(Samples.store(project, store.file))
                let version = try #require(versions.first { $0["version"] as? String == store.version })
                let entities = try #require(version["entities"] as? [[String: Any]])
                var shown: [String: String] = [:]
                for entity in entities {
                    shown[entity["name"] as? String ?? ""] = entity["core_data_version_hash"] as? String
                    #expect(entity["core_data_version_hash_unverified"] == nil, "\(entity)")
                }
                #expect(shown == real.versionHashes.mapValues(Self.base64), "\(project) \(store.file)")
                #expect(
                    version["core_data_digest"] as? String
                        == Self.base64(CoreDataVersionHashes.digest(real.versionHashes)))
                #expect(
                    version["core_data_checksum"] as? String
                        == Self.base64(CoreDataVersionHashes.checksum(real.versionHashes)))
            }
        }
        // The text output shows them too.
        let text = try runFerry(["model", "show", Self.versionFolder(Samples.examples, Self.v3)])
        let real = try Self.metadata(Samples.store(Samples.examples, "CoreDataMigration_Example_3.sqlite"))
        for hash in real.versionHashes.values {
            #expect(text.stdout.contains("Core Data version hash \(Self.base64(hash))"), "\(text)")
        }
        #expect(text.stdout.contains("Core Data digest "), "\(text)")
        #expect(text.stdout.contains("Core Data checksum "), "\(text)")
    }

    @Test("model show marks an open point: the Library model's ordered relationships are unverified, with the reason")
    func modelShowUnverified() throws {
        let result = try runFerry(["model", "show", CoreDataWriteCLITests.library, "--json"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("\"core_data_version_hash_unverified\""), "\(result)")
        #expect(result.stdout.contains("ordered relationship"), "\(result)")
        let text = try runFerry(["model", "show", CoreDataWriteCLITests.library])
        #expect(text.stdout.contains("Core Data version hash unverified: "), "\(text)")
    }

    @Test(
        "a new store (--layout coredata, no --compiled-model) for each real store's version carries that store's very hashes, digest and checksum",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func newStores() throws {
        let directory = TemporaryDirectory("ferry-cdhash-new")
        let posts = try directory.write("posts.csv", "postID\nP-1\n")
        for (index, store) in Self.stores.enumerated() {
            let path = directory.file("new-\(index).sqlite")
            let result = try runFerry([
                "import", posts, "--store", path, "--model", Self.versionFolder(store.project, store.version),
                "--entity", "Post", "--layout", "coredata", "--quiet",
            ])
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stderr.isEmpty, "verified hashes need no warning: \(result)")
            try Self.expectSameHashes(
                path, as: Samples.store(store.project, store.file), "\(store.project) \(store.file)")
        }
    }

    @Test(
        "a compiled model whose hash differs stops the new store before anything is written, naming the entity; one that agrees is accepted",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func compiledModelDisagrees() throws {
        let directory = TemporaryDirectory("ferry-cdhash-momd")
        let posts = try directory.write("posts.csv", "postID\nP-1\n")
        var versions = try CompiledModelVersions.read(Samples.compiledModel).versionHashes
        versions[Self.v4]?["Post"] = Array(repeating: 7, count: 32)
        var byVersion = PropertyListDictionary()
        for (name, hashes) in versions.sorted(by: { $0.key < $1.key }) {
            byVersion[name] = .dictionary(
                PropertyListDictionary(hashes.sorted { $0.key < $1.key }.map { ($0.key, .data($0.value)) }))
        }
        var top = PropertyListDictionary()
        top["NSManagedObjectModel_VersionHashes"] = .dictionary(byVersion)
        top["NSManagedObjectModel_CurrentVersionName"] = .string(Self.v4)
        let momd = directory.file("Tampered.momd")
        try FileManager.default.createDirectory(atPath: momd, withIntermediateDirectories: true)
        try Data(BinaryPropertyListWriter.encode(.dictionary(top))).write(
            to: URL(fileURLWithPath: momd + "/VersionInfo.plist"))
        let store = directory.file("Seed.sqlite")
        let result = try runFerry([
            "import", posts, "--store", store, "--model", Samples.package(Samples.examples), "--entity", "Post",
            "--layout", "coredata", "--compiled-model", momd,
        ])
        #expect(result.exitCode != 0, "\(result)")
        #expect(
            result.stderr.contains("entity Post of model CoreDataMigration_Example version \(Self.v4)")
                && result.stderr.contains("differs from the one computed from the model"), "\(result)")
        #expect(result.stderr.contains("BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: store), "nothing is written")
        #expect(!FileManager.default.fileExists(atPath: store + "-wal"))

        // The true compiled model agrees with the computed hashes.
        let good = try runFerry([
            "import", posts, "--store", store, "--model", Samples.package(Samples.examples), "--entity", "Post",
            "--layout", "coredata", "--compiled-model", Samples.compiledModel, "--quiet",
        ])
        #expect(good.exitCode == 0, "\(good)")
        try Self.expectSameHashes(
            store, as: Samples.store(Samples.examples, "CoreDataMigration_Example_WAL.sqlite"), "compiled")
    }

    @Test("an unverified hash without a compiled model is written, and the output says which entity and why")
    func unverifiedWritten() throws {
        let directory = TemporaryDirectory("ferry-cdhash-unverified")
        let store = directory.file("Library.sqlite")
        let tags = try directory.write("tags.csv", "name\nsci-fi\n")
        let result = try runFerry([
            "import", tags, "--store", store, "--model", CoreDataWriteCLITests.library, "--entity", "Tag",
            "--layout", "coredata", "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr.contains("Core Data version hashes written unverified"), "\(result)")
        #expect(result.stderr.contains("ordered relationship"), "\(result)")
        #expect(result.stderr.contains("--compiled-model"), "\(result)")
        let written = try Self.metadata(store)
        #expect(written.versionHashes.count == 6 && written.versionHashes.values.allSatisfy { $0.count == 32 })
        #expect(written.hashesDigest == Self.base64(CoreDataVersionHashes.digest(written.versionHashes)))
    }

    @Test(
        "a store ferry migrated to an intermediate version carries that version's real hashes, is recognised by them, and migrates on (both wibosco chains)",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func intermediateVersions() throws {
        for (project, set) in [(Samples.revised, "revised"), (Samples.examples, "original")] {
            let directory = TemporaryDirectory("ferry-cdhash-chain")
            let store = try CoreDataMigrateCLITests.store(project, "CoreDataMigration_Example_1", in: directory)
            let reals = Self.stores.filter { $0.project == project && $0.version != Self.v1 }
            for real in reals {
                let step = try CoreDataMigrateCLITests.migrate(
                    store, app: project, set: set, ["--to", real.version, "--no-backup"]
                ).wait()
                #expect(step.exitCode == 0, "\(project) → \(real.version): \(step)")
                try Self.expectSameHashes(
                    store, as: Samples.store(project, real.file), "\(project) migrated to \(real.version)")
                let version = try runFerry(["store", "version", store, "--model", Samples.package(project), "--json"])
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(version.stdout.utf8)) as? [String: Any], "\(version)")
                #expect(object["version"] as? String == real.version, "\(project): \(version)")
                #expect(object["method"] as? String == "version_hashes", "\(project): \(version)")
            }
            // On to the current version from the last intermediate one.
            let last = try CoreDataMigrateCLITests.migrate(store, app: project, set: set, ["--no-backup"]).wait()
            #expect(last.exitCode == 0, "\(project) → current: \(last)")
            let version = try runFerry(["store", "version", store, "--model", Samples.package(project), "--json"])
            #expect(version.stdout.contains("\"\(Self.v4)\""), "\(project): \(version)")
            #expect(version.stdout.contains("\"version_hashes\""), "\(project): \(version)")
        }
    }

    /// A three-version package: `Shop 2` adds `Item.price`, `Shop 3` makes `Order.items` ordered
    /// (an ordered flag is no input of the hashes, and `Z_FOK_…` columns are not predicted by
    /// the plain structural match).
    static func shopPackage(in directory: TemporaryDirectory) throws -> String {
        let package = directory.file("Shop.xcdatamodeld")
        func write(_ version: String, price: Bool, ordered: Bool) throws {
            let folder = package + "/\(version).xcdatamodel"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let contents = """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="">
                    <entity name="Item" representedClassName="Item" syncable="YES">
                        <attribute name="name" optional="YES" attributeType="String"/>
                        \(price ? "<attribute name=\"price\" optional=\"YES\" attributeType=\"Double\"/>" : "")
                        <relationship name="order" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Order" inverseName="items" inverseEntity="Order"/>
                    </entity>
                    <entity name="Order" representedClassName="Order" syncable="YES">
                        <attribute name="number" optional="YES" attributeType="String"/>
                        <relationship name="items" optional="YES" toMany="YES"\(ordered ? " ordered=\"YES\"" : "") deletionRule="Cascade" destinationEntity="Item" inverseName="order" inverseEntity="Item"/>
                    </entity>
                </model>
                """
            try Data(contents.utf8).write(to: URL(fileURLWithPath: folder + "/contents"))
        }
        try write("Shop", price: false, ordered: false)
        try write("Shop 2", price: true, ordered: false)
        try write("Shop 3", price: true, ordered: true)
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Shop 3.xcdatamodel</string></dict></plist>
            """.utf8
        ).write(to: URL(fileURLWithPath: package + "/.xccurrentversion"))
        return package
    }

    /// The Shop package and a store ferry created at `Shop` and migrated to `Shop 2`.
    static func shopStoreMigratedToShop2(in directory: TemporaryDirectory) throws -> (package: String, store: String) {
        let package = try shopPackage(in: directory)
        let store = directory.file("Shop.sqlite")
        let orders = try directory.write("orders.csv", "number\nA-1\n")
        let create = try runFerry([
            "import", orders, "--store", store, "--model", package + "/Shop.xcdatamodel", "--entity", "Order",
            "--layout", "coredata", "--quiet",
        ])
        #expect(create.exitCode == 0, "\(create)")
        let step = try runFerry(["migrate", store, "--model", package, "--to", "Shop 2", "--no-backup", "--quiet"])
        #expect(step.exitCode == 0, "\(step)")
        return (package, store)
    }

    @Test(
        "versions the hashes cannot tell apart (only an ordered flag differs): the store's Z_FOK_ columns decide; a store migrated to the intermediate version is found at it and migrates on"
    )
    func orderedFlagOnly() throws {
        let directory = TemporaryDirectory("ferry-cdhash-ordered")
        let (package, store) = try Self.shopStoreMigratedToShop2(in: directory)
        let version = try runFerry(["store", "version", store, "--model", package, "--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(version.stdout.utf8)) as? [String: Any], "\(version)")
        #expect(object["version"] as? String == "Shop 2", "\(version)")
        #expect(object["method"] as? String == "version_hashes", "\(version)")
        #expect(object["also_matching"] as? [String] == [], "\(version)")
        let last = try runFerry(["migrate", store, "--model", package, "--no-backup"])
        #expect(last.exitCode == 0, "\(last)")
        #expect(last.stdout.contains("migrated from version Shop 2 to Shop 3"), "\(last)")
        #expect(
            try Connection(path: store, readOnly: true, create: false).rows("PRAGMA table_info(ZITEM)").contains {
                $0.count > 1 && $0[1].text == "Z_FOK_ORDER"
            }, "the ordered inverse's column")
        let again = try runFerry(["store", "version", store, "--model", package])
        #expect(again.stdout.contains("Shop Shop 3 (by the entity version hashes computed from the model)"), "\(again)")
    }
}
