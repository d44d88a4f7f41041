import FerryCore
import FerryFormats

/// The records of one input file as the record loop reads them, through one
/// ``ByteFieldReader``: the reader itself, the same read ahead on a second thread
/// (``ReadAheadReader``), or, for a reader without byte access, its records one by one (every
/// one then takes the general path). ``StepRecords`` has already taken a wrapper's held records.
final class RecordStream {
    let reader: any ByteFieldReader
    private let readAhead: ReadAheadReader?
    /// How far the file's own reader (not the read-ahead) has read it, when it reads one file.
    let inputProgress: InputProgress?

    /// When `readAhead` is true, starts reading on a second thread at the first record
    /// (coercing records there too with `coercion`).
    init(
        reader: any RecordReader, readAhead: Bool, coercion: ReadAheadCoercion? = nil,
        recordsPerBatch: Int = ReadAheadReader.recordsPerBatch
    ) throws {
        inputProgress = reader.inputProgress
        let byteReader = (reader as? any ByteFieldReader) ?? RecordByRecordReader(reader)
        if readAhead {
            // The header is read here, so the reader thread only ever reads records.
            try byteReader.prepare()
            let ahead = ReadAheadReader(byteReader, coercion: coercion, recordsPerBatch: recordsPerBatch)
            self.readAhead = ahead
            self.reader = ahead
        } else {
            self.readAhead = nil
            self.reader = byteReader
        }
    }

    /// Stops the reader thread, if any (the step is over).
    func stop() { readAhead?.stop() }
}

/// A ``ByteFieldReader`` over a reader that only hands out whole records: every record is
/// "not well formed" for the fast path, so the import takes the general path for each.
final class RecordByRecordReader: ByteFieldReader {
    private let base: any RecordReader
    private var current: SourceRecord?

    init(_ base: any RecordReader) { self.base = base }

    var sourceName: String { base.sourceName }
    var fieldNames: [String] { base.fieldNames }
    func fieldIndex(of name: String) -> Int { base.fieldIndex(of: name) }
    func hasField(_ name: String) -> Bool { base.hasField(name) }
    func prepare() throws { try base.prepare() }
    var currentLocation: InputLocation { base.currentLocation }

    func next() throws -> SourceRecord? {
        current = try base.next()
        return current
    }

    func advance() throws -> Bool { try next() != nil }
    var currentRecordIsWellFormed: Bool { false }
    var textIsValidUTF8: Bool { false }
    var currentFieldCount: Int { current?.fields.count ?? 0 }
    func fieldKind(_ index: Int) -> ByteFieldKind { .absent }
    func withFieldBytes<T>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try body(UnsafeBufferPointer(start: nil, count: 0))
    }
    func fieldPosition(_ index: Int) -> (line: Int, column: Int)? { current?[index].map { ($0.line, $0.column) } }
    var currentRecordStart: (number: Int, line: Int, column: Int) {
        (current?.number ?? 0, current?.line ?? 0, current?.column ?? 1)
    }
    func withCurrentRawBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try (current?.rawBytes ?? []).withUnsafeBufferPointer(body)
    }
    func currentRecord() -> SourceRecord { current ?? SourceRecord(number: 0, line: 0, fields: [], raw: "") }
}

/// The records of an import step, file by file: the records a wrapper holds (a replayed sample),
/// then one ``RecordStream`` per input file. Several files (``MultiFileReader``) are read one
/// after the other, each through its own stream, so each keeps its fast path and its read-ahead.
final class StepRecords {
    private var held: [SourceRecord] = []
    private let files: MultiFileReader?
    private let readAhead: Bool
    private let coercion: ReadAheadCoercion?
    private let recordsPerBatch: Int
    /// The stream of the file being read; nil once every file is read.
    private(set) var current: RecordStream?
    /// The files opened so far, in order (the last is the one being read, unless all are done).
    private(set) var openedFiles: [String] = []

    /// `recordsPerBatch`: the read-ahead's batches (``ReadAheadReader/recordsPerBatch`` unless
    /// the step looks a batch's keys up on a server, where larger batches save round trips).
    init(
        reader: any RecordReader, readAhead: Bool, coercion: ReadAheadCoercion? = nil,
        recordsPerBatch: Int = ReadAheadReader.recordsPerBatch
    ) throws {
        var reader = reader
        while let forwarding = reader as? any ForwardingRecordReader {
            held += forwarding.takeHeldRecords()
            reader = forwarding.wrapped
        }
        self.readAhead = readAhead
        self.coercion = coercion
        self.recordsPerBatch = recordsPerBatch
        if let multiple = reader as? MultiFileReader {
            files = multiple
            current = try RecordStream(
                reader: multiple.currentFile(), readAhead: readAhead, coercion: coercion,
                recordsPerBatch: recordsPerBatch)
        } else {
            files = nil
            current = try RecordStream(
                reader: reader, readAhead: readAhead, coercion: coercion, recordsPerBatch: recordsPerBatch)
        }
        openedFiles = [reader.sourceName]
    }

    /// The name of the file being read when the step reads several; nil for one source.
    var currentFileName: String? {
        files == nil ? nil : current?.reader.sourceName
    }

    /// Removes and returns the held records (once; then empty).
    func takeHeldRecords() -> [SourceRecord] {
        defer { held = [] }
        return held
    }

    /// Moves to the next file's stream (nil after the last).
    func nextFile() throws {
        current?.stop()
        guard let files, let next = try files.nextFile() else {
            current = nil
            return
        }
        current = try RecordStream(
            reader: next, readAhead: readAhead, coercion: coercion, recordsPerBatch: recordsPerBatch)
        openedFiles.append(next.sourceName)
    }

    /// Passes over the first `count` records (the held ones first) without handing them out:
    /// those a resumed import had committed. `advance` moves a stream's reader on. Throws when
    /// the input ends sooner.
    func skip(_ count: Int, advance: (any ByteFieldReader) throws -> Bool) throws {
        var remaining = count
        let heldSkipped = min(remaining, held.count)
        held.removeFirst(heldSkipped)
        remaining -= heldSkipped
        while remaining > 0 {
            guard let stream = current else {
                throw FerryError(
                    .invalidInput,
                    "the input ends \(remaining) record\(remaining == 1 ? "" : "s") before the \(count) the interrupted import had committed",
                    at: InputLocation(file: openedFiles.last ?? ""))
            }
            if try advance(stream.reader) {
                remaining -= 1
            } else {
                try nextFile()
            }
        }
    }

    /// Stops the reader thread, if any (the step is over).
    func stop() { current?.stop() }
}
