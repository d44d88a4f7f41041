import FerryCore
import FerryFormats
import Foundation
import Logging

/// Runs one `import` step: streams records from the reader, maps and coerces fields, resolves
/// relationships, inserts through ``BatchInserter``, and writes rejects, keeping
/// `read = inserted + updated + skipped + rejected` at every moment.
///
/// Atomic by default: the whole step is one transaction, so a failure or a kill leaves the store
/// exactly as it was before the step. With `atomic: false`, each batch commits with a checkpoint
/// (``ImportCheckpoint``) in the same transaction, from which ``resume`` continues.
package final class ImportStepRunner {
    package let step: ImportStep
    package let store: Store
    package let index: Int
    package let jobName: String
    package weak var progress: (any ProgressObserver)?
    package var dryRun = false
    /// Let a `mode: sync` step with an empty source delete every row (`--allow-empty-sync`),
    /// as the step's `allow_empty: true` does.
    package var allowsEmptySync = false
    /// Use the byte-level fast path when the step allows it (tests turn it off to check that
    /// both paths give the same store and the same rejects).
    package var allowsFastPath = true
    /// Read and parse the input on a second thread while this one imports (see
    /// ``ReadAheadReader``); by default when the machine has more than one core. Tests set it
    /// both ways to check that it changes nothing but the speed.
    package var readsAhead = ProcessInfo.processInfo.activeProcessorCount > 1
    /// The read-ahead thread coerces every batch instead of balancing the work with the importing
    /// thread (tests set it, so that the multi-row statements do not depend on timing).
    package var readAheadAlwaysCoerces = false
    /// Continue the step's interrupted `atomic: false` import from its last committed batch
    /// (`--resume`) instead of starting at the first record.
    package var resume = false
    /// The command that resumes the step, named when a signal stops an `atomic: false` import.
    package var resumeCommand: String?
    /// The records an interrupted import had inserted before this run resumed it (0 otherwise):
    /// the step's report counts them, the rows were in the store before this run.
    package private(set) var insertedBeforeResume = 0
    /// How many records the last run wrote through a fast path (for tests).
    @_spi(Testing) public private(set) var fastPathRecords = 0
    /// How many of those were written several rows per statement (for tests).
    @_spi(Testing) public private(set) var multiRowRecords = 0
    /// A reader to use instead of opening `step.source` (e.g. one that replays sampled records).
    private let givenReader: (any RecordReader)?
    /// The reader of the running step, for the progress line's percent.
    private var stepReader: (any RecordReader)?
    /// Records read after the first record a staging inserter keeps, in order, until its flush.
    private var pending: [PendingRecord] = []
    /// The read-ahead batch whose reference keys were resolved last (``ImportPlan/prefetchReferences(in:)``).
    private var prefetchedBatch: (reader: ObjectIdentifier, number: Int)?
    /// The read-ahead batch a nested import's ``NestedBatch`` began last.
    private var nestedBatch: (reader: ObjectIdentifier, number: Int)?
    /// The records PostgreSQL's fast path staged, which ``pending`` refers to by index.
    private var stagedTrail: StagedRecordTrail?
    /// The files a `files: new` import chose, kept in its checkpoints for its resume.
    private var selectedFiles: [String]?

    package init(
        step: ImportStep, store: Store, index: Int = 1, jobName: String = "import", reader: (any RecordReader)? = nil
    ) {
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
    package func run() throws -> StepReport {
        try Interruption.honouring { try runHonouringSignals() }
    }

    private func runHonouringSignals() throws -> StepReport {
        var report = StepReport(index: index, kind: "import", entity: step.entity, source: step.source)
        report.rejectsFile = step.rejectsPath
        report.format = step.database == nil ? step.formatName : "database"
        let started = ContinuousClock.now
        let startedAt = DateCoding.nowText()
        var state = ImportState()
        var ignoredFields: [String] = []
        var drift = step.addedFields
        let driftCheck = SchemaDriftCheck(step: step)
        fastPathRecords = 0
        multiRowRecords = 0
        pending = []
        stagedTrail = nil
        var nestedPlan: NestedObjects?
        // Inside a caller's transaction (a job's dry run), the caller rolls everything back at the
        // end, so that later steps see what this one would have written.
        let insideTransaction = store.withDatabase { $0.isInTransaction }
        let checkpoint: ImportCheckpoint?
        let trail: SourceTrail?
        let incremental: IncrementalRead?
        do {
            // Refusals come before anything is touched (no rejects file, no run log entry).
            checkpoint = resume ? try checkpointToResume() : nil
            let tracked = !step.atomic && !dryRun && step.sources != ["-"]
            trail = tracked ? try checkpoint.map { try SourceTrail(checking: $0.files) } ?? SourceTrail() : nil
            incremental =
                givenReader == nil
                ? try IncrementalRead(
                    step: step, job: jobName, store: store, selectedFiles: checkpoint?.selectedFiles) : nil
        } catch {
            report.outcome = .failed
            report.error = "\(error)"
            progress?.stepFinished(report)
            throw ImportStepFailure(report: report, error: error)
        }
        if let checkpoint {
            state = checkpoint.state
            insertedBeforeResume = state.inserted
        }
        let readBefore = state.read
        selectedFiles = incremental.flatMap { $0.readsDatabase ? nil : $0.files }
        defer { incremental?.reader = nil }
        do {
            if let incremental, incremental.files.isEmpty, !incremental.readsDatabase {
                // `files: new` and every file imported already: nothing to read.
                if !dryRun {
                    try store.writeDatabase { connection in
                        try recordRun(
                            connection, state: state, startedAt: startedAt, outcome: "succeeded", message: nil)
                        try ImportCheckpointLog(on: connection, layout: store.layout)?.clear(
                            job: jobName, step: index, entity: step.entity)
                    }
                }
                report.outcome = dryRun ? .dryRun : .succeeded
                incremental.fill(&report, rowsRead: 0)
                state.fill(&report)
                progress?.stepFinished(report)
                return report
            }
            let reader = try givenReader ?? incremental?.openReader() ?? ReaderFactory.open(step: step)
            stepReader = reader
            defer { stepReader = nil }
            let rejects = try step.rejectsPath.map { path in
                try checkpoint?.rejectsSize.map { try RejectsWriter(continuing: path, at: $0) }
                    ?? RejectsWriter(path: path, dryRun: dryRun)
            }
            defer { try? rejects?.close() }
            // The plan (field indexes, coercions, prepared statements) is made once per step.
            let plan = try store.withDatabase {
                try ImportPlan(step: step, reader: reader, database: $0, model: store.model, layout: store.layout)
            }
            defer { store.withDatabase { _ in plan.sync?.close() } }
            // A header's new or missing fields are settled before any record is read.
            try driftCheck.atStart(reader: reader, plan: plan, drift: &drift)
            // ferry proves the step's references itself: SQLite's per-row check is off meanwhile.
            let foreignKeysSuspended = try store.withDatabase { try plan.suspendForeignKeyChecks(on: $0) }
            defer { if foreignKeysSuspended { try? store.withDatabase { try plan.resumeForeignKeyChecks(on: $0) } } }
            state.syncKeys.key = plan.sync?.key
            nestedPlan = plan.nested
            let fastPathFits =
                (plan.sqliteInserter?.supportsDirectBinding == true && plan.nested == nil) || plan.stagesEncodedRows
            let kinds = allowsFastPath && fastPathFits ? ImportPlan.fastKinds(for: plan.attributes) : nil
            if kinds != nil && plan.stagesEncodedRows {
                stagedTrail = StagedRecordTrail(fieldIndexes: plan.columnFieldIndexes)
            }
            // PostgreSQL resolves references a read-ahead batch at a time: the batch is read ahead.
            // An incremental database read takes its mark from the reader's last row: the reader
            // is not ahead of the rows written.
            let records = try StepRecords(
                reader: reader,
                readAhead: (readsAhead || !plan.prefetchedReferences.isEmpty || plan.nested?.batch != nil)
                    && incremental?.readsDatabase != true,
                coercion: kinds.map { ReadAheadCoercion(plan: plan, kinds: $0, always: readAheadAlwaysCoerces) },
                recordsPerBatch: !plan.prefetchedReferences.isEmpty && plan.nested == nil
                    ? ReadAheadReader.recordsPerLookupBatch : ReadAheadReader.recordsPerBatch)
            defer { records.stop() }
            // An incremental database read resumes from the mark its committed batches advanced.
            if let checkpoint, incremental?.readsDatabase != true {
                try records.skip(checkpoint.state.read) { try advance($0, state) }
            }
            if step.atomic || dryRun {
                try store.writeDatabase { connection in
                    let referenceChecks = try plan.liftReferenceChecks(on: connection)
                    try importRecords(
                        records, plan: plan, kinds: kinds, rejects: rejects, state: &state, batchLimit: nil)
                    // JSON records name their keys as they come: settled once all were read.
                    try driftCheck.atEnd(reader: reader, plan: plan, drift: &drift)
                    try checkBudgetAtEnd(state)
                    // Sent with the step's end (its run-log row and `COMMIT`), whose failure it fails.
                    for statement in referenceChecks { try connection.executeWithNext(statement, []) }
                    if let sync = plan.sync { try deleteAbsentRows(sync, state: &state) }
                    if dryRun {
                        if insideTransaction { return }
                        throw DryRunRollback()
                    }
                    // The rejects are on disk before the rows commit; failing to write them fails the step.
                    try rejects?.close()
                    try incremental?.commit(
                        connection, layout: store.layout, openedFiles: records.openedFiles, finished: true)
                    try recordRun(connection, state: state, startedAt: startedAt, outcome: "succeeded", message: nil)
                }
            } else {
                // Checkpointed: each batch commits on its own; a failure keeps the committed batches.
                if let trail, checkpoint == nil {
                    // A kill before the first batch commits resumes at the first record (a job's
                    // `--resume` then skips the steps before this one).
                    try store.writeDatabase {
                        try saveCheckpoint($0, trail: trail, records: records, rejects: rejects, state: state)
                    }
                }
                var done = false
                while !done {
                    done = try store.writeDatabase { connection in
                        let finished = try importRecords(
                            records, plan: plan, kinds: kinds, rejects: rejects, state: &state,
                            batchLimit: step.batchSize)
                        // This batch's rejects are on disk before the batch commits.
                        try rejects?.synchronize()
                        // Where the batch ends commits with it: a kill leaves rows and checkpoint agreeing.
                        if let trail {
                            try saveCheckpoint(
                                connection, trail: trail, records: records, rejects: rejects, state: state)
                        }
                        // So do the incremental mark and the files read to their end.
                        try incremental?.commit(
                            connection, layout: store.layout, openedFiles: records.openedFiles, finished: finished)
                        return finished
                    }
                }
                try rejects?.close()
                try driftCheck.atEnd(reader: reader, plan: plan, drift: &drift)
                try checkBudgetAtEnd(state)
                try store.writeDatabase { connection in
                    try recordRun(connection, state: state, startedAt: startedAt, outcome: "succeeded", message: nil)
                    try ImportCheckpointLog(on: connection, layout: store.layout)?.clear(
                        job: jobName, step: index, entity: step.entity)
                }
            }
            // The input is read to its end: the reader thread, if any, is done with the names.
            ignoredFields = reader.fieldNames.filter { !plan.mappedFieldNames.contains($0) }
            report.outcome = dryRun ? .dryRun : .succeeded
        } catch is DryRunRollback {
            report.outcome = .dryRun
        } catch {
            let error = resumable(error, tracked: trail != nil)
            state.fill(&report)
            incremental?.fill(&report, rowsRead: state.read - readBefore)
            report.outcome = .failed
            report.error = "\(error)"
            report.drift = drift.isEmpty ? nil : drift
            report.elapsedSeconds = started.duration(to: .now).seconds
            if !dryRun {
                do {
                    try store.writeDatabase {
                        try recordRun($0, state: state, startedAt: startedAt, outcome: "failed", message: "\(error)")
                    }
                } catch let logError {
                    // The step's own error is the one reported; the run log just misses this run.
                    FerryLog.job.notice("the failed import step \(index) was not recorded in the run log: \(logError)")
                }
            }
            progress?.stepFinished(report)
            throw ImportStepFailure(report: report, error: error)
        }
        state.fill(&report)
        incremental?.fill(&report, rowsRead: state.read - readBefore)
        report.nested = nestedPlan?.report
        report.ignoredFields = ignoredFields.isEmpty ? nil : ignoredFields
        report.drift = drift.isEmpty ? nil : drift
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
    private func importRecords(
        _ records: StepRecords, plan: ImportPlan, kinds: [ImportPlan.FastKind]?, rejects: RejectsWriter?,
        state: inout ImportState, batchLimit: Int?
    ) throws -> Bool {
        try plan.beginTransaction()
        // Keys resolved ahead are forgotten with the transaction: the current batch's are resolved again.
        prefetchedBatch = nil
        nestedBatch = nil
        let finished = try readRecords(
            records, plan: plan, kinds: kinds, rejects: rejects, state: &state, batchLimit: batchLimit)
        // The batch (or the step) ends with every record written and counted.
        try writeStaged(plan: plan, rejects: rejects, state: &state)
        if let nested = plan.nested { try nested.batch?.writeKept(in: nested) }
        return finished
    }

    private func readRecords(
        _ records: StepRecords, plan: ImportPlan, kinds: [ImportPlan.FastKind]?, rejects: RejectsWriter?,
        state: inout ImportState, batchLimit: Int?
    ) throws -> Bool {
        var values = Array(repeating: Value.null, count: plan.columnCount)
        var supplied = Array(repeating: true, count: plan.columnCount)
        var inBatch = 0
        // A wrapper's held records (a replayed sample) come first.
        for record in records.takeHeldRecords() {
            if let file = record.sourceName { try enter(file: file, plan: plan, rejects: rejects, state: &state) }
            state.read += 1
            inBatch += 1
            try process(record, plan: plan, values: &values, supplied: &supplied, rejects: rejects, state: &state)
        }
        while let stream = records.current {
            if let file = records.currentFileName { try enter(file: file, plan: plan, rejects: rejects, state: &state) }
            let finished: Bool
            if let readAhead = stream.reader as? ReadAheadReader {
                // The concrete type lets the compiler specialize the loop for the pipelined case.
                finished = try importRecords(
                    from: readAhead, plan: plan, kinds: kinds, rejects: rejects, values: &values, supplied: &supplied,
                    state: &state, inBatch: &inBatch, batchLimit: batchLimit)
            } else {
                finished = try importRecords(
                    from: stream.reader, plan: plan, kinds: kinds, rejects: rejects, values: &values,
                    supplied: &supplied, state: &state, inBatch: &inBatch, batchLimit: batchLimit)
            }
            guard finished else { return false }
            try records.nextFile()
        }
        return true
    }

    private func importRecords<Reader: ByteFieldReader>(
        from reader: Reader, plan: ImportPlan, kinds: [ImportPlan.FastKind]?, rejects: RejectsWriter?,
        values: inout [Value], supplied: inout [Bool],
        state: inout ImportState, inBatch: inout Int, batchLimit: Int?
    ) throws -> Bool {
        // Records the read-ahead thread coerced are written several rows per statement; the ones a
        // statement did not write (from a refused record on) are taken one by one.
        let run = kinds != nil && reader is ReadAheadReader ? try plan.rowsPerMultiRowInsert() : nil
        var oneByOne = 0
        while try advance(reader, state) {
            if oneByOne > 0 {
                oneByOne -= 1
            } else if let run, let readAhead = reader as? ReadAheadReader,
                batchLimit.map({ inBatch + run <= $0 }) ?? true,
                let coerced = readAhead.coercedRun(run)
            {
                if (state.read + run) >> 12 != state.read >> 12 {
                    progress?.stepProgress(
                        read: state.read, rejected: state.rejected, fraction: stepReader?.progressFraction)
                    try checkInterruption(state)
                }
                let written = try plan.insertCoerced(coerced.rows, first: coerced.first, count: run)
                state.read += written
                inBatch += written
                state.inserted += written
                fastPathRecords += written
                multiRowRecords += written
                if written == run {
                    readAhead.skip(run - 1)
                    if let batchLimit, inBatch >= batchLimit { return false }
                    continue
                }
                // A constraint refused record `written` (or a key needs the general path): it and
                // the records after it in the statement go one by one.
                readAhead.skip(written)
                oneByOne = run - written - 1
            }
            if !plan.prefetchedReferences.isEmpty, let readAhead = reader as? ReadAheadReader,
                prefetchedBatch.map({ $0 != (ObjectIdentifier(readAhead), readAhead.batchNumber) }) ?? true
            {
                prefetchedBatch = (ObjectIdentifier(readAhead), readAhead.batchNumber)
                try plan.prefetchReferences(in: readAhead)
            }
            if let nested = plan.nested, let batch = nested.batch, let readAhead = reader as? ReadAheadReader,
                nestedBatch.map({ $0 != (ObjectIdentifier(readAhead), readAhead.batchNumber) }) ?? true
            {
                nestedBatch = (ObjectIdentifier(readAhead), readAhead.batchNumber)
                try batch.begin(records: readAhead.recordsOfBatch(), plan: plan, nested: nested)
            }
            state.read += 1
            inBatch += 1
            if state.read & 4095 == 0 {
                progress?.stepProgress(
                    read: state.read, rejected: state.rejected, fraction: stepReader?.progressFraction)
                try checkInterruption(state)
            }
            let fast: ImportPlan.FastOutcome =
                if let kinds, reader.currentRecordIsWellFormed {
                    try fastInsert(from: reader, plan: plan, kinds: kinds)
                } else {
                    .useGeneralPath
                }
            switch fast {
            case .done(let outcome):
                fastPathRecords += 1
                switch outcome {
                case .inserted: state.inserted += 1
                case .updated: state.updated += 1
                case .unchanged: state.unchanged += 1
                case .skipped: state.skipped += 1
                case .rejected: preconditionFailure("the fast path hands rejected records to the general path")
                }
            case .staged:
                fastPathRecords += 1
                try noteStaged(from: reader, plan: plan, rejects: rejects, state: &state)
            case .useGeneralPath:
                try process(
                    reader.currentRecord(), plan: plan, values: &values, supplied: &supplied, rejects: rejects,
                    state: &state)
            }
            if let batchLimit, inBatch >= batchLimit { return false }
        }
        return true
    }

    /// The fast path for the current record: the values the read-ahead thread coerced, when it
    /// did, else the reader's bytes.
    @inline(__always)
    private func fastInsert<Reader: ByteFieldReader>(
        from reader: Reader, plan: ImportPlan, kinds: [ImportPlan.FastKind]
    ) throws -> ImportPlan.FastOutcome {
        if plan.postgresInserter != nil {
            if let readAhead = reader as? ReadAheadReader, let coerced = readAhead.currentCoercedRow {
                return try plan.stageFast(coerced: coerced.rows, row: coerced.row)
            }
            return try plan.stageFast(from: reader, kinds: kinds)
        }
        if let readAhead = reader as? ReadAheadReader, let coerced = readAhead.currentCoercedRow {
            return try plan.fastInsert(coerced: coerced.rows, row: coerced.row)
        }
        return try plan.fastInsert(from: reader, kinds: kinds)
    }

    /// Notes the reader's current record, which the fast path staged: its outcome comes with the
    /// flush, which is due when the inserter is full.
    private func noteStaged<Reader: ByteFieldReader>(
        from reader: Reader, plan: ImportPlan, rejects: RejectsWriter?, state: inout ImportState
    ) throws {
        guard let stagedTrail, let staging = plan.stagingInserter else {
            preconditionFailure("records are staged through the fast path on PostgreSQL only")
        }
        pending.append(PendingRecord(record: nil, staged: stagedTrail.append(from: reader), rejection: nil))
        if staging.isFull { try writeStaged(plan: plan, rejects: rejects, state: &state) }
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
    private func process(
        _ record: SourceRecord, plan: ImportPlan, values: inout [Value], supplied: inout [Bool],
        rejects: RejectsWriter?, state: inout ImportState
    ) throws {
        if let problem = record.problem {
            try reject(
                record: record, field: nil, line: problem.location?.line ?? record.line,
                column: problem.location?.column ?? record.column, reason: problem.message, plan: plan,
                rejects: rejects, state: &state)
            return
        }
        let filled = try plan.fill(record: record, values: &values, supplied: &supplied) {
            try writeStaged(plan: plan, rejects: rejects, state: &state)
        }
        switch filled {
        case .failure(let failure):
            try reject(
                record: record, field: failure.field, line: failure.line, column: failure.column,
                reason: failure.reason, plan: plan, rejects: rejects, state: &state)
        case .success:
            let outcome: InsertOutcome
            if let staging = plan.stagingInserter {
                guard let decided = try staging.stage(values, supplied: plan.hasOptionalFields ? supplied : nil) else {
                    pending.append(
                        PendingRecord(
                            record: record, staged: -1, rejection: nil,
                            syncKey: plan.sync == nil ? nil : plan.syncKeyDescription(of: values)))
                    if staging.isFull { try writeStaged(plan: plan, rejects: rejects, state: &state) }
                    return
                }
                outcome = decided
            } else if let nested = plan.nested, let inserter = plan.recordInserter {
                switch try nested.write(
                    record: record, values: &values, supplied: &supplied, inserter: inserter,
                    suppliedMatters: plan.hasOptionalFields)
                {
                case .success(let written): outcome = written
                case .failure(let failure):
                    try reject(
                        record: record, field: failure.field, line: failure.line, column: failure.column,
                        reason: failure.reason, plan: plan, rejects: rejects, state: &state)
                    return
                }
            } else if let inserter = plan.recordInserter {
                outcome = try inserter.insert(values, supplied: plan.hasOptionalFields ? supplied : nil)
            } else {
                preconditionFailure("an import plan has a record inserter or a staging inserter")
            }
            try count(outcome, of: record, plan: plan, values: values, rejects: rejects, state: &state)
        }
    }

    /// Counts a written record's outcome (a rejection goes to ``reject(record:field:line:column:reason:plan:rejects:state:replayed:)``).
    /// A sync's key is `syncKey` when given (a staged record's, noted when it was staged), else
    /// read from `values`.
    private func count(
        _ outcome: InsertOutcome, of record: SourceRecord, plan: ImportPlan, values: [Value], syncKey: String? = nil,
        rejects: RejectsWriter?, state: inout ImportState, replayed: Bool = false
    ) throws {
        switch outcome {
        case .inserted:
            state.inserted += 1
            if plan.sync != nil { state.syncKeys.note(inserted: syncKey ?? plan.syncKeyDescription(of: values)) }
        case .updated:
            state.updated += 1
            if plan.sync != nil { state.syncKeys.note(updated: syncKey ?? plan.syncKeyDescription(of: values)) }
        case .unchanged: state.unchanged += 1
        case .skipped: state.skipped += 1
        case .rejected(let reason, let column):
            let location = column.flatMap { plan.location(ofColumn: $0, in: record) }
            try reject(
                record: record, field: column.flatMap { plan.fieldName(ofColumn: $0) },
                line: location?.line ?? record.line, column: location?.column ?? record.column,
                reason: reason, plan: plan, rejects: rejects, state: &state, replayed: replayed)
        }
    }

    // MARK: - Staged records (PostgreSQL)

    /// A record whose outcome waits for the staged records read before it.
    private struct PendingRecord {
        /// The record; nil for one the fast path staged, kept in ``stagedTrail`` at `staged`.
        let record: SourceRecord?
        let staged: Int
        /// nil: staged, its outcome comes from the flush; else the rejection decided already.
        let rejection: (field: String?, line: Int, column: Int, reason: String)?
        /// A sync's key of a staged record, for the report (`id=4`): its values are gone by the flush.
        var syncKey: String? = nil
    }

    /// Counts the next records in `file`'s counts, after counting the staged records of the file before.
    private func enter(file: String, plan: ImportPlan, rejects: RejectsWriter?, state: inout ImportState) throws {
        if file != state.file { try writeStaged(plan: plan, rejects: rejects, state: &state) }
        state.enter(file: file)
    }

    /// Writes the records the staging inserter keeps and counts every pending record in the
    /// order it was read, as if each had been written on its own; false when none was kept.
    @discardableResult
    private func writeStaged(plan: ImportPlan, rejects: RejectsWriter?, state: inout ImportState) throws -> Bool {
        guard let staging = plan.stagingInserter, staging.stagedCount > 0 else { return false }
        var outcomes = try staging.flush().makeIterator()
        let records = pending
        pending = []
        defer { stagedTrail?.removeAll() }
        // Each record counts as read when its outcome counts, so a failure reports what SQLite's
        // record-by-record import reports (the records read up to the one that failed it).
        state.read -= records.count
        for entry in records {
            state.read += 1
            if let rejection = entry.rejection, let record = entry.record {
                try reject(
                    record: record, field: rejection.field, line: rejection.line, column: rejection.column,
                    reason: rejection.reason, plan: plan, rejects: rejects,
                    state: &state, replayed: true)
            } else if let outcome = outcomes.next() {
                if let record = entry.record {
                    try count(
                        outcome, of: record, plan: plan, values: [], syncKey: entry.syncKey, rejects: rejects,
                        state: &state, replayed: true)
                } else if let stagedTrail {
                    try count(
                        outcome, ofStaged: entry.staged, in: stagedTrail, plan: plan, rejects: rejects, state: &state)
                }
            }
        }
        return true
    }

    /// Counts the outcome of a record the fast path staged (entry `index` of `trail`).
    private func count(
        _ outcome: InsertOutcome, ofStaged index: Int, in trail: StagedRecordTrail, plan: ImportPlan,
        rejects: RejectsWriter?, state: inout ImportState
    ) throws {
        switch outcome {
        case .inserted: state.inserted += 1
        case .updated: state.updated += 1
        case .unchanged: state.unchanged += 1
        case .skipped: state.skipped += 1
        case .rejected(let reason, let column):
            let record = trail.record(index)
            let location = column.flatMap { trail.location(index, column: $0) }
            try reject(
                record: record, field: column.flatMap { plan.fieldName(ofColumn: $0) },
                line: location?.line ?? record.line, column: location?.column ?? record.column,
                reason: reason, plan: plan, rejects: rejects, state: &state, replayed: true)
        }
    }

    /// Counts a rejected record and writes it to the rejects file, failing the step when the
    /// budget is spent. `replayed`: the rejection was decided earlier (a pending record's) or by
    /// a staging inserter's flush, which noted a sync's present row in the record's place already.
    private func reject(
        record: SourceRecord, field: String?, line: Int, column: Int, reason: String, plan: ImportPlan,
        rejects: RejectsWriter?, state: inout ImportState, replayed: Bool = false
    ) throws {
        let syncKey = plan.sync == nil ? nil : plan.syncKey(of: record)
        // A rejected record's row stays: its key counts as present, noted in the record's place
        // (on PostgreSQL a staged claim, which may fill the batch).
        if !replayed, let syncKey {
            try plan.markPresent(key: syncKey)
            if plan.stagingInserter?.isFull == true { try writeStaged(plan: plan, rejects: rejects, state: &state) }
        }
        if !pending.isEmpty {
            // Staged records read before this one are counted first.
            pending.append(PendingRecord(record: record, staged: -1, rejection: (field, line, column, reason)))
            return
        }
        state.rejected += 1
        let location = InputLocation(file: state.file ?? step.source, line: line, column: column, record: record.number)
        if plan.sync != nil {
            // Without a readable key, the row a rejected record stands for is unknown (see deleteAbsentRows).
            if syncKey == nil {
                state.unkeyedRejects += 1
                if state.firstUnkeyedReject == nil { state.firstUnkeyedReject = location }
            }
        }
        let limit: Int? = {
            switch step.maxRejects {
            case .count(let n): return n
            case .percent, .unlimited: return nil
            }
        }()
        if let rejects {
            try rejects.write(
                file: state.file, record: record.number, line: line, column: column, field: field, reason: reason,
                raw: record.raw)
        }
        if let limit, state.rejected > limit {
            if rejects == nil {
                throw FerryError(
                    .rejectBudget, reason, at: location,
                    notes: [
                        step.rejectsAdvice
                            ?? "the step allows no rejected records; add `rejects: FILE` and `max_rejects:` to the step to set them aside and go on"
                    ])
            }
            throw FerryError(
                .rejectBudget,
                "more than \(limit) record\(limit == 1 ? " was" : "s were") rejected; the step was rolled back",
                at: location,
                notes: [
                    "last reject: \(reason)",
                    rejects.map {
                        $0.isDryRun ? "dry run: \($0.path) was not written" : "rejected records are in \($0.path)"
                    } ?? "",
                ])
        }
    }

    /// `error` with a note naming the command that continues after the committed batches, when
    /// the step is resumable (`tracked`: checkpointed, from files) and the error does not say
    /// so already (an interruption does): a lost connection, a full disk, a server that went away.
    private func resumable(_ error: any Error, tracked: Bool) -> any Error {
        guard tracked, var failure = error as? FerryError, !"\(failure)".contains("--resume") else { return error }
        if let resumeCommand = offeredResume {
            failure.notes.append(
                "the batches committed before the failure stay in the store; once the cause is fixed, continue after them with: \(resumeCommand)"
            )
        } else if store.layout.bookkeeping == nil {
            failure.notes.append(
                "the batches committed before the failure stay in the store; \(Self.noProgress): the import cannot be resumed"
            )
        }
        return failure
    }

    /// Why a store without ferry's bookkeeping tables cannot resume an import.
    static let noProgress = "the store keeps no import progress (a Core Data store has no table for it)"

    /// The command that continues after the committed batches, when the store keeps the
    /// progress it needs.
    private var offeredResume: String? { store.layout.bookkeeping == nil ? nil : resumeCommand }

    /// Stops the step when SIGINT or SIGTERM arrived: the error rolls the transaction back
    /// (with `atomic: false`, the batches committed so far stay).
    private func checkInterruption(_ state: ImportState) throws {
        try Interruption.check(
            step.atomic || dryRun
                ? "step \(index) import \(step.entity) was rolled back after \(state.read) records; the store is as it was before the step"
                : "step \(index) import \(step.entity) stopped after \(state.read) records; the batches it committed stay in the store, the batch in progress was rolled back"
                    + (step.sources != ["-"] ? offeredResume.map { "; to continue after them, run: \($0)" } ?? "" : ""))
    }

    /// Records where the step stands (inside the transaction of the batch that got it there).
    private func saveCheckpoint(
        _ connection: any DatabaseConnection, trail: SourceTrail, records: StepRecords, rejects: RejectsWriter?,
        state: ImportState
    ) throws {
        // A database source has no files to follow: its name is a label, not a path.
        try trail.update(
            openedFiles: step.database == nil ? records.openedFiles : [],
            bytesRead: records.current?.inputProgress?.bytesRead)
        var checkpoint = ImportCheckpoint(
            definition: ImportCheckpoint.definition(of: step, model: store.model), files: trail.identities,
            state: state, rejectsSize: rejects?.size)
        checkpoint.selectedFiles = selectedFiles
        try ImportCheckpointLog(on: connection, layout: store.layout)?.save(
            checkpoint, job: jobName, step: index, entity: step.entity)
    }

    /// The checkpoint `--resume` continues from, after checking that there is one and that the
    /// step is still the one it was made for; throws a refusal otherwise.
    private func checkpointToResume() throws -> ImportCheckpoint {
        if dryRun {
            throw FerryError(.usage, "--resume cannot be combined with a dry run", at: step.location)
        }
        if step.atomic {
            throw FerryError(
                .usage,
                "step \(index) import \(step.entity) is atomic: an interrupted run committed nothing, so there is nothing to resume",
                at: step.location,
                notes: [
                    "run it again without --resume; to make an import resumable, set `atomic: false` (`--atomic false`)"
                ])
        }
        if step.sources == ["-"] {
            throw FerryError(
                .usage, "an import from standard input cannot be resumed: its records cannot be read again",
                at: step.location)
        }
        if store.layout.bookkeeping == nil {
            throw FerryError(
                .usage,
                "cannot resume step \(index) import \(step.entity): \(Self.noProgress); run the import again without --resume",
                at: step.location)
        }
        let found = try store.withDatabase { connection in
            try ImportCheckpointLog(on: connection, layout: store.layout)?.load(
                job: jobName, step: index, entity: step.entity)
        }
        guard let checkpoint = found else {
            throw FerryError(
                .usage,
                "no interrupted import of step \(index) (import \(step.entity) from \(step.source)) to resume; run without --resume",
                at: step.location)
        }
        let changes = checkpoint.changes(from: ImportCheckpoint.definition(of: step, model: store.model))
        if !changes.isEmpty {
            throw FerryError(
                .usage,
                "cannot resume step \(index) import \(step.entity): its \(changes.joined(separator: ", ")) changed since the interrupted run",
                at: step.location,
                notes: changes.map {
                    "\($0) was '\(checkpoint.definition[$0] ?? "")', now '\(ImportCheckpoint.definition(of: step, model: store.model)[$0] ?? "")'"
                })
        }
        let files = try step.database != nil ? [] : checkpoint.selectedFiles ?? SourceFiles.expand(step.sources)
        let recorded = checkpoint.files.map(\.path)
        if Array(files.prefix(recorded.count)) != recorded {
            throw FerryError(
                .usage,
                "cannot resume step \(index) import \(step.entity): the files of \(step.source) are not the ones the interrupted run read (\(recorded.joined(separator: ", ")))",
                at: step.location)
        }
        return checkpoint
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

    // MARK: - Sync

    /// The end of a `mode: sync` step: deletes the rows of the entity the source did not have,
    /// with the model's delete rules, unless the source is empty (and that is not allowed) or
    /// a rejected record's key could not be read (and `unkeyed_rejects: delete` is not set).
    private func deleteAbsentRows(_ sync: SyncTracker, state: inout ImportState) throws {
        let absent = try sync.absentCount()
        state.syncKeys.deleted = try sync.absentKeys(limit: SyncKeySamples.limit)
        if state.read == 0, absent > 0, !(step.sync.allowEmpty || allowsEmptySync) {
            throw FerryError(
                .invalidInput,
                "the source has no records: a sync would delete all \(absent) \(step.entity) row\(absent == 1 ? "" : "s"); the step was rolled back",
                at: InputLocation(file: step.source),
                notes: [
                    "if the source is meant to be empty, pass --allow-empty-sync (or set 'allow_empty: true' on the step)"
                ])
        }
        if state.unkeyedRejects > 0, step.sync.unkeyedRejects == .skipDeletes {
            let first = state.firstUnkeyedReject.map { " (the first at \($0))" } ?? ""
            state.deletionsSkipped =
                "\(state.unkeyedRejects) rejected record\(state.unkeyedRejects == 1 ? " has" : "s have") no readable key\(first), so the rows the source still has cannot be told apart: \(absent) \(step.entity) row\(absent == 1 ? "" : "s") absent from the source kept (set 'unkeyed_rejects: delete' to delete them anyway)"
            state.kept = try max(0, sync.rowCount() - state.inserted - state.updated - state.unchanged)
            return
        }
        try checkDeletionLimit(absent: absent, sync: sync, state: state)
        let result = try sync.deleteAbsent(location: step.location)
        state.deleted = result.deletedCount
        state.cascadeDeleted = result.cascaded
        state.nullified = result.nullified
        // The rows left that no record accounts for: those whose rejected record kept them.
        state.kept = try max(0, sync.rowCount() - state.inserted - state.updated - state.unchanged)
    }

    /// Refuses a sync that would delete more of the entity's rows than the step's `max_delete`
    /// allows (a truncated source: every row past the cut is absent); the step is rolled back.
    /// One rule for SQLite and PostgreSQL. The rows the entity held before the step are its rows
    /// now less those the step inserted.
    private func checkDeletionLimit(absent: Int, sync: SyncTracker, state: ImportState) throws {
        // An empty source that is allowed to be empty means every row goes.
        guard absent > 0, state.read > 0 else { return }
        let limit = step.sync.maxDelete
        let total = max(try sync.rowCount() - state.inserted, absent)
        guard let allowed = limit.allowed(ofTotal: total), absent > allowed else { return }
        let share = String(format: "%.1f", Double(absent) * 100 / Double(total))
        let rows = "\(step.entity) row\(total == 1 ? "" : "s")"
        let limitText: String
        switch limit {
        case .fraction: limitText = "\(limit) of \(total), at least 1: \(allowed) row\(allowed == 1 ? "" : "s")"
        default: limitText = "\(allowed) row\(allowed == 1 ? "" : "s")"
        }
        throw FerryError(
            .verification,
            "a sync would delete \(absent) of \(total) \(rows) (\(share)%), more than max_delete allows (\(limitText)); the step was rolled back",
            at: InputLocation(file: step.source),
            notes: [
                "a source cut short deletes every row past the cut: check the source is complete",
                "if these rows are meant to go, set 'max_delete: \(absent)' (or a percentage, or 'none') on the step, or pass --max-delete \(absent) to ferry import",
            ])
    }

    private func recordRun(
        _ connection: any DatabaseConnection, state: ImportState, startedAt: String, outcome: String, message: String?
    ) throws {
        try RunLog(on: connection, layout: store.layout)?.record(
            RunRecord(
                job: jobName, stepIndex: index, step: "import", entity: step.entity, source: step.source,
                startedAt: startedAt,
                endedAt: DateCoding.nowText(), outcome: outcome, read: state.read, inserted: state.inserted,
                updated: state.updated,
                // The run log has no column for a sync's unchanged records: they count as skipped there.
                skipped: state.skipped + state.unchanged, rejected: state.rejected, message: message))
    }
}

/// A failed import step: the error and the report of what it had done before rolling back.
package struct ImportStepFailure: Error, CustomStringConvertible {
    package var report: StepReport
    package var error: any Error
    package var description: String { "\(error)" }
}

struct ImportState: Codable {
    var read = 0
    var inserted = 0
    var updated = 0
    var unchanged = 0
    var skipped = 0
    var rejected = 0
    /// A sync's deletions and the keys it reports.
    var deleted = 0
    var cascadeDeleted: [String: Int] = [:]
    var nullified: [String: Int] = [:]
    var syncKeys = SyncKeySamples()
    var deletionsSkipped: String?
    /// Rejected records of a sync whose key could not be read, and where the first one is.
    var unkeyedRejects = 0
    var firstUnkeyedReject: InputLocation?
    /// A sync's rows that its rejected records kept: rows after the step that no record
    /// inserted, updated or found unchanged (nil until the sync's end).
    var kept: Int?
    /// The file being read when the step reads several (nil for a single source).
    private(set) var file: String?
    /// The counts of the files done, and where the counts stood when the current file began.
    private var finishedFiles: [SourceFileReport] = []
    private var atFileStart = SourceFileReport(file: "")

    /// What a resumable import's checkpoint keeps: the counts. A sync's keys and deletions are not
    /// among them, since a sync is always one transaction and never resumes.
    private enum CodingKeys: String, CodingKey {
        case read, inserted, updated, unchanged, skipped, rejected, file, finishedFiles, atFileStart
    }

    /// Records read from now on come from `file` (several files are read one after the other).
    mutating func enter(file name: String) {
        guard name != file else { return }
        if file != nil { finishedFiles.append(currentFileCounts) }
        file = name
        atFileStart = SourceFileReport(
            file: name, read: read, inserted: inserted, updated: updated, unchanged: unchanged, skipped: skipped,
            rejected: rejected)
    }

    private var currentFileCounts: SourceFileReport {
        SourceFileReport(
            file: atFileStart.file, read: read - atFileStart.read, inserted: inserted - atFileStart.inserted,
            updated: updated - atFileStart.updated,
            unchanged: unchanged - atFileStart.unchanged, skipped: skipped - atFileStart.skipped,
            rejected: rejected - atFileStart.rejected)
    }

    func fill(_ report: inout StepReport) {
        report.read = read
        report.inserted = inserted
        report.updated = updated
        report.unchanged = unchanged
        report.skipped = skipped
        report.rejected = rejected
        if file != nil { report.files = finishedFiles + [currentFileCounts] }
        if let key = syncKeys.key {
            report.deleted = deleted
            report.cascadeDeleted = cascadeDeleted.isEmpty ? nil : cascadeDeleted
            report.nullified = nullified.isEmpty ? nil : nullified
            report.kept = kept
            report.sync = SyncReport(
                key: key, insertedKeys: syncKeys.inserted, updatedKeys: syncKeys.updated, deletedKeys: syncKeys.deleted,
                deletionsSkipped: deletionsSkipped)
        }
    }
}
