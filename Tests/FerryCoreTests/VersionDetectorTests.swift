import FerryCore
import FerryTestSupport
import Testing

@Suite("Version detection")
struct VersionDetectorTests {
    /// v1: Customer, Order. v2: adds Coupon. v3: Customer gains a required `level` with a default.
    static func bundle() -> ModelBundle {
        let v1 = DiffModels.base(version: "1")
        let v2 = DiffModels.edited(version: "2", from: v1) {
            $0.entities.append(
                EntityDescription(name: "Coupon", attributes: [AttributeDescription(name: "code", type: .string)]))
        }
        let v3 = DiffModels.edited(version: "3", from: v2) {
            DiffModels.entity(&$0, "Customer") {
                $0.attributes.append(
                    AttributeDescription(name: "level", type: .int16, isOptional: false, defaultValue: .integer(0)))
            }
        }
        return ModelBundle(name: "Shop", versions: [v1, v2, v3], currentVersion: "3")
    }

    /// The metadata of a real store created with `model`.
    static func metadata(of model: ObjectModel, in directory: TemporaryDirectory) throws -> (String, StoreMetadata) {
        let path = directory.file("shop-\(model.version).sqlite")
        _ = try Store.open(at: path, model: model)
        return (path, try #require(try Store.metadata(at: path)))
    }

    @Test("a store's hash picks its version")
    func match() throws {
        let directory = TemporaryDirectory()
        let bundle = Self.bundle()
        for version in bundle.versions {
            let (_, metadata) = try Self.metadata(of: version, in: directory)
            #expect(try VersionDetector.detect(metadata: metadata, bundle: bundle).version == version.version)
        }
    }

    @Test("versions with the same hash: the recorded label wins, else the latest")
    func sameHash() throws {
        let directory = TemporaryDirectory()
        let v1 = DiffModels.base(version: "1")
        let v2 = DiffModels.edited(version: "2", from: v1) {
            DiffModels.attribute(&$0, "Customer", "tier") { $0.defaultValue = .string("basic") }
        }
        let bundle = ModelBundle(name: "Shop", versions: [v1, v2], currentVersion: "2")
        let (_, metadata) = try Self.metadata(of: v1, in: directory)
        #expect(try VersionDetector.detect(metadata: metadata, bundle: bundle).version == "1")
        var relabelled = metadata
        relabelled.modelVersion = "legacy"
        #expect(try VersionDetector.detect(metadata: relabelled, bundle: bundle).version == "2")
    }

    @Test("a store that matches no version: the versions and the closest one's differing entities")
    func noMatch() throws {
        let directory = TemporaryDirectory()
        let bundle = Self.bundle()
        var other = bundle.versions[1]
        other.version = "2b"
        DiffModels.attribute(&other, "Customer", "age") { $0.type = .int32 }
        other.entities.append(
            EntityDescription(name: "Review", attributes: [AttributeDescription(name: "text", type: .string)]))
        let (path, metadata) = try Self.metadata(of: other, in: directory)
        let error = try #require(throws: FerryError.self) {
            try VersionDetector.detect(metadata: metadata, bundle: bundle, store: path)
        }
        #expect(error.code == .modelMismatch)
        let hashes = bundle.versions.map { "\($0.version) (hash \($0.versionHash.prefix(12)))" }.joined(separator: ", ")
        #expect(
            error.description == """
                error: store '\(path)' (model Shop version 2b, hash \(other.versionHash.prefix(12))) matches no version of model Shop
                  versions of Shop: \(hashes)
                  closest: version 3 (2 of 4 entities match); entities that differ: Customer (changed), Review (only in the store)
                  the store was made with another model; open it with that model, or add its version to the bundle
                """)
        let closest = try #require(VersionDetector.closest(metadata: metadata, bundle: bundle))
        #expect(closest.version == "3")  // ties with 2 on matches and differences: the latest wins
        #expect(closest.matching == ["Coupon", "Order"])
        #expect(VersionDetector.compare(metadata: metadata, bundle: bundle).map(\.matching.count) == [1, 2, 2])
    }
}
