import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Writing Core Data stores: new stores from the real Xcode models (their DDL, numbering and
/// metadata compared with the stores Core Data itself wrote for the same model versions),
/// inserts into copies of the real stores and into new ones keeping Core Data's bookkeeping
/// (`Z_PK` from `Z_MAX`, `Z_ENT`, `Z_OPT`, `Z<n>_` entity columns, `Z_FOK_` order columns,
/// derived-attribute triggers), and the bad paths.
@Suite struct CoreDataWritingTests {
    typealias Samples = CoreDataStoreTests
    static let library = TestPaths.packageRoot.appendingPathComponent("samples/coredata/Library.xcdatamodeld").path

    /// The statements of a store's schema, from an independent copy (`-wal` included).
    static func schema(_ path: String) throws -> Set<String> {
        Set(try rows(path, "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL").compactMap { $0.first?.text })
    }

    /// Rows of `sql` on an independent copy of the store at `path`.
    static func rows(_ path: String, _ sql: String) throws -> [[DatabaseValue]] {
        let directory = TemporaryDirectory("ferry-cdw-read")
        let copy = directory.file("read.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        if FileManager.default.fileExists(atPath: path + "-wal") {
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        }
        return try Connection(path: copy, create: false).rows(sql)
    }

    static func version(_ name: String, of package: String) throws -> ObjectModel {
        let bundle = try ModelLoader().load(path: package)
        return try #require(bundle.versions.first { $0.version == name }, "no version \(name) in \(package)")
    }

    /// Inserts `rows` into `entity` in one transaction.
    @discardableResult
    static func insert(
        _ store: Store, _ entity: String, _ columns: [InsertColumn], _ rows: [[Value]]
    ) throws -> BatchInsertResult {
        var remaining = rows[...]
        var request = BatchInsertRequest(entity: entity, columns: columns) { row in
            guard let next = remaining.popFirst() else { return true }
            row = next
            return false
        }
        var reasons: [String] = []
        request.onReject = { _, reason in reasons.append(reason) }
        let result = try store.execute(request)
        #expect(reasons.isEmpty, "rejected: \(reasons)")
        return result
    }

    // MARK: - Binary property lists and digests

    @Test("the binary plist writer round-trips every kind of value through the reader")
    func plistRoundTrip() throws {
        let long = PropertyListValue.data(Array(0..<200).map { UInt8($0) })
        let value = PropertyListValue.dictionary(
            PropertyListDictionary([
                ("ascii", .string("SQLite")), ("unicode", .string("Hergé — 東京")), ("empty", .string("")),
                ("small", .integer(3)), ("word", .integer(1344)), ("large", .integer(1 << 40)),
                ("negative", .integer(-7)),
                ("unsigned", .unsignedInteger(UInt64.max)), ("real", .real(4.25)), ("yes", .bool(true)),
                ("no", .bool(false)),
                ("date", .date(569_186_950.058821)), ("hash", .data(Array(repeating: 0xAB, count: 32))), ("long", long),
                ("array", .array((0..<20).map { .string("item \($0)") } + [.string("SQLite"), .uid(300)])),
                ("nested", .dictionary(PropertyListDictionary([("Post", .data([1, 2, 3])), ("Section", .data([]))]))),
            ]))
        let bytes = BinaryPropertyListWriter.encode(value)
        #expect(bytes.starts(with: Array("bplist00".utf8)))
        #expect(try BinaryPropertyList.decode(bytes, source: "test") == value)
    }

    @Test(
        "the metadata plists of the real stores read, rewrite and read back equal, key order kept",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
    func realPlistsRoundTrip() throws {
        for sample in Samples.samples {
            let directory = TemporaryDirectory("ferry-cdw-plist")
            let path = try Samples.copy(sample, into: directory)
            let plist = try #require(try Self.rows(path, "SELECT Z_PLIST FROM Z_METADATA").first?.first)
            guard case .blob(let bytes) = plist else {
                Issue.record("Z_PLIST of \(sample.file) is not a blob")
                continue
            }
            let decoded = try BinaryPropertyList.decode(bytes, source: sample.file)
            #expect(
                try BinaryPropertyList.decode(BinaryPropertyListWriter.encode(decoded), source: sample.file) == decoded,
                "\(sample.file)")
        }
    }

    @Test("SHA-512 gives the FIPS 180-4 test vectors")
    func sha512() {
        #expect(
            SHA256.hexString(SHA512.hash(Array("abc".utf8)))
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        )
        #expect(
            SHA256.hexString(SHA512.hash([]))
                == "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        )
        #expect(
            SHA256.hexString(
                SHA512.hash(
                    Array(
                        "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
                            .utf8)))
                == "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"
        )
    }

    // MARK: - New stores from a model

    @Test(
        "a new store for each real store's model version has exactly Core Data's DDL and entity numbering",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
    func newStoreDDLMatchesCoreData() throws {
        for sample in Samples.samples {
            let directory = TemporaryDirectory("ferry-cdw-ddl")
            let original = try Samples.copy(sample, into: directory)
            let model = try Self.version(sample.version, of: Samples.package(sample.project))
            let path = directory.file("new.sqlite")
            do {
                let store = try Store.createCoreData(at: path, model: model)
                _ = store
            }
            #expect(try Self.schema(path) == Self.schema(original), "\(sample.project) \(sample.file)")
            let keys = "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000 ORDER BY Z_ENT"
            #expect(try Self.rows(path, keys) == Self.rows(original, keys), "\(sample.file)")
            #expect(try Self.rows(path, "PRAGMA page_size").first?.first?.int64 == 4096)
            #expect(try Self.rows(path, "PRAGMA auto_vacuum").first?.first?.int64 == 2)
            #expect(try Self.rows(path, "PRAGMA integrity_check").first?.first?.text == "ok")
        }
    }

    @Test(
        "with or without the compiled model, the new store records the model's version hashes (the real store's), digest and checksum",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func newStoreMetadata() throws {
        let compiled = try CompiledModelVersions.read(Samples.compiledModel)
        for sample in Samples.samples where sample.project == Samples.examples {
            let directory = TemporaryDirectory("ferry-cdw-meta")
            let original = try CoreDataStoreFile.read(try Samples.copy(sample, into: directory))
            let model = try Self.version(sample.version, of: Samples.package(sample.project))
            let path = directory.file("new.sqlite")
            _ = try Store.createCoreData(at: path, model: model, compiledHashes: try compiled.hashes(for: model))
            let created = try CoreDataStoreFile.read(path)
            #expect(created.metadata.versionHashes == original.metadata.versionHashes, "\(sample.file)")
            #expect(created.metadata.storeType == "SQLite")
            #expect(created.metadata.autoVacuumLevel == "2")
            #expect(created.metadata.versionHashesVersion == 3)
            #expect(created.metadata.version == 1)
            #expect(created.metadata.uuid.count == 36 && created.metadata.uuid == created.metadata.uuid.uppercased())
            #expect(
                created.metadata.hashesDigest
                    == Data(CoreDataVersionHashes.digest(original.metadata.versionHashes)).base64EncodedString())
            #expect(
                created.metadata.checksum
                    == Data(CoreDataVersionHashes.checksum(original.metadata.versionHashes)).base64EncodedString())
            // The store is identified as its version by hashes alone.
            let bundle = try ModelLoader().load(path: Samples.package(sample.project))
            #expect(
                try CoreDataVersionDetector.detect(store: created, bundle: bundle).version.version == sample.version)

            let bare = directory.file("bare.sqlite")
            _ = try Store.createCoreData(at: bare, model: model)
            let computed = try CoreDataStoreFile.read(bare)
            #expect(computed.metadata.versionHashes == original.metadata.versionHashes, "\(sample.file)")
            #expect(computed.metadata.hashesDigest == created.metadata.hashesDigest)
            #expect(computed.metadata.checksum == created.metadata.checksum)
            #expect(computed.metadata.frameworkVersion == CoreDataNewStoreMetadata.frameworkVersion)
        }
    }

    @Test(
        "the compiled model's hashes must be the model's: another version's are refused, and nothing is created",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
    func compiledModelOfAnotherVersion() throws {
        let compiled = try CompiledModelVersions.read(Samples.compiledModel)
        let v3 = try Self.version("CoreDataMigration_Example 3", of: Samples.package(Samples.examples))
        let v1Hashes = try #require(compiled.versionHashes["CoreDataMigration_Example"])
        let directory = TemporaryDirectory("ferry-cdw-hash")
        let path = directory.file("new.sqlite")
        #expect(throws: FerryError.self) { try Store.createCoreData(at: path, model: v3, compiledHashes: v1Hashes) }
        #expect(!FileManager.default.fileExists(atPath: path))
        var renamed = v3
        renamed.version = "Other"
        // Version 4 has the same entities, but its hashes are not version 3's: only the name decides.
        #expect(throws: FerryError.self) { try compiled.hashes(for: renamed) }
    }

    @Test("an existing file is never overwritten by a new store")
    func newStoreNeverOverwrites() throws {
        let directory = TemporaryDirectory("ferry-cdw-exists")
        let path = directory.file("taken.sqlite")
        try Data("not mine".utf8).write(to: URL(fileURLWithPath: path))
        let model = try ModelLoader().load(path: Self.library).current
        let error = try #require(throws: FerryError.self) {
            try Store.createCoreData(at: path, model: model)
        }
        #expect(error.message.contains("exists already"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "not mine")
    }

    @Test(
        "the Library model's store: inheritance in shared tables, Z<n>_ and Z_FOK_ columns, a many-to-many join table, Core Data's column order"
    )
    func libraryStoreSchema() throws {
        let directory = TemporaryDirectory("ferry-cdw-lib")
        let path = directory.file("Library.sqlite")
        let model = try ModelLoader().load(path: Self.library).current
        _ = try Store.createCoreData(at: path, model: model)
        let schema = try Self.schema(path)
        #expect(
            schema.contains(
                "CREATE TABLE ZBOOK ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHOR INTEGER, ZISBLACKANDWHITE INTEGER, ZPUBLISHEDAT TIMESTAMP, ZRATING FLOAT, ZPRICE DECIMAL, ZISBN VARCHAR, ZTITLE VARCHAR, ZUNIQUEID BLOB, ZCOVER BLOB )"
            ))
        #expect(
            schema.contains(
                "CREATE TABLE ZPAGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNUMBER INTEGER, ZBOOK INTEGER, Z1_BOOK INTEGER, Z_FOK_BOOK INTEGER, ZCONTENT VARCHAR, ZSCAN BLOB )"
            ))
        #expect(
            schema.contains(
                "CREATE TABLE ZWRITER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZBORN INTEGER, ZNAME VARCHAR, ZALIAS VARCHAR )"
            ))
        #expect(
            schema.contains(
                "CREATE TABLE Z_1TAGS ( Z_1BOOKS INTEGER, Z_4TAGS INTEGER, PRIMARY KEY (Z_1BOOKS, Z_4TAGS) )"))
        #expect(schema.contains("CREATE INDEX ZBOOK_Z_ENT_INDEX ON ZBOOK (Z_ENT)"))
        #expect(schema.contains("CREATE INDEX ZPAGE_ZBOOK_INDEX ON ZPAGE (ZBOOK)"))
        #expect(schema.contains("CREATE UNIQUE INDEX Z_Book_UNIQUE_isbn ON ZBOOK (ZISBN COLLATE BINARY ASC)"))
        #expect(schema.contains("CREATE UNIQUE INDEX Z_Writer_UNIQUE_name ON ZWRITER (ZNAME COLLATE BINARY ASC)"))
        let keys = try Self.rows(path, "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        #expect(keys.map { $0[1].text ?? "" } == ["Book", "GraphicNovel", "Page", "Tag", "Writer", "Author"])
        #expect(keys.map { $0[2].int64 ?? -1 } == [0, 1, 0, 0, 0, 5])
        // ferry reads the new store with the model.
        let read = try Store.openCoreData(at: path, bundle: try ModelLoader().load(path: Self.library))
        #expect(try read.entityCount("Book") == 0)
    }

    // MARK: - Inserts

    @Test(
        "inserts into a copy of a real store: Z_PK from Z_MAX, Z_MAX raised, Z_ENT and Z_OPT set; the original untouched",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func insertIntoRealStore() throws {
        let sample = Samples.samples[2]  // wibR 3: Post and Section (Section.post → Post)
        let directory = TemporaryDirectory("ferry-cdw-ins")
        let path = try Samples.copy(sample, into: directory)
        let original = Samples.original(sample).path
        let before = try FileFingerprint.of(original)
        let maxBefore = try Self.rows(path, "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        do {
            let store = try Store.openCoreDataForWriting(
                at: path, bundle: try ModelLoader().load(path: Samples.package(sample.project)))
            try Self.insert(
                store, "Post", [.attribute("postID"), .attribute("hexColor"), .attribute("date")],
                [
                    [.string("P-NEW-1"), .string("#FF0000"), .date(1_700_000_000_000)],
                    [.string("P-NEW-2"), .null, .null],
                ])
            let postKey = try #require(
                try store.read { try $0.scalar("SELECT Z_PK FROM ZPOST WHERE ZPOSTID = 'P-NEW-1'") }?.int64)
            try Self.insert(
                store, "Section", [.attribute("title"), .attribute("index"), .relationship("post")],
                [
                    [.string("Intro"), .integer(0), .integer(postKey)]
                ])
        }
        // Post is entity 1, Section 2 in this store.
        let maxPost = try #require(maxBefore.first { $0[0].int64 == 1 }?[1].int64)
        let maxSection = try #require(maxBefore.first { $0[0].int64 == 2 }?[1].int64)
        let posts = try Self.rows(
            path, "SELECT Z_PK, Z_ENT, Z_OPT FROM ZPOST WHERE ZPOSTID LIKE 'P-NEW-%' ORDER BY Z_PK")
        #expect(posts.map { $0.compactMap(\.int64) } == [[maxPost + 1, 1, 1], [maxPost + 2, 1, 1]])
        let sections = try Self.rows(path, "SELECT Z_PK, Z_ENT, Z_OPT, ZPOST FROM ZSECTION WHERE ZTITLE = 'Intro'")
        #expect(sections.map { $0.compactMap(\.int64) } == [[maxSection + 1, 2, 1, maxPost + 1]])
        let maxAfter = try Self.rows(path, "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        #expect(maxAfter.map { $0.compactMap(\.int64) } == [[1, maxPost + 2], [2, maxSection + 1]])
        #expect(try Self.rows(path, "PRAGMA integrity_check").first?.first?.text == "ok")
        #expect(try FileFingerprint.of(original) == before)
        // The metadata is untouched, and ferry reads the rows back.
        #expect(try CoreDataStoreFile.read(path).metadata == CoreDataStoreFile.read(original).metadata)
        let read = try Store.openCoreData(at: path, bundle: nil)
        #expect(try read.entityCount("Post") == sample.rows["Post"]! + 2)
    }

    @Test(
        "the WAL store: rows are added to its -wal, which is kept (not checkpointed away), and read back with it",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
    func insertIntoWALStore() throws {
        let sample = Samples.samples[6]
        let directory = TemporaryDirectory("ferry-cdw-wal")
        let path = try Samples.copy(sample, into: directory)
        do {
            let store = try Store.openCoreDataForWriting(at: path, bundle: nil)
            try Self.insert(
                store, "Color", [.attribute("colorID"), .attribute("hex")], [[.string("C-NEW"), .string("#00FF00")]])
        }
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(CoreDataStoreFile.walFrameCount(path + "-wal") > 0)
        #expect(try CoreDataStoreFile.read(path).journalMode == .wal)
        let read = try Store.openCoreData(at: path, bundle: nil)
        #expect(try read.entityCount("Color") == 85)
        #expect(try Self.rows(path, "SELECT Z_PK FROM ZCOLOR WHERE ZCOLORID = 'C-NEW'").first?.first?.int64 == 85)
    }

    @Test(
        "inserts into a new Library store: sub-entities in the root's table, Z1_BOOK holding the target's Z_ENT, Z_FOK_BOOK in insertion order"
    )
    func insertWithInheritance() throws {
        let directory = TemporaryDirectory("ferry-cdw-inh")
        let path = directory.file("Library.sqlite")
        let bundle = try ModelLoader().load(path: Self.library)
        do {
            let store = try Store.createCoreData(at: path, model: bundle.current)
            try Self.insert(
                store, "Author", [.attribute("name"), .attribute("born")], [[.string("Hergé"), .integer(1907)]])
            try Self.insert(
                store, "Book", [.attribute("isbn"), .attribute("title")], [[.string("1"), .string("Plain")]])
            try Self.insert(
                store, "GraphicNovel",
                [.attribute("isbn"), .attribute("title"), .attribute("isBlackAndWhite"), .relationship("author")],
                [
                    [.string("2"), .string("Tintin"), .bool(true), .integer(1)]
                ])
            try Self.insert(
                store, "Page", [.attribute("number"), .relationship("book")],
                [
                    [.integer(1), .integer(2)], [.integer(2), .integer(2)], [.integer(1), .integer(1)],
                    [.integer(9), .null],
                ])
            let error = try #require(throws: FerryError.self) {
                try Self.insert(store, "Writer", [.attribute("name")], [[.string("Nobody")]])
            }
            #expect(error.message.contains("Writer is an abstract entity") && error.message.contains("Author"))
        }
        #expect(
            try Self.rows(path, "SELECT Z_PK, Z_ENT, ZISBLACKANDWHITE FROM ZBOOK ORDER BY Z_PK").map { $0.map(\.int64) }
                == [[1, 1, nil], [2, 2, 1]])
        #expect(try Self.rows(path, "SELECT Z_PK, Z_ENT FROM ZWRITER").map { $0.compactMap(\.int64) } == [[1, 6]])
        let pages = try Self.rows(path, "SELECT ZBOOK, Z1_BOOK, Z_FOK_BOOK FROM ZPAGE ORDER BY Z_PK").map {
            $0.map(\.int64)
        }
        #expect(pages == [[2, 2, 1], [2, 2, 2], [1, 1, 1], [nil, nil, nil]])
        #expect(
            try Self.rows(path, "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT").map { $0.compactMap(\.int64) }
                == [[1, 2], [2, 0], [3, 4], [4, 0], [5, 1], [6, 0]])
        let read = try Store.openCoreData(at: path, bundle: bundle)
        #expect(try read.entityCount("Book") == 2)
        #expect(try read.entityCount("GraphicNovel") == 1)
    }

    @Test(
        "derived-attribute triggers: without Core Data's functions SQLite refuses the insert; ferry's writer keeps the count right"
    )
    func derivedAttributeTrigger() throws {
        let directory = TemporaryDirectory("ferry-cdw-da")
        let path = directory.file("Library.sqlite")
        let bundle = try ModelLoader().load(path: Self.library)
        _ = try Store.createCoreData(at: path, model: bundle.current)
        // A derived pagesCount maintained as Core Data maintains CDP2's ZBOOK.ZPAGESCOUNT. The
        // store's model cache (written for the model without it) goes too: the store then stands
        // for one whose version ferry finds by its tables.
        let setup = try Connection(path: path, create: false)
        try setup.executeScript(
            """
            DELETE FROM Z_MODELCACHE;
            ALTER TABLE ZBOOK ADD COLUMN ZPAGESCOUNT INTEGER;
            CREATE TRIGGER IF NOT EXISTS Z_DA_ZPAGE_Book_pagesCount_PARAMETER_INSERT AFTER INSERT ON ZPAGE FOR EACH ROW WHEN (NEW.ZBOOK NOT NULL) BEGIN UPDATE ZBOOK SET ZPAGESCOUNT = IFNULL(ZPAGESCOUNT, 0) + 1 WHERE Z_PK = NEW.ZBOOK; SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('ZBOOK', Z_ENT, Z_PK, 'pagesCount', ZPAGESCOUNT) FROM ZBOOK WHERE Z_PK = NEW.ZBOOK; END;
            """)
        #expect(throws: FerryError.self) {
            try setup.execute("INSERT INTO ZPAGE (Z_PK, Z_ENT, Z_OPT, ZNUMBER) VALUES (100, 3, 1, 1)")
        }
        var model = bundle.current
        if let book = model.entities.firstIndex(where: { $0.name == "Book" }) {
            var derived = AttributeDescription(name: "pagesCount", type: .int64)
            derived.derivation = "pages.@count"
            model.entities[book].attributes.append(derived)
        }
        var withDerived = bundle
        withDerived.versions = [model]
        do {
            let store = try Store.openCoreDataForWriting(at: path, bundle: withDerived)
            try Self.insert(
                store, "Book", [.attribute("isbn"), .attribute("title")],
                [[.string("1"), .string("One")], [.string("2"), .string("Two")]])
            try Self.insert(
                store, "Page", [.attribute("number"), .relationship("book")],
                [
                    [.integer(1), .integer(1)], [.integer(2), .integer(1)], [.integer(1), .integer(2)],
                    [.integer(3), .null],
                ])
        }
        #expect(try Self.rows(path, "SELECT ZPAGESCOUNT FROM ZBOOK ORDER BY Z_PK").map { $0.first?.int64 } == [2, 1])
        #expect(try Self.rows(path, "PRAGMA integrity_check").first?.first?.text == "ok")
    }

    @Test(
        "bad paths: a read-only store file, and a store whose Z_PRIMARYKEY lacks an entity, are refused before anything is written",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func badStores() throws {
        let directory = TemporaryDirectory("ferry-cdw-bad")
        let sample = Samples.samples[2]
        let readOnly = try Samples.copy(sample, into: directory, name: "readonly.sqlite")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: readOnly)
        let before = try FileFingerprint.of(readOnly)
        let error = try #require(throws: FerryError.self) {
            try Store.openCoreDataForWriting(at: readOnly, bundle: nil)
        }
        #expect(error.message.contains("read-only"))
        #expect(try FileFingerprint.of(readOnly) == before)

        let damaged = try Samples.copy(sample, into: directory, name: "damaged.sqlite")
        try Connection(path: damaged, create: false).execute("DELETE FROM Z_PRIMARYKEY WHERE Z_NAME = 'Section'")
        let missing = try #require(throws: FerryError.self) {
            try Store.openCoreDataForWriting(at: damaged, bundle: nil)
        }
        #expect(missing.message.contains("Z_PRIMARYKEY has no row for entity Section"))
    }

    @Test(
        "a nullify delete rule clears the key, the Z<n>_ entity column and the Z_FOK_ order, and counts the change in Z_OPT"
    )
    func nullifyClearsBookkeeping() throws {
        let directory = TemporaryDirectory("ferry-cdw-null")
        let path = directory.file("Library.sqlite")
        var bundle = try ModelLoader().load(path: Self.library)
        var model = bundle.current
        let book = try #require(model.entities.firstIndex { $0.name == "Book" })
        let pages = try #require(model.entities[book].relationships.firstIndex { $0.name == "pages" })
        model.entities[book].relationships[pages].deleteRule = .nullify
        bundle.versions = [model]
        let store = try Store.createCoreData(at: path, model: model)
        try Self.insert(
            store, "GraphicNovel", [.attribute("isbn"), .attribute("title")], [[.string("1"), .string("B")]])
        try Self.insert(
            store, "Page", [.attribute("number"), .relationship("book")],
            [[.integer(1), .integer(1)], [.integer(2), .integer(1)]])
        let result = try store.execute(BatchDeleteRequest(entity: "Book"))
        #expect(result.deleted["Book"] == 1)
        #expect(result.nullified["Page.book"] == 2)
        #expect(
            try Self.rows(path, "SELECT ZBOOK, Z1_BOOK, Z_FOK_BOOK, Z_OPT FROM ZPAGE ORDER BY Z_PK").map {
                $0.map(\.int64)
            } == [[nil, nil, nil, 2], [nil, nil, nil, 2]])
    }

    @Test(
        "a job's store: layout coredata and compiled_model are read; a wrong layout or a compiled model without it are located errors"
    )
    func jobStoreLayout() throws {
        let directory = TemporaryDirectory("ferry-cdw-job")
        let good = try directory.write(
            "good.yml",
            """
            job: seed
            store: {path: Seed.sqlite, layout: coredata, compiled_model: App.momd}
            model: \(Self.library)
            steps:
              - verify: {checks: cheap}
            """)
        let job = try JobLoader().load(path: good, parameters: [:], environment: [:])
        #expect(job.store.createsCoreDataStore)
        #expect(job.store.compiledModel == directory.file("App.momd"))
        let model = try ModelLoader().load(path: Self.library).current
        #expect(JobValidator().validate(job, model: model).isEmpty, "a Core Data store holds the model's inheritance")

        let bad = try directory.write(
            "bad.yml",
            """
            job: seed
            store: {path: Seed.sqlite, layout: mongo, compiled_model: App.momd}
            model: \(Self.library)
            steps:
              - verify: {checks: cheap}
            """)
        #expect(
            renderedErrors { _ = try JobLoader().load(path: bad, parameters: [:], environment: [:]) } == [
                "\(bad):2:36: error: 'layout' of a store is 'ferry' or 'coredata', not 'mongo'",
                "\(bad):2:59: error: 'compiled_model' applies to a store with 'layout: coredata'",
            ])
    }
}
