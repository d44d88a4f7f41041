import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

/// Options shared by `ferry update` and `ferry delete`.
struct MutationOptions: ParsableArguments {
    @Option(help: "The store to change.")
    var store: String

    @Option(help: "The entity whose objects change.")
    var entity: String

    @Option(
        name: .customLong("where"),
        help: ArgumentHelp("A predicate selecting the objects (TRUEPREDICATE for all).", valueName: "predicate"))
    var predicate: String

    @Option(help: "A model bundle or model file (default: the model recorded in the store).")
    var model: String?

    /// True when the store is a Core Data store (written in place, its layout detected).
    var isCoreDataStore: Bool { StoreLocation(store).isCoreData }

    /// Copies a Core Data store and its `-wal` to `scratch` (for a dry run); returns `scratch`.
    static func copyCoreDataStore(_ store: String, to scratch: String) throws -> String {
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: store + suffix) {
            do {
                try FileManager.default.copyItem(atPath: store + suffix, toPath: scratch + suffix)
            } catch {
                throw FerryError(
                    .io, "cannot copy '\(store + suffix)' for the dry run: \(FileErrorReason.describe(error))")
            }
        }
        return scratch
    }

    /// The store's model (or `--model`) and the parsed predicate, located at `--where`.
    func load(options: GlobalOptions, command: String) throws -> (ObjectModel, FerryCore.Predicate) {
        try CommandFiles.requireExistingStore(store)
        // Written in place: refused before any file is made beside it when it cannot be.
        if !options.dryRun { try Store.checkWritable(store) }
        try CommandFiles.checkOutputs(
            store: store, inputs: [(model, "the model")], outputs: [(options.report, "--report")])
        let objectModel: ObjectModel
        if isCoreDataStore {
            objectModel = try Store.coreDataModel(
                of: CoreDataStoreFile.read(store), bundle: model.map { try ModelLoader().load(path: $0) })
        } else if let model {
            objectModel = try ModelLoader().load(path: model).current
        } else {
            guard let recorded = try Store.metadata(at: store)?.model else {
                throw FerryError(.usage, "'\(store)' records no model; pass --model")
            }
            objectModel = recorded
        }
        let parsed = try FerryCore.Predicate(
            format: predicate, location: InputLocation(file: "--where", line: 1, column: 1))
        return (objectModel, parsed)
    }

    /// Checks the step's request against the model, runs it against the store and prints its
    /// summary line; the `--report` is written whether the step ran or its request was refused.
    func run(
        _ step: Step, check: () throws -> Void, model: ObjectModel, options: GlobalOptions, command: String
    ) throws -> Int32 {
        var report = RunReport(
            command: command, job: "ferry \(command)", jobFile: nil, store: store, model: model.name,
            modelVersion: model.version, dryRun: options.dryRun)
        do {
            try check()
        } catch {
            var failed = StepReport(index: 1, kind: step.kind, entity: entity, outcome: .failed)
            failed.error = "\(error)"
            report.steps = [failed]
            report.finish(exitCode: ExitStatus.code(for: error))
            if let path = options.report { try writeReport(report, to: path) }
            throw error
        }
        var openOptions = Store.Options(createIfMissing: false)
        openOptions.writerLock = options.dryRun ? .takeIfPresent : .take  // a dry run creates no file
        let scratch = NSTemporaryDirectory() + "/ferry-dry-run-\(UUID().uuidString).sqlite"
        defer { StoreFiles.remove(scratch) }
        let opened: Store
        if isCoreDataStore {
            // A dry run changes a copy of the Core Data store and its -wal, never the store.
            let target = options.dryRun ? try Self.copyCoreDataStore(store, to: scratch) : store
            if options.dryRun { openOptions.writerLock = .none }
            opened = try Store.openCoreDataForWriting(
                at: target, bundle: self.model.map { try ModelLoader().load(path: $0) }, options: openOptions)
        } else {
            opened = try Store.open(at: store, model: model, options: openOptions)
        }
        let console = Console(quiet: options.quiet)
        let runner = MutationStepRunner(step: step, store: opened, index: 1, jobName: report.job)
        runner.dryRun = options.dryRun
        runner.progress = console
        console.stepStarted(index: 1, of: 1, title: runner.title)
        report.steps = [runner.run()]
        report.finish(exitCode: runner.failure.map { ExitStatus.code(for: $0) } ?? 0)
        if let path = options.report { try writeReport(report, to: path) }
        if let failure = runner.failure { throw failure }
        return 0
    }
}

struct UpdateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Change attributes of the objects a predicate selects (a batch update), without a job file.",
        discussion: """
            --set name=value sets a constant (converted to the attribute's type; name= sets nil); \
            --set 'name==expression' computes it with a value expression over the object's attributes \
            (the language of mapping files; a bare name is an attribute), e.g. \
            --set 'email==lowercase(trim(email))'. See docs/update-delete.md.
            """)

    @OptionGroup var target: MutationOptions

    @Option(
        name: .customLong("set"),
        help: ArgumentHelp("An attribute's new value: name=constant or name==expression.", valueName: "name=value"))
    var assignments: [String] = []

    @Flag(help: "Skip the model's validation rules for the new values.")
    var noValidate = false

    @OptionGroup var options: GlobalOptions

    func run() throws {
        try runReportingErrors {
            guard !assignments.isEmpty else { throw FerryError(.usage, "give at least one --set name=value") }
            let (model, predicate) = try target.load(options: options, command: "update")
            var values: [String: BatchUpdateRequest.PropertyValue] = [:]
            for (index, item) in assignments.enumerated() {
                guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
                    throw FerryError(.usage, "--set needs name=value or name==expression, got '\(item)'")
                }
                let name = String(item[..<equals])
                guard values[name] == nil else {
                    throw FerryError(
                        .usage, "--set gives '\(name)' twice (#\(index + 1) '\(item)'); set each attribute once")
                }
                let rest = item[item.index(after: equals)...]
                if rest.hasPrefix("=") {
                    let location = InputLocation(file: "--set #\(index + 1)", line: 1, column: name.utf8.count + 3)
                    values[name] = .expression(
                        try Expression.parse(String(rest.dropFirst()), location: location, bareNamesAreAttributes: true)
                    )
                } else {
                    values[name] = .constant(rest.isEmpty ? .null : .string(String(rest)))
                }
            }
            let step = UpdateStep(entity: target.entity, predicate: predicate, values: values, validate: !noValidate)
            return try target.run(
                .update(step), check: { try step.request.check(model: model) }, model: model, options: options,
                command: "update")
        }
    }
}

struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract:
            "Delete the objects a predicate selects (a batch delete), applying the model's delete rules, without a job file."
    )

    @OptionGroup var target: MutationOptions

    @Flag(
        help:
            "Delete only the selected rows, as Core Data's NSBatchDeleteRequest does (fails if other objects refer to them)."
    )
    var ignoreDeleteRules = false

    @OptionGroup var options: GlobalOptions

    func run() throws {
        try runReportingErrors {
            let (model, predicate) = try target.load(options: options, command: "delete")
            let step = DeleteStep(
                entity: target.entity, predicate: predicate, deleteRules: ignoreDeleteRules ? .ignore : .apply)
            return try target.run(
                .delete(step), check: { try step.request.check(model: model) }, model: model, options: options,
                command: "delete")
        }
    }
}
