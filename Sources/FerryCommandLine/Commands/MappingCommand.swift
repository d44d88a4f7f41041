import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

struct MappingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mapping", abstract: "Inspect mapping models.", subcommands: [MappingShowCommand.self])
}

struct MappingShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print an Xcode mapping model (.xcmappingmodel) as a ferry mapping file.",
        discussion: """
            The mapping is translated as `ferry migrate` uses it: implicit values made explicit, \
            Core Data's value expressions as ferry's. Save the output as FROM-to-TO.yml in a \
            --mappings folder (or the bundle's mappings/) to read or change it: a ferry mapping \
            file stands in for the mapping model of its step. The models are found from the \
            mapping's source model path (walking up from the package), or given with --model.
            """)

    @Argument(help: ArgumentHelp("The mapping model package (or its xcmapping.xml).", valueName: "mapping"))
    var mapping: String

    @Option(help: "The model the mapping maps between (default: the package its source model path names).")
    var model: String?

    func run() throws {
        try runReportingErrors {
            let file = try XcodeMappingReader().read(path: mapping)
            guard let modelPath = model ?? file.modelPackagePath else {
                throw FerryError(
                    .usage,
                    "the model of mapping model \(file.name) was not found from its source model path '\(file.sourceModelPath)'",
                    notes: ["give it with --model App.xcdatamodeld"])
            }
            let bundle = try ModelLoader().load(path: modelPath)
            func version(_ label: String, role: String) throws -> ObjectModel {
                guard let found = bundle.versions.first(where: { $0.version == label }) else {
                    throw FerryError(
                        .usage,
                        "mapping model \(file.name) maps from \(file.sourceVersion) to \(file.destinationVersion), but \(modelPath) has no \(role) version '\(label)'\(Suggestions.didYouMean(label, in: bundle.versions.map(\.version)))",
                        notes: ["versions: \(bundle.versions.map(\.version).joined(separator: ", "))"])
                }
                // As `ferry migrate` reads a Core Data store's versions: each sub-entity with the
                // properties it inherits, which Xcode's entity mappings list too.
                return found.withInheritedProperties
            }
            let translated = try file.mappingModel(
                from: try version(file.sourceVersion, role: "source"),
                to: try version(file.destinationVersion, role: "destination"))
            let text = try MappingYAMLWriter.text(
                of: translated,
                comment: [
                    "\(bundle.name) \(file.sourceVersion) → \(file.destinationVersion), translated from \((file.path as NSString).lastPathComponent)",
                    "save as '\(file.sourceVersion)-to-\(file.destinationVersion).yml' in a --mappings folder to use it instead",
                ])
            print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
            return 0
        }
    }
}
