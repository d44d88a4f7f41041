import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the CLI's human output goes: a progress line on a terminal, plain lines otherwise
/// (cron, CI logs), nothing but errors with `--quiet`.
final class Console: ProgressObserver {
    let quiet: Bool
    let isTerminal: Bool
    private var title = ""
    private var started = ContinuousClock.now
    private var lastDraw = ContinuousClock.now
    private var drewProgress = false

    init(quiet: Bool) {
        self.quiet = quiet
        isTerminal = isatty(2) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb"
    }

    static func printError(_ text: String) {
        StandardStreams.error(text + "\n")
    }

    func line(_ text: String) {
        guard !quiet else { return }
        clearProgress()
        print(text)
        fflush(nil)
    }

    // MARK: ProgressObserver

    func stepStarted(index: Int, of total: Int, title: String) {
        self.title = "[\(index)/\(total)] \(title)"
        started = .now
        lastDraw = .now
        if !quiet && !isTerminal { line("\(self.title) ...") }
    }

    func stepProgress(read: Int, rejected: Int, fraction: Double?) {
        guard !quiet, isTerminal else { return }
        let now = ContinuousClock.now
        guard now - lastDraw > .milliseconds(200) else { return }
        lastDraw = now
        let elapsed = (now - started).seconds
        let rate = elapsed > 0 ? Int(Double(read) / elapsed) : 0
        let counts = Console.progressText(
            read: read, rate: rate, rejected: rejected, fraction: fraction, elapsed: elapsed)
        StandardStreams.error(
            "\r\u{1B}[K" + Console.fitted(title: title, counts: counts, columns: Console.terminalColumns()))
        drewProgress = true
    }

    func stepFinished(_ report: StepReport) {
        clearProgress()
        guard !quiet else {
            // A changed source is news even to cron: its mail carries standard error.
            for drift in report.drift ?? [] where drift.action != .error {
                Console.printError("warning: step \(report.index) import \(report.entity ?? ""): \(drift.summary)")
            }
            return
        }
        line(Console.summary(report))
    }

    /// The counts of the progress line: `  42%  1,234,567 records  250,000/s  3 rejected  0:12 left`;
    /// the percent and the time left only when the input's size is known (and, for the time
    /// left, once a little of it was read).
    static func progressText(read: Int, rate: Int, rejected: Int, fraction: Double?, elapsed: Double) -> String {
        var text = ""
        if let fraction { text += "  \(Int((fraction * 100).rounded(.down)))%" }
        text += "  \(grouped(read)) records  \(grouped(rate))/s  \(grouped(rejected)) rejected"
        if let fraction, fraction >= 0.01, fraction < 1, elapsed >= 1 {
            text += "  \(clock(elapsed * (1 - fraction) / fraction)) left"
        }
        return text
    }

    /// `m:ss`, or `h:mm:ss` from an hour on.
    static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(secs))" : "\(minutes):\(twoDigits(secs))"
    }

    /// The progress line cut to fit one terminal line (a wrapped line cannot be redrawn in
    /// place): the counts are kept, the title is shortened in its middle, with `…`.
    static func fitted(title: String, counts: String, columns: Int) -> String {
        let room = max(columns - 1, 10)  // the last column would make some terminals wrap
        if title.count + counts.count <= room { return title + counts }
        if counts.count >= room { return String(counts.prefix(room)) }
        let keep = room - counts.count - 1
        guard keep > 1 else { return String(counts.prefix(room)) }
        let head = (keep + 1) / 2
        let tail = keep - head
        return String(title.prefix(head)) + "…" + String(title.suffix(tail)) + counts
    }

    /// The width of the terminal on standard error (80 when it cannot be told).
    static func terminalColumns() -> Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 {
            return columns
        }
        return 80
    }

    private func clearProgress() {
        if drewProgress {
            StandardStreams.error("\r\u{1B}[K")
            drewProgress = false
        }
    }

    /// One line per step: what it read and what became of every record.
    static func summary(_ report: StepReport) -> String {
        var text = "step \(report.index) \(report.kind)"
        if let verification = report.verification, report.kind == "verify" {
            text += report.outcome == .failed ? " FAILED: " : ": "
            return text
                + "\(verification.tests) checks, \(verification.passed) passed, \(verification.failures) failed, \(verification.errors) errors, \(verification.skipped) skipped in \(String(format: "%.2f", report.elapsedSeconds)) s"
        }
        if let entity = report.entity { text += " \(entity)" }
        if let source = report.source { text += " from \(source)" }
        switch report.outcome {
        case .succeeded: text += report.kind == "export" ? " " : ": "
        case .dryRun: text += report.kind == "export" ? " (dry run, nothing written) " : " (dry run, rolled back): "
        case .failed: text += " FAILED: "
        }
        if report.kind == "migrate", let migration = report.migration {
            if migration.steps.isEmpty { return text + "already at version \(migration.toVersion)" }
            text += "version \(migration.fromVersion) → \(migration.toVersion), "
            text += (migration.steps.last?.entities ?? []).map { "\($0.destination) \(grouped($0.written))" }.joined(
                separator: ", ")
            text += " in \(String(format: "%.2f", report.elapsedSeconds)) s"
            if let backup = migration.backup { text += "; original kept as \(backup)" }
            return text
        }
        if report.kind == "export" {
            if let output = report.output { text += output == "-" ? "to standard output" : "to \(output)" }
            text += report.outcome == .failed ? "" : ", "
            text +=
                "read \(grouped(report.read)), written \(grouped(report.written)) in \(String(format: "%.2f", report.elapsedSeconds)) s"
            if report.outcome != .failed { text += " (\(grouped(Int(report.recordsPerSecond))) records/s)" }
            return text
        }
        if report.kind == "update" || report.kind == "delete" {
            if report.outcome == .failed { return text + "nothing was changed" }
            if report.kind == "update" {
                text += "updated \(grouped(report.updated))"
            } else {
                text += "deleted \(grouped(report.deleted))"
                text += deleteRuleEffects(report).map { ", \($0)" }.joined()
            }
            return text + " in \(String(format: "%.2f", report.elapsedSeconds)) s"
        }
        text +=
            "read \(grouped(report.read)), inserted \(grouped(report.inserted)), updated \(grouped(report.updated)), "
        if report.sync != nil {
            text += "unchanged \(grouped(report.unchanged)), deleted \(grouped(report.deleted)), "
        }
        text += "skipped \(grouped(report.skipped)), rejected \(grouped(report.rejected)) "
        text += "in \(String(format: "%.2f", report.elapsedSeconds)) s"
        if report.outcome != .failed { text += " (\(grouped(Int(report.recordsPerSecond))) records/s)" }
        if let rejects = report.rejectsFile, report.rejected > 0 { text += "; rejects in \(rejects)" }
        if let ignored = report.ignoredFields, !ignored.isEmpty {
            text += "; not imported (no attribute maps them): \(ignored.joined(separator: ", "))"
        }
        if let sync = report.sync { text += syncLines(sync, report: report) }
        if let incremental = report.incremental {
            text +=
                "\n  incremental \(incremental.column): from \(incremental.from ?? "the start") to \(incremental.to ?? "the start"), \(grouped(incremental.rows)) row\(incremental.rows == 1 ? "" : "s")"
        }
        if let selection = report.fileSelection {
            text +=
                "\n  files: \(grouped(selection.new)) new\(selection.changed > 0 ? " (\(grouped(selection.changed)) changed)" : ""), \(grouped(selection.alreadyImported)) already imported"
        }
        for drift in report.drift ?? [] { text += "\n  drift: \(drift.summary)" }
        for (entity, counts) in (report.nested ?? [:]).sorted(by: { $0.key < $1.key }) {
            text +=
                "\n  nested \(entity): inserted \(grouped(counts.inserted)), updated \(grouped(counts.updated)), unchanged \(grouped(counts.unchanged)), "
            text += "linked \(grouped(counts.linked)), unlinked \(grouped(counts.unlinked))"
        }
        // Several files: one line each, in reading order.
        for file in report.files ?? [] {
            text +=
                "\n  \(file.file): read \(grouped(file.read)), inserted \(grouped(file.inserted)), updated \(grouped(file.updated)), "
            text += "skipped \(grouped(file.skipped)), rejected \(grouped(file.rejected))"
        }
        return text
    }

    /// What delete rules did beside a step's own deletions: `cascade 3 Order`, `nullified 2 Order.customer`.
    private static func deleteRuleEffects(_ report: StepReport) -> [String] {
        var parts: [String] = []
        if let cascade = report.cascadeDeleted, !cascade.isEmpty {
            parts.append(
                "cascade "
                    + cascade.sorted { $0.key < $1.key }.map { "\(grouped($0.value)) \($0.key)" }.joined(
                        separator: ", "))
        }
        if let nullified = report.nullified, !nullified.isEmpty {
            parts.append(
                "nullified "
                    + nullified.sorted { $0.key < $1.key }.map { "\(grouped($0.value)) \($0.key)" }.joined(
                        separator: ", "))
        }
        return parts
    }

    /// A sync's cascades and nullifications, why it kept absent rows, and (in a dry run) the
    /// first keys it would insert, update and delete.
    private static func syncLines(_ sync: SyncReport, report: StepReport) -> String {
        var text = deleteRuleEffects(report).map { "; \($0)" }.joined()
        if let skipped = sync.deletionsSkipped { text += "\n  deleted nothing: \(skipped)" }
        if let kept = report.kept, kept > 0, report.outcome != .failed {
            text +=
                "\n  kept \(grouped(kept)) \(report.entity ?? "") row\(kept == 1 ? "" : "s") that rejected records stand for (a verify step's 'equals: synced' counts them)"
        }
        guard report.outcome == .dryRun else { return text }
        let absent = sync.deletionsSkipped == nil ? report.deleted : 0
        for (verb, count, keys) in [
            ("insert", report.inserted, sync.insertedKeys), ("update", report.updated, sync.updatedKeys),
            ("delete", absent, sync.deletedKeys),
        ] where count > 0 {
            text +=
                "\n  would \(verb) \(grouped(count)): \(keys.joined(separator: ", "))\(count > keys.count ? ", …" : "")"
        }
        return text
    }

    /// The checks of a report as a table (check, entity, outcome, measured, message), each failed
    /// check followed by its offending records, then a one-line summary.
    static func verificationTable(_ report: VerificationReport, onlyFailures: Bool = false) -> String {
        let shown = onlyFailures ? report.failedResults : report.results
        var rows: [[String]] = [["CHECK", "ENTITY", "OUTCOME", "MEASURED", "MESSAGE"]]
        for result in shown {
            rows.append([
                result.name, result.entity ?? "-", result.outcome.rawValue.uppercased(), result.measuredSummary,
                result.message,
            ])
        }
        var widths = [Int](repeating: 0, count: 4)
        for row in rows {
            for column in 0..<4 { widths[column] = min(max(widths[column], row[column].count), 48) }
        }
        var text = ""
        for (index, row) in rows.enumerated() {
            var line = ""
            for column in 0..<4 {
                let cell = row[column].count > 48 ? String(row[column].prefix(47)) + "…" : row[column]
                line += cell.padding(toLength: widths[column], withPad: " ", startingAt: 0) + "  "
            }
            text += line + row[4] + "\n"
            if index > 0 {
                for record in shown[index - 1].offending { text += "    - \(record)\n" }
            }
        }
        text +=
            "\(report.name): \(report.tests) checks, \(report.passed) passed, \(report.failures) failed, \(report.errors) errors, \(report.skipped) skipped in \(String(format: "%.2f", report.elapsedSeconds)) s\n"
        return text
    }

    static func grouped(_ value: Int) -> String {
        let digits = String(abs(value))
        var out = ""
        for (i, c) in digits.reversed().enumerated() {
            if i > 0 && i % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (value < 0 ? "-" : "") + String(out.reversed())
    }
}

/// Runs a command body, printing ferry errors as `file:line:column: error: …` and exiting with
/// the documented code.
func runReportingErrors(_ body: () throws -> Int32) throws {
    let code: Int32
    do {
        code = try body()
    } catch let error as FerryError {
        Console.printError(error.description)
        code = ExitStatus.code(for: error)
    } catch let errors as FerryErrors {
        Console.printError(errors.description)
        code = ExitStatus.code(for: errors)
    } catch let failure as ImportStepFailure {
        Console.printError("\(failure.error)")
        code = ExitStatus.code(for: failure)
    }
    if code != 0 { throw ExitCode(code) }
}
