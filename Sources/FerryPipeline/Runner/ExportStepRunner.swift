import FerryCore
import FerryFormats
import Foundation

/// Runs one `export` step: streams the rows of a fetch request through a ``RowWriter``.
///
/// A file output is written under a temporary name beside it and renamed into place when the
/// step succeeds, so a failed export never leaves a truncated file behind (standard output is
/// written as it goes). A dry run runs the query and counts the rows without writing anything.
public final class ExportStepRunner {
    public let step: ExportStep
    public let store: Store
    public let index: Int
    public weak var progress: (any ProgressObserver)?
    public var dryRun = false

    public init(step: ExportStep, store: Store, index: Int = 1) {
        self.step = step
        self.store = store
        self.index = index
    }

    /// Runs the step and returns its report; a failure is thrown as ``ImportStepFailure`` (the
    /// failed step's report with its error).
    public func run() throws -> StepReport {
        var report = StepReport(index: index, kind: "export", entity: step.entity)
        report.output = step.output
        let started = ContinuousClock.now
        let toFile = step.output != "-"
        let temporary = toFile ? Self.temporaryPath(for: step.output) : "-"
        do {
            try store.fetch(step.fetchRequest) { cursor in
                if dryRun {
                    while try cursor.advance() {
                        report.read += 1
                        if report.read & 16383 == 0 { progress?.stepProgress(read: report.read, rejected: 0) }
                    }
                    return
                }
                let output = try OutputFile(path: temporary, capacity: 1 << 18)
                let writer = RowWriter(output: output, format: Self.rowFormat(step.format), columns: cursor.columns, delimiter: step.csvDelimiter)
                try writer.begin()
                while try cursor.advance() {
                    try writer.write(cursor)
                    report.read += 1
                    if report.read & 16383 == 0 { progress?.stepProgress(read: report.read, rejected: 0) }
                }
                try writer.finish()
                try output.close()
                report.written = writer.count
            }
            if toFile && !dryRun { try Self.moveIntoPlace(temporary, step.output) }
            report.outcome = dryRun ? .dryRun : .succeeded
        } catch {
            if toFile { try? FileManager.default.removeItem(atPath: temporary) }
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

    static func rowFormat(_ format: DataFormat) -> RowWriter.Format {
        switch format {
        case .csv: return .csv
        case .json: return .json
        case .ndjson: return .ndjson
        }
    }

    static func temporaryPath(for path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).ferry-\(getpid())").path
    }

    static func moveIntoPlace(_ temporary: String, _ path: String) throws {
        if rename(temporary, path) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: temporary)
            throw FerryError(.io, "cannot write '\(path)': \(reason)", at: InputLocation(file: path))
        }
    }
}
