import FerryCore
import FerryFormats
import FerryPipeline
import FerryPostgres
import Foundation

/// Writes a report as pretty, key-sorted JSON (to standard output for `-`).
func writeJSON(_ value: some Encodable, to path: String) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    let data: Data
    do {
        data = try encoder.encode(value)
    } catch {
        throw FerryError(.internal, "cannot encode the report for '\(path)': \(error)")
    }
    try writeText(String(decoding: data, as: UTF8.self) + "\n", to: path)
}

/// Writes a run's report: an HTML page when `path` ends in `.html` or `.htm` (the same
/// ``RunReport`` the JSON report encodes, as one self-contained page), else JSON.
func writeReport(_ report: RunReport, to path: String) throws {
    let lowercased = path.lowercased()
    if lowercased.hasSuffix(".html") || lowercased.hasSuffix(".htm") {
        var rejects: [Int: [RunReportPage.RejectGroup]] = [:]
        for step in report.steps where step.rejected > 0 && step.outcome != .dryRun {
            if let file = step.rejectsFile { rejects[step.index] = RunReportPage.rejectGroups(file: file) }
        }
        try writeText(RunReportPage.render(report, rejects: rejects), to: path)
    } else {
        try writeJSON(report, to: path)
    }
}

/// Writes a report file (to standard output for `-`) the way exports are written: a regular file
/// is replaced only once complete, a FIFO or device is written in place, and a failure names the
/// file and the cause.
///
/// Passwords written into PostgreSQL URLs are replaced by `***` (`PostgresURL.redactingPasswords`).
func writeText(_ text: String, to path: String) throws {
    let destination = try ExportDestination(path)
    do {
        let output = try destination.open()
        try output.write(PostgresURL.redactingPasswords(in: text))
        try output.close()
        try destination.commit()
    } catch {
        destination.discard()
        throw error
    }
}
