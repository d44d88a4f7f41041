import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

struct ModelConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract:
            "Write a model in another format: an Xcode model as a YAML bundle, a YAML bundle as an .xcdatamodeld.",
        discussion: """
            OUT's name chooses the format: NAME.xcdatamodeld (an Xcode package with every version), \
            NAME.xcdatamodel (one Xcode version: the current one), NAME.yml (one YAML model file: the \
            current version), anything else a YAML bundle folder (model.yml and one file per version). \
            OUT must not exist.
            """)

    @Argument(
        help: ArgumentHelp(
            "The model to read: a bundle folder, model.yml, a model file, an .xcdatamodeld, an .xcdatamodel, or a store (the model it records or caches).",
            valueName: "in"))
    var input: String

    @Argument(help: ArgumentHelp("Where to write it (must not exist).", valueName: "out"))
    var output: String

    func run() throws {
        try runReportingErrors {
            let bundle = try ModelLoader().load(path: input)
            let warnings = try ModelConverter.write(bundle, to: output)
            for warning in warnings { Console.printError("warning: \(warning)") }
            print(
                "wrote model \(bundle.name) (\(bundle.versions.count) version\(bundle.versions.count == 1 ? "" : "s"), current \(bundle.currentVersion)) to \(output)"
            )
            return 0
        }
    }
}
