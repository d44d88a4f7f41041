import FerryCore
import Foundation
import Logging

/// Runs one `update` or `delete` step as a single transaction and reports its counts: `read` and
/// `updated` for an update (every selected record is changed), `deleted`, `cascade_deleted` and
/// `nullified` for a delete. A dry run does all of it, checks included, and rolls back.
package final class MutationStepRunner {
    package let step: Step
    package let store: Store
    package let index: Int
    package let jobName: String
    package var dryRun = false
    package weak var progress: (any ProgressObserver)?
    /// The error that failed the last run, if any.
    package private(set) var failure: (any Error)?

    package init(step: Step, store: Store, index: Int = 1, jobName: String) {
        self.step = step
        self.store = store
        self.index = index
        self.jobName = jobName
    }

    /// `update Customer where …`, for progress lines.
    package var title: String {
        switch step {
        case .update(let update): return "update \(update.entity)"
        case .delete(let delete): return "delete \(delete.entity)"
        default: return step.kind
        }
    }

    /// Runs the step; a failure is reported in the returned report (and kept in ``failure``).
    package func run() -> StepReport {
        let started = ContinuousClock.now
        let startedAt = DateCoding.nowText()
        var report = StepReport(index: index, kind: step.kind)
        var message: String?
        do {
            switch step {
            case .update(let update):
                report.entity = update.entity
                let result = try store.execute(update.request, dryRun: dryRun)
                report.read = result.updated
                report.updated = result.updated
            case .delete(let delete):
                report.entity = delete.entity
                let result = try store.execute(delete.request, dryRun: dryRun)
                report.deleted = result.deletedCount
                let cascaded = result.cascaded
                report.cascadeDeleted = cascaded.isEmpty ? nil : cascaded
                report.nullified = result.nullified.isEmpty ? nil : result.nullified
                message = Self.describe(result)
            default:
                throw FerryError(.internal, "MutationStepRunner cannot run a '\(step.kind)' step")
            }
            report.outcome = dryRun ? .dryRun : .succeeded
        } catch {
            failure = error
            report.outcome = .failed
            report.error = "\(error)"
            message = "\(error)"
        }
        report.elapsedSeconds = started.duration(to: .now).seconds
        let affected = report.updated + report.deleted + (report.cascadeDeleted?.values.reduce(0, +) ?? 0)
        report.recordsPerSecond = report.elapsedSeconds > 0 ? Double(affected) / report.elapsedSeconds : 0
        if !dryRun {
            do {
                try store.writeDatabase { connection in
                    try RunLog(on: connection, layout: store.layout)?.record(
                        RunRecord(
                            job: jobName, stepIndex: index, step: step.kind, entity: report.entity,
                            startedAt: startedAt,
                            endedAt: DateCoding.nowText(), outcome: report.outcome.rawValue, read: report.read,
                            updated: report.updated,
                            message: message))
                }
            } catch {
                // The step's outcome stands; the run log just misses it.
                FerryLog.job.notice("the \(step.kind) step \(index) was not recorded in the run log: \(error)")
            }
        }
        progress?.stepFinished(report)
        return report
    }

    /// `deleted 3 Customer; cascade: 5 Order; nullified: 2 Note.customer` for the runs table.
    static func describe(_ result: BatchDeleteResult) -> String {
        var text = "deleted \(result.deletedCount) \(result.entity)"
        if !result.cascaded.isEmpty {
            text +=
                "; cascade: "
                + result.cascaded.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        }
        if !result.nullified.isEmpty {
            text +=
                "; nullified: "
                + result.nullified.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        }
        return text
    }
}
