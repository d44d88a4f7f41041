import FerryCore
import FerryFormats
import Foundation

/// Runs one `export` step: streams the rows of a fetch request through a ``RowWriter``.
///
/// A regular file is written under a temporary name beside it and renamed into place when the
/// step succeeds, so a failed export never leaves a truncated file behind; standard output, FIFOs
/// and devices are written as it goes (see ``ExportDestination``). A dry run runs the query and
/// counts the rows without writing or creating anything.
package final class ExportStepRunner {
    package let step: ExportStep
    package let store: Store
    package let index: Int
    package weak var progress: (any ProgressObserver)?
    package var dryRun = false

    package init(step: ExportStep, store: Store, index: Int = 1) {
        self.step = step
        self.store = store
        self.index = index
    }

    /// Runs the step and returns its report; a failure is thrown as ``ImportStepFailure`` (the
    /// failed step's report with its error).
    package func run() throws -> StepReport {
        var report = StepReport(index: index, kind: "export", entity: step.entity)
        report.output = step.output
        let started = ContinuousClock.now
        var destination: ExportDestination?
        do {
            if !dryRun { destination = try ExportDestination(step.output) }
            try store.fetch(step.fetchRequest) { cursor in
                if dryRun {
                    while try cursor.advance() {
                        report.read += 1
                        if report.read & 16383 == 0 {
                            progress?.stepProgress(read: report.read, rejected: 0, fraction: nil)
                        }
                    }
                    return
                }
                guard let destination else { return }
                let output = try destination.open(capacity: 1 << 18)
                let writer = RowWriter(
                    output: output, format: try Self.rowFormat(step.format), columns: cursor.columns,
                    delimiter: step.csvDelimiter)
                try writer.begin()
                while try cursor.advance() {
                    try writer.write(cursor)
                    report.read += 1
                    if report.read & 16383 == 0 {
                        progress?.stepProgress(read: report.read, rejected: 0, fraction: nil)
                    }
                }
                try writer.finish()
                try output.close()
                report.written = writer.count
            }
            try destination?.commit()
            report.outcome = dryRun ? .dryRun : .succeeded
        } catch {
            destination?.discard()
            report.outcome = .failed
            report.written = 0
            report.error = "\(error)"
            report.elapsedSeconds = started.duration(to: .now).seconds
            progress?.stepFinished(report)
            throw ImportStepFailure(report: report, error: error)
        }
        report.elapsedSeconds = started.duration(to: .now).seconds
        report.recordsPerSecond = report.elapsedSeconds > 0 ? Double(report.read) / report.elapsedSeconds : 0
        progress?.stepFinished(report)
        return report
    }

    static func rowFormat(_ format: DataFormat) throws -> RowWriter.Format {
        switch format {
        case .csv: return .csv
        case .json: return .json
        case .ndjson: return .ndjson
        case .fixed: throw FerryError(.invalidDefinition, DataFormat.fixedExportMessage)
        }
    }
}
