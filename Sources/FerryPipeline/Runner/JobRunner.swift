import FerryCore
import Foundation

/// Runs a job's steps in order against its store and produces a ``RunReport``.
///
/// Stops at the first failed step (earlier steps stay committed: each step is its own
/// transaction). Never prints: progress goes to the ``ProgressObserver``.
public final class JobRunner {
    public let job: Job
    public let model: ObjectModel
    /// The model's bundle: needed by `migrate` steps and `migrate: auto`.
    public var bundle: ModelBundle?
    /// Where mapping files' policy names are looked up.
    public var registry: PolicyRegistry = .shared
    public var dryRun = false
    public weak var progress: (any ProgressObserver)?
    /// Records imported per entity so far (for `equals: imported` in verify steps).
    private var imported: [String: (count: Int, steps: [Int])] = [:]

    public init(job: Job, model: ObjectModel, bundle: ModelBundle? = nil) {
        self.job = job
        self.model = model
        self.bundle = bundle
    }

    /// True when the job migrates its store (a `migrate` step, or `migrate: auto`).
    var migrates: Bool {
        job.store.migrateAutomatically || job.steps.contains { if case .migrate = $0 { return true } else { return false } }
    }

    /// Opens (or creates) the job's store and runs every step.
    ///
    /// A job on a store file holds the store's writer lock from its first step to its last (a
    /// rebuild until its new store is swapped in): a second job on the same store waits for it,
    /// then sees everything it did.
    public func run() -> RunReport {
        var report = RunReport(
            command: "run", job: job.name, jobFile: job.path, store: job.store.path, model: model.name, modelVersion: model.version,
            dryRun: dryRun)
        // A dry run never creates the store: it works in a scratch store beside it, removed after.
        let scratch = dryRun && job.store.create && !FileManager.default.fileExists(atPath: job.store.path)
        let rebuild = (job.store.rebuild || scratch) && !job.store.isInMemory
        // A dry run of a job that migrates works on a copy: a migration cannot be rolled back.
        let dryCopy = dryRun && !rebuild && migrates && !job.store.isInMemory && FileManager.default.fileExists(atPath: job.store.path)
        var writerLock: StoreLock?
        defer { withExtendedLifetime(writerLock) {} }
        if !job.store.isInMemory {
            do {
                try CoreDataStoreFile.refuseInPlace(job.store.path, command: "run")
            } catch {
                report.fail(step: 0, kind: "open", error: error)
                report.endedAt = RunReport.timestamp()
                return report
            }
        }
        if !job.store.isInMemory && !scratch {
            do {
                // A dry run creates no file: it takes the lock only when the store has its lock file.
                writerLock = try StoreLock.acquire(for: job.store.path, timeout: .seconds(30), policy: dryRun ? .takeIfPresent : .take)
            } catch {
                report.fail(step: 0, kind: "open", error: error)
                report.endedAt = RunReport.timestamp()
                return report
            }
            // Under the lock: work files a killed run of this job left behind belong to nobody.
            Self.removeWorkFiles(of: job.store.path)
        }
        // Work files are unique per run: two runs never share one, even without the lock (a dry run).
        let workSuffix = "\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
        // A dry run's scratch store lives in the temporary folder: the store's folder is not created.
        var workPath = scratch ? NSTemporaryDirectory() + "/ferry-dry-run-\(workSuffix).sqlite"
            : rebuild ? job.store.path + StoreFiles.rebuildMark + "-\(workSuffix)" : job.store.path
        if dryCopy {
            workPath = job.store.path + StoreFiles.dryRunMark + "-\(workSuffix)"
            do {
                try Self.copyStore(from: job.store.path, to: workPath)
            } catch {
                report.fail(step: 0, kind: "copy", error: error)
                report.endedAt = RunReport.timestamp()
                return report
            }
        }
        defer { if dryCopy { Self.removeWorkFile(workPath) } }
        if let copyFrom = job.store.copyFrom, !dryRun {
            do {
                try Self.copyStore(from: copyFrom, to: job.store.path)
            } catch {
                report.fail(step: 0, kind: "copy", error: error)
                report.endedAt = RunReport.timestamp()
                return report
            }
        }
        runSteps(storePath: workPath, create: rebuild || job.store.create, into: &report)
        if workPath != job.store.path {
            // Messages name the user's store, never ferry's hidden work file.
            let shown = rebuild && !scratch ? "the new store being built for '\(job.store.path)'" : "the dry run's copy of '\(job.store.path)'"
            for index in report.steps.indices {
                report.steps[index].error = report.steps[index].error?
                    .replacingOccurrences(of: "'\(workPath)'", with: shown).replacingOccurrences(of: workPath, with: shown)
            }
        }
        if rebuild {
            if report.outcome == "succeeded" {
                do {
                    try StoreFiles.replace(job.store.path, with: workPath)
                } catch {
                    Self.removeWorkFile(workPath)
                    report.fail(step: job.steps.count + 1, kind: "swap", error: error)
                }
                try? FileManager.default.removeItem(atPath: StoreLock.lockPath(for: workPath))
            } else {
                Self.removeWorkFile(workPath)
            }
        }
        // Not in a `defer`: that would run after the returned copy was made.
        report.endedAt = RunReport.timestamp()
        return report
    }

    /// Removes a work file of this run with its companions and any lock file a step made for it.
    static func removeWorkFile(_ path: String) {
        StoreFiles.remove(path)
        try? FileManager.default.removeItem(atPath: StoreLock.lockPath(for: path))
    }

    /// Removes the rebuild and dry-run files that killed runs left beside the store at `path`
    /// (`PATH.ferry-rebuild-…`, `PATH.ferry-dry-run-…` and their companions). Only called while
    /// holding the store's writer lock: no running job owns them then.
    static func removeWorkFiles(of path: String) {
        StoreFiles.removeLeftovers(of: path, marked: [StoreFiles.rebuildMark, StoreFiles.dryRunMark])
    }

    /// Runs the steps in segments: the steps between two `migrate` steps share one open store;
    /// a migration runs on the closed store file (it swaps the file), then the store reopens.
    private func runSteps(storePath: String, create: Bool, into report: inout RunReport) {
        if job.store.migrateAutomatically, !job.store.isInMemory, FileManager.default.fileExists(atPath: storePath) {
            // Core Data's shouldMigrateStoreAutomatically: bring the store to the job's model first.
            let automatic = MigrateStep(to: model.version, backup: true, location: job.store.location)
            guard runMigration(automatic, index: 0, storePath: storePath, onlyIfNeeded: true, into: &report) else { return }
        }
        var start = 0
        while start < job.steps.count {
            if case .migrate(let step) = job.steps[start] {
                guard runMigration(step, index: start + 1, storePath: storePath, onlyIfNeeded: false, into: &report) else { return }
                start += 1
                continue
            }
            let end = job.steps[start...].firstIndex { if case .migrate = $0 { return true } else { return false } } ?? job.steps.count
            guard runSegment(start..<end, storePath: storePath, create: create, into: &report) else { return }
            start = end
        }
        report.outcome = dryRun ? "dry_run" : "succeeded"
        report.exitCode = ExitStatus.success
    }

    /// Runs a `migrate` step on the store file; false when it failed (recorded in the report).
    private func runMigration(_ step: MigrateStep, index: Int, storePath: String, onlyIfNeeded: Bool, into report: inout RunReport) -> Bool {
        let started = ContinuousClock.now
        var stepReport = StepReport(index: index, kind: "migrate", entity: nil, source: nil)
        do {
            guard let bundle else {
                throw FerryError(.invalidDefinition, "a migrate step needs the job's model to be a bundle of versions", at: step.location)
            }
            var options = MigrationOptions(targetVersion: step.to ?? model.version, backup: step.backup && !dryRun, registry: registry)
            options.checksums = false
            options.parameters = job.parameters
            let migrator = Migrator(
                storePath: storePath, bundle: bundle, options: options,
                mappingProvider: MigrationMappings.provider(for: bundle, parameters: job.parameters))
            if onlyIfNeeded, try migrator.plan().steps.isEmpty { return true }
            progress?.stepStarted(index: index, of: job.steps.count, title: "migrate \(job.store.path) to version \(step.to ?? model.version)")
            let result = try migrator.run()
            stepReport.record(result)
            stepReport.outcome = dryRun ? .dryRun : .succeeded
        } catch {
            stepReport.outcome = .failed
            stepReport.error = "\(error)"
            stepReport.elapsedSeconds = started.duration(to: .now).seconds
            progress?.stepFinished(stepReport)
            report.steps.append(stepReport)
            report.outcome = "failed"
            report.exitCode = ExitStatus.code(for: error)
            return false
        }
        stepReport.elapsedSeconds = started.duration(to: .now).seconds
        progress?.stepFinished(stepReport)
        report.steps.append(stepReport)
        return true
    }

    /// Runs the steps in `range` on one open store; false when a step failed.
    private func runSegment(_ range: Range<Int>, storePath: String, create: Bool, into report: inout RunReport) -> Bool {
        let store: Store
        do {
            var options = Store.Options(createIfMissing: create)
            // A rebuild's or dry run's work file: the job holds the lock of the store it stands for.
            options.writerLock = storePath != job.store.path ? .none : (dryRun ? .takeIfPresent : .take)
            store = try Store.open(at: storePath, model: model, options: options)
        } catch {
            report.fail(step: 0, kind: "open", error: error)
            return false
        }
        if dryRun {
            // One transaction around every step, rolled back at the end: each step sees what the
            // steps before it would have written (orders find the customers imported before them).
            do {
                try store.withConnection { try $0.execute("BEGIN IMMEDIATE") }
            } catch {
                report.fail(step: 0, kind: "open", error: error)
                return false
            }
        }
        defer {
            if dryRun { store.withDatabase { connection in if connection.isInTransaction { try? connection.execute("ROLLBACK") } } }
        }
        for (offset, step) in job.steps.enumerated() where range.contains(offset) {
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
                    return false
                } catch {
                    report.fail(step: offset + 1, kind: step.kind, error: error)
                    return false
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
                        return false
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
                    return false
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
                    return false
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
                    return false
                } catch {
                    report.fail(step: offset + 1, kind: step.kind, error: error)
                    return false
                }
            case .migrate:
                continue  // run by `runSteps` between segments
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
                    return false
                }
            }
        }
        return true
    }

    /// Replaces the store at `path` (and its companion files) with a copy of the one at `source`
    /// and its `-wal`, so that the copy holds everything committed to the original.
    static func copyStore(from source: String, to path: String) throws {
        guard FileManager.default.fileExists(atPath: source) else {
            throw FerryError(.io, "cannot copy the store '\(source)': No such file or directory")
        }
        StoreFiles.remove(path)
        do {
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            try FileManager.default.copyItem(atPath: source, toPath: path)
            if FileManager.default.fileExists(atPath: source + "-wal") {
                try FileManager.default.copyItem(atPath: source + "-wal", toPath: path + "-wal")
            }
        } catch {
            throw FerryError(.io, "cannot copy the store '\(source)' to '\(path)': \(FileErrorReason.describe(error))")
        }
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
        try store.entityCount(entity)
    }
}

extension RunReport {
    /// Records a step that failed with `error`: the run fails with the error's exit code.
    mutating func fail(step index: Int, kind: String, error: any Error) {
        var failed = StepReport(index: index, kind: kind, outcome: .failed)
        failed.error = "\(error)"
        steps.append(failed)
        outcome = "failed"
        exitCode = ExitStatus.code(for: error)
    }
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
    /// Interrupted by SIGINT (130) or SIGTERM (143): 128 + the signal, as shells report it.
    public static func interrupted(by signal: Int32) -> Int32 { 128 + signal }
    /// `ferry model diff`: the versions differ in ways lightweight migration cannot infer; a
    /// mapping file (or a model fix) is needed.
    public static let needsMapping: Int32 = 65
    /// A source pattern matched no file (sysexits' EX_NOINPUT): nothing was read or touched.
    public static let noInput: Int32 = 66

    /// The exit code for an error.
    public static func code(for error: any Error) -> Int32 {
        if let failure = error as? ImportStepFailure { return code(for: failure.error) }
        if let errors = error as? FerryErrors { return errors.code.isConfiguration ? configuration : stepFailed }
        guard let error = error as? FerryError else { return stepFailed }
        if error.code == .rejectBudget { return rejectsOverBudget }
        if error.code == .verification { return verificationFailed }
        if error.code == .noInput { return noInput }
        if error.code == .cancelled { return interrupted(by: Interruption.signal ?? SIGINT) }
        if error.code.isConfiguration { return configuration }
        return stepFailed
    }
}
