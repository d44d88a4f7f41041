import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model", abstract: "Inspect models.", subcommands: [ModelShowCommand.self, ModelDiffCommand.self])
}

struct ModelShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show a model bundle's versions, entities and version hashes.")

    @Argument(help: ArgumentHelp("A model bundle folder, its model.yml, or a model file.", valueName: "model"))
    var model: String

    @Flag(help: "Print JSON.")
    var json = false

    struct VersionInfo: Encodable {
        struct EntityInfo: Encodable {
            var name: String
            var attributes: [String]
            var relationships: [String]
            var unique: [[String]]
            var hash: String
        }
        var version: String
        var current: Bool
        var hash: String
        var entities: [EntityInfo]
    }

    func run() throws {
        try runReportingErrors {
            let bundle = try ModelLoader().load(path: model)
            let versions = bundle.versions.map { version in
                VersionInfo(
                    version: version.version, current: version.version == bundle.currentVersion, hash: version.versionHash,
                    entities: version.entities.map { entity in
                        VersionInfo.EntityInfo(
                            name: entity.name,
                            attributes: entity.attributes.map { "\($0.name): \($0.type.rawValue)\($0.isOptional ? "?" : "")" },
                            relationships: entity.relationships.map { "\($0.name): \($0.isToMany ? "[\($0.destination)]" : $0.destination)\($0.isOptional ? "?" : "")" },
                            unique: entity.uniquenessConstraints,
                            hash: version.entityHashes[entity.name] ?? "")
                    })
            }
            if json {
                try writeJSON(["name": AnyEncodable(bundle.name), "current": AnyEncodable(bundle.currentVersion), "versions": AnyEncodable(versions)], to: "-")
                return 0
            }
            print("model \(bundle.name) (current version \(bundle.currentVersion))")
            for version in versions {
                print("version \(version.version)\(version.current ? " (current)" : "")  hash \(version.hash)")
                for entity in version.entities {
                    print("  \(entity.name)  hash \(entity.hash.prefix(16))")
                    for attribute in entity.attributes { print("    \(attribute)") }
                    for relationship in entity.relationships { print("    \(relationship)") }
                    for constraint in entity.unique { print("    unique (\(constraint.joined(separator: ", ")))") }
                }
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
