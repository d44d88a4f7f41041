import FerryCore
import Foundation

/// Runs a job's steps in order against its store and produces a ``RunReport``.
///
/// Stops at the first failed step (earlier steps stay committed: each step is its own
/// transaction). Never prints: progress goes to the ``ProgressObserver``.
public final class JobRunner {
    public let job: Job
    public let model: ObjectModel
    public var dryRun = false
    /// Where migrate steps look up the custom policies and stage hooks their mappings name
    /// (`ferry run` passes the registry its command line was started with).
    public var policies: PolicyRegistry = .shared
    public weak var progress: (any ProgressObserver)?

    public init(job: Job, model: ObjectModel) {
        self.job = job
        self.model = model
    }

    /// Opens (or creates) the job's store and runs every step.
    public func run() -> RunReport {
        var report = RunReport(
            job: job.name, jobFile: job.path, store: job.store.path, model: model.name, modelVersion: model.version,
            dryRun: dryRun, startedAt: Self.now())
        // A dry run never creates the store: it works in a scratch store beside it, removed after.
        let scratch = dryRun && job.store.create && !FileManager.default.fileExists(atPath: job.store.path)
        let rebuild = (job.store.rebuild || scratch) && !job.store.isInMemory
        let workPath = rebuild ? job.store.path + ".ferry-rebuild" : job.store.path
        if rebuild { StoreFiles.remove(workPath) }
        runSteps(storePath: workPath, create: rebuild || job.store.create, into: &report)
        if rebuild {
            if report.outcome == "succeeded" {
                do {
                    try StoreFiles.replace(job.store.path, with: workPath)
                } catch {
                    report.outcome = "failed"
                    report.exitCode = ExitStatus.code(for: error)
                    var failed = StepReport(index: job.steps.count + 1, kind: "swap", outcome: .failed)
                    failed.error = "\(error)"
                    report.steps.append(failed)
                }
            } else {
                StoreFiles.remove(workPath)
            }
        }
        // Not in a `defer`: that would run after the returned copy was made.
        report.endedAt = Self.now()
        return report
    }

    private func runSteps(storePath: String, create: Bool, into report: inout RunReport) {
        let store: Store
        do {
            store = try Store.open(at: storePath, model: model, options: Store.Options(createIfMissing: create))
        } catch {
            report.outcome = "failed"
            report.exitCode = ExitStatus.code(for: error)
            var failed = StepReport(index: 0, kind: "open", outcome: .failed)
            failed.error = "\(error)"
            report.steps.append(failed)
            return
        }
        if dryRun {
            // One transaction around every step, rolled back at the end: each step sees what the
            // steps before it would have written (orders find the customers imported before them).
            do {
                try store.withConnection { try $0.execute("BEGIN IMMEDIATE") }
            } catch {
                report.outcome = "failed"
                report.exitCode = ExitStatus.code(for: error)
                var failed = StepReport(index: 0, kind: "open", outcome: .failed)
                failed.error = "\(error)"
                report.steps.append(failed)
                return
            }
        }
        defer {
            if dryRun { store.withConnection { connection in if connection.isInTransaction { try? connection.execute("ROLLBACK") } } }
        }
        var imported: [String: (count: Int, steps: [Int])] = [:]
        for (offset, step) in job.steps.enumerated() {
            switch step {
            case .import(let importStep):
                progress?.stepStarted(index: offset + 1, of: job.steps.count, title: "import \(importStep.entity) from \(importStep.source)")
                let runner = ImportStepRunner(step: importStep, store: store, index: offset + 1, jobName: job.name)
                runner.dryRun = dryRun
                runner.progress = progress
                let checkAfter = importStep.verify && !dryRun
                let before = checkAfter ? (try? entityCount(importStep.entity, in: store)) : nil
                var stepReport: StepReport
                do {
                    stepReport = try runner.run()
                } catch let failure as ImportStepFailure {
                    report.steps.append(failure.report)
                    report.outcome = "failed"
                    report.exitCode = ExitStatus.code(for: failure.error)
                    return
                } catch {
                    var failed = StepReport(index: offset + 1, kind: step.kind, outcome: .failed)
                    failed.error = "\(error)"
                    report.steps.append(failed)
                    report.outcome = "failed"
                    report.exitCode = ExitStatus.code(for: error)
                    return
                }
                imported[importStep.entity, default: (0, [])].count += stepReport.inserted + stepReport.updated
                imported[importStep.entity, default: (0, [])].steps.append(offset + 1)
                if checkAfter, stepReport.outcome == .succeeded {
                    let checks = Self.afterImportChecks(entity: importStep.entity, before: before, inserted: stepReport.inserted)
                    let verification = Verifier(model: model).run(checks, on: store, name: "step \(offset + 1) import \(importStep.entity)")
                    stepReport.verification = verification
                    stepReport.verification?.store = job.store.path
                    if let failure = stepReport.verification?.failure {
                        stepReport.outcome = .failed
                        stepReport.error = "\(failure)"
                        report.steps.append(stepReport)
                        report.outcome = "failed"
                        report.exitCode = ExitStatus.verificationFailed
                        return
                    }
                }
                report.steps.append(stepReport)
            case .verify(let verifyStep):
                progress?.stepStarted(index: offset + 1, of: job.steps.count, title: "verify \(job.store.path)")
                var stepReport = StepReport(index: offset + 1, kind: "verify")
                let resolved = verifyStep.expectations.checks(model: model, imported: imported)
                if !resolved.problems.isEmpty {
                    stepReport.outcome = .failed
                    stepReport.error = FerryErrors(resolved.problems).description
                    report.steps.append(stepReport)
                    report.outcome = "failed"
                    report.exitCode = ExitStatus.configuration
                    return
                }
                let verification = Verifier(model: model, maxOffending: verifyStep.maxOffending).run(
                    resolved.checks, on: store, name: "step \(offset + 1) verify")
                stepReport.verification = verification
                stepReport.verification?.store = job.store.path
                stepReport.elapsedSeconds = verification.elapsedSeconds
                if let failure = stepReport.verification?.failure {
                    stepReport.outcome = .failed
                    stepReport.error = "\(failure)"
                    progress?.stepFinished(stepReport)
                    report.steps.append(stepReport)
                    report.outcome = "failed"
                    report.exitCode = ExitStatus.verificationFailed
                    return
                }
                progress?.stepFinished(stepReport)
                report.steps.append(stepReport)
            case .export(let exportStep):
                progress?.stepStarted(index: offset + 1, of: job.steps.count, title: "export \(exportStep.entity) to \(exportStep.output)")
                let runner = ExportStepRunner(step: exportStep, store: store, index: offset + 1)
                runner.dryRun = dryRun
                runner.progress = progress
                do {
                    report.steps.append(try runner.run())
                } catch let failure as ImportStepFailure {
                    report.steps.append(failure.report)
                    report.outcome = "failed"
                    report.exitCode = ExitStatus.code(for: failure.error)
                    return
                } catch {
                    var failed = StepReport(index: offset + 1, kind: step.kind, outcome: .failed)
                    failed.error = "\(error)"
                    report.steps.append(failed)
                    report.outcome = "failed"
                    report.exitCode = ExitStatus.code(for: error)
                    return
                }
            case .update, .delete:
                let runner = MutationStepRunner(step: step, store: store, index: offset + 1, jobName: job.name)
                runner.dryRun = dryRun
                runner.progress = progress
                progress?.stepStarted(index: offset + 1, of: job.steps.count, title: runner.title)
                let stepReport = runner.run()
                report.steps.append(stepReport)
                if stepReport.outcome == .failed {
                    report.outcome = "failed"
                    report.exitCode = runner.failure.map { ExitStatus.code(for: $0) } ?? ExitStatus.stepFailed
                    return
                }
            }
        }
        report.outcome = dryRun ? "dry_run" : "succeeded"
        report.exitCode = ExitStatus.success
    }

    /// The cheap checks run after an import step: the entity's count against the rows before
    /// the step plus those inserted, its foreign keys, its uniqueness constraints (answered from
    /// their unique indexes) and the model hash. `quick_check` is left out: on a large store it
    /// costs about as much as the import itself (see docs/benchmarks.md).
    public static func afterImportChecks(entity: String, before: Int?, inserted: Int) -> [Check] {
        var checks: [Check] = []
        if let before {
            checks.append(.count(entity: entity, expectation: .exactly(before + inserted), basis: "\(before) before the step + \(inserted) inserted"))
        } else {
            checks.append(.count(entity: entity, expectation: nil))
        }
        checks += [.foreignKeys(entity: entity), .uniqueness(entity: entity), .modelHash(expected: nil)]
        return checks
    }

    private func entityCount(_ entity: String, in store: Store) throws -> Int {
        try store.read { Int(try $0.scalar("SELECT count(*) FROM \(SQL.quote(StoreLayout.table(forEntityNamed: entity)))")?.int64 ?? 0) }
    }

    static func now() -> String { DateCoding.format(Int64(Date().timeIntervalSince1970 * 1000)) }
}

/// ferry's documented exit codes.
public enum ExitStatus {
    /// Everything succeeded.
    public static let success: Int32 = 0
    /// A step failed (unreadable input, a store error, a failed migration).
    public static let stepFailed: Int32 = 1
    /// A step rejected more records than its `max_rejects` allows (and was rolled back).
    public static let rejectsOverBudget: Int32 = 2
    /// A verification check failed.
    public static let verificationFailed: Int32 = 3
    /// The job, model, mapping or command line is wrong; nothing was touched.
    public static let configuration: Int32 = 64
    /// `ferry model diff`: the versions differ in ways lightweight migration cannot infer; a
    /// mapping file (or a model fix) is needed.
    public static let needsMapping: Int32 = 65

    /// The exit code for an error.
    public static func code(for error: any Error) -> Int32 {
        if let failure = error as? ImportStepFailure { return code(for: failure.error) }
        if let errors = error as? FerryErrors { return errors.code.isConfiguration ? configuration : stepFailed }
        guard let error = error as? FerryError else { return stepFailed }
        if error.code == .rejectBudget { return rejectsOverBudget }
        if error.code == .verification { return verificationFailed }
        if error.code.isConfiguration { return configuration }
        return stepFailed
    }
}
