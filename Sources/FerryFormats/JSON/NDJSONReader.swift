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
    public var sourceName: String { input.name }

    private let input: InputFile
    private let window: ByteWindow
    private let tokenizer: JSONTokenizer
    private let decoder = JSONObjectDecoder()
    private let maxRecordBytes: Int
    /// Window index of the start of the next line.
    @exclusivity(unchecked) private var lineStart = 0
    @exclusivity(unchecked) private var lineNumber = 0
    @exclusivity(unchecked) private var number = 0
    @exclusivity(unchecked) private var finished = false
    // The current record: where it starts, its raw bytes in the window (the line stays there
    // until the next advance), or the problem record of a malformed line.
    @exclusivity(unchecked) private var recordLine = 0
    @exclusivity(unchecked) private var recordColumn = 1
    @exclusivity(unchecked) private var rawStart = 0
    @exclusivity(unchecked) private var rawCount = 0
    @exclusivity(unchecked) private var problemRecord: SourceRecord?
    @exclusivity(unchecked) private var hasCurrent = false

    /// Opens `path` (`-` for standard input).
    ///
    /// - Parameters:
    ///   - chunkSize: bytes read per `read(2)`; the window holds about two chunks (more only while
    ///     a single line is longer).
    ///   - maxDepth: the deepest nesting accepted in a line before it is a problem record.
    ///   - maxRecordBytes: the longest line accepted; a longer one is a located error, found
    ///     without reading more than this much of it into memory.
    ///   - encoding: the file's text encoding (nil: UTF-8, or what a byte order mark says).
    public init(
        path: String, chunkSize: Int = 1 << 18, maxDepth: Int = JSONSyntax.maxDepth, maxRecordBytes: Int = RecordLimits.defaultMaxRecordBytes,
        encoding: TextEncoding? = nil
    ) throws {
        self.maxRecordBytes = max(1, maxRecordBytes)
        input = try InputFile(path: path, encoding: encoding)
        window = ByteWindow(input: input, chunkSize: chunkSize)
        tokenizer = JSONTokenizer(lineWindow: window, sourceName: input.name, maxDepth: maxDepth)
    }

    public var fieldNames: [String] { decoder.table.names }

    public func fieldIndex(of name: String) -> Int { decoder.table.index(of: name) }

    public func hasField(_ name: String) -> Bool { decoder.table.hasSeen(name) }

    /// Nothing to prepare: JSON keys are learned as records are read.
    public func prepare() throws {}

    public var currentLocation: InputLocation {
        InputLocation(file: sourceName, line: max(lineNumber, 1), column: 1, record: number > 0 ? number : nil)
    }

    /// The largest the reader's byte window has been (for tests of bounded memory).
    @_spi(Testing) public var windowHighWater: Int { window.highWater }

    public func next() throws -> SourceRecord? {
        try advance() ? currentRecord() : nil
    }

    public var currentObject: JSONObjectFields? {
        hasCurrent && problemRecord == nil ? decoder.fields : nil
    }

    public var currentRecordStart: (number: Int, line: Int, column: Int) { (number, recordLine, recordColumn) }

    public func withCurrentRawBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        if let problemRecord { return try problemRecord.rawBytes.withUnsafeBufferPointer(body) }
        return try body(UnsafeBufferPointer(start: window.base + rawStart, count: rawCount))
    }

    public func currentRecord() -> SourceRecord {
        if let problemRecord { return problemRecord }
        let raw = [UInt8](UnsafeBufferPointer(start: window.base + rawStart, count: rawCount))
        return SourceRecord(number: number, line: recordLine, column: recordColumn, fields: decoder.fields.materialize(), rawBytes: raw)
    }

    public func advance() throws -> Bool {
        problemRecord = nil
        hasCurrent = false
        while !finished {
            // Find the end of the line, reading more chunks while it is incomplete.
            var searchFrom = lineStart
            var newline = -1
            while true {
                let base = window.base
                let available = window.end - searchFrom
                if available > 0, let found = memchr(base + searchFrom, 0x0A, available) {
                    newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                    break
                }
                searchFrom = window.end
                if searchFrom - lineStart > maxRecordBytes {
                    throw FerryError(
                        .invalidInput, "record is longer than \(RecordLimits.describe(maxRecordBytes))",
                        at: InputLocation(file: sourceName, line: lineNumber + 1, column: 1, record: number + 1))
                }
                let (shift, read) = try window.refill(keeping: lineStart)
                lineStart -= shift
                searchFrom -= shift
                if read == 0 { break }
            }
            let lineEnd = newline >= 0 ? newline : window.end
            if newline < 0 {
                finished = true
                if lineEnd == lineStart { return false }
            }
            let start = lineStart
            lineStart = newline >= 0 ? newline + 1 : lineEnd
            lineNumber += 1
            // The search above bounds memory; this makes the limit exact when the line fit in the window.
            if lineEnd - start > maxRecordBytes {
                throw FerryError(
                    .invalidInput, "record is longer than \(RecordLimits.describe(maxRecordBytes))",
                    at: InputLocation(file: sourceName, line: lineNumber, column: 1, record: number + 1))
            }
            let base = window.base
            var stop = lineEnd
            if stop > start && base[stop - 1] == 0x0D { stop -= 1 }
            var first = start
            if lineNumber == 1 && stop - first >= 3 && base[first] == 0xEF && base[first + 1] == 0xBB
                && base[first + 2] == 0xBF
            {
                first += 3
            }
            var content = first
            while content < stop && (base[content] == 0x20 || base[content] == 0x09) { content += 1 }
            if content == stop { continue }
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
            guard token == .beginObject else {
                throw FerryError(
                    .invalidInput, "expected a JSON object, found \(JSONObjectDecoder.describe(token))",
                    at: InputLocation(file: sourceName, line: lineNumber, column: column, record: number))
            }
            let objectStart = tokenizer.tokenStart
            try decoder.decodeObject(tokenizer)
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
            problemRecord = SourceRecord(number: number, line: lineNumber, column: column, fields: [], rawBytes: raw, problem: problem)
        }
    }
}
