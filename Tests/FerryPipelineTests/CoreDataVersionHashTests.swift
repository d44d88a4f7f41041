import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Core Data's entity version hashes computed from Xcode models (COREDATA.md §3.2), against every
/// hash the real material under `../shared/data/coredata` and ferry's fixtures holds, and the
/// open points marked unverified rather than trusted.
@Suite struct CoreDataVersionHashTests {
    typealias Samples = CoreDataStoreTests

    static func base64(_ bytes: [UInt8]?) -> String { Data(bytes ?? []).base64EncodedString() }

    @Test(
        "every real store with an XML model: each entity's computed hash equals NSStoreModelVersionHashes (7 stores, 10 of 10 entity hashes)",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func everyRealStore() throws {
        let directory = TemporaryDirectory("ferry-cd-hash")
        var matched = 0
        var compared = 0
        for sample in Samples.samples {
            let label = "\(sample.project) \(sample.file)"
            let store = try CoreDataStoreFile.read(
                try Samples.copy(sample, into: directory, name: "\(sample.project)-\(sample.file)"))
            // The version by the store's cached model (not by hashes: that would be circular).
            let bundle = try ModelLoader().load(path: Samples.package(sample.project))
            let cached = try store.cachedModel()
            let versions = bundle.versions.filter {
                CoreDataVersionDetector.differences(store: cached, version: $0).isEmpty
            }
            #expect(versions.map(\.version) == [sample.version], "\(label)")
            let model = try #require(versions.first)
            let computed = CoreDataVersionHashes(model: model)
            #expect(Set(computed.entities.keys) == Set(store.metadata.versionHashes.keys), "\(label)")
            for (name, hash) in store.metadata.versionHashes.sorted(by: { $0.key < $1.key }) {
                compared += 1
                let entity = try #require(computed.entities[name], "\(label): no hash for \(name)")
                #expect(entity.hash == hash, "\(label) \(name): \(Self.base64(entity.hash)) != \(Self.base64(hash))")
                #expect(entity.isVerified, "\(label) \(name): \(entity.unverified)")
                if entity.hash == hash { matched += 1 }
            }
        }
        #expect(compared == 10)
        #expect(matched == 10)
    }

    @Test(
        "the compiled model's VersionInfo.plist: every version's computed hashes equal it (4 versions, 6 entity hashes)",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func compiledModel() throws {
        let compiled = try CompiledModelVersions.read(Samples.compiledModel)
        let bundle = try ModelLoader().load(path: Samples.package(Samples.examples))
        var matched = 0
        for (version, hashes) in compiled.versionHashes.sorted(by: { $0.key < $1.key }) {
            let model = try #require(bundle.version(version))
            let computed = CoreDataVersionHashes(model: model)
            #expect(computed.hashes == hashes, "\(version)")
            matched += hashes.filter { computed.hashes[$0.key] == $0.value }.count
        }
        #expect(compiled.versionHashes.count == 4)
        #expect(matched == 6)
    }

    @Test("COREDATA.md §3.2's worked example: User{name, petName?} is azH06XtpHRbEyCC65V+JQI1HATvUIVHs/eHqx/5L55g=")
    func workedExample() throws {
        let model = ObjectModel(
            name: "SampleModel3", version: "SampleModel3",
            entities: [
                EntityDescription(
                    name: "User",
                    attributes: [
                        AttributeDescription(name: "name", type: .string, isOptional: false),
                        AttributeDescription(name: "petName", type: .string, isOptional: true),
                    ])
            ])
        let computed = CoreDataVersionHashes(model: model)
        #expect(Self.base64(computed.entities["User"]?.hash) == "azH06XtpHRbEyCC65V+JQI1HATvUIVHs/eHqx/5L55g=")
        #expect(computed.unverifiedReasons.isEmpty)
        // The aggregates of §2.2, by their formulas.
        let hash = try #require(computed.entities["User"]?.hash)
        #expect(computed.digest == SHA512.hash(Array("User".utf8) + hash))
        #expect(computed.checksum == SHA256.hash(hash))
    }

    /// A model of `entities` for the tests below.
    static func model(_ entities: [EntityDescription]) -> ObjectModel {
        ObjectModel(name: "M", version: "1", entities: entities)
    }

    static let post = EntityDescription(
        name: "Post",
        attributes: [
            AttributeDescription(name: "title", type: .string, isOptional: false),
            AttributeDescription(name: "date", type: .date),
        ],
        relationships: [
            RelationshipDescription(name: "tags", destination: "Tag", isToMany: true, inverse: "post")
        ])
    static let tag = EntityDescription(
        name: "Tag", attributes: [AttributeDescription(name: "name", type: .string)],
        relationships: [RelationshipDescription(name: "post", destination: "Post", inverse: "tags")])

    static func hash(_ entities: [EntityDescription], _ name: String = "Post") -> [UInt8] {
        CoreDataVersionHashes(model: model(entities)).entities[name]?.hash ?? []
    }

    @Test(
        "not hashed: delete rule, default, validation, index, renaming id, class name, user info, transient attributes, fetched properties; hashed: optional, type, name, counts, preserveAfterDeletion, constraints, abstract"
    )
    func inputs() throws {
        let base = Self.hash([Self.post, Self.tag])
        func changed(_ change: (inout EntityDescription) -> Void) -> [UInt8] {
            var post = Self.post
            change(&post)
            return Self.hash([post, Self.tag])
        }
        // Not hashed.
        #expect(changed { $0.relationships[0].deleteRule = .cascade } == base)
        #expect(changed { $0.attributes[0].defaultValue = .string("x") } == base)
        #expect(changed { $0.attributes[0].validation.maxLength = 3 } == base)
        #expect(changed { $0.indexes = [IndexDescription(attributes: ["title"])] } == base)
        #expect(changed { $0.attributes[0].renamedFrom = "heading" } == base)
        #expect(changed { $0.className = "PostMO" } == base)
        #expect(changed { $0.userInfo = ["a": "b"] } == base)
        #expect(changed { $0.attributes.reverse() } == base, "properties are hashed by name, not model order")
        #expect(
            changed {
                var speed = AttributeDescription(name: "speed", type: .int64)
                speed.isTransient = true
                $0.attributes.append(speed)
            } == base)
        #expect(
            changed { $0.fetchedProperties = [FetchedPropertyDescription(name: "recent", entity: "Tag")] } == base)
        // Hashed.
        #expect(changed { $0.attributes[0].isOptional = true } != base)
        #expect(changed { $0.attributes[0].type = .uri } != base)
        #expect(changed { $0.attributes[1].name = "day" } != base)
        #expect(changed { $0.relationships[0].maxCount = 5 } != base)
        #expect(changed { $0.relationships[0].minCount = 1 } != base)
        #expect(changed { $0.attributes[0].preservesAfterDeletion = true } != base)
        #expect(changed { $0.uniquenessConstraints = [["title"]] } != base)
        #expect(changed { $0.isAbstract = true } != base)
        // A related entity's change leaves the entity's hash as it was (COREDATA.md §3.2).
        var tag = Self.tag
        tag.attributes.append(AttributeDescription(name: "color", type: .string))
        #expect(Self.hash([Self.post, tag]) == base)
        // json is a String to Core Data.
        #expect(changed { $0.attributes[0].type = .json } == base)
    }

    @Test("inheritance: the parent's hash and the inherited properties count; a flattened model hashes the same")
    func inheritance() throws {
        var car = EntityDescription(
            name: "Car", attributes: [AttributeDescription(name: "plate", type: .string, isOptional: false)],
            uniquenessConstraints: [["plate"]])
        car.isAbstract = false
        var sport = EntityDescription(name: "SportCar", attributes: [AttributeDescription(name: "speed", type: .int16)])
        sport.parent = "Car"
        let model = Self.model([car, sport])
        let computed = CoreDataVersionHashes(model: model)
        let carHash = try #require(computed.entities["Car"]?.hash)
        // SportCar = H(name ‖ 0 ‖ entity(Car) ‖ plate ‖ speed), its own constraints only (none).
        let plate = CoreDataVersionHashes.hash(car.attributes[0])
        let speed = CoreDataVersionHashes.hash(sport.attributes[0])
        #expect(
            computed.entities["SportCar"]?.hash == SHA256.hash(Array("SportCar".utf8) + [0] + carHash + plate + speed))
        #expect(CoreDataVersionHashes(model: model.withInheritedProperties).hashes == computed.hashes)
        #expect(computed.unverifiedReasons.isEmpty)
    }

    @Test(
        "open points are computed but marked unverified with the reason, and so are their sub-entities; verified models have none"
    )
    func unverified() throws {
        func reasons(_ change: (inout EntityDescription) -> Void) -> [String] {
            var post = Self.post
            change(&post)
            var child = EntityDescription(name: "Reply")
            child.parent = "Post"
            return CoreDataVersionHashes(model: Self.model([post, Self.tag, child])).unverifiedReasons
        }
        #expect(reasons { _ in } == [])
        #expect(
            reasons { $0.attributes[0].derivation = "title.uppercase" } == [
                "Post: derived attribute title", "Reply: its parent entity Post's hash is unverified",
                "Reply: derived attribute title",
            ])
        #expect(reasons { $0.hashModifier = "2" }.contains("Post: the entity has a versionHashModifier"))
        #expect(
            reasons { $0.attributes[0].hashModifier = "2" }.contains("Post: attribute title has a versionHashModifier"))
        #expect(
            reasons { $0.relationships[0].hashModifier = "2" }.contains(
                "Post: relationship tags has a versionHashModifier"))
        #expect(reasons { $0.relationships[0].isOrdered = true }.contains("Post: ordered relationship tags"))
        #expect(
            reasons { $0.attributes[0].allowsExternalBinaryDataStorage = true }.contains(
                "Post: attribute title allows external binary data storage"))
        #expect(reasons { $0.relationships[0].inverse = nil }.contains("Post: relationship tags has no inverse"))
        #expect(reasons { $0.uniquenessConstraints = [["title"]] } == [])
        #expect(
            reasons { $0.uniquenessConstraints = [["title"], ["date"]] }.contains("Post: 2 uniqueness constraints"))
        #expect(
            reasons { $0.attributes.append(AttributeDescription(name: "Zeta", type: .string)) }.contains(
                "Post: property names 'Zeta' and 'date' sort differently with and without case"))
        let mixed = CoreDataVersionHashes(
            model: Self.model([Self.post, Self.tag, EntityDescription(name: "apple")]))
        #expect(mixed.aggregatesUnverified == "entity names 'Post' and 'apple' sort differently with and without case")
        #expect(mixed.entities.values.allSatisfy { $0.isVerified })
    }

    @Test(
        "the Xcode reader keeps preserveAfterDeletion and allowsExternalBinaryDataStorage, and the writer writes them")
    func readerKeepsHashInputs() throws {
        let directory = TemporaryDirectory("ferry-cd-hash-xml")
        let contents = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="">
                <entity name="Person" syncable="YES">
                    <attribute name="id" attributeType="UUID" usesScalarValueType="NO" preserveAfterDeletion="YES"/>
                    <attribute name="photo" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                </entity>
            </model>
            """
        let folder = directory.file("P.xcdatamodel")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: URL(fileURLWithPath: folder + "/contents"))
        let model = try ModelLoader().load(path: folder).current
        let person = try #require(model.entity(named: "Person"))
        #expect(person.attribute(named: "id")?.preservesAfterDeletion == true)
        #expect(person.attribute(named: "photo")?.allowsExternalBinaryDataStorage == true)
        #expect(person.attribute(named: "photo")?.preservesAfterDeletion == false)
        let computed = CoreDataVersionHashes(model: model)
        #expect(computed.unverifiedReasons == ["Person: attribute photo allows external binary data storage"])
        // preserveAfterDeletion appends u8(1) to the attribute's hash input.
        let id = try #require(person.attribute(named: "id"))
        #expect(
            CoreDataVersionHashes.hash(id)
                == SHA256.hash(
                    CoreDataVersionHashes.propertyBase(name: "id", isOptional: false) + [0x4C, 0x04, 0, 0, 1]))
        // Written back to XML and read again: the same model, the same hashes.
        let written = directory.file("Q.xcdatamodeld")
        try ModelConverter.write(ModelBundle(name: "Q", versions: [model], currentVersion: model.version), to: written)
        let again = try ModelLoader().load(path: written).current
        #expect(CoreDataVersionHashes(model: again).hashes == computed.hashes)
    }
}
