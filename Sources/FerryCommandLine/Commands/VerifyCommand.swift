import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract:
            "Check a store: counts, integrity, foreign keys, uniqueness, required values, types, validation rules, relationships, model hash, and expectations.",
        discussion: """
            Exit codes: 0 every check passed · 3 a check failed · 64 a bad model, expectations file or option.
            Without --model the store is read with the model it records; with --model the store must be at \
            the bundle's current version (model_hash check). A Core Data store is read from a private copy, \
            with the version of --model it is at (else the model it caches); its model_hash check is skipped: \
            see docs/coredata.md.
            """)

    @Argument(help: ArgumentHelp("The store file.", valueName: "store"))
    var store: String

    @Option(help: ArgumentHelp("The model bundle (or model file) the store must be at.", valueName: "bundle"))
    var model: String?

    @Option(
        help: ArgumentHelp("An expectations file: counts, assertions, records (docs/files.md).", valueName: "file.yml"))
    var expect: String?

    @Option(
        help: ArgumentHelp(
            "Built-in checks: all, cheap (counts, quick_check, foreign keys, model hash) or none. Default: the expectations file's 'checks', else all.",
            valueName: "level"))
    var checks: String?

    @Option(help: ArgumentHelp("Offending records listed per check.", valueName: "n"))
    var maxOffending: Int = 5

    @Option(
        help: ArgumentHelp(
            "Write a report: JSON, or a self-contained HTML page when the name ends in .html.",
            valueName: "file.json|file.html"))
    var report: String?

    @Option(help: ArgumentHelp("Write a JUnit XML report (one test case per check).", valueName: "file.xml"))
    var junit: String?

    @Flag(help: "Print only failed checks (nothing when all pass).")
    var quiet = false

    func run() throws {
        try runReportingErrors {
            let level = try checks.map { name -> CheckLevel in
                guard let level = CheckLevel(rawValue: name) else {
                    throw FerryError(.usage, "--checks takes all, cheap or none, not '\(name)'")
                }
                return level
            }
            try CommandFiles.requireExistingStore(store)
            try CommandFiles.checkOutputs(
                store: store, inputs: [(model, "the model"), (expect, "the expectations file")],
                outputs: [(report, "--report"), (junit, "--junit")])
            // A Core Data store is read from a private copy, at the version of --model it is at
            // (none matching is an error), else with the model it caches.
            let coreDataStore =
                try StoreLocation(store).engine.capabilities.readsPrivateCopy
                ? Store.openCoreData(at: store, bundle: model.map { try ModelLoader().load(path: $0) }) : nil
            var expected: ObjectModel?
            var structure: ObjectModel?
            if let coreDataStore {
                structure = coreDataStore.model
            } else {
                guard let metadata = try Store.metadata(at: store) else {
                    throw FerryError(.store, "'\(store)' is not a ferry store (it has no ferry metadata)")
                }
                structure = metadata.model
                if let model {
                    let bundle = try ModelLoader().load(path: model)
                    expected = bundle.current
                    // Read the tables with the version the store is at, when the bundle has it.
                    structure =
                        bundle.versions.first { $0.versionHash == metadata.modelHash } ?? structure ?? bundle.current
                }
            }
            guard let structure else {
                throw FerryError(.store, "'\(store)' records no readable model; give --model")
            }
            var expectations = try expect.map { try ExpectationsLoader().load(path: $0) } ?? Expectations()
            if let level { expectations.checks = level }
            let resolved = expectations.checks(model: structure)
            if !resolved.problems.isEmpty { throw FerryErrors(resolved.problems) }
            var list = resolved.checks
            if let expected {
                list = list.map { check in
                    if case .modelHash = check { return .modelHash(expected: expected) }
                    return check
                }
            }
            // Found by the engine conformance suite: --model adds the model_hash check at every
            // level, also on a Core Data store (there skipped, naming the version it matched), which
            // under --checks none listed no check at all where a ferry store listed this one.
            if model != nil, !list.contains(where: { $0.kind == "model_hash" }) {
                list.append(.modelHash(expected: expected))
            }
            let opened =
                try coreDataStore
                ?? Store.open(
                    at: store, model: structure,
                    options: Store.Options(createIfMissing: false, allowModelMismatch: true, readOnly: true))
            let result = Verifier(model: structure, maxOffending: maxOffending).run(list, on: opened)
            let exitCode = result.succeeded ? ExitStatus.success : ExitStatus.verificationFailed
            if let report {
                var runReport = RunReport(
                    command: "verify", job: "ferry verify", jobFile: nil, store: store, model: structure.name,
                    modelVersion: structure.version,
                    dryRun: false, startedAt: result.timestamp)
                runReport.steps = [.verify(index: 1, verification: result)]
                runReport.finish(exitCode: exitCode)
                try writeReport(runReport, to: report)
            }
            if let junit { try writeText(VerificationReport.junitXML([result]), to: junit) }
            // --quiet: nothing when every check passed, else only the failed checks.
            if !quiet || !result.succeeded {
                print(Console.verificationTable(result, onlyFailures: quiet), terminator: "")
            }
            return exitCode
        }
    }
}
