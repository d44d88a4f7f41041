import FerryCore
import FerryFormats
import Foundation

/// What the read-ahead thread coerces with: the step's plan and its fast-path kinds.
struct ReadAheadCoercion {
    let plan: ImportPlan
    let kinds: [ImportPlan.FastKind]
    /// Coerce every batch, not only while filled batches wait for the importing thread (tests
    /// use it to make the split, and so the multi-row statements, independent of timing).
    var always = false
}

/// A ``ByteFieldReader`` that reads and parses its input on a thread of its own, one or more
/// batches ahead of the importing thread: the first stage of the two-core import pipeline.
///
/// The reader thread advances the wrapped reader and copies each record into a
/// ``RecordBatch``; the importing thread reads the batches in order through the same
/// ``ByteFieldReader`` interface, so the import loop is the same with or without it. A fixed
/// number of batches circulate between the two threads (bounded memory), and an error of the
/// wrapped reader reaches the importing thread after the records read before it, as without
/// read-ahead.
///
/// With an import plan, the reader thread also coerces and validates each record's attributes
/// (``ImportPlan/coerceRow(from:kinds:into:)``), so that the importing thread only binds the
/// values, resolves references and steps SQLite: the work splits about evenly across two cores.
///
/// The wrapped reader belongs to the reader thread from the first ``advance()`` on: read its
/// field names (``fieldIndex(of:)``, ``prepare()``) before. Call ``stop()`` when the import ends
/// early; the reader thread then stops at its next batch.
final class ReadAheadReader: ByteFieldReader {
    /// Records per batch (unless the caller asks for another number), and the byte size after
    /// which a batch is handed over early.
    static let recordsPerBatch = 2048
    /// Records per batch when each batch's keys are looked up on a server
    /// (``ImportPlan/prefetchReferences(in:)``): one round trip per batch, so fewer, larger ones.
    static let recordsPerLookupBatch = 10_000
    static let bytesPerBatch = 1 << 20
    /// Batches in circulation: one being read by the importer, the rest filled ahead.
    static let batchCount = 4

    /// The state both threads share, guarded by `condition`.
    private final class Channel: @unchecked Sendable {
        let condition = NSCondition()
        var free: [RecordBatch]
        var full: [RecordBatch] = []
        var cancelled = false
        var started = false
        let base: any ByteFieldReader
        let coercion: ReadAheadCoercion?
        let recordsPerBatch: Int

        init(base: any ByteFieldReader, coercion: ReadAheadCoercion?, recordsPerBatch: Int) {
            self.base = base
            self.coercion = coercion
            self.recordsPerBatch = recordsPerBatch
            free = (0..<ReadAheadReader.batchCount).map { _ in
                RecordBatch(
                    capacity: recordsPerBatch, byteCapacity: ReadAheadReader.bytesPerBatch,
                    coerced: coercion.map {
                        CoercedRows(columnCount: $0.plan.attributes.count, referenceCount: $0.plan.references.count)
                    })
            }
        }

        /// Fills `batch` from the wrapped reader, coercing its records when `coerce` is true; the
        /// readers ferry has get a loop specialized for their type (the same loop, compiled for
        /// it), any other reader the generic one.
        func fill(_ batch: RecordBatch, coerce: Bool) throws {
            let coercion = coerce ? self.coercion : nil
            switch base {
            case let reader as CSVReader: try fill(batch, from: reader, coercion: coercion)
            case let reader as NDJSONReader: try fill(batch, from: reader, coercion: coercion)
            case let reader as JSONArrayReader: try fill(batch, from: reader, coercion: coercion)
            default: try fill(batch, from: base, coercion: coercion)
            }
        }

        private func fill<Reader: ByteFieldReader>(
            _ batch: RecordBatch, from reader: Reader, coercion: ReadAheadCoercion?
        ) throws {
            while batch.count < recordsPerBatch && batch.byteCount < ReadAheadReader.bytesPerBatch {
                guard try reader.advance() else {
                    batch.isLast = true
                    return
                }
                batch.append(from: reader, coercingWith: coercion)
            }
        }

        /// The reader thread: fills free batches until the input ends, fails, or is cancelled.
        func produce() {
            while true {
                condition.lock()
                while free.isEmpty && !cancelled { condition.wait() }
                if cancelled {
                    condition.unlock()
                    return
                }
                let batch = free.removeLast()
                // The split balances itself: while filled batches wait for the importing thread,
                // this thread has time to coerce; when none wait (parsing is the slower half,
                // as for JSON), it hands records over uncoerced and the importer coerces them.
                let coerce = !full.isEmpty || coercion?.always == true
                condition.unlock()
                batch.clear()
                do {
                    try fill(batch, coerce: coerce)
                } catch {
                    batch.error = error
                    batch.isLast = true
                }
                condition.lock()
                full.append(batch)
                condition.signal()
                condition.unlock()
                if batch.isLast { return }
            }
        }
    }

    /// Thrown by ``advance()`` when SIGINT or SIGTERM arrives while the importing thread waits
    /// for the reader thread (which may be blocked reading standard input).
    struct WaitInterrupted: Error {}

    private let channel: Channel

    @exclusivity(unchecked) private var batch: RecordBatch?
    @exclusivity(unchecked) private var position = -1
    @exclusivity(unchecked) private var record = RecordBatch.Record(
        number: 0, line: 0, column: 1, rawStart: 0, rawCount: 0, firstField: 0, fieldCount: 0, materialized: -1)
    @exclusivity(unchecked) private var finished = false

    /// Reads `base` ahead; with `coercion`, the reader thread also coerces and validates each
    /// record's attributes with the plan (``currentCoercedRow``), leaving the importing thread
    /// only binding, resolving and writing.
    init(
        _ base: any ByteFieldReader, coercion: ReadAheadCoercion? = nil,
        recordsPerBatch: Int = ReadAheadReader.recordsPerBatch
    ) {
        channel = Channel(base: base, coercion: coercion, recordsPerBatch: max(1, recordsPerBatch))
    }

    deinit { stop() }

    /// Stops the reader thread (at its next batch); the records not yet imported are dropped.
    func stop() {
        channel.condition.lock()
        channel.cancelled = true
        channel.condition.broadcast()
        channel.condition.unlock()
    }

    // MARK: - RecordReader (field names: only before the first advance)

    var sourceName: String { channel.base.sourceName }
    var fieldNames: [String] { channel.base.fieldNames }
    func fieldIndex(of name: String) -> Int { channel.base.fieldIndex(of: name) }
    func hasField(_ name: String) -> Bool { channel.base.hasField(name) }
    func prepare() throws { if !channel.started { try channel.base.prepare() } }

    var currentLocation: InputLocation {
        InputLocation(
            file: sourceName, line: max(record.line, 1), column: max(record.column, 1),
            record: record.number > 0 ? record.number : nil)
    }

    func next() throws -> SourceRecord? {
        try advance() ? currentRecord() : nil
    }

    // MARK: - ByteFieldReader

    func advance() throws -> Bool {
        if finished { return false }
        position += 1
        while position >= batch?.count ?? 0 {
            if let batch {
                if let error = batch.error {
                    finished = true
                    throw error
                }
                if batch.isLast {
                    finished = true
                    return false
                }
            }
            try takeNextBatch()
            position = 0
        }
        guard let batch else { return false }
        record = batch.records[position]
        return true
    }

    /// Counts the batches taken: changes when ``advance()`` moves to the next batch.
    private(set) var batchNumber = 0

    /// Calls `body` with the reader at each well-formed record of the current batch in turn
    /// (read its fields through the ``ByteFieldReader`` interface), then puts the reader back
    /// at its current record. For looking ahead at the batch's keys.
    func forEachWellFormedRecordOfBatch(_ body: () throws -> Void) rethrows {
        guard let batch else { return }
        let (savedPosition, savedRecord) = (position, record)
        defer { (position, record) = (savedPosition, savedRecord) }
        for index in 0..<batch.count where batch.records[index].materialized < 0 {
            position = index
            record = batch.records[index]
            try body()
        }
    }

    /// Every record of the current batch, as the reader gives them (for reading the batch ahead).
    func recordsOfBatch() -> [SourceRecord] {
        guard let batch else { return [] }
        return (0..<batch.count).map(batch.sourceRecord(at:))
    }

    /// Returns the batch read to the reader thread and waits for the next full one.
    private func takeNextBatch() throws {
        let condition = channel.condition
        condition.lock()
        if let batch { channel.free.append(batch) }
        batch = nil
        if !channel.started {
            channel.started = true
            let channel = self.channel
            let thread = Thread { channel.produce() }
            thread.name = "ferry read-ahead"
            thread.start()
        }
        condition.signal()
        while channel.full.isEmpty {
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.1))
            if channel.full.isEmpty && Interruption.signal != nil {
                condition.unlock()
                throw WaitInterrupted()
            }
        }
        batch = channel.full.removeFirst()
        batchNumber += 1
        condition.unlock()
    }

    /// False for a record kept materialized: one with a problem, or one longer than a batch
    /// (which then takes the general path; see ``RecordBatch``).
    var currentRecordIsWellFormed: Bool { record.materialized < 0 }

    /// The current record's attribute values as the reader thread coerced them, if it did.
    var currentCoercedRow: (rows: CoercedRows, row: Int)? {
        guard record.coercedRow >= 0, let rows = batch.unsafelyUnwrapped.coerced else { return nil }
        return (rows, record.coercedRow)
    }

    /// The coerced rows of the current record and the `count - 1` after it, when all of them are
    /// in the current batch and the reader thread coerced every one (their rows in ``CoercedRows``
    /// are then consecutive, from `first`); nil otherwise.
    func coercedRun(_ count: Int) -> (rows: CoercedRows, first: Int)? {
        guard let batch, let rows = batch.coerced, position + count <= batch.count else { return nil }
        let first = record.coercedRow
        // Rows are numbered in record order and only coerced records take one, so the last
        // record's row tells that none in between was left uncoerced.
        guard first >= 0, batch.records[position + count - 1].coercedRow == first + count - 1 else { return nil }
        return (rows, first)
    }

    /// Moves past `count` more records of the current batch (after ``coercedRun(_:)`` covered
    /// them), as that many ``advance()`` calls would.
    func skip(_ count: Int) {
        guard count > 0 else { return }
        position += count
        record = batch.unsafelyUnwrapped.records[position]
    }

    /// CSV text was checked while it was copied; JSON strings are valid by construction.
    var textIsValidUTF8: Bool { true }

    var currentFieldCount: Int { record.fieldCount }

    @inline(__always)
    func fieldKind(_ index: Int) -> ByteFieldKind {
        guard index >= 0 && index < record.fieldCount else { return .absent }
        return batch.unsafelyUnwrapped.fields[record.firstField + index].kind
    }

    @inline(__always)
    func withFieldBytes<T>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        guard index >= 0 && index < record.fieldCount else {
            return try body(UnsafeBufferPointer(start: nil, count: 0))
        }
        let batch = batch.unsafelyUnwrapped
        let slot = batch.fields[record.firstField + index]
        return try batch.withBytes(slot.start, slot.count, body)
    }

    func fieldPosition(_ index: Int) -> (line: Int, column: Int)? {
        guard index >= 0 && index < record.fieldCount else { return nil }
        let slot = batch.unsafelyUnwrapped.fields[record.firstField + index]
        return slot.kind == .absent ? nil : (slot.line, slot.column)
    }

    var currentRecordStart: (number: Int, line: Int, column: Int) { (record.number, record.line, record.column) }

    func withCurrentRawBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        let batch = batch.unsafelyUnwrapped
        if record.materialized >= 0 {
            return try batch.materialized[record.materialized].rawBytes.withUnsafeBufferPointer(body)
        }
        return try batch.withBytes(record.rawStart, record.rawCount, body)
    }

    func currentRecord() -> SourceRecord {
        batch.unsafelyUnwrapped.sourceRecord(at: position)
    }
}
