import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model", abstract: "Inspect models.",
        subcommands: [ModelShowCommand.self, ModelDiffCommand.self, ModelGraphCommand.self, ModelConvertCommand.self])
}

struct ModelShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show a model bundle's versions, entities and version hashes.")

    /// The help of a MODEL|STORE argument (`model show`, `model graph`).
    static let modelArgumentHelp = ArgumentHelp(
        "A model bundle folder, its model.yml, a model file, an .xcdatamodeld package, an .xcdatamodel, or a store (the model it records; a Core Data store: the model it caches).",
        valueName: "model")

    @Argument(help: modelArgumentHelp)
    var model: String

    @Flag(help: "Print JSON.")
    var json = false

    struct VersionInfo: Encodable {
        struct EntityInfo: Encodable {
            var name: String
            var parent: String?
            var abstract: Bool
            var attributes: [String]
            var relationships: [String]
            var unique: [[String]]
            var fetchedProperties: [String]
            var userInfo: [String: String]
            var hash: String
            /// Core Data's entity version hash (base64), computed from the model.
            var coreDataVersionHash: String
            /// Why that hash may not be Core Data's; nil when verified.
            var coreDataVersionHashUnverified: String?

            enum CodingKeys: String, CodingKey {
                case name, parent, abstract, attributes, relationships, unique, hash
                case fetchedProperties = "fetched_properties"
                case userInfo = "user_info"
                case coreDataVersionHash = "core_data_version_hash"
                case coreDataVersionHashUnverified = "core_data_version_hash_unverified"
            }
        }
        var version: String
        var current: Bool
        var hash: String
        var entities: [EntityInfo]
        var fetchRequests: [String]
        /// `NSStoreModelVersionHashesDigest` and `NSStoreModelVersionChecksumKey` (base64).
        var coreDataDigest: String
        var coreDataChecksum: String
        /// Why the digest and checksum may not be Core Data's even with verified entity hashes.
        var coreDataDigestUnverified: String?
        /// An Xcode model's text output shows the Core Data hashes (JSON always has them).
        var xcode: Bool

        enum CodingKeys: String, CodingKey {
            case version, current, hash, entities
            case fetchRequests = "fetch_requests"
            case coreDataDigest = "core_data_digest"
            case coreDataChecksum = "core_data_checksum"
            case coreDataDigestUnverified = "core_data_digest_unverified"
        }
    }

    /// `name: type?` and what else the attribute is: transient, derived, transformable, user info.
    static func describe(_ attribute: AttributeDescription) -> String {
        var text =
            "\(attribute.name): \(attribute.coreDataKind?.typeName ?? attribute.type.rawValue)\(attribute.isOptional ? "?" : "")"
        if case .transformable(let transformer, let valueClass) = attribute.coreDataKind {
            let details = [transformer.map { "transformer \($0)" }, valueClass.map { "value class \($0)" }].compactMap {
                $0
            }
            if !details.isEmpty { text += " (\(details.joined(separator: ", ")))" }
        }
        if attribute.isTransient { text += " transient" }
        if let derivation = attribute.derivation { text += " derived from \(derivation)" }
        return text + describe(attribute.userInfo)
    }

    static func describe(_ relationship: RelationshipDescription) -> String {
        var text =
            "\(relationship.name): \(relationship.isToMany ? "[\(relationship.destination)]" : relationship.destination)\(relationship.isOptional ? "?" : "")"
        if relationship.isOrdered { text += " ordered" }
        return text + describe(relationship.userInfo)
    }

    static func describe(_ request: FetchRequestTemplate) -> String {
        var text = "\(request.name): \(request.entity)"
        if let predicate = request.predicate { text += " where \(predicate)" }
        if let limit = request.limit { text += " limit \(limit)" }
        return text
    }

    static func describe(_ userInfo: [String: String]) -> String {
        guard !userInfo.isEmpty else { return "" }
        return " {" + userInfo.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)" }.joined(separator: ", ")
            + "}"
    }

    func run() throws {
        try runReportingErrors {
            let bundle = try ModelLoader().load(path: model)
            let versions = bundle.versions.map { version in
                let hashes = version.entityHashes
                let coreData = CoreDataVersionHashes(model: version)
                return VersionInfo(
                    version: version.version, current: version.version == bundle.currentVersion,
                    hash: version.versionHash,
                    entities: version.entities.map { entity in
                        VersionInfo.EntityInfo(
                            name: entity.name, parent: entity.parent, abstract: entity.isAbstract,
                            attributes: entity.attributes.map(Self.describe),
                            relationships: entity.relationships.map(Self.describe),
                            unique: entity.uniquenessConstraints,
                            fetchedProperties: entity.fetchedProperties.map {
                                "\($0.name): [\($0.entity)]\($0.predicate.map { " where \($0)" } ?? "")"
                            },
                            userInfo: entity.userInfo,
                            hash: hashes[entity.name] ?? "",
                            coreDataVersionHash: Data(coreData.entities[entity.name]?.hash ?? [])
                                .base64EncodedString(),
                            coreDataVersionHashUnverified: coreData.entities[entity.name].flatMap {
                                $0.isVerified ? nil : $0.unverified.joined(separator: "; ")
                            })
                    },
                    fetchRequests: version.fetchRequests.map(Self.describe),
                    coreDataDigest: Data(coreData.digest).base64EncodedString(),
                    coreDataChecksum: Data(coreData.checksum).base64EncodedString(),
                    coreDataDigestUnverified: coreData.aggregatesUnverified, xcode: version.origin == .xcode)
            }
            if json {
                try writeJSON(
                    [
                        "name": AnyEncodable(bundle.name), "current": AnyEncodable(bundle.currentVersion),
                        "versions": AnyEncodable(versions),
                    ], to: "-")
                return 0
            }
            print("model \(bundle.name) (current version \(bundle.currentVersion))")
            for version in versions {
                print("version \(version.version)\(version.current ? " (current)" : "")  hash \(version.hash)")
                if version.xcode {
                    print("  Core Data digest \(version.coreDataDigest)")
                    print("  Core Data checksum \(version.coreDataChecksum)")
                    if let reason = version.coreDataDigestUnverified {
                        print("  Core Data digest and checksum unverified: \(reason)")
                    }
                }
                for entity in version.entities {
                    let kind = (entity.parent.map { " : \($0)" } ?? "") + (entity.abstract ? " (abstract)" : "")
                    print("  \(entity.name)\(kind)  hash \(entity.hash.prefix(16))\(Self.describe(entity.userInfo))")
                    if version.xcode {
                        print("    Core Data version hash \(entity.coreDataVersionHash)")
                        if let reason = entity.coreDataVersionHashUnverified {
                            print("    Core Data version hash unverified: \(reason)")
                        }
                    }
                    for attribute in entity.attributes { print("    \(attribute)") }
                    for relationship in entity.relationships { print("    \(relationship)") }
                    for property in entity.fetchedProperties { print("    fetched \(property)") }
                    for constraint in entity.unique { print("    unique (\(constraint.joined(separator: ", ")))") }
                }
                for request in version.fetchRequests { print("  fetch request \(request)") }
            }
            return 0
        }
    }
}

/// Type erasure for mixed JSON objects.
struct AnyEncodable: Encodable {
    let encodeValue: (any Encoder) throws -> Void
    init(_ value: some Encodable) { encodeValue = value.encode }
    func encode(to encoder: any Encoder) throws { try encodeValue(encoder) }
}
