import FerryCore
import Foundation

/// What one step did: the counts that always add up (`read = inserted + updated + skipped +
/// rejected`), timing and outcome. Encoded as JSON in `--report` files.
public struct StepReport: Sendable, Codable, Hashable {
    /// How a step ended (`outcome` in the report).
    public enum Outcome: String, Sendable, Codable, Hashable {
        /// The step did everything it was asked to.
        case succeeded
        /// The step stopped on an error (see ``StepReport/error``) or over its reject budget.
        case failed
        /// A dry run: everything was checked and then rolled back.
        case dryRun = "dry_run"
    }

    /// 1-based position in the job.
    public var index: Int
    /// The step's kind as written in the job file: `import`, `export`, `migrate`, `verify`, `update` or `delete`.
    public var kind: String
    /// The entity the step worked on, when it has one.
    public var entity: String?
    /// The source the step read (an import's path or pattern), when it has one.
    public var source: String?
    /// The format an import read, as a job names it (`csv`, `pgcopy`, `json`, `ndjson`,
    /// `fixed`), or `database` for a database source.
    public var format: String?
    /// How the step ended.
    public var outcome: Outcome
    /// Records read from the source (objects selected, for `update` and `export`).
    public var read = 0
    /// Objects inserted.
    public var inserted = 0
    /// Objects updated (an upsert's existing objects, or an `update` step's).
    public var updated = 0
    /// Records a `mode: sync` import found with the same values in the store.
    public var unchanged = 0
    /// Records skipped (`on_conflict: ignore` and an existing key).
    public var skipped = 0
    /// Records rejected (written to the rejects file when there is one).
    public var rejected = 0
    /// Records written to the output (export steps).
    public var written = 0
    /// The file an export step wrote (`-` for standard output).
    public var output: String?
    /// Objects of the step's entity deleted (`delete` steps, `mode: sync` imports).
    public var deleted = 0
    /// Objects of other entities deleted by cascade, per entity (`delete` steps).
    public var cascadeDeleted: [String: Int]?
    /// References cleared by nullify, per relationship (`delete` steps).
    public var nullified: [String: Int]?
    /// The step's wall-clock time.
    public var elapsedSeconds = 0.0
    /// Records read per second of `elapsedSeconds`.
    public var recordsPerSecond = 0.0
    /// The rejects file written, when there is one.
    public var rejectsFile: String?
    /// Source fields no attribute or relationship of the step maps, so their values were not
    /// imported (never silently: the summary and the report list them).
    public var ignoredFields: [String]?
    /// Every difference between the source's fields and the fields the step reads (a new field,
    /// a missing one), with the file and line it was first seen at and what the step did.
    public var drift: [SchemaDrift]?
    /// A `mode: sync` import: the rows its rejected records kept (neither updated nor deleted,
    /// because their record was rejected), so the entity holds `inserted + updated + unchanged
    /// + kept` rows after the step.
    public var kept: Int?
    /// The counts of each file, in reading order, when an import step reads several.
    public var files: [SourceFileReport]?
    /// What a `mode: sync` import matched by, and the first keys it inserted, updated, deleted.
    public var sync: SyncReport?
    /// What an incremental database read started from and committed.
    public var incremental: IncrementalReport?
    /// Which files a `files: new` import read and skipped.
    public var fileSelection: FileSelectionReport?
    /// What an import with `nested:` did to the related objects its records nest, per entity.
    public var nested: [String: NestedEntityReport]?
    /// What a `migrate` step did, per version step and entity mapping.
    public var migration: MigrationReport?
    /// The error that failed the step, rendered as `file:line:column: error: …`.
    public var error: String?
    /// The checks run by a `verify` step, or automatically after an `import` step.
    public var verification: VerificationReport?

    /// A report of step `index` (1-based) before its counts are known.
    public init(index: Int, kind: String, entity: String? = nil, source: String? = nil, outcome: Outcome = .succeeded) {
        self.index = index
        self.kind = kind
        self.entity = entity
        self.source = source
        self.outcome = outcome
    }

    /// True when the counts add up (for an export: every record read was written, or none in a dry run).
    public var isBalanced: Bool {
        if kind == "export" { return written == read || (outcome == .dryRun && written == 0) }
        return read == inserted + updated + unchanged + skipped + rejected
    }

    /// A `verify` step's report: its outcome and time are those of `verification`.
    public static func verify(index: Int, verification: VerificationReport) -> StepReport {
        var step = StepReport(index: index, kind: "verify", outcome: verification.succeeded ? .succeeded : .failed)
        step.verification = verification
        step.elapsedSeconds = verification.elapsedSeconds
        if let failure = verification.failure { step.error = "\(failure)" }
        return step
    }

    /// Records what a migration did: objects read from the original store (its first version
    /// step) and written to the migrated one (its last step).
    public mutating func record(_ migration: MigrationReport) {
        self.migration = migration
        read = migration.steps.first?.entities.reduce(0) { $0 + $1.read } ?? 0
        inserted = migration.steps.last?.entities.reduce(0) { $0 + $1.written } ?? 0
    }

    enum CodingKeys: String, CodingKey {
        case index, kind, entity, source, format, outcome, read, inserted, updated, unchanged, skipped, rejected,
            written,
            output, deleted, sync
        case cascadeDeleted = "cascade_deleted"
        case nullified
        case elapsedSeconds = "elapsed_seconds"
        case recordsPerSecond = "records_per_second"
        case rejectsFile = "rejects_file"
        case error, migration
        case ignoredFields = "ignored_fields"
        case drift, kept
        case verification, files
        case nested, incremental
        case fileSelection = "file_selection"
    }
}

/// What an import step did with one of its files (when it reads several).
public struct SourceFileReport: Sendable, Codable, Hashable {
    /// The file's path.
    public var file: String
    /// Records read from the file.
    public var read = 0
    /// Objects inserted from the file's records.
    public var inserted = 0
    /// Objects updated from the file's records.
    public var updated = 0
    /// The file's records a `mode: sync` import found unchanged.
    public var unchanged = 0
    /// The file's records skipped.
    public var skipped = 0
    /// The file's records rejected.
    public var rejected = 0

    /// The counts of one file.
    public init(
        file: String, read: Int = 0, inserted: Int = 0, updated: Int = 0, unchanged: Int = 0, skipped: Int = 0,
        rejected: Int = 0
    ) {
        self.file = file
        self.read = read
        self.inserted = inserted
        self.updated = updated
        self.unchanged = unchanged
        self.skipped = skipped
        self.rejected = rejected
    }
}

/// The JSON report of every command (`--report FILE.json` of `run`, `import`, `export`,
/// `update`, `delete`, `migrate`, `verify`, `check`): one shape, the command's steps in order.
/// Its schema is documented in docs/reports.md, shipped as docs/report.schema.json and kept
/// stable: fields are only ever added.
public struct RunReport: Sendable, Codable, Hashable {
    /// The report format's version (`schema_version`); 1 today.
    public var schemaVersion = 1
    /// The ferry command that ran: `run`, `import`, `export`, `update`, `delete`, `migrate`,
    /// `verify` or `check`.
    public var command: String
    /// The job's name.
    public var job: String
    /// The job file's path; nil for a command without one (`ferry import …`).
    public var jobFile: String?
    /// The store's path.
    public var store: String
    /// The model's name, when the command has a model.
    public var model: String?
    /// The model version the command worked with.
    public var modelVersion: String?
    /// Whether the run was a dry run (everything rolled back).
    public var dryRun: Bool
    /// When the run started (UTC ISO-8601 with milliseconds).
    public var startedAt: String
    /// When the run ended; nil while it runs.
    public var endedAt: String?
    /// `running`, `succeeded`, `failed` or `dry_run`.
    public var outcome: String
    /// The command's exit code (0 on success), set by the command line from ``failure`` or its
    /// own outcome when the run ends.
    public var exitCode: Int32
    /// Why the run failed; nil while it runs and when it succeeded. Not part of the JSON report
    /// (which has ``exitCode``).
    public var failure: RunFailure? = nil
    /// The reports of the steps that ran, in order.
    public var steps: [StepReport]

    /// A report whose run starts now (or at `startedAt`).
    public init(
        command: String, job: String, jobFile: String?, store: String, model: String?, modelVersion: String?,
        dryRun: Bool,
        startedAt: String = RunReport.timestamp()
    ) {
        self.command = command
        self.job = job
        self.jobFile = jobFile
        self.store = store
        self.model = model
        self.modelVersion = modelVersion
        self.dryRun = dryRun
        self.startedAt = startedAt
        self.outcome = "running"
        self.exitCode = 0
        self.steps = []
    }

    enum CodingKeys: String, CodingKey {
        case schemaVersion = "schema_version"
        case command, job
        case jobFile = "job_file"
        case store, model
        case modelVersion = "model_version"
        case dryRun = "dry_run"
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case outcome
        case exitCode = "exit_code"
        case steps
    }

    /// Ends the run with `exitCode`: the outcome follows from it (`failed` unless 0, else
    /// `dry_run` or `succeeded`) and `ended_at` is now.
    public mutating func finish(exitCode: Int32) {
        self.exitCode = exitCode
        outcome = exitCode != 0 ? "failed" : dryRun ? "dry_run" : "succeeded"
        endedAt = Self.timestamp()
    }

    /// Now, as reports write times: UTC ISO-8601 with milliseconds.
    public static func timestamp() -> String { DateCoding.nowText() }

    /// Every verification report of the run's steps, in step order (for `--junit`).
    public var verificationReports: [VerificationReport] { steps.compactMap(\.verification) }
}

/// Receives progress while a job runs; the CLI draws a bar on a terminal and prints plain
/// lines otherwise.
public protocol ProgressObserver: AnyObject {
    /// Step `index` (1-based) of `total` starts; `title` says what it does (`import Order from orders.csv`).
    func stepStarted(index: Int, of total: Int, title: String)
    /// Called every few thousand records with the counts so far, and the part of the input read
    /// (0…1) when its size is known.
    func stepProgress(read: Int, rejected: Int, fraction: Double?)
    /// The step ended, with its report.
    func stepFinished(_ report: StepReport)
}
