import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

/// What `ferry model graph` and `ferry model diff` draw with: Mermaid, DOT or (through
/// Graphviz) SVG.
enum DiagramFormat: String, CaseIterable, ExpressibleByArgument {
    case mermaid, dot, svg
}

struct ModelGraphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Draw a model: entities, attributes, relationships and inheritance.",
        discussion: """
            ferry model graph samples/models/Shop > shop.mmd
            ferry model graph Library.xcdatamodeld --format svg --output library.svg

            Entities list their attributes as name: type (? when optional) with unique, \
            transient and derived markers; a relationship and its inverse are one line with \
            both multiplicities (1, 0..1, 0..*) and delete rules; a sub-entity points at its \
            parent. Mermaid (the default) renders in GitHub and GitLab Markdown; DOT is \
            Graphviz's input; svg runs Graphviz's dot -Tsvg, which must be on PATH.
            """)

    @Argument(
        help: ModelShowCommand.modelArgumentHelp)
    var model: String

    @Option(help: ArgumentHelp("The version to draw (default: the current version).", valueName: "version"))
    var version: String?

    @Option(help: ArgumentHelp("mermaid (default), dot or svg.", valueName: "format"))
    var format: DiagramFormat = .mermaid

    @Option(help: ArgumentHelp("Write the diagram to this file instead of standard output.", valueName: "file"))
    var output: String = "-"

    func run() throws {
        try runReportingErrors {
            try CommandFiles.checkOutputs(store: nil, inputs: [(model, "the model")], outputs: [(output, "--output")])
            let bundle = try loadModel(model)
            let drawn = try bundle.version(version ?? bundle.currentVersion, option: "--version")
            try writeText(try render(ModelDiagram(model: drawn), as: format), to: output)
            return ExitStatus.success
        }
    }
}

/// `diagram` in `format`; for svg, names the renderer on standard error.
func render(_ diagram: ModelDiagram, as format: DiagramFormat) throws -> String {
    switch format {
    case .mermaid:
        return MermaidDiagram.render(diagram)
    case .dot:
        return DOTDiagram.render(diagram)
    case .svg:
        let executable = GraphvizRenderer.dotExecutable()
        let svg = try GraphvizRenderer.svg(fromDOT: DOTDiagram.render(diagram), executable: executable)
        Console.printError("ferry: SVG drawn by Graphviz (\(executable ?? "dot") -Tsvg)")
        return svg
    }
}

extension ModelBundle {
    /// The version labelled `label`, or a usage error naming `option` and the versions there are.
    func version(_ label: String, option: String) throws -> ObjectModel {
        guard let model = version(label) else {
            let labels = versions.map(\.version)
            throw FerryError(
                .usage,
                "\(option) \(label): model \(name) has no version '\(label)' (versions: \(labels.joined(separator: ", ")))\(Suggestions.didYouMean(label, in: labels))",
                at: location)
        }
        return model
    }
}
