import ArgumentParser
import FerryCore
import FerryFormats
import FerryPipeline
import Foundation

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import one CSV, JSON or NDJSON file into a store, without a job file.",
        discussion: """
            Without --model, ferry infers a one-entity model from the data the way sqlite-utils \
            does (column names from the header or keys, types from the first records) and records it \
            in the store; a later import of another file into the same store adds a table.
            """)

    @Argument(help: ArgumentHelp("The data file (- for standard input).", valueName: "file"))
    var file: String

    @Option(help: "The store to import into (created when missing).")
    var store: String

    @Option(help: "The destination entity (default: the file's base name).")
    var entity: String?

    @Option(help: "A model bundle or model file; without it the model is inferred or taken from the store.")
    var model: String?

    @Option(help: "csv, json or ndjson (default: from the extension).")
    var format: String?

    @Option(help: "error, update, keep or replace.")
    var onConflict: String = "error"

    @Option(help: ArgumentHelp("Write rejected records here (NDJSON).", valueName: "file"))
    var rejects: String?

    @Option(help: ArgumentHelp("How many rejected records are tolerated (a count or N%).", valueName: "n"))
    var maxRejects: String?

    @Option(help: ArgumentHelp("A JSON pointer to the records array.", valueName: "pointer"))
    var jsonPointer: String = ""

    @Option(help: ArgumentHelp("The CSV delimiter (use \\t for tab).", valueName: "char"))
    var delimiter: String = ","

    @Option(name: .customLong("type"), help: ArgumentHelp("Override an inferred type.", valueName: "column=TYPE"))
    var types: [String] = []

    @Option(name: .customLong("unique"), help: ArgumentHelp("Add a uniqueness constraint to an inferred model.", valueName: "column[,column]"))
    var unique: [String] = []

    @Option(help: "How many records to sample when inferring types.")
    var sample: Int = 1000

    @Flag(help: "Skip validation rules (types are still checked).")
    var noValidate = false

    @OptionGroup var options: GlobalOptions

    func run() throws {
        try runReportingErrors {
            guard let conflict = ConflictPolicy(rawValue: onConflict) else {
                throw FerryError(.usage, "--on-conflict must be one of error, update, keep, replace")
            }
            let formatName = format ?? URL(fileURLWithPath: file).pathExtension
            guard let dataFormat = DataFormat(name: formatName) ?? DataFormat(pathExtension: formatName) else {
                throw FerryError(.usage, "cannot tell the format of '\(file)'; pass --format csv|json|ndjson")
            }
            try PathOrURL.requireStore(store)
            try CommandFiles.checkOutputs(
                store: store, inputs: [(file, "the input"), (model, "the model")],
                outputs: [(rejects, "--rejects"), (options.report, "--report")])
            let entityName = entity ?? Self.identifier(from: file)
            var step = ImportStep(source: file, format: dataFormat, entity: entityName)
            step.onConflict = conflict
            step.validate = !noValidate
            if !jsonPointer.isEmpty && dataFormat != .json {
                throw FerryError(.usage, "--json-pointer applies to JSON documents, not to \(dataFormat.rawValue) input '\(file)'")
            }
            step.jsonPointer = jsonPointer
            step.rejectsPath = rejects
            step.csv.delimiter = try Self.delimiterByte(delimiter)
            step.maxRejects = try Self.budget(maxRejects, hasRejectsFile: rejects != nil)
            // Checked before any file is opened: a usage error is reported as one (exit 64).
            let overrides = try Self.typeOverrides(types)

            let console = Console(quiet: options.quiet)
            // Where the import goes: the store, or for a dry run that would create the store or add
            // a table to it, a scratch store (or copy) removed at the end: a dry run changes nothing.
            var target = store
            let scratch = NSTemporaryDirectory() + "/ferry-dry-run-\(UUID().uuidString).sqlite"
            defer {
                if target == scratch {
                    StoreFiles.remove(scratch)
                    try? FileManager.default.removeItem(atPath: StoreLock.lockPath(for: scratch))
                }
            }
            if options.dryRun && !FileManager.default.fileExists(atPath: store) { target = scratch }
            // Held from reading the store's model to the end of the import: the model read, the
            // table added and the rows imported all belong to the same file.
            let writerLock = target == store
                ? try StoreLock.acquire(for: store, timeout: .seconds(30), policy: options.dryRun ? .takeIfPresent : .take) : nil
            defer { withExtendedLifetime(writerLock) {} }
            var reader: (any RecordReader)? = nil
            let storeModel: ObjectModel
            if let model {
                storeModel = try ModelLoader().load(path: model).current
                guard storeModel.entity(named: entityName) != nil else {
                    throw FerryError(.usage, "model \(storeModel.name) has no entity '\(entityName)'; pass --entity (entities: \(storeModel.entityNames.joined(separator: ", ")))")
                }
            } else {
                let existing = FileManager.default.fileExists(atPath: store) ? try Store.metadata(at: store)?.model : nil
                if let existing, existing.entity(named: entityName) != nil {
                    storeModel = existing
                } else {
                    let sampled = try SampledReader(ReaderFactory.open(step: step), sampleSize: max(1, sample))
                    reader = sampled
                    let constraints = unique.map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
                    let inferred = ModelInference.inferEntity(named: entityName, fieldNames: sampled.fieldNames, samples: sampled.samples, overrides: overrides, unique: constraints)
                    if let existing {
                        var extended = existing
                        extended.entities.append(inferred)
                        extended.version = String((Int(existing.version) ?? 0) + 1)
                        try Self.check(extended)
                        if options.dryRun {
                            do {
                                try FileManager.default.copyItem(atPath: store, toPath: scratch)
                            } catch {
                                throw FerryError(.io, "cannot copy '\(store)' for the dry run: \(FileErrorReason.describe(error))")
                            }
                            target = scratch
                        }
                        try Store.addEntities([entityName], at: target, model: extended)
                        storeModel = extended
                    } else {
                        let created = ObjectModel(name: entityName, version: "1", entities: [inferred])
                        try Self.check(created)
                        storeModel = created
                    }
                    if !options.quiet {
                        console.line("inferred \(entityName): " + inferred.attributes.map { "\($0.name) \($0.type.rawValue)" }.joined(separator: ", "))
                    }
                }
            }
            var openOptions = Store.Options()
            openOptions.writerLock = options.dryRun ? (target == store ? .takeIfPresent : .none) : .take
            let opened = try Store.open(at: target, model: storeModel, options: openOptions)
            let runner = ImportStepRunner(step: step, store: opened, index: 1, jobName: "ferry import", reader: reader)
            runner.dryRun = options.dryRun
            runner.progress = console
            console.stepStarted(index: 1, of: 1, title: "import \(entityName) from \(file)")
            var report = RunReport(command: "import", job: "ferry import", jobFile: nil, store: store, model: storeModel.name, modelVersion: storeModel.version, dryRun: options.dryRun)
            do {
                report.steps = [try runner.run()]
                report.finish(exitCode: 0)
            } catch let failure as ImportStepFailure {
                report.steps = [failure.report]
                report.finish(exitCode: ExitStatus.code(for: failure))
                if let path = options.report { try writeJSON(report, to: path) }
                throw failure
            }
            if let path = options.report { try writeJSON(report, to: path) }
            return 0
        }
    }

    static func check(_ model: ObjectModel) throws {
        let problems = ModelChecker.check(model)
        if !problems.isEmpty { throw FerryErrors(problems) }
    }

    /// An identifier from a file's base name: `orders-2024.csv` → `orders_2024`.
    static func identifier(from path: String) -> String {
        let base = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        var name = String(base.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
        if name.isEmpty || name == "_" { name = "records" }
        if let first = name.first, first.isNumber { name = "_" + name }
        return name
    }

    static func delimiterByte(_ text: String) throws -> UInt8 {
        if text == "\\t" || text == "tab" { return UInt8(ascii: "\t") }
        guard text.utf8.count == 1, let byte = text.utf8.first else {
            throw FerryError(.usage, "--delimiter must be one character, got '\(text)'")
        }
        return byte
    }

    static func budget(_ text: String?, hasRejectsFile: Bool) throws -> RejectBudget {
        guard let text else { return hasRejectsFile ? .unlimited : .count(0) }
        if !hasRejectsFile && text != "0" {
            throw FerryError(.usage, "--max-rejects needs --rejects FILE: rejected records must go somewhere")
        }
        if text.hasSuffix("%"), let percent = Double(text.dropLast()) {
            guard (0...100).contains(percent) else {
                throw FerryError(.usage, "--max-rejects takes a percentage from 0% to 100%, got '\(text)'")
            }
            return .percent(percent)
        }
        if let count = Int(text), count >= 0 { return .count(count) }
        throw FerryError(.usage, "--max-rejects must be a count or a percentage like 1%, got '\(text)'")
    }

    static func typeOverrides(_ items: [String]) throws -> [String: AttributeType] {
        var result: [String: AttributeType] = [:]
        for item in items {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let type = AttributeType(name: parts[1]) else {
                throw FerryError(.usage, "--type needs column=TYPE with a type such as int64, decimal, date; got '\(item)'")
            }
            result[parts[0]] = type
        }
        return result
    }
}
