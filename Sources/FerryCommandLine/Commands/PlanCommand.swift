import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

/// `ferry plan` and `ferry migrate --plan`: text or JSON.
enum PlanFormat: String, CaseIterable, ExpressibleByArgument {
    case text, json, html
}

struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show what a job's run would do, without touching anything.",
        discussion: """
            Per import step: the source files with their size in bytes and record count (counted \
            when a file is under 1 MiB, else estimated from its first MiB), the entity, the \
            conflict policy and the relationships resolved by key. Per migrate step: each \
            version step inferred or mapped, the policies it runs, how each entity's rows move \
            (one INSERT … SELECT, or row by row) and the rows read, from the store's row counts. \
            The job is loaded and checked as ferry run checks it; no store or output file is \
            opened for writing or created.
            """)

    @Argument(help: ArgumentHelp("The job file.", valueName: "job.yml"))
    var job: String

    @Option(name: .customLong("param"), help: ArgumentHelp("A job parameter for ${name}.", valueName: "name=value"))
    var parameters: [String] = []

    @Option(help: ArgumentHelp("text (default), json, or html (one self-contained page).", valueName: "format"))
    var format: PlanFormat = .text

    func run() throws {
        try runReportingErrors {
            var options = GlobalOptions()
            options.parameters = parameters
            let (job, model, bundle) = try loadAndValidate(jobPath: job, parameters: try options.parameterValues())
            let runner = JobRunner(job: job, model: model, bundle: bundle)
            runner.registry = FerryCommandLine.registry
            let plan = runner.plan()
            switch format {
            case .json: try writeJSON(plan, to: "-")
            case .html: try writeText(PlanPage.render(plan), to: "-")
            case .text: print(PlanText.describe(plan), terminator: "")
            }
            return ExitStatus.success
        }
    }
}

/// The text of a plan, as `ferry plan` and `ferry migrate --plan` print it.
enum PlanText {
    static func describe(_ plan: JobPlan) -> String {
        var lines = [
            "plan of job \(plan.job) (\(plan.jobFile)): nothing has run, nothing was written",
            "store: \(plan.storeAction)",
            "model: \(plan.model) version \(plan.modelVersion)",
        ]
        for step in plan.steps {
            lines.append("\(step.index). \(step.title)")
            for source in step.sources ?? [] {
                var line = "   source \(source.path): \(Console.grouped(Int(source.bytes))) bytes"
                if let records = source.records {
                    line +=
                        source.estimated
                        ? ", about \(Console.grouped(records)) records (estimated from the first MiB)"
                        : ", \(Console.grouped(records)) records"
                }
                if let error = source.error { line += "; cannot count its records: \(error)" }
                lines.append(line)
            }
            if let sources = step.sources, sources.count > 1, let bytes = step.bytes {
                var line = "   in all: \(Console.grouped(Int(bytes))) bytes"
                if let records = step.records {
                    line += ", \(step.recordsEstimated == true ? "about " : "")\(Console.grouped(records)) records"
                }
                lines.append(line)
            }
            if let format = step.format { lines.append("   format \(format)") }
            if let conflict = step.onConflict, let entity = step.entity {
                lines.append("   into \(entity): on_conflict \(conflict), mode \(step.mode ?? "append")")
            }
            for relationship in step.relationships ?? [] {
                lines.append(
                    "   relationship \(relationship.name): field \(relationship.field) matched to \(relationship.match) (missing: \(relationship.missing))"
                )
            }
            if let rejects = step.rejects { lines.append("   rejects to \(rejects)") }
            if let output = step.output { lines.append("   writes \(output)") }
            for note in step.notes { lines.append("   \(note)") }
            if let migration = step.migration { lines += describe(migration).map { "   \($0)" } }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The lines of a migration's plan.
    static func describe(_ migration: MigrationPlanSummary) -> [String] {
        var lines = ["version \(migration.from) → \(migration.to)"]
        if migration.steps.isEmpty { lines.append("nothing to do: the store is at the target version") }
        for step in migration.steps {
            let kind = step.mapping == "inferred" ? "inferred (lightweight)" : "mapped by \(step.mapping)"
            lines.append("step \(step.from) → \(step.to): \(kind)")
            if !step.policies.isEmpty { lines.append("  policies: \(step.policies.joined(separator: ", "))") }
            for entity in step.entities {
                var line = "  \(entity.destination)"
                line += entity.source.map { " ← \($0)" } ?? ""
                line += ": \(entity.strategy ?? "strategy chosen when the step runs")"
                if let rows = entity.rows, entity.source != nil { line += ", \(Console.grouped(rows)) rows" }
                lines.append(line)
            }
            if let rows = step.rows {
                lines.append(
                    step.rowsEstimated
                        ? "  rows read: about \(Console.grouped(rows)) (the store's row counts carried through the steps before)"
                        : "  rows read: \(Console.grouped(rows)) (the store's row counts)")
            }
        }
        return lines
    }
}
