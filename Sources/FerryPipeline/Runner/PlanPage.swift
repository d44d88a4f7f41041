import FerryCore

/// `ferry plan --format html` and `ferry migrate --plan --format html`: the plan as one
/// self-contained page, from the same ``JobPlan`` the JSON encodes.
package enum PlanPage {
    /// The page of a job's plan.
    package static func render(_ plan: JobPlan) -> String {
        let escape = HTMLPage.escape
        var body = "<h1>Plan of job \(escape(plan.job))</h1>\n<p>Nothing has run, nothing was written.</p>\n"
        body += HTMLPage.table(
            header: ["", ""],
            rows: [
                ["job file", escape(plan.jobFile)], ["store", escape(plan.storeAction)],
                ["model", escape("\(plan.model) version \(plan.modelVersion)")],
            ])
        for step in plan.steps {
            body += "<h2>\(step.index). \(escape(step.title))</h2>\n"
            if let sources = step.sources {
                body += HTMLPage.table(
                    header: ["source", "bytes", "records", ""],
                    rows: sources.map {
                        [
                            escape($0.path), "\($0.bytes)", $0.records.map(String.init) ?? "",
                            escape($0.error ?? ($0.estimated ? "estimated from the first MiB" : "counted")),
                        ]
                    }, numeric: [1, 2])
            }
            var facts = step.format.map { ["format \($0)"] } ?? []
            if let entity = step.entity, let conflict = step.onConflict {
                facts.append("into \(entity): on_conflict \(conflict), mode \(step.mode ?? "append")")
            }
            facts += (step.relationships ?? []).map {
                "relationship \($0.name): field \($0.field) matched to \($0.match) (missing: \($0.missing))"
            }
            facts += [step.rejects.map { "rejects to \($0)" }, step.output.map { "writes \($0)" }].compactMap { $0 }
            facts += step.notes
            if !facts.isEmpty { body += "<ul>\n" + facts.map { "<li>\(escape($0))</li>\n" }.joined() + "</ul>\n" }
            if let migration = step.migration { body += self.migration(migration) }
        }
        return HTMLPage.document(title: "Plan of job \(plan.job)", body: body)
    }

    /// A migration's plan: per version step, who makes it, its policies, and a table of its
    /// entity mappings with their strategies and rows.
    package static func migration(_ migration: MigrationPlanSummary) -> String {
        let escape = HTMLPage.escape
        var html = "<p>Version \(escape(migration.from)) → \(escape(migration.to))</p>\n"
        if migration.steps.isEmpty { html += "<p>Nothing to do: the store is at the target version.</p>\n" }
        for step in migration.steps {
            let kind = step.mapping == "inferred" ? "inferred (lightweight)" : "mapped by \(step.mapping)"
            html += "<h3>\(escape("\(step.from) → \(step.to)")): \(escape(kind))</h3>\n"
            if !step.policies.isEmpty { html += "<p>Policies: \(escape(step.policies.joined(separator: ", ")))</p>\n" }
            html += HTMLPage.table(
                header: ["entity", "from", "strategy", step.rowsEstimated ? "rows (about)" : "rows"],
                rows: step.entities.map {
                    [
                        escape($0.destination), escape($0.source ?? ""),
                        escape($0.strategy ?? "chosen when the step runs"), $0.rows.map(String.init) ?? "",
                    ]
                }, numeric: [3])
        }
        return html
    }
}
