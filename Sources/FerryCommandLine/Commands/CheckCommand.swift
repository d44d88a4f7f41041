import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "CI mode: prove that every snapshot store still migrates to the current model with its data intact.",
        discussion: """
            For each snapshot (a store file, or a folder of .sqlite files; ferry stores and Core Data \
            stores) ferry copies it to a temporary place (the snapshot is never modified), detects its \
            version, migrates the copy to the bundle's current version step by step (mappings as for \
            ferry migrate, --mappings folders first) with before/after checksums of every value copied \
            unchanged, and runs every verification check plus the expectations file. Each snapshot is \
            one test suite in the JUnit report, with a test case per version step. Exits 3 when any check fails, 1 when a snapshot \
            cannot be migrated.
            """)

    @Argument(help: ArgumentHelp("Snapshot stores, or folders of them.", valueName: "snapshot"))
    var snapshots: [String]

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
        name: .customLong("param"),
        help: ArgumentHelp("A value for $name in mapping expressions.", valueName: "name=value"))
    var parameters: [String] = []

    @Option(
        help: ArgumentHelp(
            "Expectations to check after migrating (counts, assertions, records).", valueName: "file.yml"))
    var expect: String?

    @Option(help: ArgumentHelp("Write a JUnit XML report (a test suite per snapshot).", valueName: "file.xml"))
    var junit: String?

    @Option(
        help: ArgumentHelp(
            "Write a report: JSON, or a self-contained HTML page when the name ends in .html.",
            valueName: "file.json|file.html"))
    var report: String?

    @Flag(help: "Print only failures.")
    var quiet = false

    func validate() throws {
        if snapshots.isEmpty { throw ValidationError("name at least one snapshot store or folder") }
    }

    func run() throws {
        try runReportingErrors {
            try CommandFiles.checkOutputs(
                store: nil,
                inputs: snapshots.map { ($0, "the snapshot") } + [
                    (model, "the model"), (expect, "the expectations file"),
                ],
                outputs: [(report, "--report"), (junit, "--junit")])
            try MappingFolders.check(mappings)
            let bundle = try ModelLoader().load(path: model)
            var global = GlobalOptions()
            global.parameters = parameters
            var checker = SnapshotChecker(bundle: bundle, registry: FerryCommandLine.registry)
            checker.targetVersion = to
            checker.parameters = ParameterValue.typed(try global.parameterValues())
            checker.mappingProvider = MigrationMappings.provider(
                for: bundle, parameters: checker.parameters, folders: mappings)
            if let expect { checker.expectations = try ExpectationsLoader().load(path: expect) }
            let paths = try snapshots.flatMap { try SnapshotChecker.snapshots(at: $0) }
            var runReport = RunReport(
                command: "check", job: "ferry check", jobFile: nil, store: paths.joined(separator: ", "),
                model: bundle.name,
                modelVersion: to ?? bundle.currentVersion, dryRun: false)
            var reports: [VerificationReport] = []
            for path in paths {
                let result = checker.check(snapshot: path)
                reports.append(result)
                let outcome = result.succeeded ? "ok" : "FAILED"
                if !quiet || !result.succeeded {
                    print(
                        "\(path): \(outcome) (\(result.passed) passed, \(result.failures) failed, \(result.errors) errors, \(result.skipped) skipped in \(String(format: "%.2f", result.elapsedSeconds)) s)"
                    )
                }
                for failed in result.failedResults {
                    print("  \(failed.name)\(failed.entity.map { " [\($0)]" } ?? ""): \(failed.message)")
                    for record in failed.offending.prefix(5) {
                        print("    " + record.summaryLine)
                    }
                }
            }
            if let junit {
                try writeText(VerificationReport.junitXML(reports, name: "ferry check", suiteKind: "check"), to: junit)
            }
            let failed = reports.filter { !$0.succeeded }
            if !quiet || !failed.isEmpty {
                print(
                    "\(reports.count - failed.count) of \(reports.count) snapshot\(reports.count == 1 ? "" : "s") passed"
                )
            }
            let migrationFailed = failed.contains {
                $0.results.contains {
                    ($0.check == "migrate" || $0.check == "version" || $0.check == "copy") && $0.isFailure
                }
            }
            let exitCode =
                failed.isEmpty
                ? ExitStatus.success : migrationFailed ? ExitStatus.stepFailed : ExitStatus.verificationFailed
            if let report {
                runReport.steps = reports.enumerated().map { index, verification in
                    var step = StepReport.verify(index: index + 1, verification: verification)
                    step.source = paths[index]
                    return step
                }
                runReport.finish(exitCode: exitCode)
                try writeReport(runReport, to: report)
            }
            return exitCode
        }
    }
}
