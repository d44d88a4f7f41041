import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// The `Z_MODELCACHE` ferry writes (``CachedModelEncoder``) against the caches Core Data wrote:
/// for every real store, the Xcode version it is at, encoded by ferry and decoded again, equals
/// the store's own cache decoded, field by field; ferry's archive has the classes and keys of
/// the real one; every model ferry can write round-trips through its cache.
@Suite("Core Data model caches written by ferry") struct CoreDataModelCacheTests {
    typealias Samples = CoreDataStoreTests

    /// Every field two decoded models differ in, in words (empty when they are equal).
    static func differences(_ a: ObjectModel, _ b: ObjectModel, compareClassNames: Bool = true) -> [String] {
        let a = ModelComparison.normalized(a)
        let b = ModelComparison.normalized(b)
        var differences: [String] = []
        func compare<T: Equatable>(_ what: String, _ x: T, _ y: T) {
            if x != y { differences.append("\(what): \(x) ≠ \(y)") }
        }
        compare("entities", a.entityNames, b.entityNames)
        for mine in a.entities {
            guard let theirs = b.entity(named: mine.name) else { continue }
            let name = mine.name
            compare("\(name) parent", mine.parent, theirs.parent)
            compare("\(name) abstract", mine.isAbstract, theirs.isAbstract)
            if compareClassNames { compare("\(name) class name", mine.className, theirs.className) }
            compare("\(name) renaming identifier", mine.renamedFrom, theirs.renamedFrom)
            compare("\(name) hash modifier", mine.hashModifier, theirs.hashModifier)
            compare("\(name) user info", mine.userInfo, theirs.userInfo)
            compare("\(name) uniqueness", mine.uniquenessConstraints, theirs.uniquenessConstraints)
            // The order of an entity's indexes means nothing.
            compare(
                "\(name) indexes", mine.indexes.map { "\($0)" }.sorted(), theirs.indexes.map { "\($0)" }.sorted())
            compare("\(name) attributes", mine.attributes.map(\.name), theirs.attributes.map(\.name))
            compare("\(name) relationships", mine.relationships.map(\.name), theirs.relationships.map(\.name))
            compare("\(name) fetched properties", mine.fetchedProperties, theirs.fetchedProperties)
            for x in mine.attributes {
                guard let y = theirs.attribute(named: x.name) else { continue }
                let path = "\(name).\(x.name)"
                compare("\(path) type", x.type, y.type)
                compare("\(path) Core Data kind", x.coreDataKind, y.coreDataKind)
                compare("\(path) optional", x.isOptional, y.isOptional)
                compare("\(path) transient", x.isTransient, y.isTransient)
                compare("\(path) default", x.defaultValue, y.defaultValue)
                compare("\(path) renaming identifier", x.renamedFrom, y.renamedFrom)
                compare("\(path) hash modifier", x.hashModifier, y.hashModifier)
                compare("\(path) preserve after deletion", x.preservesAfterDeletion, y.preservesAfterDeletion)
                compare("\(path) derivation", x.derivation, y.derivation)
                compare("\(path) user info", x.userInfo, y.userInfo)
            }
            for x in mine.relationships {
                guard let y = theirs.relationship(named: x.name) else { continue }
                let path = "\(name).\(x.name)"
                compare("\(path) destination", x.destination, y.destination)
                compare("\(path) inverse", x.inverse, y.inverse)
                compare("\(path) to-many", x.isToMany, y.isToMany)
                compare("\(path) ordered", x.isOrdered, y.isOrdered)
                compare("\(path) optional", x.isOptional, y.isOptional)
                compare("\(path) delete rule", x.deleteRule, y.deleteRule)
                compare("\(path) min count", x.minCount, y.minCount)
                compare("\(path) max count", x.maxCount, y.maxCount)
                compare("\(path) renaming identifier", x.renamedFrom, y.renamedFrom)
                compare("\(path) hash modifier", x.hashModifier, y.hashModifier)
            }
        }
        compare("version identifier", a.versionIdentifier, b.versionIdentifier)
        compare(
            "configurations", a.configurations.map { [$0.name] + $0.entities },
            b.configurations.map { [$0.name] + $0.entities })
        return differences
    }

    /// The model ferry's cache of `model` decodes to.
    static func throughCache(_ model: ObjectModel) throws -> ObjectModel {
        let blob = try CachedModelEncoder.modelCache(for: model)
        let archive = try RawDeflate.inflate(blob, limit: 1 << 24, source: "ferry's cache")
        return try CachedModelDecoder.decode(archive, name: model.name, version: model.version, source: "ferry's cache")
    }

    /// Class name → every key its objects have, over a whole archive. Some Core Data versions
    /// archive strings as `NSMutableString` objects and sets as `NSMutableSet`; ferry writes
    /// plain strings and `NSSet`, which every reader takes alike: they count as those.
    static func keysByClass(_ archive: [UInt8]) throws -> [String: Set<String>] {
        let top = try BinaryPropertyList.decode(archive, source: "archive")
        let objects = try #require(top["$objects"]?.array)
        var keys: [String: Set<String>] = [:]
        for object in objects {
            guard let fields = object.dictionary, case .uid(let classIndex)? = fields["$class"],
                var className = objects[Int(classIndex)]["$classname"]?.string, className != "NSMutableString"
            else { continue }
            if className == "NSMutableSet" { className = "NSSet" }
            keys[className, default: []].formUnion(fields.keys.filter { $0 != "$class" })
        }
        return keys
    }

    @Test(
        "every real store: the Xcode version it is at, through ferry's cache, equals the store's own cache field by field; same classes and keys",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func realStores() throws {
        let directory = TemporaryDirectory("ferry-cd-cache-real")
        for sample in Samples.samples {
            let label = "\(sample.project) \(sample.file)"
            let store = try CoreDataStoreFile.read(
                try Samples.copy(sample, into: directory, name: "\(sample.project)-\(sample.file)"))
            let theirs = try store.cachedModel()
            let bundle = try ModelLoader().load(path: Samples.package(sample.project))
            let version = try #require(bundle.version(sample.version))
            let mine = try Self.throughCache(version)
            // Migrated stores' caches leave out the entity class names (COREDATA.md Appendix B).
            #expect(Self.differences(mine, theirs, compareClassNames: false) == [], "\(label)")
            #expect(CoreDataVersionDetector.differences(store: mine, version: version) == [], "\(label)")

            let realArchive = try RawDeflate.inflate(
                try #require(store.modelCache), limit: 1 << 24, source: "\(label) cache")
            let real = try Self.keysByClass(realArchive)
            let written = try Self.keysByClass(CachedModelEncoder.archive(version))
            // Every class the real cache uses (ferry also writes empty NSMutableArray index lists
            // that some Core Data versions leave out).
            #expect(Set(real.keys).isSubset(of: Set(written.keys)), "\(label): classes")
            for (className, keys) in real {
                // Keys the real caches write and ferry does not: none; keys ferry writes that
                // these caches do not have are those of features these models do not use.
                #expect(keys.subtracting(written[className] ?? []) == [], "\(label): \(className)")
            }
        }
    }

    @Test(
        "ferry's cache of every model round-trips: every sample Xcode model version (hierarchies, ordered and many-to-many relationships, indexes, uniqueness), the repository's fixtures, every type and default",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func roundTrip() throws {
        let root = TestPaths.packageRoot.path
        let fixtures = [
            "samples/coredata/Library.xcdatamodeld",
            "Tests/FerryCLITests/Fixtures/coredata-hierarchy/Garage.xcdatamodeld",
            "Tests/FerryPipelineTests/Fixtures/xcode/Migration.xcdatamodeld",
            "Tests/FerryPipelineTests/Fixtures/xcode/Inheritance.xcdatamodeld",
            "Tests/FerryPipelineTests/Fixtures/xcode/Types.xcdatamodeld",
        ].map { root + "/" + $0 }
        var models: [ObjectModel] = [Self.everyTypeModel]
        for path in try CoreDataSamples.models() + fixtures {
            models += try ModelLoader().load(path: path).versions
        }
        var derived = 0
        for model in models {
            // Derived attributes are refused before a cache is written (their derivation is not archived).
            guard !model.entities.contains(where: { $0.attributes.contains(where: \.isDerived) }) else {
                derived += 1
                continue
            }
            let decoded = try Self.throughCache(model)
            #expect(
                Self.differences(decoded, model.withoutFetchPredicates) == [], "\(model.name) \(model.version)")
            #expect(CoreDataVersionDetector.differences(store: decoded, version: model) == [])
        }
        #expect(models.count - derived >= 80, "\(models.count) versions, \(derived) with a derived attribute")
    }

    /// One entity with every attribute type and a default of each, indexes of three kinds, a
    /// uniqueness constraint and a sub-entity.
    static var everyTypeModel: ObjectModel {
        var root = EntityDescription(name: "Thing")
        root.attributes = [
            AttributeDescription(name: "small", type: .int16, isOptional: false, defaultValue: .integer(-7)),
            AttributeDescription(name: "medium", type: .int32, defaultValue: .integer(70_000)),
            AttributeDescription(name: "large", type: .int64, defaultValue: .integer(1 << 40)),
            AttributeDescription(name: "price", type: .decimal, defaultValue: .decimal("-12.5")),
            AttributeDescription(name: "tiny", type: .decimal, defaultValue: .decimal("0.000125")),
            AttributeDescription(name: "ratio", type: .double, defaultValue: .double(0.25)),
            AttributeDescription(name: "single", type: .float, defaultValue: .double(1.5)),
            AttributeDescription(name: "name", type: .string, defaultValue: .string("café")),
            AttributeDescription(name: "flag", type: .bool, defaultValue: .bool(true)),
            AttributeDescription(
                name: "when", type: .date, defaultValue: .date(Timestamp(referenceSeconds: 639_503_569.638733)!)),
            AttributeDescription(name: "blob", type: .binary, defaultValue: .binary([0, 1, 2])),
            AttributeDescription(
                name: "id", type: .uuid, defaultValue: .uuid("5b9e0c3a-1d2f-4e6a-8b7c-9d0e1f2a3b4c")),
            AttributeDescription(name: "link", type: .uri, defaultValue: .uri("https://example.com/a?b=c")),
            AttributeDescription(name: "scratch", type: .string),
        ]
        root.attributes[13].isTransient = true
        root.attributes[1].preservesAfterDeletion = true
        root.attributes[7].renamedFrom = "title"
        root.attributes[7].hashModifier = "2"
        root.uniquenessConstraints = [["name", "medium"]]
        root.indexes = [
            IndexDescription(attributes: ["small"]), IndexDescription(attributes: ["medium", "large"]),
            IndexDescription(name: "byWhen", attributes: ["when", "name"], descending: ["name"]),
        ]
        root.className = "Thing"
        root.userInfo = ["note": "kept"]
        var child = EntityDescription(name: "Gadget")
        child.parent = "Thing"
        child.attributes = [
            AttributeDescription(
                name: "options", type: .binary)
        ]
        child.attributes[0].coreDataKind = .transformable(
            transformer: "NSSecureUnarchiveFromData", valueClass: "[String]")
        var model = ObjectModel(name: "EveryType", version: "1", entities: [root, child])
        model.versionIdentifier = "7"
        model.configurations = [ModelConfiguration(name: "Cloud", entities: ["Gadget", "Thing"])]
        return model
    }

    @Test("decimal defaults: Foundation's NSDecimalNumber fields, back to the same text")
    func decimals() throws {
        for (text, expected) in [
            ("12.50", "12.5"), ("-0.001", "-0.001"), ("1200", "1200"), ("0", "0"), ("-0.0", "0"),
            ("99999999999999999999999999999999999999", "99999999999999999999999999999999999999"),
        ] {
            let decimal = try #require(ArchivedDecimal(text), "\(text)")
            let fields = PropertyListDictionary(decimal.fields)
            let back = try #require(
                ArchivedDecimal(
                    exponent: fields["NS.exponent"]?.integer, negative: fields["NS.negative"]?.bool,
                    mantissa: fields["NS.mantissa"]?.data, byteOrder: fields["NS.mantissa.bo"]?.integer))
            #expect(back.text == expected, "\(text)")
        }
        let twelve = PropertyListDictionary(try #require(ArchivedDecimal("12.5")).fields)
        #expect(twelve["NS.mantissa"]?.data == [125, 0] + Array(repeating: 0, count: 14))
        #expect(twelve["NS.exponent"] == .integer(-1) && twelve["NS.length"] == .integer(1))
        for bad in ["", "1e5", "abc", "1.2.3", "999999999999999999999999999999999999999999"] {
            #expect(ArchivedDecimal(bad) == nil, "\(bad)")
        }
    }
}

extension ObjectModel {
    /// The model as a cache keeps it: no predicates on fetched properties, no templates with one.
    fileprivate var withoutFetchPredicates: ObjectModel {
        var model = self
        model.fetchRequests = fetchRequests.filter { $0.predicate == nil }
        model.entities = entities.map { entity in
            var entity = entity
            entity.fetchedProperties = entity.fetchedProperties.map {
                FetchedPropertyDescription(name: $0.name, entity: $0.entity)
            }
            return entity
        }
        return model
    }
}
