import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

struct ModelDiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "List every change between two model versions and whether lightweight migration can infer it.",
        discussion: """
            ferry model diff BUNDLE --from 1 [--to 3]
              Versions of one bundle; --to defaults to the current version. A range of several \
            versions is shown step by step, as ferry migrate runs it.

            ferry model diff OLD NEW [--from 1] [--to 2]
              Two model files or bundles, each at its current version unless --from (OLD) or --to \
            (NEW) picks one; renamed_from in NEW names OLD's names.

            Each change is marked ✓ (inferred) or ✗ (refused, with the reason and a fix). See \
            docs/migration.md for the rules; Xcode models follow Core Data's \
            lightweight-migration rules instead (docs/coredata.md), and each step names the rule \
            set it used.

            Exit codes: 0 every change can be inferred (lightweight) · 65 a mapping file is \
            needed · 64 usage error, or a model that is missing or invalid.
            """)

    @Argument(help: ArgumentHelp("A model bundle (with --from), or the old model.", valueName: "old"))
    var old: String

    @Argument(help: ArgumentHelp("The new model (a model file or bundle).", valueName: "new"))
    var new: String?

    @Option(help: ArgumentHelp("The old version's label (required with one bundle).", valueName: "version"))
    var from: String?

    @Option(help: ArgumentHelp("The new version's label (default: the current version).", valueName: "version"))
    var to: String?

    @Flag(help: "Print JSON (the same as --format json).")
    var json = false

    @Option(
        help: ArgumentHelp(
            "text (default), json, or a picture of the newer version with the changes marked: mermaid, dot or html.",
            valueName: "format"))
    var format: DiffFormat?

    @Option(help: ArgumentHelp("Write the output to this file instead of standard output.", valueName: "file"))
    var output: String = "-"

    /// `ferry model diff --format`.
    enum DiffFormat: String, CaseIterable, ExpressibleByArgument {
        case text, json, mermaid, dot, html
    }

    func validate() throws {
        if json, let format, format != .json {
            throw ValidationError("--json and --format \(format.rawValue) ask for two outputs; give one")
        }
        if new == nil && from == nil {
            throw ValidationError(
                "give two models (ferry model diff OLD NEW) or one bundle with --from (ferry model diff BUNDLE --from 1 --to 2)"
            )
        }
    }

    func run() throws {
        try runReportingErrors {
            try CommandFiles.checkOutputs(
                store: nil, inputs: [(old, "the model"), (new, "the new model")], outputs: [(output, "--output")])
            let diffs: [ModelDiff]
            let modelName: String
            let fromLabel: String
            let toLabel: String
            let path: [ObjectModel]
            let mappingBundle: ModelBundle
            if let new {
                let oldBundle = try loadModel(old)
                let newBundle = try loadModel(new)
                let source = try oldBundle.version(from ?? oldBundle.currentVersion, option: "--from")
                let destination = try newBundle.version(to ?? newBundle.currentVersion, option: "--to")
                diffs = [ModelDiff(from: source, to: destination)]
                modelName = newBundle.name
                (fromLabel, toLabel) = (source.version, destination.version)
                (path, mappingBundle) = ([source, destination], newBundle)
            } else {
                let bundle = try loadModel(old)
                let start = from ?? ""
                let end = to ?? bundle.currentVersion
                diffs = try ModelDiff.steps(in: bundle, from: start, to: end)
                modelName = bundle.name
                (fromLabel, toLabel) = (start, end)
                (path, mappingBundle) = (try bundle.path(from: start, to: end), bundle)
            }
            let lightweight = diffs.allSatisfy(\.isInferable)
            switch format ?? (json ? .json : .text) {
            case .json:
                try writeJSON(DiffReport(model: modelName, from: fromLabel, to: toLabel, diffs: diffs), to: output)
            case .text:
                try writeText(human(diffs, model: modelName, from: fromLabel, to: toLabel), to: output)
            case .mermaid, .dot, .html:
                try writeText(try picture(diffs, path: path, mappings: mappingBundle), to: output)
            }
            return lightweight ? ExitStatus.success : ExitStatus.needsMapping
        }
    }

    // MARK: - Pictures

    /// The newer version drawn with every change from the oldest version of `path` marked, in
    /// the Mermaid, DOT or HTML format.
    private func picture(_ diffs: [ModelDiff], path: [ObjectModel], mappings bundle: ModelBundle) throws -> String {
        guard let older = path.first, let newer = path.last else { return "" }
        let steps = try zip(diffs, zip(path, path.dropFirst())).map { diff, pair in
            DiffPage.Step(
                diff: diff,
                coverage: try MigrationMappings.stepMapping(from: pair.0, to: pair.1, in: bundle).map(
                    MappingCoverage.init) ?? .none)
        }
        let whole = ModelDiff(from: older, to: newer, through: Array(path.dropFirst().dropLast()))
        let diagram = ModelDiagram(
            diff: whole, older: older, newer: newer, coverage: MappingCoverage(merging: steps.map(\.coverage)))
        switch format {
        case .dot:
            return DOTDiagram.render(diagram)
        case .html:
            let executable = GraphvizRenderer.dotExecutable()
            let svg = try executable.map {
                try GraphvizRenderer.svg(fromDOT: DOTDiagram.render(diagram), executable: $0)
            }
            Console.printError(
                executable.map { "ferry: picture drawn by Graphviz (\($0) -Tsvg)" }
                    ?? "ferry: Graphviz's dot is not on PATH: the page shows the picture as Mermaid text")
            return DiffPage.render(diagram: diagram, svg: svg, steps: steps)
        default:
            return MermaidDiagram.render(diagram)
        }
    }

    // MARK: - Human output

    private func human(_ diffs: [ModelDiff], model: String, from: String, to: String) -> String {
        var text = ""
        func print(_ line: String) { text += line + "\n" }
        if diffs.isEmpty {
            print("\(model) \(from) → \(to): the same version")
        }
        for diff in diffs {
            if diff.source.name == diff.destination.name {
                print("\(diff.destination.name) \(diff.source.version) → \(diff.destination.version)")
            } else {
                print(
                    "\(diff.source.name) \(diff.source.version) → \(diff.destination.name) \(diff.destination.version)")
            }
            if diff.rules == .coreData { print("  rules: \(diff.rules.title)") }
            var entities: [String] = []
            for change in diff.changes where !entities.contains(change.entity) { entities.append(change.entity) }
            for entity in entities {
                print("  \(entity)")
                for change in diff.changes(of: entity) {
                    print("    \(change.isInferable ? "✓" : "✗") \(Self.label(change)): \(change.detail)")
                    if let reason = change.reason { print("        reason: \(reason)") }
                    if let fix = change.fix { print("        fix: \(fix)") }
                    if let warning = change.warning { print("        warning: \(warning)") }
                }
            }
            let unchanged = diff.destination.entityNames.filter { !entities.contains($0) }
            if !unchanged.isEmpty { print("  unchanged: \(unchanged.joined(separator: ", "))") }
            if diffs.count > 1 { print("  step: \(Self.verdict(diff))") }
        }
        let refused = diffs.filter { !$0.isInferable }
        if refused.isEmpty {
            let count = diffs.reduce(0) { $0 + $1.changes.count }
            print(
                "verdict: lightweight: \(model) \(from) → \(to) can be migrated with an inferred mapping (\(count) \(count == 1 ? "change" : "changes"))"
            )
        } else {
            let count = refused.reduce(0) { $0 + $1.refusals.count }
            let files = refused.map(\.mappingFile).joined(separator: ", ")
            print(
                "verdict: needs a mapping: \(count) \(count == 1 ? "change" : "changes") cannot be inferred; apply the fixes above or write \(files)"
            )
        }
        return text
    }

    static func verdict(_ diff: ModelDiff) -> String {
        diff.isInferable
            ? "lightweight"
            : "needs a mapping (\(diff.refusals.count) refused; \(diff.mappingFile))"
    }

    /// `attribute tier`, `relationship orders`, `entity`, `uniqueness constraint`.
    static func label(_ change: ModelChange) -> String {
        let raw = change.kind.rawValue
        let property = change.property.map { " \($0)" } ?? ""
        if raw.hasPrefix("attribute_") { return "attribute" + property }
        if raw.hasPrefix("relationship_") { return "relationship" + property }
        if raw.hasPrefix("uniqueness_constraint") { return "unique" }
        if raw.hasPrefix("index") { return "index" }
        if change.property != nil { return "property" + property }
        return "entity"
    }
}

// MARK: - JSON

/// `ferry model diff --json`: every step with its changes, verdict and (when lightweight) the
/// inferred mapping.
struct DiffReport: Encodable {
    struct Step: Encodable {
        var from: String
        var to: String
        var fromHash: String
        var toHash: String
        var rules: MigrationRuleSet
        var lightweight: Bool
        var mappingFile: String
        var changes: [ModelChange]
        var inferredMapping: MappingJSON?
        enum CodingKeys: String, CodingKey {
            case from, to, rules, lightweight, changes
            case fromHash = "from_hash"
            case toHash = "to_hash"
            case mappingFile = "mapping_file"
            case inferredMapping = "inferred_mapping"
        }
    }
    struct MappingJSON: Encodable {
        struct Entity: Encodable {
            var destination: String
            var source: String?
            var attributes: [Attribute]
            var relationships: [Relationship]
            var dropped: [String]
            enum CodingKeys: String, CodingKey { case destination, source, attributes, relationships, dropped }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(destination, forKey: .destination)
                try container.encode(source, forKey: .source)
                try container.encode(attributes, forKey: .attributes)
                try container.encode(relationships, forKey: .relationships)
                try container.encode(dropped, forKey: .dropped)
            }
        }
        struct Attribute: Encodable {
            var destination: String
            var source: String?
            var conversion: String?
            var valueIfNil: String?
            enum CodingKeys: String, CodingKey {
                case destination, source, conversion
                case valueIfNil = "value_if_nil"
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(destination, forKey: .destination)
                try container.encode(source, forKey: .source)
                try container.encode(conversion, forKey: .conversion)
                try container.encode(valueIfNil, forKey: .valueIfNil)
            }
        }
        struct Relationship: Encodable {
            var destination: String
            var source: String?
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(destination, forKey: .destination)
                try container.encode(source, forKey: .source)
            }
            enum CodingKeys: String, CodingKey { case destination, source }
        }
        var entities: [Entity]
        var droppedEntities: [String]
        enum CodingKeys: String, CodingKey {
            case entities
            case droppedEntities = "dropped_entities"
        }

        init(_ mapping: InferredMapping) {
            entities = mapping.entities.map { entity in
                Entity(
                    destination: entity.destination, source: entity.source,
                    attributes: entity.attributes.map {
                        Attribute(
                            destination: $0.destination, source: $0.source,
                            conversion: $0.conversion.map { "\($0.from.rawValue) → \($0.to.rawValue)" },
                            valueIfNil: $0.valueIfNil.isNull ? nil : $0.valueIfNil.description)
                    },
                    relationships: entity.relationships.map {
                        Relationship(destination: $0.destination, source: $0.source)
                    },
                    dropped: entity.droppedProperties)
            }
            droppedEntities = mapping.droppedEntities
        }
    }

    var model: String
    var from: String
    var to: String
    var lightweight: Bool
    var exitCode: Int32
    var steps: [Step]
    enum CodingKeys: String, CodingKey {
        case model, from, to, lightweight, steps
        case exitCode = "exit_code"
    }

    init(model: String, from: String, to: String, diffs: [ModelDiff]) {
        self.model = model
        self.from = from
        self.to = to
        lightweight = diffs.allSatisfy(\.isInferable)
        exitCode = lightweight ? ExitStatus.success : ExitStatus.needsMapping
        steps = diffs.map { diff in
            Step(
                from: diff.source.version, to: diff.destination.version, fromHash: diff.source.versionHash,
                toHash: diff.destination.versionHash, rules: diff.rules, lightweight: diff.isInferable,
                mappingFile: diff.mappingFile,
                changes: diff.changes, inferredMapping: (try? diff.inferredMapping()).map(MappingJSON.init))
        }
    }
}

/// Loads a model for a command whose argument names it: a missing model file is a usage error
/// (exit 64), like a malformed one, rather than a failed step.
func loadModel(_ path: String) throws -> ModelBundle {
    do {
        return try ModelLoader().load(path: path)
    } catch let errors as FerryErrors where errors.code == .io {
        throw FerryErrors(
            errors.errors.map { error in
                var usage = error
                usage.code = .usage
                return usage
            })
    }
}
