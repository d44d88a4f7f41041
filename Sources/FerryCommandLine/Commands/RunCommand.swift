import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Run a job file's steps against its store.")

    @Argument(help: ArgumentHelp("The job file.", valueName: "job.yml"))
    var job: String

    @OptionGroup var options: GlobalOptions

    @Option(
        help: ArgumentHelp(
            "Write a JUnit XML report of the run's checks (a test suite per verify step and per checked import).",
            valueName: "file.xml"))
    var junit: String?

    @Flag(
        help:
            "Continue the job's interrupted run: skip the steps it completed and resume its `atomic: false` import after the last committed batch."
    )
    var resume = false
    @Flag(
        help:
            "Let a mode: sync import step whose source is empty delete every row of its entity (refused by default, as a guard against a truncated nightly file)."
    )
    var allowEmptySync = false

    func run() throws {
        try runReportingErrors {
            let parameters = try options.parameterValues()
            let (job, model, bundle) = try loadAndValidate(jobPath: job, parameters: parameters)
            var files = JobValidator().files(of: job)
            files.output(options.report, role: "--report")
            files.output(junit, role: "--junit")
            for path in [options.report, junit].compactMap({ $0 }) {
                try PathOrURL.requireFile(path, role: path == junit ? "--junit" : "--report")
            }
            try files.check()
            let console = Console(quiet: options.quiet)
            let runner = JobRunner(job: job, model: model, bundle: bundle)
            runner.dryRun = options.dryRun
            runner.resume = resume
            runner.resumeCommand = ResumeCommandLine.text()
            runner.allowsEmptySync = allowEmptySync
            runner.registry = FerryCommandLine.registry
            runner.progress = console
            var report = runner.run()
            report.exitCode = ExitStatus.code(for: report.failure)
            if let path = options.report { try writeReport(report, to: path) }
            if let path = junit { try writeText(VerificationReport.junitXML(report.verificationReports), to: path) }
            for step in report.steps {
                guard let verification = step.verification else { continue }
                if !verification.succeeded {
                    console.line(Console.verificationTable(verification, onlyFailures: true))
                } else if step.kind == "verify" {
                    console.line(Console.verificationTable(verification))
                }
            }
            if let failed = report.steps.last(where: { $0.outcome == .failed }), let error = failed.error {
                Console.printError(error)
            } else if !options.quiet {
                console.line(
                    "\(job.name): \(report.outcome) (\(report.steps.count) step\(report.steps.count == 1 ? "" : "s")) → \(job.store.path)"
                )
            }
            return report.exitCode
        }
    }
}

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate", abstract: "Check a job, its model and its mappings without touching any data.")

    @Argument(help: ArgumentHelp("The job file.", valueName: "job.yml"))
    var job: String

    @Option(name: .customLong("param"), help: ArgumentHelp("A job parameter for ${name}.", valueName: "name=value"))
    var parameters: [String] = []

    func run() throws {
        try runReportingErrors {
            var options = GlobalOptions()
            options.parameters = parameters
            let (job, model, _) = try loadAndValidate(jobPath: job, parameters: try options.parameterValues())
            let missing = JobValidator().missingSources(job)
            if !missing.isEmpty { throw FerryErrors(missing) }
            print(
                "\(self.job): ok (\(job.steps.count) step\(job.steps.count == 1 ? "" : "s"), model \(model.name) version \(model.version))"
            )
            return 0
        }
    }
}

/// Loads a job and its model and checks them together; every problem is reported at once.
func loadAndValidate(jobPath: String, parameters: [String: String]) throws -> (Job, ObjectModel, ModelBundle) {
    let job = try JobLoader().load(path: jobPath, parameters: parameters)
    guard let modelPath = job.modelPath else {
        throw FerryError(
            .invalidDefinition, "the job names no model", at: InputLocation(file: jobPath, line: 1, column: 1))
    }
    let fileProblems = JobValidator().validateFiles(job)
    if !fileProblems.isEmpty { throw FerryErrors(fileProblems) }
    guard FileManager.default.fileExists(atPath: modelPath) else {
        throw FerryError(
            .invalidDefinition, "model '\(modelPath)' does not exist",
            at: job.modelLocation ?? InputLocation(file: jobPath, line: 1, column: 1))
    }
    let bundle = try ModelLoader().load(path: modelPath)
    let model = try job.model(in: bundle)
    let problems = JobValidator().validate(job, model: model) + JobValidator().validateMigrations(job, bundle: bundle)
    if !problems.isEmpty { throw FerryErrors(problems) }
    return (job, model, bundle)
}
