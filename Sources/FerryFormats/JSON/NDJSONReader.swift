public import FerryCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads newline-delimited JSON (NDJSON, JSON Lines): one JSON object per line, streaming.
///
/// Lines end with LF or CRLF; blank lines (only spaces, tabs) are skipped but counted for line
/// numbers. A line that is malformed JSON, or valid JSON that is not an object, is returned as a
/// record with ``SourceRecord/problem`` set and ``SourceRecord/raw`` holding the line, and reading
/// continues at the next line. Only I/O errors are thrown. Fields are the object's top-level
/// keys, mapped as ``JSONArrayReader`` maps them (the last of duplicate keys wins).
///
/// ```swift
/// let reader = try NDJSONReader(path: "events.ndjson")
/// while let record = try reader.next() {
///     if let problem = record.problem { print(problem); continue }
/// }
/// ```
public final class NDJSONReader: JSONObjectReader {
    /// The path as the user gave it, or `<stdin>`.
    public var sourceName: String { input.name }

    private let input: InputFile
    /// The part of the file read so far, 0…1; nil for standard input or a pipe.
    public var progressFraction: Double? { input.progress.fraction }
    /// How much of the file has been read (nil for standard input or a pipe).
    public var inputProgress: InputProgress? { input.progress }
    private let window: ByteWindow
    private let tokenizer: JSONTokenizer
    private let decoder = JSONObjectDecoder()
    private let maxRecordBytes: Int
    /// The input's lines (LF or CRLF, a UTF-8 byte order mark dropped), in `window`.
    private let lines: LineWindow
    @exclusivity(unchecked) private var lineNumber = 0
    @exclusivity(unchecked) private var number = 0
    // The current record: where it starts, its raw bytes in the window (the line stays there
    // until the next advance), or the problem record of a malformed line.
    @exclusivity(unchecked) private var recordLine = 0
    @exclusivity(unchecked) private var recordColumn = 1
    @exclusivity(unchecked) private var rawStart = 0
    @exclusivity(unchecked) private var rawCount = 0
    @exclusivity(unchecked) private var problemRecord: SourceRecord?
    @exclusivity(unchecked) private var hasCurrent = false
    /// `records` (an object per line) or `rows` (an array per line).
    public let shape: JSONShape
    /// The `rows` shape: the field index of each position of a row (nil until the header line).
    private var rowIndexes: [Int]?

    /// Opens `path` (`-` for standard input).
    ///
    /// - Parameters:
    ///   - path: the file to read, or `-` for standard input.
    ///   - chunkSize: bytes read per `read(2)`; the window holds about two chunks (more only while
    ///     a single line is longer).
    ///   - maxDepth: the deepest nesting accepted in a line before it is a problem record.
    ///   - maxRecordBytes: the longest line accepted; a longer one is a located error, found
    ///     without reading more than this much of it into memory.
    ///   - encoding: the file's text encoding (nil: UTF-8, or what a byte order mark says).
    ///   - shape: how the records are laid out (``JSONShape``).
    public init(
        path: String, chunkSize: Int = 1 << 18, maxDepth: Int = JSONSyntax.maxDepth,
        maxRecordBytes: Int = RecordLimits.defaultMaxRecordBytes,
        encoding: TextEncoding? = nil, shape: JSONShape = .records
    ) throws {
        self.maxRecordBytes = max(1, maxRecordBytes)
        self.shape = shape
        input = try InputFile(path: path, encoding: encoding)
        lines = LineWindow(input: input, chunkSize: chunkSize, maxLineBytes: self.maxRecordBytes)
        window = lines.window
        tokenizer = JSONTokenizer(lineWindow: window, sourceName: input.name, maxDepth: maxDepth)
        switch shape {
        case .records: break
        case .object:
            throw FerryError(
                .invalidDefinition, "the object shape applies to a JSON document, not to NDJSON",
                at: InputLocation(file: input.name))
        case .rows(let columns): rowIndexes = columns.map { decoder.columnIndexes($0) }
        }
    }

    /// The keys seen so far, in field-index order.
    public var fieldNames: [String] { decoder.table.names }

    /// The field index of a key, registered if it has not been seen yet.
    public func fieldIndex(of name: String) -> Int { decoder.table.index(of: name) }

    /// True when a record so far had this key.
    public func hasField(_ name: String) -> Bool { decoder.table.hasSeen(name) }

    /// Nothing to prepare: JSON keys are learned as records are read.
    public func prepare() throws {}

    /// Where the reader is now: the current record's start.
    public var currentLocation: InputLocation {
        InputLocation(file: sourceName, line: max(lineNumber, 1), column: 1, record: number > 0 ? number : nil)
    }

    /// The largest the reader's byte window has been (for tests of bounded memory).
    @_spi(Testing) public var windowHighWater: Int { window.highWater }

    /// The next record, or nil at the end of the input.
    public func next() throws -> SourceRecord? {
        try advance() ? currentRecord() : nil
    }

    package var currentObject: JSONObjectFields? {
        hasCurrent && problemRecord == nil ? decoder.fields : nil
    }

    package var currentRecordStart: (number: Int, line: Int, column: Int) { (number, recordLine, recordColumn) }

    package func withCurrentRawBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        if let problemRecord { return try problemRecord.rawBytes.withUnsafeBufferPointer(body) }
        return try body(UnsafeBufferPointer(start: window.base + rawStart, count: rawCount))
    }

    package func currentRecord() -> SourceRecord {
        if let problemRecord { return problemRecord }
        let raw = [UInt8](UnsafeBufferPointer(start: window.base + rawStart, count: rawCount))
        return SourceRecord(
            number: number, line: recordLine, column: recordColumn, fields: decoder.fields.materialize(), rawBytes: raw)
    }

    package func advance() throws -> Bool {
        problemRecord = nil
        hasCurrent = false
        while let (first, stop) = try lines.nextLine(record: number + 1) {
            lineNumber = lines.lineNumber
            let base = window.base
            var content = first
            while content < stop && (base[content] == 0x20 || base[content] == 0x09) { content += 1 }
            if content == stop { continue }
            if case .rows = shape, rowIndexes == nil {
                // The first line names the columns.
                tokenizer.reset(lineFrom: first, to: stop, line: lineNumber)
                let token = try tokenizer.next()
                guard token == .beginArray else {
                    throw tokenizer.error(
                        "the first line must be the header row (an array of column names), not \(JSONObjectDecoder.describe(token))",
                        at: tokenizer.tokenStart)
                }
                rowIndexes = try decoder.decodeHeader(tokenizer)
                _ = try tokenizer.next()  // only white space may follow: anything else throws
                continue
            }
            number += 1
            parseLine(from: first, to: stop)
            hasCurrent = true
            return true
        }
        return false
    }

    /// Parses one non-blank line `[start, stop)` (without its line break) into the current record.
    private func parseLine(from start: Int, to stop: Int) {
        tokenizer.reset(lineFrom: start, to: stop, line: lineNumber)
        tokenizer.record = number
        var column = 1
        do {
            let token = try tokenizer.next()
            column = tokenizer.tokenColumn
            let wanted: JSONToken
            if case .rows = shape { wanted = .beginArray } else { wanted = .beginObject }
            guard token == wanted else {
                throw FerryError(
                    .invalidInput,
                    "expected a JSON \(JSONArrayReader.recordKind(shape)), found \(JSONObjectDecoder.describe(token))",
                    at: InputLocation(file: sourceName, line: lineNumber, column: column, record: number))
            }
            let objectStart = tokenizer.tokenStart
            if case .rows(let columns) = shape {
                let expected = rowIndexes?.count ?? 0
                let count = try decoder.decodeRow(tokenizer, indexes: rowIndexes ?? [])
                if count != expected {
                    throw FerryError(
                        .invalidInput,
                        JSONObjectDecoder.rowLengthProblem(expected: expected, found: count, headerRow: columns == nil),
                        at: InputLocation(file: sourceName, line: lineNumber, column: column, record: number))
                }
            } else {
                try decoder.decodeObject(tokenizer)
            }
            let objectEnd = tokenizer.pos
            _ = try tokenizer.next()  // only white space may follow: anything else throws
            recordLine = lineNumber
            recordColumn = column
            rawStart = objectStart
            rawCount = objectEnd - objectStart
        } catch {
            let problem =
                error as? FerryError
                ?? FerryError(.invalidInput, "\(error)", at: InputLocation(file: sourceName, line: lineNumber))
            let raw = [UInt8](UnsafeBufferPointer(start: window.base + start, count: stop - start))
            problemRecord = SourceRecord(
                number: number, line: lineNumber, column: column, fields: [], rawBytes: raw, problem: problem)
        }
    }
}
