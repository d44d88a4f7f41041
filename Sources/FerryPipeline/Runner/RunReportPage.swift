import FerryCore
import Foundation

/// The HTML run report (`--report run.html`): one self-contained page made from the same
/// ``RunReport`` value the JSON report encodes, so the two never disagree. It shows the run,
/// each step with its counts, the throughput of the steps over the run's time as an inline SVG
/// chart, the verification checks, the migrations and the errors.
package enum RunReportPage {
    /// Rejected records of one step that share a field and a reason (the reason's quoted
    /// values set aside), with the first few of them.
    package struct RejectGroup: Sendable, Hashable {
        /// The field the records were rejected for (empty for a whole-record problem).
        package var field: String
        /// The reason, with quoted values shown as three dots in quotes.
        package var reason: String
        /// How many records.
        package var count: Int
        /// The first records: their record and line numbers in the source.
        package var examples: [String]
    }

    /// The groups of the rejects file at `path` (ferry's NDJSON rejects: record, line, field,
    /// reason), largest first; reads at most `limit` lines, and nothing of the records' values.
    package static func rejectGroups(file path: String, limit: Int = 100_000) -> [RejectGroup] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        var groups: [String: RejectGroup] = [:]
        var order: [String] = []
        for line in text.split(separator: "\n").prefix(limit) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                continue
            }
            let field = object["field"] as? String ?? ""
            let reason = (object["reason"] as? String ?? "").replacingOccurrences(
                of: "'[^']*'", with: "'…'", options: .regularExpression)
            let key = field + "\u{0}" + reason
            if groups[key] == nil {
                groups[key] = RejectGroup(field: field, reason: reason, count: 0, examples: [])
                order.append(key)
            }
            groups[key]?.count += 1
            if let record = object["record"] as? Int, (groups[key]?.examples.count ?? 0) < 3 {
                groups[key]?.examples.append(
                    "record \(record)\((object["line"] as? Int).map { " (line \($0))" } ?? "")")
            }
        }
        return order.compactMap { groups[$0] }.sorted { $0.count > $1.count }
    }

    /// The page of `report`; `rejects` holds each step's ``RejectGroup``s by step index.
    package static func render(_ report: RunReport, rejects: [Int: [RejectGroup]] = [:]) -> String {
        let escape = HTMLPage.escape
        var body = "<h1>\(escape(report.job)): \(escape(report.outcome))</h1>\n"
        var facts: [[String]] = [["exit code", "\(report.exitCode)"], ["store", escape(report.store)]]
        if let file = report.jobFile { facts.append(["job file", escape(file)]) }
        if let model = report.model {
            facts.append(["model", escape(model + (report.modelVersion.map { " version \($0)" } ?? ""))])
        }
        facts.append(["started", escape(report.startedAt)])
        if let ended = report.endedAt { facts.append(["ended", escape(ended)]) }
        if report.dryRun { facts.append(["dry run", "yes: nothing was kept"]) }
        body += HTMLPage.table(header: ["", ""], rows: facts)

        body += "<h2>Steps</h2>\n"
        let columns: [(String, (StepReport) -> String)] = [
            ("read", { "\($0.read)" }), ("inserted", { "\($0.inserted)" }), ("updated", { "\($0.updated)" }),
            ("unchanged", { "\($0.unchanged)" }), ("skipped", { "\($0.skipped)" }),
            ("rejected", { "\($0.rejected)" }), ("written", { "\($0.written)" }), ("deleted", { "\($0.deleted)" }),
            ("seconds", { String(format: "%.3f", $0.elapsedSeconds) }),
            ("records/s", { String(format: "%.0f", $0.recordsPerSecond) }),
        ]
        let rows = report.steps.map { step -> [String] in
            let outcome = "<span class=\"\(step.outcome == .failed ? "failed" : "ok")\">\(step.outcome.rawValue)</span>"
            return ["\(step.index)", escape(step.kind), escape(step.entity ?? ""), escape(step.source ?? ""), outcome]
                + columns.map { $0.1(step) }
        }
        body += HTMLPage.table(
            header: ["#", "step", "entity", "source", "outcome"] + columns.map(\.0), rows: rows,
            numeric: Set(5..<(5 + columns.count)))

        body += "<h2>Throughput over the run</h2>\n<figure>\n\(throughputChart(report.steps))</figure>\n"

        let rejecting = report.steps.filter { $0.rejected > 0 }
        if !rejecting.isEmpty {
            body += "<h2>Rejects</h2>\n"
            body += HTMLPage.table(
                header: ["#", "entity", "rejected", "rejects file"],
                rows: rejecting.map {
                    ["\($0.index)", escape($0.entity ?? ""), "\($0.rejected)", escape($0.rejectsFile ?? "")]
                },
                numeric: [2])
            for step in rejecting {
                guard let groups = rejects[step.index], !groups.isEmpty else { continue }
                body += "<h3>Step \(step.index): rejects by field and reason</h3>\n"
                body += HTMLPage.table(
                    header: ["field", "reason", "records", "first"],
                    rows: groups.map {
                        [
                            escape($0.field), escape($0.reason), "\($0.count)",
                            escape($0.examples.joined(separator: ", ")),
                        ]
                    }, numeric: [2])
            }
        }
        for step in report.steps {
            if let verification = step.verification { body += self.verification(verification, step: step.index) }
            if let migration = step.migration { body += self.migration(migration, step: step.index) }
            if let error = step.error {
                body += "<h2>Step \(step.index): error</h2>\n<pre>\(escape(error))</pre>\n"
            }
        }
        return HTMLPage.document(title: "\(report.job): \(report.outcome)", body: body)
    }

    /// A step's checks: passed, failed, errors, skipped, and one row per check.
    static func verification(_ verification: VerificationReport, step: Int) -> String {
        let escape = HTMLPage.escape
        var html =
            "<h2>Step \(step): verification \(escape(verification.name))</h2>\n<p class=\"\(verification.succeeded ? "ok" : "failed")\">\(verification.passed) passed, \(verification.failures) failed, \(verification.errors) errors, \(verification.skipped) skipped</p>\n"
        html += HTMLPage.table(
            header: ["check", "entity", "outcome", "message"],
            rows: verification.results.map { result in
                let failed = result.isFailure
                return [
                    escape(result.name), escape(result.entity ?? ""),
                    "<span class=\"\(failed ? "failed" : "ok")\">\(escape(result.outcome.rawValue))</span>",
                    escape(result.message),
                ]
            })
        return html
    }

    /// A migrate step's version steps and entity mappings, with their timings.
    static func migration(_ migration: MigrationReport, step: Int) -> String {
        let escape = HTMLPage.escape
        var html =
            "<h2>Step \(step): migration \(escape(migration.model)) \(escape(migration.fromVersion)) → \(escape(migration.toVersion))</h2>\n"
        for version in migration.steps {
            html +=
                "<p>\(escape(version.from)) → \(escape(version.to)): \(escape(version.mappingFile ?? "inferred")), \(String(format: "%.3f", version.seconds)) s</p>\n"
            html += HTMLPage.table(
                header: ["mapping", "destination", "source", "read", "written", "seconds"],
                rows: version.entities.map {
                    [
                        escape($0.mapping), escape($0.destination), escape($0.source ?? ""), "\($0.read)",
                        "\($0.written)", String(format: "%.3f", $0.seconds),
                    ]
                }, numeric: [3, 4, 5])
        }
        return html
    }

    /// Each step as a bar over the time it took (the x axis is the run's time), as high as its
    /// records per second.
    static func throughputChart(_ steps: [StepReport]) -> String {
        let width = 640.0
        let height = 200.0
        let margin = 40.0
        let total = max(steps.reduce(0) { $0 + $1.elapsedSeconds }, 1e-9)
        let peak = max(steps.map(\.recordsPerSecond).max() ?? 0, 1)
        let plotWidth = width - 2 * margin
        let plotHeight = height - 2 * margin
        func number(_ value: Double) -> String { String(format: "%.1f", value) }
        var svg =
            "<svg width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"records per second of each step over the run\">\n"
        svg +=
            "<line x1=\"\(number(margin))\" y1=\"\(number(height - margin))\" x2=\"\(number(width - margin))\" y2=\"\(number(height - margin))\" stroke=\"#555\"/>\n"
        svg +=
            "<line x1=\"\(number(margin))\" y1=\"\(number(margin))\" x2=\"\(number(margin))\" y2=\"\(number(height - margin))\" stroke=\"#555\"/>\n"
        var start = 0.0
        for step in steps {
            let x = margin + start / total * plotWidth
            let barWidth = max(step.elapsedSeconds / total * plotWidth, 1)
            let barHeight = step.recordsPerSecond / peak * plotHeight
            let y = height - margin - barHeight
            let fill = step.outcome == .failed ? "#c62828" : "#4a78b5"
            svg +=
                "<rect x=\"\(number(x))\" y=\"\(number(y))\" width=\"\(number(barWidth))\" height=\"\(number(barHeight))\" fill=\"\(fill)\"><title>step \(step.index) \(HTMLPage.escape(step.kind)): \(Int(step.recordsPerSecond)) records/s for \(String(format: "%.3f", step.elapsedSeconds)) s</title></rect>\n"
            svg +=
                "<text x=\"\(number(x + barWidth / 2))\" y=\"\(number(height - margin + 14))\" font-size=\"11\" text-anchor=\"middle\">\(step.index)</text>\n"
            start += step.elapsedSeconds
        }
        svg +=
            "<text x=\"\(number(margin))\" y=\"\(number(margin - 8))\" font-size=\"11\">\(Int(peak)) records/s</text>\n"
        svg +=
            "<text x=\"\(number(width - margin))\" y=\"\(number(height - 8))\" font-size=\"11\" text-anchor=\"end\">\(String(format: "%.2f", total)) s</text>\n"
        return svg + "</svg>\n"
    }
}
