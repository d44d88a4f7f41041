import FerryCore
import FerryFormats
import FerryPostgres
import FerryPostgresStore
import Foundation
import Logging

/// Runs a job's steps in order against its store and produces a ``RunReport``.
///
/// Stops at the first failed step (earlier steps stay committed: each step is its own
/// transaction). Never prints: progress goes to the ``ProgressObserver``.
public final class JobRunner {
    /// The job to run.
    public let job: Job
    /// The model version the job works with (``Job/model(in:)``).
    public let model: ObjectModel
    /// The model's bundle: needed by `migrate` steps and `migrate: auto`.
    public var bundle: ModelBundle?
    /// Where mapping files' policy names are looked up.
    public var registry: PolicyRegistry = .shared
    /// Check everything, then roll every step back (`--dry-run`).
    public var dryRun = false
    /// Continue the job's interrupted run (`--resume`): the steps before its interrupted
    /// `atomic: false` import completed then and are skipped; that import continues after its
    /// last committed batch, and the steps after it run.
    public var resume = false
    /// The command that resumes the job, named when a signal stops an `atomic: false` import.
    public var resumeCommand: String?
    /// With ``resume``: the step (1-based) the interrupted run stopped in.
    private var resumeAt: Int?
    /// Let `mode: sync` steps with an empty source delete every row (`--allow-empty-sync`).
    public var allowsEmptySync = false
    /// Receives progress while the job runs; held weakly.
    public weak var progress: (any ProgressObserver)?
    /// Readers to use instead of opening an import step's source, by step number (1-based):
    /// `ferry import` passes the one that replays the records its model was inferred from.
    package var readers: [Int: any RecordReader] = [:]
    /// Records imported per entity so far (for `equals: imported` in verify steps).
    private var imported: [String: (count: Int, steps: [Int])] = [:]
    /// Rows that rejected records of sync steps kept so far, per entity (for `equals: synced`).
    private var kept: [String: Int] = [:]

    /// A runner of `job` on `model`; `bundle` is needed by `migrate` steps and `migrate: auto`.
    public init(job: Job, model: ObjectModel, bundle: ModelBundle? = nil) {
        PostgreSQLEngine.register()
        self.job = job
        self.model = model
        self.bundle = bundle
    }

    /// True when the job migrates its store (a `migrate` step, or `migrate: auto`).
    var migrates: Bool {
        job.store.migrateAutomatically
            || job.steps.contains { if case .migrate = $0 { return true } else { return false } }
    }

    /// Opens (or creates) the job's store and runs every step.
    ///
    /// A job on a store file holds the store's writer lock from its first step to its last (a
    /// rebuild until its new store is swapped in): a second job on the same store waits for it,
    /// then sees everything it did.
    public func run() -> RunReport {
        var report = RunReport(
            command: "run", job: job.name, jobFile: job.path, store: job.store.path, model: model.name,
            modelVersion: model.version,
            dryRun: dryRun)
        // The store's name is classified here, once: what follows asks this value.
        let location = StoreLocation(job.store.path)
        // A dry run never creates the store: it works in a scratch store beside it, removed after.
        let scratch = dryRun && job.store.create && !FileManager.default.fileExists(atPath: job.store.path)
        let rebuild = (job.store.rebuild || scratch) && !job.store.isInMemory
        // A dry run of a job that migrates works on a copy: a migration cannot be rolled back.
        // So does one on a Core Data store, whose -wal and -shm an open in place would touch.
        let dryCopy =
            dryRun && !rebuild && (migrates || location.engine.capabilities.readsPrivateCopy)
            && !job.store.isInMemory
            && FileManager.default.fileExists(atPath: job.store.path)
        // The store's life (lock, work area, swap) is still written per work area; issue 24's next
        // step moves it behind the engine.
        if location.engine.capabilities.workArea == .workSchema { return runOnPostgreSQL(report) }
        var writerLock: StoreLock?
        defer { withExtendedLifetime(writerLock) {} }
        if !job.store.isInMemory {
            do {
                // Imports, updates, deletes, exports and verifies write or read a Core Data store in
                // place; migrating one is `ferry migrate`'s work.
                if migrates || job.store.migrateAutomatically {
                    try CoreDataStoreFile.refuseInPlace(job.store.path, command: "run")
                }
                // Before the lock file is made beside it: a store that cannot be written gets nothing.
                if !dryRun && FileManager.default.fileExists(atPath: job.store.path) {
                    try Store.checkWritable(job.store.path)
                }
            } catch {
                report.fail(step: 0, kind: "open", error: error)
                report.endedAt = RunReport.timestamp()
                return report
            }
        }
        if !job.store.isInMemory && !scratch {
            do {
                // A dry run creates no file: it takes the lock only when the store has its lock file.
                writerLock = try StoreLock.acquire(
                    for: job.store.path, timeout: .seconds(30), policy: dryRun ? .takeIfPresent : .take)
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
        var workPath =
            scratch
            ? NSTemporaryDirectory() + "/ferry-dry-run-\(workSuffix).sqlite"
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
            let shown =
                rebuild && !scratch
                ? "the new store being built for '\(job.store.path)'" : "the dry run's copy of '\(job.store.path)'"
            for index in report.steps.indices {
                report.steps[index].error = report.steps[index].error?
                    .replacingOccurrences(of: "'\(workPath)'", with: shown).replacingOccurrences(
                        of: workPath, with: shown)
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
                StoreFiles.removeWorkFile(StoreLock.lockPath(for: workPath))
            } else {
                Self.removeWorkFile(workPath)
            }
        }
        // Not in a `defer`: that would run after the returned copy was made.
        report.endedAt = RunReport.timestamp()
        return report
    }

    /// A store path for messages: a PostgreSQL URL without its password.
    static func shown(_ path: String) -> String {
        PathOrURL(path).shown
    }

    /// Opens the store the steps work on: an existing Core Data store in place, a new Core Data
    /// store for the job's model with `layout: coredata`, else a ferry store.
    private func openStore(at path: String, options: Store.Options) throws -> Store {
        let versions = bundle ?? ModelBundle(name: model.name, versions: [model], currentVersion: model.version)
        if let coreData = try Store.openCoreDataTarget(
            at: path, bundle: versions, creating: job.store.createsCoreDataStore ? model : nil,
            compiledModel: job.store.compiledModel, options: options)
        {
            return coreData
        }
        return try Store.open(at: path, model: model, options: options)
    }

    /// Removes a work file of this run with its companions and any lock file a step made for it.
    static func removeWorkFile(_ path: String) {
        StoreFiles.remove(path)
        StoreFiles.removeWorkFile(StoreLock.lockPath(for: path))
    }

    /// Removes the rebuild and dry-run files that killed runs left beside the store at `path`
    /// (`PATH.ferry-rebuild-…`, `PATH.ferry-dry-run-…` and their companions). Only called while
    /// holding the store's writer lock: no running job owns them then.
    static func removeWorkFiles(of path: String) {
        StoreFiles.removeLeftovers(of: path, marked: [StoreFiles.rebuildMark, StoreFiles.dryRunMark])
    }

    /// Runs the steps in segments: the steps between two `migrate` steps share one open store;
    /// a migration runs on the closed store file (it swaps the file), then the store reopens.
    func runSteps(storePath: String, create: Bool, into report: inout RunReport) {
        if resume {
            do {
                resumeAt = try interruptedStep(storePath: storePath)
            } catch {
                report.fail(step: 0, kind: "resume", error: error)
                return
            }
        }
        if job.store.migrateAutomatically, !job.store.isInMemory, (try? Store.exists(at: storePath)) == true {
            // Core Data's shouldMigrateStoreAutomatically: bring the store to the job's model first.
            let automatic = MigrateStep(to: model.version, backup: true, location: job.store.location)
            guard runMigration(automatic, index: 0, storePath: storePath, onlyIfNeeded: true, into: &report) else {
                return
            }
        }
        var start = 0
        while start < job.steps.count {
            if case .migrate(let step) = job.steps[start] {
                if let resumeAt, start + 1 < resumeAt {
                    report.steps.append(completedBeforeResume(index: start + 1, kind: "migrate", in: nil))
                    start += 1
                    continue
                }
                guard runMigration(step, index: start + 1, storePath: storePath, onlyIfNeeded: false, into: &report)
                else { return }
                start += 1
                continue
            }
            let end =
                job.steps[start...].firstIndex { if case .migrate = $0 { return true } else { return false } }
                ?? job.steps.count
            guard runSegment(start..<end, storePath: storePath, create: create, into: &report) else { return }
            start = end
        }
        report.outcome = dryRun ? "dry_run" : "succeeded"
    }

    /// The migrator of a `migrate` step on the store at `storePath`: the job's bundle, its
    /// parameters for the mapping files, and this runner's registry (`ferry run` and `ferry plan`).
    package func migrator(for step: MigrateStep, storePath: String) throws -> Migrator {
        guard let bundle else {
            throw FerryError(
                .invalidDefinition, "a migrate step needs the job's model to be a bundle of versions",
                at: step.location)
        }
        var options = MigrationOptions(
            targetVersion: step.to ?? model.version, backup: step.backup && !dryRun, registry: registry)
        options.checksums = false
        options.parameters = job.parameters
        return Migrator(
            storePath: storePath, bundle: bundle, options: options,
            mappingProvider: MigrationMappings.provider(for: bundle, parameters: job.parameters))
    }

    /// Runs a `migrate` step on the store file; false when it failed (recorded in the report).
    private func runMigration(
        _ step: MigrateStep, index: Int, storePath: String, onlyIfNeeded: Bool, into report: inout RunReport
    ) -> Bool {
        let started = ContinuousClock.now
        var stepReport = StepReport(index: index, kind: "migrate", entity: nil, source: nil)
        do {
            let migrator = try self.migrator(for: step, storePath: storePath)
            if onlyIfNeeded, try migrator.plan(countingObjects: false).steps.isEmpty { return true }
            progress?.stepStarted(
                index: index, of: job.steps.count,
                title: "migrate \(job.store.path) to version \(step.to ?? model.version)")
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
            report.failure = RunFailure(error)
            return false
        }
        stepReport.elapsedSeconds = started.duration(to: .now).seconds
        progress?.stepFinished(stepReport)
        report.steps.append(stepReport)
        return true
    }

    /// Runs the steps in `range` on one open store; false when a step failed.
    private func runSegment(_ range: Range<Int>, storePath: String, create: Bool, into report: inout RunReport) -> Bool
    {
        let store: Store
        do {
            var options = Store.Options(createIfMissing: create)
            // A rebuild's or dry run's work file: the job holds the lock of the store it stands for.
            options.writerLock = storePath != job.store.path ? .none : (dryRun ? .takeIfPresent : .take)
            store = try openStore(at: storePath, options: options)
        } catch {
            report.fail(step: 0, kind: "open", error: error)
            return false
        }
        return runSteps(range, on: store, into: &report)
    }

    /// Runs the job's steps on `store`, which the caller opened after settling its model:
    /// `ferry import` runs its one-step job this way, so that a flag and its job key run the same
    /// code. A job with `migrate` steps runs with ``run()``, on its store file. With ``resume``,
    /// the job's first import step continues its interrupted run (and refuses when there is none).
    package func run(on store: Store, into report: inout RunReport) {
        if migrates {
            report.fail(
                step: 0, kind: "open",
                error: FerryError(.internal, "a job that migrates its store runs on the store file, not an open store"))
            return
        }
        resumeAt = resume ? job.steps.firstIndex { if case .import = $0 { true } else { false } }.map { $0 + 1 } : nil
        guard runSteps(job.steps.indices, on: store, into: &report) else { return }
        report.outcome = dryRun ? "dry_run" : "succeeded"
    }

    /// Runs the steps in `range` on `store`; false when a step failed.
    private func runSteps(_ range: Range<Int>, on store: Store, into report: inout RunReport) -> Bool {
        if dryRun {
            // One transaction around every step, rolled back at the end: each step sees what the
            // steps before it would have written (orders find the customers imported before them).
            do {
                try store.withDatabase { try $0.beginWriting() }
            } catch {
                report.fail(step: 0, kind: "open", error: error)
                return false
            }
        }
        defer {
            if dryRun {
                store.withDatabase { connection in if connection.isInTransaction { try? connection.execute("ROLLBACK") }
                }
            }
        }
        for (offset, step) in job.steps.enumerated() where range.contains(offset) {
            if let resumeAt, offset + 1 < resumeAt {
                let done = completedBeforeResume(index: offset + 1, kind: step.kind, in: store)
                if case .import(let importStep) = step {
                    imported[importStep.entity, default: (0, [])].count += done.inserted + done.updated
                    imported[importStep.entity, default: (0, [])].steps.append(offset + 1)
                }
                report.steps.append(done)
                continue
            }
            switch step {
            case .import(let importStep):
                progress?.stepStarted(index: offset + 1, of: job.steps.count, title: importStep.title)
                let runner = ImportStepRunner(
                    step: importStep, store: store, index: offset + 1, jobName: job.name, reader: readers[offset + 1])
                runner.dryRun = dryRun
                runner.resume = offset + 1 == resumeAt
                runner.resumeCommand = resumeCommand
                runner.allowsEmptySync = allowsEmptySync
                runner.progress = progress
                let checkAfter = importStep.verify && !dryRun
                let before = checkAfter ? countBefore(importStep.entity, in: store) : nil
                var stepReport: StepReport
                do {
                    stepReport = try runner.run()
                } catch let failure as ImportStepFailure {
                    report.steps.append(failure.report)
                    report.outcome = "failed"
                    report.failure = RunFailure(failure.error)
                    return false
                } catch {
                    report.fail(step: offset + 1, kind: step.kind, error: error)
                    return false
                }
                imported[importStep.entity, default: (0, [])].count +=
                    stepReport.inserted + stepReport.updated + stepReport.unchanged
                imported[importStep.entity, default: (0, [])].steps.append(offset + 1)
                if let keptRows = stepReport.kept { kept[importStep.entity, default: 0] += keptRows }
                if checkAfter, stepReport.outcome == .succeeded {
                    // A resumed step's report counts the rows its interrupted run had inserted.
                    let checks = Self.afterImportChecks(
                        entity: importStep.entity, before: before.map { $0 - runner.insertedBeforeResume },
                        // Nested objects of the step's own entity (a person's nested mentees) are rows it added too.
                        inserted: stepReport.inserted + (stepReport.nested?[importStep.entity]?.inserted ?? 0),
                        deleted: stepReport.deleted)
                    let verification = Verifier(model: model).run(
                        checks, on: store, name: "step \(offset + 1) import \(importStep.entity)")
                    stepReport.verification = verification
                    stepReport.verification?.store = job.store.path
                    if let failure = stepReport.verification?.failure {
                        stepReport.outcome = .failed
                        stepReport.error = "\(failure)"
                        report.steps.append(stepReport)
                        report.outcome = "failed"
                        report.failure = .verificationFailed
                        return false
                    }
                }
                report.steps.append(stepReport)
            case .verify(let verifyStep):
                progress?.stepStarted(index: offset + 1, of: job.steps.count, title: "verify \(job.store.path)")
                var stepReport = StepReport(index: offset + 1, kind: "verify")
                let resolved = verifyStep.expectations.checks(model: model, imported: imported, kept: kept)
                if !resolved.problems.isEmpty {
                    stepReport.outcome = .failed
                    stepReport.error = FerryErrors(resolved.problems).description
                    report.steps.append(stepReport)
                    report.outcome = "failed"
                    report.failure = .error(.invalidDefinition)
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
                    report.failure = .verificationFailed
                    return false
                }
                progress?.stepFinished(stepReport)
                report.steps.append(stepReport)
            case .export(let exportStep):
                progress?.stepStarted(
                    index: offset + 1, of: job.steps.count, title: "export \(exportStep.entity) to \(exportStep.output)"
                )
                let runner = ExportStepRunner(step: exportStep, store: store, index: offset + 1)
                runner.dryRun = dryRun
                runner.progress = progress
                do {
                    report.steps.append(try runner.run())
                } catch let failure as ImportStepFailure {
                    report.steps.append(failure.report)
                    report.outcome = "failed"
                    report.failure = RunFailure(failure.error)
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
                    report.failure = runner.failure.map(RunFailure.init) ?? .stepFailed
                    return false
                }
            }
        }
        return true
    }

    /// The step the job's interrupted run stopped in: the first with an import checkpoint in the
    /// store. Throws when there is none (nothing to resume).
    private func interruptedStep(storePath: String) throws -> Int {
        if dryRun { throw FerryError(.usage, "--resume cannot be combined with --dry-run") }
        let nothing = FerryError(
            .usage, "no interrupted import of job \(job.name) to resume in \(job.store.path); run without --resume")
        guard job.store.isInMemory == false, try Store.exists(at: storePath) else { throw nothing }
        var options = Store.Options(createIfMissing: false)
        options.writerLock = .none
        let store = try Store.open(at: storePath, model: model, options: options)
        if store.layout.bookkeeping == nil {
            throw FerryError(
                .usage,
                "cannot resume job \(job.name): \(ImportStepRunner.noProgress); run the job again without --resume")
        }
        let step = try store.withDatabase { database in
            try ImportCheckpointLog(on: database, layout: store.layout)?.interruptedStep(job: job.name)
        }
        guard let step else { throw nothing }
        guard step <= job.steps.count, case .import = job.steps[step - 1] else {
            throw FerryError(
                .usage,
                "cannot resume job \(job.name): its run was interrupted in step \(step), which is no longer an import step; run without --resume"
            )
        }
        return step
    }

    /// The objects of `entity` before an import step, for the count check after it; nil (the check
    /// then compares nothing, and says why in the log) when they cannot be counted.
    private func countBefore(_ entity: String, in store: Store) -> Int? {
        do {
            return try entityCount(entity, in: store)
        } catch {
            FerryLog.job.notice(
                "no count check after importing \(entity): its objects could not be counted before: \(error)")
            return nil
        }
    }

    /// The report of a step that completed before the interrupted run stopped: its counts as the
    /// run log has them.
    private func completedBeforeResume(index: Int, kind: String, in store: Store?) -> StepReport {
        let logged = store.flatMap { store in
            try? store.withDatabase { connection in
                try RunLog(on: connection, layout: store.layout)?.recent(limit: nil).first {
                    $0.job == job.name && $0.stepIndex == index
                }
            }
        }
        var done = StepReport(index: index, kind: kind, entity: logged?.entity, source: logged?.source)
        if let logged {
            done.read = logged.read
            done.inserted = logged.inserted
            done.updated = logged.updated
            done.skipped = logged.skipped
            done.rejected = logged.rejected
        }
        progress?.stepFinished(done)
        return done
    }

    /// Replaces the store at `path` (and its companion files) with a copy of the one at `source`
    /// and its `-wal`, so that the copy holds everything committed to the original. When either
    /// is a PostgreSQL store, `ferry copy`'s machinery copies it (`StoreCopier`, replacing the
    /// store, verified by counts and checksums).
    static func copyStore(from source: String, to path: String) throws {
        if StoreLocation(source).isDatabaseServer || StoreLocation(path).isDatabaseServer {
            var copier = StoreCopier(from: source, to: path)
            copier.replacesExisting = true
            _ = try copier.run()
            return
        }
        guard FileManager.default.fileExists(atPath: source) else {
            throw FerryError(.io, "cannot copy the store '\(source)': No such file or directory")
        }
        StoreFiles.remove(path)
        do {
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
            try FileManager.default.copyItem(atPath: source, toPath: path)
            try FileIO.makeOwnerWritable(path)
            if FileManager.default.fileExists(atPath: source + "-wal") {
                try FileManager.default.copyItem(atPath: source + "-wal", toPath: path + "-wal")
                try FileIO.makeOwnerWritable(path + "-wal")
            }
        } catch {
            throw FerryError(.io, "cannot copy the store '\(source)' to '\(path)': \(FileErrorReason.describe(error))")
        }
    }

    /// The cheap checks run after an import step: the entity's count against the rows before
    /// the step plus those inserted (minus those a sync deleted), its foreign keys, its uniqueness constraints (answered from
    /// their unique indexes) and the model hash. `quick_check` is left out: on a large store it
    /// costs about as much as the import itself (see docs/benchmarks.md).
    package static func afterImportChecks(entity: String, before: Int?, inserted: Int, deleted: Int = 0) -> [Check] {
        var checks: [Check] = []
        if let before {
            let basis =
                "\(before) before the step + \(inserted) inserted" + (deleted > 0 ? " - \(deleted) deleted" : "")
            checks.append(.count(entity: entity, expectation: .exactly(before + inserted - deleted), basis: basis))
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
    /// Records a step that failed with `error`: the run fails with the error's kind of failure.
    mutating func fail(step index: Int, kind: String, error: any Error) {
        var failed = StepReport(index: index, kind: kind, outcome: .failed)
        failed.error = "\(error)"
        steps.append(failed)
        outcome = "failed"
        failure = RunFailure(error)
    }
}
