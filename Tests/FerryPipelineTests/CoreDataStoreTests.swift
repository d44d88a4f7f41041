import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Core Data SQLite stores read through a private copy: every real store in
/// `../shared/data/coredata`, its metadata, entity numbering and counts, its cached model and
/// version; and damaged stores. Tests copy each store into a temporary folder and prove that
/// reading changes neither that copy nor the originals (bytes and modification times).
@Suite(.enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))) struct CoreDataStoreTests {
    struct Sample {
        var project: String
        var file: String
        var version: String
        var framework: Int64
        var journal: String
        var rows: [String: Int]
    }

    static let examples = "wibosco-CoreDataMigration-Example"
    static let revised = "wibosco-CoreDataMigrationRevised"

    /// The real stores and what COREDATA.md §2.9 and EXPECTED.md say about them.
    static let samples: [Sample] = [
        Sample(
            project: revised, file: "CoreDataMigration_Example_1.sqlite", version: "CoreDataMigration_Example",
            framework: 866, journal: "delete", rows: ["Post": 10]),
        Sample(
            project: revised, file: "CoreDataMigration_Example_2.sqlite", version: "CoreDataMigration_Example 2",
            framework: 866, journal: "wal", rows: ["Post": 10]),
        Sample(
            project: revised, file: "CoreDataMigration_Example_3.sqlite", version: "CoreDataMigration_Example 3",
            framework: 866, journal: "delete", rows: ["Post": 12, "Section": 14]),
        Sample(
            project: examples, file: "CoreDataMigration_Example_1.sqlite", version: "CoreDataMigration_Example",
            framework: 847, journal: "delete", rows: ["Post": 1001]),
        Sample(
            project: examples, file: "CoreDataMigration_Example_2.sqlite", version: "CoreDataMigration_Example 2",
            framework: 847, journal: "delete", rows: ["Post": 5979]),
        Sample(
            project: examples, file: "CoreDataMigration_Example_3.sqlite", version: "CoreDataMigration_Example 3",
            framework: 847, journal: "delete", rows: ["Color": 7995, "Post": 7995]),
        Sample(
            project: examples, file: "CoreDataMigration_Example_WAL.sqlite", version: "CoreDataMigration_Example 4",
            framework: 847, journal: "wal", rows: ["Color": 84, "Post": 84]),
    ]

    static func original(_ sample: Sample) -> URL {
        CoreDataSamples.root.appendingPathComponent(
            "\(sample.project)/CoreDataMigration-ExampleTests/Resources/SQLite/\(sample.file)")
    }

    static func package(_ project: String) -> String {
        CoreDataSamples.root.appendingPathComponent(
            "\(project)/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"
        ).path
    }

    static let compiledModel = TestPaths.packageRoot.appendingPathComponent(
        "Tests/FerryPipelineTests/Fixtures/coredata/CoreDataMigration_Example.momd"
    ).path

    /// A writable copy of a sample (and its `-wal`) in `directory`.
    static func copy(_ sample: Sample, into directory: TemporaryDirectory, name: String? = nil) throws -> String {
        let source = original(sample).path
        let target = directory.file(name ?? sample.file)
        try FileManager.default.copyItem(atPath: source, toPath: target)
        if FileManager.default.fileExists(atPath: source + "-wal") {
            try FileManager.default.copyItem(atPath: source + "-wal", toPath: target + "-wal")
        }
        for file in [target, target + "-wal"] where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        }
        return target
    }

    /// `SELECT Z_ENT, count(*)` over every entity table, on an independent copy.
    static func countsBySQL(_ path: String) throws -> [Int64: Int] {
        let directory = TemporaryDirectory("ferry-cd-count")
        let copy = directory.file("count.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        if FileManager.default.fileExists(atPath: path + "-wal") {
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        }
        let connection = try Connection(path: copy, create: false)
        var counts: [Int64: Int] = [:]
        let tables = try connection.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%' AND name NOT LIKE 'Z\\_%' ESCAPE '\\'"
        )
        for table in tables.compactMap({ $0.first?.text }) {
            for row in try connection.rows("SELECT Z_ENT, count(*) FROM \(SQL.quote(table)) GROUP BY Z_ENT") {
                counts[row[0].int64 ?? -1, default: 0] += Int(row[1].int64 ?? 0)
            }
        }
        return counts
    }

    @Test(
        "every real store: recognised, metadata, entity numbering, counts equal to SQL, cached model, version; files untouched"
    )
    func everyRealStore() throws {
        let originals = try Self.samples.map { try FileFingerprint.of(Self.original($0).path) }
        let directory = TemporaryDirectory("ferry-cd-read")
        for sample in Self.samples {
            let path = try Self.copy(sample, into: directory, name: "\(sample.project)-\(sample.file)")
            let before = try FileFingerprint.of(path)
            #expect(CoreDataStoreFile.isCoreDataStore(path), "\(path)")
            let store = try CoreDataStoreFile.read(path)
            let label = "\(sample.project) \(sample.file)"
            #expect(store.metadata.storeType == "SQLite", "\(label)")
            #expect(store.metadata.frameworkVersion == sample.framework, "\(label)")
            #expect(store.metadata.version == 1)
            #expect(store.metadata.versionHashesVersion == 3)
            #expect(store.metadata.autoVacuumLevel == "2")
            #expect(store.metadata.versionIdentifiers == [""])
            #expect(store.metadata.otherKeyNames.isEmpty)
            #expect(
                store.metadata.uuid.range(
                    of: "^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$", options: .regularExpression)
                    != nil, "\(label)")
            #expect(Set(store.metadata.versionHashes.keys) == Set(sample.rows.keys), "\(label)")
            #expect(store.metadata.versionHashes.values.allSatisfy { $0.count == 32 })
            #expect(store.journalMode.description == sample.journal, "\(label)")
            #expect(store.historyTables.isEmpty && store.historyEntities.isEmpty)
            // Entities numbered in name order, each counted apart, equal to SQL on a copy.
            #expect(store.entities.map(\.name) == sample.rows.keys.sorted(), "\(label)")
            #expect(store.entities.map(\.number) == Array(1...Int64(sample.rows.count)))
            #expect(
                Dictionary(uniqueKeysWithValues: store.entities.map { ($0.name, $0.rows) }) == sample.rows, "\(label)")
            let sql = try Self.countsBySQL(path)
            for entity in store.entities {
                #expect(entity.rows == sql[entity.number] ?? 0, "\(label) \(entity.name)")
                #expect(entity.table == "Z" + entity.name.uppercased())
                #expect(entity.superNumber == 0)
                #expect(entity.maxKey >= Int64(entity.rows))
            }
            // The cached model is the model of its version, property by property.
            let cached = try store.cachedModel()
            #expect(cached.entityNames == sample.rows.keys.sorted())
            let bundle = try ModelLoader().load(path: Self.package(sample.project))
            let match = try CoreDataVersionDetector.detect(store: store, bundle: bundle)
            #expect(match.version.version == sample.version, "\(label)")
            #expect(match.method == .versionHashes, "\(label): the hashes decide first")
            #expect(match.alsoMatching.isEmpty)
            // The cached model alone agrees.
            let byCache = bundle.versions.filter {
                CoreDataVersionDetector.differences(store: cached, version: $0).isEmpty
            }.map(\.version)
            #expect(byCache == [sample.version], "\(label)")
            // The structural method alone agrees.
            let structural = bundle.versions.filter {
                CoreDataVersionDetector.structuralDifferences(store: store, version: $0).isEmpty
            }.map(\.version)
            #expect(structural == [sample.version], "\(label)")
            #expect(try FileFingerprint.of(path) == before, "\(label): reading changed the store's files")
        }
        #expect(try Self.samples.map { try FileFingerprint.of(Self.original($0).path) } == originals)
    }

    @Test("the cached model equals the Xcode version it matches (class names and locations aside)")
    func cachedModelEqualsTheXcodeVersion() throws {
        let directory = TemporaryDirectory("ferry-cd-model")
        for sample in Self.samples {
            let store = try CoreDataStoreFile.read(
                try Self.copy(sample, into: directory, name: "\(sample.project)-\(sample.file)"))
            let bundle = try ModelLoader().load(path: Self.package(sample.project))
            var cached = ModelComparison.normalized(try store.cachedModel())
            var xml = ModelComparison.normalized(try #require(bundle.version(sample.version)))
            for model in [\ObjectModel.entities] {
                cached[keyPath: model] = cached[keyPath: model].map {
                    var e = $0
                    e.className = nil
                    return e
                }
                xml[keyPath: model] = xml[keyPath: model].map {
                    var e = $0
                    e.className = nil
                    return e
                }
            }
            #expect(cached.entities == xml.entities, "\(sample.project) \(sample.file)")
        }
        // v2 renamed color → hexColor; the cache keeps the renaming identifier.
        let v2 = try CoreDataStoreFile.read(try Self.copy(Self.samples[1], into: directory, name: "renamed.sqlite"))
            .cachedModel()
        #expect(v2.entity(named: "Post")?.attribute(named: "hexColor")?.renamedFrom == "color")
        // v4's Boolean default NO and non-optional to-one.
        let v4 = try CoreDataStoreFile.read(try Self.copy(Self.samples[6], into: directory)).cachedModel()
        #expect(v4.entity(named: "Post")?.attribute(named: "hide")?.defaultValue == .bool(false))
        let color = try #require(v4.entity(named: "Post")?.relationship(named: "color"))
        #expect(
            color.destination == "Color" && color.inverse == "post" && !color.isToMany && !color.isOptional
                && color.deleteRule == .nullify)
        let sections = try #require(
            try CoreDataStoreFile.read(try Self.copy(Self.samples[2], into: directory, name: "v3.sqlite")).cachedModel()
                .entity(named: "Post")?.relationship(named: "sections"))
        #expect(sections.isToMany && sections.deleteRule == .cascade && sections.destination == "Section")
    }

    @Test("the WAL store's rows live only in its -wal: 84 Post and 84 Color with it, none without it")
    func walStore() throws {
        let directory = TemporaryDirectory("ferry-cd-wal")
        let sample = Self.samples[6]
        let path = try Self.copy(sample, into: directory)
        let store = try CoreDataStoreFile.read(path)
        #expect(store.walFrames == 428)
        #expect(store.walHasData)
        #expect(store.entities.map(\.rows) == [84, 84])
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"), "reading created a -shm beside the store")
        try FileManager.default.removeItem(atPath: path + "-wal")
        let alone = try CoreDataStoreFile.read(path)
        #expect(!alone.walHasData)
        #expect(alone.entities.map(\.rows) == [0, 0])
    }

    @Test("a compiled model's VersionInfo.plist names the version by entity hashes")
    func compiledModelHashes() throws {
        let compiled = try CompiledModelVersions.read(Self.compiledModel)
        #expect(compiled.currentVersion == "CoreDataMigration_Example 4")
        let directory = TemporaryDirectory("ferry-cd-momd")
        let bundle = try ModelLoader().load(path: Self.package(Self.examples))
        for sample in Self.samples where sample.project == Self.examples {
            let store = try CoreDataStoreFile.read(try Self.copy(sample, into: directory))
            let match = try CoreDataVersionDetector.detect(store: store, bundle: bundle, compiled: compiled)
            #expect(match.method == .compiledModelHashes)
            #expect(match.version.version == sample.version)
        }
        // The other project's stores have other hashes: the hashes computed from the model decide,
        // and without hashes in the store, the cached model.
        var store = try CoreDataStoreFile.read(try Self.copy(Self.samples[2], into: directory, name: "revised.sqlite"))
        let revised = try ModelLoader().load(path: Self.package(Self.revised))
        let match = try CoreDataVersionDetector.detect(store: store, bundle: revised, compiled: compiled)
        #expect(match.method == .versionHashes && match.version.version == "CoreDataMigration_Example 3")
        store.metadata.versionHashes = [:]
        let byCache = try CoreDataVersionDetector.detect(store: store, bundle: revised, compiled: compiled)
        #expect(byCache.method == .cachedModel && byCache.version.version == "CoreDataMigration_Example 3")
        let missing = try #require(throws: FerryError.self) {
            try CompiledModelVersions.read(directory.file("none.momd"))
        }
        #expect(missing.message.contains("no compiled model at"))
        let garbage = try directory.write("VersionInfo.plist", "not a plist")
        let bad = try #require(throws: FerryError.self) { try CompiledModelVersions.read(garbage) }
        #expect(bad.message.contains("is not a binary property list"))
    }

    @Test("no matching version: the closest one and exactly which entities and properties differ")
    func noMatch() throws {
        let directory = TemporaryDirectory("ferry-cd-nomatch")
        let store = try CoreDataStoreFile.read(try Self.copy(Self.samples[2], into: directory))
        let bundle = try ModelLoader().load(path: Self.package(Self.examples))
        let error = try #require(throws: FerryError.self) {
            try CoreDataVersionDetector.detect(store: store, bundle: bundle)
        }
        #expect(error.code == .modelMismatch)
        #expect(error.message.contains("matches no version of model CoreDataMigration_Example"))
        let closest = try #require(error.notes.first { $0.hasPrefix("closest:") })
        #expect(closest.contains("version CoreDataMigration_Example 2"))
        #expect(closest.contains("entity Section is only in the store"))
        #expect(closest.contains("Post.sections (relationship required to-many Section) is only in the store"))
    }

    /// A copy of sample `index` changed by `sql` (run on the copy).
    static func damaged(
        _ index: Int, in directory: TemporaryDirectory, _ change: (Connection) throws -> Void
    ) throws -> String {
        let path = try copy(samples[index], into: directory, name: "damaged-\(UUID().uuidString).sqlite")
        let connection = try Connection(path: path, create: false)
        try change(connection)
        return path
    }

    static func cacheBlob(_ connection: Connection) throws -> [UInt8] {
        guard case .blob(let bytes) = try connection.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE") else {
            throw FerryError(.internal, "no cache")
        }
        return bytes
    }

    @Test(
        "a truncated, garbage or oversized Z_MODELCACHE is an error naming the store; detection falls back to tables and columns"
    )
    func damagedCache() throws {
        let directory = TemporaryDirectory("ferry-cd-cache")
        let truncated = try Self.damaged(2, in: directory) { connection in
            let blob = try Self.cacheBlob(connection)
            try connection.execute("UPDATE Z_MODELCACHE SET Z_CONTENT = ?", [.blob(Array(blob.prefix(blob.count / 2)))])
        }
        let error = try #require(throws: FerryError.self) { try CoreDataStoreFile.read(truncated).cachedModel() }
        #expect(error.message.contains("Z_MODELCACHE) of store '\(truncated)' is truncated"), "\(error)")
        var store = try CoreDataStoreFile.read(truncated)
        // Without the metadata's hashes (they decide first), the tables and columns do.
        store.metadata.versionHashes = [:]
        let match = try CoreDataVersionDetector.detect(
            store: store, bundle: try ModelLoader().load(path: Self.package(Self.revised)))
        #expect(match.method == .structure && match.version.version == "CoreDataMigration_Example 3")

        let garbage = try Self.damaged(2, in: directory) { connection in
            try connection.execute("UPDATE Z_MODELCACHE SET Z_CONTENT = ?", [.blob(Array(repeating: 0xFF, count: 300))])
        }
        let invalid = try #require(throws: FerryError.self) { try CoreDataStoreFile.read(garbage).cachedModel() }
        #expect(invalid.message.contains("of store '\(garbage)' is not valid raw DEFLATE data"), "\(invalid)")

        // A stored (uncompressed) DEFLATE block of text that is no property list.
        let text = Array("not an archive".utf8)
        let stored: [UInt8] = [0x01, UInt8(text.count), 0, ~UInt8(text.count), 0xFF] + text
        let notArchive = try Self.damaged(2, in: directory) { connection in
            try connection.execute("UPDATE Z_MODELCACHE SET Z_CONTENT = ?", [.blob(stored)])
        }
        let plist = try #require(throws: FerryError.self) { try CoreDataStoreFile.read(notArchive).cachedModel() }
        #expect(plist.message.contains("of store '\(notArchive)' is not a binary property list"), "\(plist)")

        let missing = try Self.damaged(2, in: directory) { try $0.execute("DELETE FROM Z_MODELCACHE") }
        let none = try #require(throws: FerryError.self) { try CoreDataStoreFile.read(missing).cachedModel() }
        #expect(none.message == "store '\(missing)' has no cached model (Z_MODELCACHE is missing or empty)")

        let blob = try Self.cacheBlob(
            Connection(path: try Self.copy(Self.samples[0], into: directory, name: "blob.sqlite"), create: false))
        let bomb = try #require(throws: FerryError.self) { try RawDeflate.inflate(blob, limit: 100, source: "cache") }
        #expect(bomb.message == "cache inflates to more than 100 bytes; refused")
        #expect(try RawDeflate.inflate(blob, limit: 1 << 20, source: "cache").starts(with: Array("bplist00".utf8)))
        let trailing = try #require(throws: FerryError.self) {
            try RawDeflate.inflate(blob + [1, 2, 3], limit: 1 << 20, source: "cache")
        }
        #expect(trailing.message.contains("3 bytes follow the end"))
    }

    @Test("a missing Z_METADATA row, a broken Z_PLIST, a plain SQLite file and a non-SQLite file are clear errors")
    func notCoreData() throws {
        let directory = TemporaryDirectory("ferry-cd-bad")
        let noRow = try Self.damaged(0, in: directory) { try $0.execute("DELETE FROM Z_METADATA") }
        #expect(CoreDataStoreFile.isCoreDataStore(noRow))
        let error = try #require(throws: FerryError.self) { try CoreDataStoreFile.read(noRow) }
        #expect(error.message == "store '\(noRow)': Z_METADATA has no row (a Core Data store has exactly one)")

        let badPlist = try Self.damaged(0, in: directory) {
            try $0.execute("UPDATE Z_METADATA SET Z_PLIST = ?", [.blob(Array("<plist/>".utf8))])
        }
        let plist = try #require(throws: FerryError.self) { try CoreDataStoreFile.read(badPlist) }
        #expect(plist.message.contains("Z_METADATA of store '\(badPlist)' is not a binary property list"))

        let plain = directory.file("plain.sqlite")
        try Connection(path: plain).execute("CREATE TABLE person (name TEXT)")
        #expect(!CoreDataStoreFile.isCoreDataStore(plain))
        let notCoreData = try #require(throws: FerryError.self) { try CoreDataStoreFile.read(plain) }
        #expect(
            notCoreData.message
                == "'\(plain)' is a SQLite database but not a Core Data store (it has no Z_METADATA and Z_PRIMARYKEY table)"
        )

        let text = try directory.write("model.yml", "entities: {}\n")
        #expect(!CoreDataStoreFile.isCoreDataStore(text))
        let notSQLite = try #require(throws: FerryError.self) { try CoreDataStoreFile.read(text) }
        #expect(notSQLite.message == "'\(text)' is not a SQLite database (it does not start with the SQLite header)")
        let absent = try #require(throws: FerryError.self) {
            try CoreDataStoreFile.read(directory.file("absent.sqlite"))
        }
        #expect(absent.message == "store '\(directory.file("absent.sqlite"))' does not exist")
        #expect(!CoreDataStoreFile.isCoreDataStore(directory.path))
    }

    @Test("history tables and pseudo-entities are counted apart from model entities")
    func historyAndUnknownKeys() throws {
        let directory = TemporaryDirectory("ferry-cd-history")
        let path = try Self.damaged(2, in: directory) { connection in
            try connection.execute(
                "CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER )")
            try connection.execute("INSERT INTO ACHANGE (Z_ENT, ZCHANGETYPE) VALUES (16001, 0), (16001, 0), (16001, 1)")
            try connection.execute(
                "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (16001, 'CHANGE', 0, 3)")
        }
        let store = try CoreDataStoreFile.read(path)
        #expect(store.historyTables == [CoreDataStoreFile.HistoryTable(name: "ACHANGE", rows: 3)])
        #expect(store.historyEntities.map(\.name) == ["CHANGE"])
        #expect(store.entities.map(\.name) == ["Post", "Section"])
        // The structure still matches: history tables are not entity tables.
        let bundle = try ModelLoader().load(path: Self.package(Self.revised))
        #expect(
            CoreDataVersionDetector.structuralDifferences(
                store: store, version: try #require(bundle.version("CoreDataMigration_Example 3"))
            ).isEmpty)
    }

    @Test(
        "inheritance: sub-entities counted apart in their root's table; the structure matches the model with Z<n>_ columns ignored"
    )
    func inheritance() throws {
        let directory = TemporaryDirectory("ferry-cd-inherit")
        let path = directory.file("Cars.sqlite")
        try CoreDataSamples.writeInheritanceStore(at: path)
        let store = try CoreDataStoreFile.read(path)
        #expect(store.entities.map(\.name) == ["Car", "Racecar", "Sedan", "Passenger"])
        #expect(store.entities.map(\.rows) == [1, 2, 3, 4])
        #expect(store.entities.map(\.table) == ["ZCAR", "ZCAR", "ZCAR", "ZPASSENGER"])
        #expect(store.entities.map(\.superNumber) == [0, 1, 1, 0])
        let bundle = try ModelLoader().load(
            path: CoreDataSamples.root.appendingPathComponent("3lvis-Sync/Tests/Sync/Models/239.xcdatamodeld").path)
        let match = try CoreDataVersionDetector.detect(store: store, bundle: bundle)
        #expect(match.method == .structure && match.version.version == "239")
        // A column the model does not predict is named.
        try Connection(path: path, create: false).execute("ALTER TABLE ZCAR ADD COLUMN ZCOLOR VARCHAR")
        let error = try #require(throws: FerryError.self) {
            try CoreDataVersionDetector.detect(store: try CoreDataStoreFile.read(path), bundle: bundle)
        }
        #expect(
            error.notes.contains {
                $0.contains(
                    "closest: version 239 (by tables and columns); what differs: column ZCAR.ZCOLOR is only in the store"
                )
            }, "\(error)")
    }

    @Test(
        "hostile caches: thousands of mutated archives and compressed blobs decode or fail with an error, never crash")
    func mutatedCaches() throws {
        let directory = TemporaryDirectory("ferry-cd-fuzz")
        var blobs: [[UInt8]] = []
        for index in [2, 6] {
            blobs.append(
                try Self.cacheBlob(
                    Connection(
                        path: try Self.copy(Self.samples[index], into: directory, name: "fuzz\(index).sqlite"),
                        create: false)))
        }
        var seed: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        var decoded = 0
        var refused = 0
        for blob in blobs {
            let archive = try RawDeflate.inflate(blob, limit: 1 << 20, source: "cache")
            for round in 0..<1500 {
                var bytes = round % 2 == 0 ? archive : blob
                for _ in 0..<(1 + next(4)) {
                    let position = next(bytes.count)
                    switch next(3) {
                    case 0: bytes[position] = UInt8(next(256))
                    case 1: bytes[position] ^= UInt8(1 << next(8))
                    default: bytes = Array(bytes.prefix(position))
                    }
                    if bytes.isEmpty { break }
                }
                do {
                    let plain = round % 2 == 0 ? bytes : try RawDeflate.inflate(bytes, limit: 1 << 20, source: "cache")
                    _ = try CachedModelDecoder.decode(plain, name: "fuzz", version: "1", source: "cache")
                    decoded += 1
                } catch let error as FerryError {
                    #expect(!error.message.isEmpty)
                    refused += 1
                }
            }
        }
        #expect(decoded + refused == 3000)
        #expect(refused > 0)
    }
}
