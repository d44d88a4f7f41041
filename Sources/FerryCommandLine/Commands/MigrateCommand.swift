import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to another version of its model (default: the current one).",
        discussion: """
            The store's version is found from its stored model hash. Each version step is \
            lightweight (inferred, see `ferry model diff`) or follows a mapping: FROM-to-TO.yml or \
            an Xcode mapping model (.xcmappingmodel) made for the step in a --mappings folder, the \
            bundle's mappings/FROM-to-TO.yml, or a mapping model beside the model package. Each step writes a new file beside the store; the result is \
            verified and swapped in atomically, keeping the original as STORE.backup-vN-TIME \
            unless --no-backup. A failure or a kill leaves the original store as it was. \
            A PostgreSQL store (schema S) is built in a new schema S_next, verified, and swapped \
            in by renaming both schemas in one transaction, keeping S as S_backup_vN_TIME. \
            A Core Data store stays a Core Data store: each step writes one in Core Data's layout of \
            the new version, its metadata's entity version hashes computed from the model (and checked \
            against --compiled-model when given).
            """)

    @Argument(help: ArgumentHelp("The store to migrate.", valueName: "store"))
    var store: String

    @Option(help: "The model bundle.")
    var model: String

    @Option(help: "The version to migrate to (default: the bundle's current version).")
    var to: String?

    @Option(
        name: .customLong("mappings"),
        help: ArgumentHelp(
            "A folder of mapping files (FROM-to-TO.yml) and Xcode mapping models (.xcmappingmodel); repeatable.",
            valueName: "dir"))
    var mappings: [String] = []

    @Option(
        help: ArgumentHelp(
            "For a Core Data store: the compiled model (.momd or its VersionInfo.plist) whose hashes must equal those computed from the model and recorded in the migrated store's metadata.",
            valueName: "path"))
    var compiledModel: String?

    @Flag(help: "Print the plan (steps, mappings, records to read) and change nothing.")
    var dryRun = false

    @Flag(
        help:
            "Print what the migration would do and change nothing: each step inferred or mapped, its policies, how each entity's rows move (INSERT … SELECT or row by row) and how many."
    )
    var plan = false

    @Option(help: ArgumentHelp("With --plan: text (default), json or html.", valueName: "format"))
    var format: PlanFormat = .text

    @Flag(help: "Do not keep the original store as a backup.")
    var noBackup = false

    @Flag(help: "Prove that copied values are unchanged with before/after checksums per entity.")
    var checksums = false

    @Option(
        help: ArgumentHelp(
            "Write a report: JSON, or a self-contained HTML page when the name ends in .html.",
            valueName: "file.json|file.html"))
    var report: String?

    @Option(
        name: .customLong("param"),
        help: ArgumentHelp("A value for $name in mapping expressions.", valueName: "name=value"))
    var parameters: [String] = []

    @Flag(help: "Print only errors.")
    var quiet = false

    func run() throws {
        try runReportingErrors {
            var global = GlobalOptions()
            global.parameters = parameters
            try CommandFiles.requireExistingStore(store)
            try CommandFiles.checkOutputs(
                store: store, inputs: [(model, "the model"), (compiledModel, "the compiled model")],
                outputs: [(report, "--report")])
            try MappingFolders.check(mappings)
            let bundle = try ModelLoader().load(path: model)
            var options = MigrationOptions(targetVersion: to, backup: !noBackup, registry: FerryCommandLine.registry)
            options.checksums = checksums
            options.compiledModel = try compiledModel.map(CompiledModelVersions.read)
            options.parameters = ParameterValue.typed(try global.parameterValues())
            let migrator = Migrator(
                storePath: store, bundle: bundle, options: options,
                mappingProvider: MigrationMappings.provider(
                    for: bundle, parameters: options.parameters, folders: mappings))
            let console = MigrationConsole(quiet: quiet)
            migrator.observer = console
            var runReport = RunReport(
                command: "migrate", job: "ferry migrate", jobFile: nil, store: store, model: bundle.name,
                modelVersion: to ?? bundle.currentVersion, dryRun: dryRun)
            var step = StepReport(index: 1, kind: "migrate", outcome: dryRun ? .dryRun : .succeeded)
            let started = ContinuousClock.now
            if plan {
                let summary = MigrationPlanSummary(try migrator.plan(), registry: FerryCommandLine.registry)
                switch format {
                case .json: try writeJSON(summary, to: "-")
                case .html:
                    try writeText(
                        HTMLPage.document(
                            title: "Migration plan of \(PathOrURL(store).shown)",
                            body:
                                "<h1>Migration plan of \(HTMLPage.escape(PathOrURL(store).shown))</h1>\n<p>Nothing has run, nothing was written.</p>\n"
                                + PlanPage.migration(summary)), to: "-")
                case .text:
                    print(
                        (["\(PathOrURL(store).shown): \(bundle.name), nothing has run, nothing was written"]
                            + PlanText.describe(summary)).joined(separator: "\n"))
                }
                return 0
            }
            if dryRun {
                let plan = try migrator.plan()
                if !quiet { print(MigrationConsole.describe(plan, store: PathOrURL(store).shown)) }
                for missing in options.registry.unregisteredPolicies(in: plan.steps) {
                    Console.printError("warning: the migration would be refused: \(missing)")
                }
                step.read = plan.steps.isEmpty ? 0 : plan.counts.values.reduce(0, +)
                step.elapsedSeconds = started.duration(to: .now).seconds
                runReport.steps = [step]
                runReport.finish(exitCode: 0)
                if let report { try writeReport(runReport, to: report) }
                return 0
            }
            let result: MigrationReport
            do {
                result = try migrator.run()
            } catch {
                step.outcome = .failed
                step.error = "\(error)"
                step.elapsedSeconds = started.duration(to: .now).seconds
                runReport.steps = [step]
                runReport.finish(exitCode: ExitStatus.code(for: error))
                if let report { try writeReport(runReport, to: report) }
                throw error
            }
            step.record(result)
            step.elapsedSeconds = started.duration(to: .now).seconds
            runReport.steps = [step]
            runReport.finish(exitCode: 0)
            if let report { try writeReport(runReport, to: report) }
            if !quiet {
                if result.steps.isEmpty {
                    print("\(PathOrURL(store).shown) is already at \(bundle.name) version \(result.toVersion)")
                } else {
                    for step in result.steps {
                        let written = step.entities.map { "\($0.destination) \(Console.grouped($0.written))" }.joined(
                            separator: ", ")
                        print(
                            "step \(step.from) → \(step.to)\(step.mappingFile.map { " (\($0))" } ?? " (inferred)"): \(written) in \(String(format: "%.2f", step.seconds)) s"
                        )
                    }
                    print(
                        "\(PathOrURL(store).shown): migrated from version \(result.fromVersion) to \(result.toVersion)\(result.backup.map { "; original kept as \($0)" } ?? "")"
                    )
                }
            }
            return 0
        }
    }
}

/// Progress of a migration on the console: a line per step (and per entity on a terminal).
final class MigrationConsole: MigrationObserver {
    let quiet: Bool
    let isTerminal: Bool
    private var lastDraw = ContinuousClock.now
    private var step = ""

    init(quiet: Bool) {
        self.quiet = quiet
        isTerminal = Console(quiet: quiet).isTerminal
    }

    func migrationStepStarted(_ index: Int, of total: Int, from: String, to: String) {
        step = "[\(index)/\(total)] \(from) → \(to)"
        if !quiet && !isTerminal {
            print("\(step) ...")
            fflush(nil)
        }
    }

    func migrationEntityStarted(_ mapping: String) {
        guard !quiet, isTerminal else { return }
        StandardStreams.error("\r\u{1B}[K\(step) \(mapping)")
    }

    func migrationProgress(mapping: String, processed: Int) {
        guard !quiet, isTerminal, ContinuousClock.now - lastDraw > .milliseconds(200) else { return }
        lastDraw = .now
        StandardStreams.error("\r\u{1B}[K\(step) \(mapping): \(Console.grouped(processed)) objects")
    }

    static func describe(_ plan: Migrator.Plan, store: String) -> String {
        var lines = ["\(store): \(plan.source.name) version \(plan.source.version) → \(plan.target.version)"]
        if plan.steps.isEmpty { lines.append("nothing to do: the store is at the target version") }
        for mapping in plan.steps {
            lines.append(
                "step \(mapping.source.version) → \(mapping.destination.version)\(mapping.location.map { " (mapping file \($0.file))" } ?? " (inferred)")"
            )
            for entity in mapping.entities {
                var line = "  \(entity.name)"
                if let source = entity.source {
                    line += " ← \(source)"
                    if mapping.source.version == plan.source.version, let count = plan.counts[source] {
                        line += " (\(Console.grouped(count)) records)"
                    }
                } else {
                    line += " (new, empty)"
                }
                if let filter = entity.filter { line += " where \(filter)" }
                if let distinct = entity.distinct { line += " distinct \(distinct)" }
                if let policy = entity.policy { line += " policy \(policy)" }
                lines.append(line)
                for attribute in entity.attributes {
                    switch attribute.value {
                    case .copy(let source, let conversion, _):
                        if source != attribute.destination || conversion != nil {
                            lines.append(
                                "    \(attribute.destination) ← \(source)\(conversion.map { " (\($0.from.rawValue) → \($0.to.rawValue))" } ?? "")"
                            )
                        }
                    case .expression(let text): lines.append("    \(attribute.destination) = \(text)")
                    case .constant(let value):
                        if !value.isNull { lines.append("    \(attribute.destination) = \(value) (default)") }
                    }
                }
                for relationship in entity.relationships {
                    switch relationship.value {
                    case .carry(let source):
                        if source != relationship.destination {
                            lines.append("    \(relationship.destination) ← \(source)")
                        }
                    case .keyPath(let path):
                        lines.append("    \(relationship.destination) ← \(path.joined(separator: "."))")
                    case .fromMapping(let name):
                        lines.append(
                            "    \(relationship.destination) → the \(name) made from the same \(entity.source ?? "object")"
                        )
                    case .none: lines.append("    \(relationship.destination) (empty)")
                    }
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// The `--mappings` folders of `migrate` and `check`.
enum MappingFolders {
    /// Throws a usage error for the first path that is not a folder.
    static func check(_ folders: [String]) throws {
        for folder in folders {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue
            else {
                throw FerryError(
                    .usage, "--mappings '\(folder)' is not a folder",
                    notes: ["give the folder that holds FROM-to-TO.yml files or .xcmappingmodel packages"])
            }
        }
    }
}
