import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

/// `ferry copy SRC DST`: a store into a new store of the same model and version.
struct CopyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract:
            "Copy a store into a new store of the same model and version, keys and relationships kept, verified by counts and checksums.",
        discussion: """
            SRC is a ferry store or a Core Data store (read through a private copy, with the version of \
            --model it is at, else the model it caches; the copy is a ferry store). DST must not exist or be an empty ferry store; --replace replaces a store that holds \
            objects. The copy is written beside DST, checked (per-entity counts and checksums of every \
            attribute) and renamed into place in one step: a failure or an interruption leaves DST as it was. \
            Exit codes: 0 copied · 1 the copy failed · 3 the copy differs from the source · 64 a bad argument \
            (nothing was touched) · 66 SRC does not exist. \
            Example: ferry copy shop.sqlite snapshot.sqlite
            """)

    @Argument(help: ArgumentHelp("The store to copy (a ferry store or a Core Data store).", valueName: "src"))
    var source: String

    @Argument(help: ArgumentHelp("The new store.", valueName: "dst"))
    var destination: String

    @Flag(help: "Replace DST even when it holds objects.")
    var replace = false

    @Option(
        help: ArgumentHelp(
            "For a Core Data SRC: the model bundle or model file to read it with (a store ferry wrote caches no model).",
            valueName: "model"))
    var model: String?

    @Option(help: ArgumentHelp("Write the JSON report.", valueName: "file.json"))
    var report: String?

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    func run() throws {
        try runReportingErrors {
            try CommandFiles.checkOutputs(
                store: destination, inputs: [(source, "the source store"), (model, "the model")],
                outputs: [(report, "--report")])
            var copier = StoreCopier(from: source, to: destination)
            copier.replacesExisting = replace
            copier.sourceBundle = try model.map { try ModelLoader().load(path: $0) }
            let result = try copier.run()
            if let report { try writeJSON(result, to: report) }
            if !quiet {
                let console = Console(quiet: false)
                for entity in result.entities {
                    console.line("\(entity.entity): \(entity.copied) of \(entity.source) objects copied")
                }
                let objects = result.entities.reduce(0) { $0 + $1.copied }
                console.line(
                    "copied \(source) → \(destination): \(result.model) v\(result.modelVersion), \(objects) objects in \(result.entities.count) entities, "
                        + "checksums agree for \(result.checksummed.count) in \(String(format: "%.2f", result.seconds)) s"
                )
            }
            return 0
        }
    }
}
