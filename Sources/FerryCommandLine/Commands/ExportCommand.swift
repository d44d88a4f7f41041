import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export the records of one entity as CSV, JSON or NDJSON, without a job file.",
        discussion: """
            The store's own model (recorded in its metadata) is used unless --model is given. \
            A Core Data store is read from a private copy (its files are never opened), with the \
            version of --model it is at, else the model it caches: see docs/coredata.md. \
            --fetch NAME exports what the model's stored fetch request NAME fetches (its entity, \
            predicate and limit; --where narrows it, --limit overrides its limit). \
            To-one relationships are written as the related object's unique key. Values are \
            written losslessly: see docs/export.md.
            """)

    @Option(help: "The store to export from.")
    var store: String

    @Option(help: "The entity to export (or --fetch).")
    var entity: String?

    @Option(help: ArgumentHelp("A fetch request stored in the model, by name.", valueName: "name"))
    var fetch: String?

    @Option(
        name: .customLong("where"), help: ArgumentHelp("A predicate in NSPredicate syntax.", valueName: "predicate"))
    var predicate: String?

    @Option(help: ArgumentHelp("A sort key, optionally :desc; repeat for several.", valueName: "key[:desc]"))
    var sort: [String] = []

    @Option(help: ArgumentHelp("The key paths to write, comma-separated.", valueName: "a,b,customer.email"))
    var fields: String?

    @Option(help: "Write at most this many records.")
    var limit: Int?

    @Option(help: "Skip this many records first.")
    var offset: Int = 0

    @Option(help: "csv, tsv, json or ndjson (default: from the output's extension; .tsv writes tabs).")
    var format: String?

    @Option(help: ArgumentHelp("The output file (default: standard output).", valueName: "file"))
    var output: String = "-"

    @Option(help: "A model bundle or model file to read the store with (default: the store's own model).")
    var model: String?

    @Flag(help: "Count the records that would be written, and write nothing.")
    var dryRun = false

    @Option(
        help: ArgumentHelp(
            "Write a report: JSON, or a self-contained HTML page when the name ends in .html.",
            valueName: "file.json|file.html"))
    var report: String?

    @Flag(help: "Print only errors.")
    var quiet = false

    func run() throws {
        try runReportingErrors {
            let formatName = format ?? (output == "-" ? nil : URL(fileURLWithPath: output).pathExtension)
            guard let formatName else {
                throw FerryError(.usage, "--format is needed when writing to standard output (csv, json, ndjson)")
            }
            guard
                let dataFormat = DataFormat(name: formatName)
                    ?? (format == nil ? DataFormat(pathExtension: formatName) : nil)
            else {
                throw FerryError(
                    .usage,
                    format == nil
                        ? "cannot tell the format of '\(output)' from its extension; pass --format csv|json|ndjson"
                        : "unknown format '\(formatName)' (csv, json, ndjson)\(Suggestions.didYouMean(formatName, in: ["csv", "json", "ndjson"]))"
                )
            }
            if dataFormat == .fixed { throw FerryError(.usage, DataFormat.fixedExportMessage) }
            if format != nil, output != "-",
                let implied = DataFormat(pathExtension: URL(fileURLWithPath: output).pathExtension),
                implied != dataFormat, !quiet
            {
                Console.printError(
                    "warning: writing \(dataFormat.rawValue) to '\(output)', whose extension says \(implied.rawValue)")
            }
            try CommandFiles.requireExistingStore(store)
            try CommandFiles.checkOutputs(
                store: store, inputs: [(model, "the model")], outputs: [(output, "--output"), (report, "--report")])
            // A Core Data store is read from a private copy, at the version of --model it is at.
            let coreDataStore =
                try StoreLocation(store).engine.capabilities.readsPrivateCopy
                ? Store.openCoreData(at: store, bundle: model.map { try ModelLoader().load(path: $0) }) : nil
            let storeModel: ObjectModel
            if let coreDataStore {
                storeModel = coreDataStore.model
            } else if let model {
                storeModel = try ModelLoader().load(path: model).current
            } else {
                guard let metadata = try Store.metadata(at: store) else {
                    throw FerryError(
                        .store, "'\(store)' is not a ferry store (it has no ferry_metadata table); pass --model")
                }
                guard let recorded = metadata.model else {
                    throw FerryError(.store, "store '\(store)' does not record its model; pass --model")
                }
                storeModel = recorded
            }
            let filter = try predicate.map { text throws(FerryError) in
                try Predicate(format: text, location: InputLocation(file: "--where", line: 1, column: 1))
            }
            var step: ExportStep
            if let fetch {
                step = try ExportStep.fetching(
                    fetch, in: storeModel, entity: entity, predicate: filter, limit: limit, format: dataFormat,
                    output: output)
            } else {
                guard let entity else {
                    throw FerryError(
                        .usage, "pass --entity (the entity to export) or --fetch (a fetch request of the model)")
                }
                step = ExportStep(entity: entity, format: dataFormat, output: output)
                step.entityLocation = InputLocation(file: "--entity")
                step.predicate = filter
                step.limit = limit
            }
            if let delimiter = DataFormat.impliedDelimiter(formatName) { step.csvDelimiter = delimiter }
            step.sort = try sort.map { text throws(FerryError) in
                try SortDescriptor.parse(text, location: InputLocation(file: "--sort", line: 1, column: 1))
            }
            if let fields {
                step.fields = FetchProperty.list(fields, location: InputLocation(file: "--fields", line: 1, column: 1))
                if step.fields?.isEmpty ?? true { throw FerryError(.usage, "--fields names no key paths") }
            }
            if let limit, limit < 0 { throw FerryError(.usage, "--limit must be 0 or more, not \(limit)") }
            if offset < 0 { throw FerryError(.usage, "--offset must be 0 or more, not \(offset)") }
            step.offset = offset
            // Check the request before opening anything for writing.
            try step.fetchRequest.check(model: storeModel)

            let opened =
                try coreDataStore
                ?? Store.open(
                    at: store, model: storeModel, options: Store.Options(createIfMissing: false, readOnly: true))
            let runner = ExportStepRunner(step: step, store: opened, index: 1)
            runner.dryRun = dryRun
            var runReport = RunReport(
                command: "export", job: "ferry export", jobFile: nil, store: store, model: storeModel.name,
                modelVersion: storeModel.version, dryRun: dryRun)
            do {
                let stepReport = try runner.run()
                runReport.steps = [stepReport]
                runReport.finish(exitCode: 0)
                if !quiet { Console.printError(Console.summary(stepReport)) }
            } catch let failure as ImportStepFailure {
                runReport.steps = [failure.report]
                runReport.finish(exitCode: ExitStatus.code(for: failure))
                if let path = report { try writeReport(runReport, to: path) }
                throw failure
            }
            if let path = report { try writeReport(runReport, to: path) }
            return 0
        }
    }
}
