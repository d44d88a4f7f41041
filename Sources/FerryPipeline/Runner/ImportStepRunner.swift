import FerryCore
import FerryFormats
import Foundation

/// Runs one `import` step: streams records from the reader, maps and coerces fields, resolves
/// relationships, inserts through ``BatchInserter``, and writes rejects, keeping
/// `read = inserted + updated + skipped + rejected` at every moment.
///
/// Atomic by default: the whole step is one transaction, so a failure or a kill leaves the store
/// exactly as it was before the step.
public final class ImportStepRunner {
    public let step: ImportStep
    public let store: Store
    public let index: Int
    public let jobName: String
    public weak var progress: (any ProgressObserver)?
    public var dryRun = false
    /// Use the byte-level fast path when the step allows it (tests turn it off to check that
    /// both paths give the same store and the same rejects).
    public var allowsFastPath = true
    /// Read and parse the input on a second thread while this one imports (see
    /// ``ReadAheadReader``); by default when the machine has more than one core. Tests set it
    /// both ways to check that it changes nothing but the speed.
    public var readsAhead = ProcessInfo.processInfo.activeProcessorCount > 1
    /// How many records the last run wrote through a fast path (for tests).
    @_spi(Testing) public private(set) var fastPathRecords = 0
    /// A reader to use instead of opening `step.source` (e.g. one that replays sampled records).
    private let givenReader: (any RecordReader)?
    /// The reader of the running step, for the progress line's percent.
    private var stepReader: (any RecordReader)?

    public init(step: ImportStep, store: Store, index: Int = 1, jobName: String = "import", reader: (any RecordReader)? = nil) {
        self.step = step
        self.store = store
        self.index = index
        self.jobName = jobName
        self.givenReader = reader
    }

    /// A dry run rolls everything back by throwing this out of the transaction.
    private struct DryRunRollback: Error {}

    /// Runs the step and returns its report; throws (after rolling back) when the step fails.
    /// The report of a failed step is passed with the error as ``ImportStepFailure``.
    public func run() throws -> StepReport {
        try Interruption.honouring { try runHonouringSignals() }
    }

    private func runHonouringSignals() throws -> StepReport {
        var report = StepReport(index: index, kind: "import", entity: step.entity, source: step.source)
        report.rejectsFile = step.rejectsPath
        let started = ContinuousClock.now
        let startedAt = DateCoding.nowText()
        var state = ImportState()
        var ignoredFields: [String] = []
        fastPathRecords = 0
        // Inside a caller's transaction (a job's dry run), the caller rolls everything back at the
        // end, so that later steps see what this one would have written.
        let insideTransaction = store.withDatabase { $0.isInTransaction }
        do {
            let reader = try givenReader ?? ReaderFactory.open(step: step)
            stepReader = reader
            defer { stepReader = nil }
            let rejects = try step.rejectsPath.map { try RejectsWriter(path: $0, dryRun: dryRun) }
            defer { try? rejects?.close() }
            // The plan (field indexes, coercions, prepared statements) is made once per step.
            let plan = try store.withConnection { try ImportPlan(step: step, reader: reader, connection: $0, model: store.model, layout: store.layout) }
            let kinds = allowsFastPath && plan.inserter.supportsDirectBinding ? ImportPlan.fastKinds(for: plan.attributes) : nil
            let records = try StepRecords(reader: reader, readAhead: readsAhead, coercion: kinds.map { (plan, $0) })
            defer { records.stop() }
            if step.atomic || dryRun {
                try store.write { connection in
                    try importRecords(records, plan: plan, kinds: kinds, rejects: rejects, state: &state, batchLimit: nil)
                    try checkBudgetAtEnd(state)
                    if dryRun {
                        if insideTransaction { return }
                        throw DryRunRollback()
                    }
                    // The rejects are on disk before the rows commit; failing to write them fails the step.
                    try rejects?.close()
                    try recordRun(connection, state: state, startedAt: startedAt, outcome: "succeeded", message: nil)
                }
            } else {
                // Checkpointed: each batch commits on its own; a failure keeps the committed batches.
                var done = false
                while !done {
                    done = try store.write { _ in
                        let finished = try importRecords(records, plan: plan, kinds: kinds, rejects: rejects, state: &state, batchLimit: step.batchSize)
                        // This batch's rejects are on disk before the batch commits.
                        try rejects?.synchronize()
                        return finished
                    }
                }
                try rejects?.close()
                try checkBudgetAtEnd(state)
                try store.write { try recordRun($0, state: state, startedAt: startedAt, outcome: "succeeded", message: nil) }
            }
            // The input is read to its end: the reader thread, if any, is done with the names.
            ignoredFields = reader.fieldNames.filter { !plan.mappedFieldNames.contains($0) }
            report.outcome = dryRun ? .dryRun : .succeeded
        } catch is DryRunRollback {
            report.outcome = .dryRun
        } catch {
            state.fill(&report)
            report.outcome = .failed
            report.error = "\(error)"
            report.elapsedSeconds = started.duration(to: .now).seconds
            if !dryRun {
                try? store.write { try recordRun($0, state: state, startedAt: startedAt, outcome: "failed", message: "\(error)") }
            }
            progress?.stepFinished(report)
            throw ImportStepFailure(report: report, error: error)
        }
        state.fill(&report)
        report.ignoredFields = ignoredFields.isEmpty ? nil : ignoredFields
        report.elapsedSeconds = started.duration(to: .now).seconds
        report.recordsPerSecond = report.elapsedSeconds > 0 ? Double(report.read) / report.elapsedSeconds : 0
        progress?.stepFinished(report)
        return report
    }

    // MARK: - The record loop

    /// Imports records until the input ends (true) or `batchLimit` records were read (false):
    /// the one record loop. Each record takes the fast path when it can, else the general path.
    /// Several files are read one after the other, each through its own stream (so each keeps
    /// its fast path), and a batch may span files.
    @discardableResult
    private func importRecords(_ records: StepRecords, plan: ImportPlan, kinds: [ImportPlan.FastKind]?, rejects: RejectsWriter?, state: inout ImportState, batchLimit: Int?) throws -> Bool {
        var values = Array(repeating: Value.null, count: plan.columnCount)
        var supplied = Array(repeating: true, count: plan.columnCount)
        var inBatch = 0
        // A wrapper's held records (a replayed sample) come first.
        for record in records.takeHeldRecords() {
            if let file = record.sourceName { state.enter(file: file) }
            state.read += 1
            inBatch += 1
            try process(record, plan: plan, values: &values, supplied: &supplied, rejects: rejects, state: &state)
        }
        while let stream = records.current {
            if let file = records.currentFileName { state.enter(file: file) }
            let finished: Bool
            if let readAhead = stream.reader as? ReadAheadReader {
                // The concrete type lets the compiler specialize the loop for the pipelined case.
                finished = try importRecords(from: readAhead, plan: plan, kinds: kinds, rejects: rejects, values: &values, supplied: &supplied, state: &state, inBatch: &inBatch, batchLimit: batchLimit)
            } else {
                finished = try importRecords(from: stream.reader, plan: plan, kinds: kinds, rejects: rejects, values: &values, supplied: &supplied, state: &state, inBatch: &inBatch, batchLimit: batchLimit)
            }
            guard finished else { return false }
            try records.nextFile()
        }
        return true
    }

    private func importRecords<Reader: ByteFieldReader>(
        from reader: Reader, plan: ImportPlan, kinds: [ImportPlan.FastKind]?, rejects: RejectsWriter?, values: inout [Value], supplied: inout [Bool],
        state: inout ImportState, inBatch: inout Int, batchLimit: Int?
    ) throws -> Bool {
        while try advance(reader, state) {
            state.read += 1
            inBatch += 1
            if state.read & 4095 == 0 {
                progress?.stepProgress(read: state.read, rejected: state.rejected, fraction: stepReader?.progressFraction)
                try checkInterruption(state)
            }
            if let kinds, reader.currentRecordIsWellFormed, case .done(let outcome) = try fastInsert(from: reader, plan: plan, kinds: kinds) {
                fastPathRecords += 1
                switch outcome {
                case .inserted: state.inserted += 1
                case .updated: state.updated += 1
                case .skipped: state.skipped += 1
                case .rejected: preconditionFailure("the fast path hands rejected records to the general path")
                }
            } else {
                try process(reader.currentRecord(), plan: plan, values: &values, supplied: &supplied, rejects: rejects, state: &state)
            }
            if let batchLimit, inBatch >= batchLimit { return false }
        }
        return true
    }

    /// The fast path for the current record: the values the read-ahead thread coerced, when it
    /// did, else the reader's bytes.
    @inline(__always)
    private func fastInsert<Reader: ByteFieldReader>(from reader: Reader, plan: ImportPlan, kinds: [ImportPlan.FastKind]) throws -> ImportPlan.FastOutcome {
        if let readAhead = reader as? ReadAheadReader, let coerced = readAhead.currentCoercedRow {
            return try plan.fastInsert(coerced: coerced.rows, row: coerced.row)
        }
        return try plan.fastInsert(from: reader, kinds: kinds)
    }

    /// The next record; a signal that arrives while the importer waits for the reader thread
    /// stops the step like one that arrives between records.
    @inline(__always)
    private func advance(_ reader: some ByteFieldReader, _ state: ImportState) throws -> Bool {
        do {
            return try reader.advance()
        } catch is ReadAheadReader.WaitInterrupted {
            try checkInterruption(state)
            throw FerryError(.cancelled, "interrupted")
        }
    }

    /// The general path for one record: coerce every field, insert, count or reject.
    private func process(_ record: SourceRecord, plan: ImportPlan, values: inout [Value], supplied: inout [Bool], rejects: RejectsWriter?, state: inout ImportState) throws {
        if let problem = record.problem {
            try reject(record: record, field: nil, line: problem.location?.line ?? record.line, column: problem.location?.column ?? record.column, reason: problem.message, rejects: rejects, state: &state)
            return
        }
        switch try plan.fill(record: record, values: &values, supplied: &supplied) {
        case .failure(let failure):
            try reject(record: record, field: failure.field, line: failure.line, column: failure.column, reason: failure.reason, rejects: rejects, state: &state)
        case .success:
            let outcome = try plan.inserter.insert(values, supplied: plan.hasOptionalFields ? supplied : nil)
            switch outcome {
            case .inserted: state.inserted += 1
            case .updated: state.updated += 1
            case .skipped: state.skipped += 1
            case .rejected(let reason, let column):
                let location = column.flatMap { plan.location(ofColumn: $0, in: record) }
                try reject(record: record, field: column.flatMap { plan.fieldName(ofColumn: $0) }, line: location?.line ?? record.line, column: location?.column ?? record.column, reason: reason, rejects: rejects, state: &state)
            }
        }
    }

    private func reject(record: SourceRecord, field: String?, line: Int, column: Int, reason: String, rejects: RejectsWriter?, state: inout ImportState) throws {
        state.rejected += 1
        let location = InputLocation(file: state.file ?? step.source, line: line, column: column, record: record.number)
        let limit: Int? = {
            switch step.maxRejects {
            case .count(let n): return n
            case .percent, .unlimited: return nil
            }
        }()
        if let rejects {
            try rejects.write(file: state.file, record: record.number, line: line, column: column, field: field, reason: reason, raw: record.raw)
        }
        if let limit, state.rejected > limit {
            if rejects == nil {
                throw FerryError(
                    .rejectBudget, reason, at: location,
                    notes: ["the step allows no rejected records; add `rejects: FILE` and `max_rejects:` to the step to set them aside and go on"])
            }
            throw FerryError(
                .rejectBudget,
                "more than \(limit) record\(limit == 1 ? " was" : "s were") rejected; the step was rolled back",
                at: location, notes: ["last reject: \(reason)", rejects.map { $0.isDryRun ? "dry run: \($0.path) was not written" : "rejected records are in \($0.path)" } ?? ""])
        }
    }

    /// Stops the step when SIGINT or SIGTERM arrived: the error rolls the transaction back
    /// (with `atomic: false`, the batches committed so far stay).
    private func checkInterruption(_ state: ImportState) throws {
        try Interruption.check(
            step.atomic || dryRun
                ? "step \(index) import \(step.entity) was rolled back after \(state.read) records; the store is as it was before the step"
                : "step \(index) import \(step.entity) stopped after \(state.read) records; the batches it committed stay in the store, the batch in progress was rolled back")
    }

    private func checkBudgetAtEnd(_ state: ImportState) throws {
        if case .percent(let percent) = step.maxRejects, state.read > 0 {
            let share = Double(state.rejected) * 100 / Double(state.read)
            if share > percent {
                throw FerryError(
                    .rejectBudget,
                    "\(state.rejected) of \(state.read) records (\(String(format: "%.2f", share))%) were rejected, more than the \(percent)% allowed; the step was rolled back",
                    at: InputLocation(file: step.source))
            }
        }
    }

    private func recordRun(_ connection: Connection, state: ImportState, startedAt: String, outcome: String, message: String?) throws {
        try RunLog(on: connection, layout: store.layout)?.record(RunRecord(
            job: jobName, stepIndex: index, step: "import", entity: step.entity, source: step.source, startedAt: startedAt,
            endedAt: DateCoding.nowText(), outcome: outcome, read: state.read, inserted: state.inserted, updated: state.updated,
            skipped: state.skipped, rejected: state.rejected, message: message))
    }
}

/// A failed import step: the error and the report of what it had done before rolling back.
public struct ImportStepFailure: Error, CustomStringConvertible {
    public var report: StepReport
    public var error: any Error
    public var description: String { "\(error)" }
}

struct ImportState {
    var read = 0
    var inserted = 0
    var updated = 0
    var skipped = 0
    var rejected = 0
    /// The file being read when the step reads several (nil for a single source).
    private(set) var file: String?
    /// The counts of the files done, and where the counts stood when the current file began.
    private var finishedFiles: [SourceFileReport] = []
    private var atFileStart = SourceFileReport(file: "")

    /// Records read from now on come from `file` (several files are read one after the other).
    mutating func enter(file name: String) {
        guard name != file else { return }
        if file != nil { finishedFiles.append(currentFileCounts) }
        file = name
        atFileStart = SourceFileReport(file: name, read: read, inserted: inserted, updated: updated, skipped: skipped, rejected: rejected)
    }

    private var currentFileCounts: SourceFileReport {
        SourceFileReport(
            file: atFileStart.file, read: read - atFileStart.read, inserted: inserted - atFileStart.inserted, updated: updated - atFileStart.updated,
            skipped: skipped - atFileStart.skipped, rejected: rejected - atFileStart.rejected)
    }

    func fill(_ report: inout StepReport) {
        report.read = read
        report.inserted = inserted
        report.updated = updated
        report.skipped = skipped
        report.rejected = rejected
        if file != nil { report.files = finishedFiles + [currentFileCounts] }
    }
}

