public import FerryCore
import FerryPostgres

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A streaming RFC 4180 CSV reader.
///
/// Reads its input in chunks into a window that holds at most the record being read, so memory
/// is bounded by the longest record, never by the file. It understands quoted fields, doubled
/// quotes, delimiters and line breaks inside quotes, CRLF / LF / CR record terminators, a UTF-8
/// byte order mark, a header row or given column names, and any one-byte delimiter and quote.
/// Blank lines are skipped (but counted for line numbers).
///
/// Unquoted fields equal to one of ``CSVOptions/nullTokens`` read as ``FieldValue/null``;
/// every other field is ``FieldValue/text(_:)``.
///
/// Problems come in two kinds:
/// - input that cannot be read on (a quoted field that is never closed, a bad header, a record
///   longer than the sanity limit, an I/O error) is thrown as a `FerryError`;
/// - a record that is malformed on its own (wrong number of fields, text after
///   a closing quote, invalid UTF-8) is returned with ``SourceRecord/problem`` set, so that the
///   importer can reject it and continue.
///
/// ```swift
/// let reader = try CSVReader(path: "customers.csv", options: CSVOptions())
/// try reader.prepare()
/// let email = reader.fieldIndex(of: "email")
/// while let record = try reader.next() {
///     if let problem = record.problem { reject(record, problem); continue }
///     print(record[email]?.value ?? .null)
/// }
/// ```
public final class CSVReader: ByteFieldReader {
    /// The default number of bytes read at a time.
    static let defaultChunkSize = 256 * 1024
    /// The default limit on one record's length: a runaway quote must not eat all memory.
    static let defaultMaxRecordBytes = RecordLimits.defaultMaxRecordBytes

    /// The path as the user gave it, or `<stdin>`.
    public var sourceName: String { input.name }
    /// The header's names (or the given columns) once the first record was requested.
    public private(set) var fieldNames: [String] = []
    /// The header row's names once read (renamed as ``CSVOptions/renamesUnusableHeaders``
    /// says), even when ``CSVOptions/columns`` replaces them; nil without a header row.
    public private(set) var headerRow: [String]?
    /// The line the header row is on (0 without one).
    public private(set) var headerLine = 0

    private let input: InputFile
    /// The part of the file read so far, 0…1; nil for standard input or a pipe.
    public var progressFraction: Double? { input.progress.fraction }
    /// How much of the file has been read (nil for standard input or a pipe).
    public var inputProgress: InputProgress? { input.progress }
    private let options: CSVOptions
    /// Bytes asked of `read(2)` at a time.
    let chunkSize: Int
    /// The longest record (in bytes, without its terminator) accepted before throwing.
    let maxRecordBytes: Int

    // MARK: - Byte window

    /// The window: `buffer[0..<dataEnd]` holds bytes read and not yet dropped.
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var dataEnd = 0
    /// The largest window capacity so far (for tests of the memory bound).
    private(set) var highWaterMark: Int
    private var atEnd = false
    /// Byte classes: 0 plain, 1 delimiter, 2 LF, 3 CR, 4 quote, 5 escape.
    private let byteClass: UnsafeMutablePointer<UInt8>
    /// The escape byte (``CSVOptions/escape``), or -1 without one.
    private let escapeByte: Int
    /// Which specialization of the scanner reads the file, chosen once: today's single-byte
    /// loop unless the delimiter or the record terminator is longer, or the file is COPY text.
    private let scanPath: ScanPath
    /// The delimiter's bytes (one unless ``CSVOptions/delimiterSequence`` is longer).
    private let delimiterSequence: [UInt8]
    /// The record terminator when it is not LF, CRLF or CR.
    private let terminatorSequence: [UInt8]?
    /// A COPY text file's end-of-data line (a backslash and a period) was read.
    private var copyEnded = false

    // MARK: - Position

    /// Next byte to scan (absolute index into `buffer`).
    private var pos = 0
    /// 1-based line of `pos`.
    private var line = 1
    /// Index of the first byte of the line `pos` is on (may be negative after the window moved
    /// past it; only differences matter).
    private var lineStart = 0
    /// The previous record ended with CR: an LF that follows belongs to it.
    private var skipLF = false
    private var bomChecked = false

    // MARK: - Current record

    private struct Span {
        /// Content range relative to the record's start (without the quotes of a quoted field).
        var start: Int
        var end: Int
        var line: Int
        var column: Int
        var quoted: Bool
        /// The content holds doubled quotes to undo.
        var escaped: Bool
    }

    private enum ProblemKind {
        case textAfterQuote
        case unclosedQuote
        /// A COPY text escape that means nothing (`\q`, `\x` without a hex digit, `\N` inside a field).
        case badEscape(String)
    }

    private var spans: [Span] = []
    private var recordStart = 0
    private var recordEnd = 0
    private var recordLine = 1
    /// Where the record's terminator (or the end of input) is: for "too few fields".
    private var endLine = 1
    private var endColumn = 1
    private var scanProblem: (kind: ProblemKind, line: Int, column: Int)?
    private var scanningHeader = false

    private var recordCount = 0
    private var lastRecordLine = 0
    private var fields: [Field?] = []
    private var unescaped: [UInt8] = []

    // MARK: - Names

    private var prepared = false
    private var prepareError: FerryError?
    private var columnCount = 0
    private var indexByName: [String: Int] = [:]
    private var otherNames: [String: Int] = [:]

    // MARK: - Null tokens

    private let emptyIsNull: Bool
    private let quotedEmptyIsNull: Bool
    private let tokenBytes: [[UInt8]]
    private let longestToken: Int

    // MARK: - Life cycle

    /// A reader over an open input.
    package convenience init(input: InputFile, options: CSVOptions) {
        self.init(input: input, options: options, chunkSize: Self.defaultChunkSize)
    }

    /// Opens `path` (`-` for standard input) and reads it as CSV (`encoding` nil: UTF-8, or what
    /// a byte order mark says).
    public convenience init(path: String, options: CSVOptions, encoding: TextEncoding? = nil) throws {
        self.init(input: try InputFile(path: path, encoding: encoding), options: options)
    }

    /// A reader with a given chunk size and record limit (tests use tiny ones).
    init(input: InputFile, options: CSVOptions, chunkSize: Int, maxRecordBytes: Int = CSVReader.defaultMaxRecordBytes) {
        self.input = input
        self.options = options
        self.chunkSize = max(1, chunkSize)
        self.maxRecordBytes = max(1, maxRecordBytes)
        capacity = max(self.chunkSize, 16)
        buffer = .allocate(capacity: capacity)
        highWaterMark = capacity
        byteClass = .allocate(capacity: 256)
        byteClass.initialize(repeating: 0, count: 256)
        delimiterSequence = options.delimiterBytes
        terminatorSequence = options.customTerminator
        if options.copyText {
            scanPath = .copyText
        } else if delimiterSequence.count > 1 || terminatorSequence != nil {
            scanPath = .sequences
        } else {
            scanPath = .standard
        }
        byteClass[Int(delimiterSequence[0])] = 1
        if let terminator = terminatorSequence {
            // Line breaks are ordinary bytes; the terminator's first byte is a candidate.
            byteClass[Int(terminator[0])] = 2
        } else {
            byteClass[10] = 2
            byteClass[13] = 3
        }
        // COPY text has no quoting.
        if !options.copyText { byteClass[Int(options.quote)] = 4 }
        let escape = options.copyText ? UInt8(ascii: "\\") : options.escape
        // An escape that clashes with another role is refused by `prepare()`.
        if let escape, escape != options.delimiter, options.copyText || escape != options.quote, escape != 10,
            escape != 13
        {
            byteClass[Int(escape)] = 5
            escapeByte = Int(escape)
        } else {
            escapeByte = -1
        }
        emptyIsNull = options.nullTokens.contains("")
        quotedEmptyIsNull = options.quotedEmpty == .null
        tokenBytes = options.nullTokens.filter { !$0.isEmpty }.map { Array($0.utf8) }
        longestToken = tokenBytes.map(\.count).max() ?? 0
    }

    deinit {
        buffer.deallocate()
        byteClass.deallocate()
    }

    // MARK: - RecordReader

    /// The index of a column; a name that is not a column gets an index that is never filled.
    public func fieldIndex(of name: String) -> Int {
        if !prepared { try? prepare() }
        if let index = indexByName[name] ?? otherNames[name] { return index }
        let index = columnCount + otherNames.count
        otherNames[name] = index
        return index
    }

    /// True when the file has this column (after `prepare()`).
    public func hasField(_ name: String) -> Bool {
        indexByName[name] != nil
    }

    /// Where the reader is now: the current record's line.
    public var currentLocation: InputLocation {
        if recordCount > 0 {
            return InputLocation(file: sourceName, line: lastRecordLine, column: 1, record: recordCount)
        }
        return InputLocation(file: sourceName, line: line, column: pos - lineStart + 1)
    }

    /// Reads the header row (or takes the given column names). Called by ``next()`` if needed.
    public func prepare() throws {
        if prepared {
            if let prepareError { throw prepareError }
            return
        }
        prepared = true
        do {
            try readNames()
        } catch let error as FerryError {
            prepareError = error
            throw error
        }
    }

    /// The next record, or nil at the end of the input.
    public func next() throws -> SourceRecord? {
        if !prepared || prepareError != nil { try prepare() }
        while true {
            switch try scanRecord() {
            case .end:
                return nil
            case .blank:
                continue
            case .record:
                recordCount += 1
                lastRecordLine = recordLine
                return makeRecord()
            }
        }
    }

    // MARK: - Zero-copy access to the current record (the import fast path)

    /// Moves to the next record without building its fields; false at the end of the input.
    /// Use ``withFieldBytes(_:_:)`` to read it and ``currentRecord()`` to materialize it.
    package func advance() throws -> Bool {
        if !prepared || prepareError != nil { try prepare() }
        while true {
            switch try scanRecord() {
            case .end:
                return false
            case .blank:
                continue
            case .record:
                recordCount += 1
                lastRecordLine = recordLine
                return true
            }
        }
    }

    /// True when the record just advanced to has every column and no structural problem (its
    /// UTF-8 is checked per field by the caller).
    package var currentRecordIsWellFormed: Bool {
        scanProblem == nil && spans.count == columnCount
    }

    /// CSV fields are bytes as found: the consumer checks their UTF-8.
    package var textIsValidUTF8: Bool { false }

    package var currentFieldCount: Int { min(spans.count, columnCount) }

    /// `.null` for an unquoted null token, `.quotedText` for a quoted field, `.text` otherwise;
    /// `.absent` beyond the record's fields.
    @inline(__always)
    package func fieldKind(_ index: Int) -> ByteFieldKind {
        guard index >= 0 && index < spans.count else { return .absent }
        let span = spans[index]
        if isNull(span) { return .null }
        return span.quoted ? .quotedText : .text
    }

    /// Calls `body` with the bytes of a column of the current record (quotes removed, doubled
    /// quotes undone). The bytes are valid only inside `body` and are not UTF-8-validated.
    @inline(__always)
    package func withFieldBytes<T>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        guard index >= 0 && index < spans.count else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        let span = spans[index]
        let start = UnsafePointer(buffer + recordStart + span.start)
        let length = span.end - span.start
        if !span.escaped { return try body(UnsafeBufferPointer(start: start, count: length)) }
        return try withUnescaped(start, length, quoted: span.quoted) { try body($0) }
    }

    /// Calls `body` with a field's content with doubled quotes (in a quoted field) and escapes
    /// undone, in a scratch buffer reused between fields.
    private func withUnescaped<T>(
        _ start: UnsafePointer<UInt8>, _ length: Int, quoted: Bool, _ body: (UnsafeBufferPointer<UInt8>) throws -> T
    ) rethrows -> T {
        let quote = options.quote
        let escape = escapeByte
        var scratch = self.unescaped
        self.unescaped = []
        defer { self.unescaped = scratch }
        scratch.removeAll(keepingCapacity: true)
        if scanPath == .copyText {
            // PostgreSQL's own rules, as ferry reads `COPY … TO STDOUT`.
            PostgresCopyTextFields.unescape(UnsafeBufferPointer(start: start, count: length), into: &scratch)
            return try scratch.withUnsafeBufferPointer { try body($0) }
        }
        var position = 0
        while position < length {
            let byte = start[position]
            if Int(byte) == escape && position + 1 < length {
                // The escaped byte is literal; an escape at the very end of the input stays.
                scratch.append(start[position + 1])
                position += 2
                continue
            }
            scratch.append(byte)
            position += quoted && byte == quote ? 2 : 1
        }
        return try scratch.withUnsafeBufferPointer { try body($0) }
    }

    /// True when a column of the current record was quoted (taken literally: not trimmed, not null).
    @inline(__always)
    package func isFieldQuoted(_ index: Int) -> Bool { spans[index].quoted }

    /// The line and byte column where a column of the current record starts.
    package func fieldPosition(_ index: Int) -> (line: Int, column: Int)? {
        guard index >= 0 && index < spans.count else { return nil }
        let span = spans[index]
        return (span.line, span.column)
    }

    package var currentRecordStart: (number: Int, line: Int, column: Int) { (recordCount, recordLine, 1) }

    package func withCurrentRawBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try body(UnsafeBufferPointer(start: buffer + recordStart, count: recordEnd - recordStart))
    }

    /// The current record as a ``SourceRecord`` (with its problem, if any, and raw text).
    package func currentRecord() -> SourceRecord { makeRecord() }

    // MARK: - Header

    private func readNames() throws {
        let o = options
        if let problem = o.delimiterQuoteProblem {
            throw FerryError(.invalidDefinition, problem, at: InputLocation(file: sourceName))
        }
        if let escape = o.escape, escape == o.delimiter || escape == o.quote || escape == 10 || escape == 13 {
            throw FerryError(
                .invalidDefinition,
                "the CSV escape character must differ from the delimiter, the quote (a doubled quote already escapes it) and line breaks",
                at: InputLocation(file: sourceName))
        }
        if let comment = o.comment, comment == o.delimiter || comment == o.quote || comment == 10 || comment == 13 {
            throw FerryError(
                .invalidDefinition,
                "the CSV comment character must differ from the delimiter, the quote and line breaks",
                at: InputLocation(file: sourceName))
        }
        if let columns = options.columns {
            var seen = Set<String>()
            for name in columns {
                guard !name.isEmpty else {
                    throw FerryError(
                        .invalidDefinition, "empty column name in 'columns'", at: InputLocation(file: sourceName))
                }
                guard seen.insert(name).inserted else {
                    throw FerryError(
                        .invalidDefinition, "duplicate column name '\(name)' in 'columns'",
                        at: InputLocation(file: sourceName))
                }
            }
        } else if !options.hasHeader {
            throw FerryError(
                .invalidDefinition,
                "CSV without a header row needs 'columns' to name its fields",
                at: InputLocation(file: sourceName)
            )
        }

        try skipLines(options.skipLines)
        var names: [String] = []
        if options.hasHeader {
            scanningHeader = true
            defer { scanningHeader = false }
            var outcome = try scanRecord()
            while outcome == .blank { outcome = try scanRecord() }
            if outcome == .record {
                headerLine = recordLine
                names = try headerNames()
            }
        }
        if options.hasHeader { headerRow = names }
        if let columns = options.columns { names = columns }
        fieldNames = names
        columnCount = names.count
        indexByName = [:]
        for (index, name) in names.enumerated() { indexByName[name] = index }
        // Names asked for before the header was known move after the columns.
        var moved: [String: Int] = [:]
        for name in otherNames.keys.sorted() where indexByName[name] == nil {
            moved[name] = columnCount + moved.count
        }
        otherNames = moved
    }

    private func headerNames() throws -> [String] {
        if let problem = scanProblem {
            throw scanError(problem, record: nil)
        }
        var names: [String] = []
        var seen = Set<String>()
        let base = buffer + recordStart
        for (index, span) in spans.enumerated() {
            guard let name = text(base + span.start, span.end - span.start, escaped: span.escaped, quoted: span.quoted)
            else {
                throw utf8Error(span: span, fieldName: nil, record: nil, header: true)
            }
            let location = InputLocation(file: sourceName, line: span.line, column: span.column)
            if options.renamesUnusableHeaders {
                var unique = name.isEmpty ? "column_\(index + 1)" : name
                var suffix = 2
                while seen.contains(unique) {
                    unique = "\(name.isEmpty ? "column_\(index + 1)" : name)_\(suffix)"
                    suffix += 1
                }
                seen.insert(unique)
                names.append(unique)
                continue
            }
            guard !name.isEmpty else {
                throw FerryError(.invalidInput, "column \(index + 1) of the header has an empty name", at: location)
            }
            guard seen.insert(name).inserted else {
                throw FerryError(.invalidInput, "duplicate column name '\(name)' in the header", at: location)
            }
            names.append(name)
        }
        return names
    }

    // MARK: - Records

    private func makeRecord() -> SourceRecord {
        // Work on locals: stored properties of a class pay for exclusivity checks per access.
        var fields = self.fields
        self.fields = []
        fields.removeAll(keepingCapacity: true)
        defer { self.fields = fields }
        let spans = self.spans
        let base = buffer + recordStart
        let number = recordCount
        var problem: FerryError? = scanProblem.map { scanError($0, record: number) }
        let count = min(spans.count, columnCount)
        for index in 0..<count {
            let span = spans[index]
            let start = base + span.start
            let length = span.end - span.start
            let value: FieldValue
            if isNull(span) {
                value = .null
            } else if let string = text(start, length, escaped: span.escaped, quoted: span.quoted) {
                value = .text(string)
            } else {
                value = .text(String(decoding: UnsafeBufferPointer(start: start, count: length), as: UTF8.self))
                if problem == nil {
                    problem = utf8Error(span: span, fieldName: fieldNames[index], record: number, header: false)
                }
            }
            fields.append(Field(value: value, line: span.line, column: span.column, quoted: span.quoted))
        }
        if problem == nil && spans.count != columnCount {
            let location: InputLocation
            if spans.count > columnCount {
                let extra = spans[columnCount]
                location = InputLocation(file: sourceName, line: extra.line, column: extra.column, record: number)
            } else {
                location = InputLocation(file: sourceName, line: endLine, column: endColumn, record: number)
            }
            problem = FerryError(
                .invalidInput,
                "expected \(columnCount) field\(columnCount == 1 ? "" : "s") but found \(spans.count)",
                at: location
            )
        }
        let raw = [UInt8](UnsafeBufferPointer(start: base, count: recordEnd - recordStart))
        return SourceRecord(
            number: number, line: recordLine, column: 1, fields: fields, rawBytes: raw, problem: problem)
    }

    /// The one rule for null fields: an unquoted field that is a null word (or `\N` with an
    /// escape), and a quoted empty field with ``CSVOptions/quotedEmpty`` `.null`; any other
    /// quoted field is taken literally.
    @inline(__always)
    private func isNull(_ span: Span) -> Bool {
        let length = span.end - span.start
        if span.quoted { return length == 0 && quotedEmptyIsNull }
        return isNullToken(UnsafePointer(buffer + recordStart + span.start), length)
    }

    private func isNullToken(_ start: UnsafePointer<UInt8>, _ length: Int) -> Bool {
        if length == 0 { return emptyIsNull }
        // `\N`: MySQL's NULL, when an escape character is set.
        if length == 2 && start[1] == UInt8(ascii: "N") && Int(start[0]) == escapeByte { return true }
        if length > longestToken { return false }
        for token in tokenBytes where token.count == length {
            var index = 0
            while index < length && token[index] == start[index] { index += 1 }
            if index == length { return true }
        }
        return false
    }

    /// The field's text with doubled quotes and escapes undone, or nil when it is not valid UTF-8.
    private func text(_ start: UnsafePointer<UInt8>, _ length: Int, escaped: Bool, quoted: Bool = true) -> String? {
        if !escaped { return validString(start, length) }
        return withUnescaped(start, length, quoted: quoted) { buffer in
            buffer.baseAddress.flatMap { validString($0, buffer.count) } ?? ""
        }
    }

    // MARK: - Errors

    private func scanError(_ problem: (kind: ProblemKind, line: Int, column: Int), record: Int?) -> FerryError {
        let message: String
        switch problem.kind {
        case .textAfterQuote:
            message = "unexpected text after the closing \(quoteName) of a field"
        case .unclosedQuote:
            message = "quoted field is not closed before the end of the input (reading went on at the next line)"
        case .badEscape(let cause):
            message = cause
        }
        return FerryError(
            .invalidInput,
            scanningHeader ? message + " of the header" : message,
            at: InputLocation(file: sourceName, line: problem.line, column: problem.column, record: record)
        )
    }

    private var quoteName: String {
        let quote = options.quote
        return quote >= 0x20 && quote < 0x7F ? "quote \(String(UnicodeScalar(quote)))" : "quote"
    }

    /// Points at the first byte of the field's text that is not valid UTF-8.
    private func utf8Error(span: Span, fieldName: String?, record: Int?, header: Bool) -> FerryError {
        let base = UnsafePointer(buffer + recordStart)
        // Walk from the field's first byte (its opening quote if any) to the bad byte.
        let fieldStart = span.start - (span.quoted ? 1 : 0)
        let bad = span.start + firstInvalidUTF8(base + span.start, span.end - span.start)
        var line = span.line
        var column = span.column
        var index = fieldStart
        while index < bad {
            let byte = base[index]
            if byte == 10 || (byte == 13 && !(index + 1 < bad && base[index + 1] == 10)) {
                line += 1
                column = 1
            } else if byte != 13 {
                column += 1
            }
            index += 1
        }
        let hex = String(base[bad], radix: 16, uppercase: true)
        let byte = "0x" + (hex.count == 1 ? "0" + hex : hex)
        // A transcoded input marks a sequence invalid in its encoding with 0xFF (never UTF-8).
        let invalid =
            input.encoding.map { encoding in
                base[bad] == 0xFF ? "text that is not valid \(encoding)" : "invalid UTF-8 (byte \(byte))"
            }
            ?? "invalid UTF-8 (byte \(byte))"
        let message: String
        if header {
            message = "\(invalid) in the header"
        } else if let fieldName {
            message = "\(invalid) in field '\(fieldName)'"
        } else {
            message = invalid
        }
        return FerryError(
            .invalidInput, message, at: InputLocation(file: sourceName, line: line, column: column, record: record))
    }

    private func tooLongError(fieldLine: Int, fieldColumn: Int) -> FerryError {
        let limit = RecordLimits.describe(maxRecordBytes)
        return FerryError(
            .invalidInput,
            "record is longer than \(limit) (is a quote not closed?)",
            at: InputLocation(
                file: sourceName, line: fieldLine, column: fieldColumn, record: scanningHeader ? nil : recordCount + 1)
        )
    }

    // MARK: - Window

    /// Drops the bytes before `keep`, then reads one chunk after the rest. Returns how far the
    /// kept bytes moved left (subtract from every absolute index) and the number of bytes read.
    private func refill(keep: Int) throws -> (shift: Int, read: Int) {
        if atEnd { return (0, 0) }
        let live = dataEnd - keep
        if keep > 0 {
            if live > 0 { memmove(buffer, buffer + keep, live) }
            dataEnd = live
        }
        if capacity - live < chunkSize {
            let newCapacity = max(capacity * 2, live + chunkSize)
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
            grown.update(from: buffer, count: live)
            buffer.deallocate()
            buffer = grown
            capacity = newCapacity
            highWaterMark = max(highWaterMark, capacity)
        }
        let count = try input.read(into: buffer + live, count: chunkSize)
        dataEnd = live + count
        if count == 0 { atEnd = true }
        return (keep, count)
    }

    /// Skips the LF of a CRLF split from its CR, and the byte order mark.
    private func leadIn() throws {
        if !bomChecked {
            bomChecked = true
            while dataEnd - pos < 3 && !atEnd {
                let (shift, _) = try refill(keep: pos)
                pos -= shift
                lineStart -= shift
            }
            if dataEnd - pos >= 3 && buffer[pos] == 0xEF && buffer[pos + 1] == 0xBB && buffer[pos + 2] == 0xBF {
                pos += 3
                lineStart = pos
            }
        }
        if skipLF {
            if pos == dataEnd {
                let (shift, _) = try refill(keep: pos)
                pos -= shift
                lineStart -= shift
            }
            if pos < dataEnd && buffer[pos] == 10 {
                pos += 1
                lineStart = pos
            }
            skipLF = false
        }
    }

    // MARK: - Scanner

    private enum Outcome {
        case record, blank, end
    }

    private enum State {
        case fieldStart, unquoted, quoted, quotedAfterCR, quoteInQuoted, comment
        /// Just after an escape character: the next byte is literal.
        case escapeInUnquoted, escapeInQuoted
        /// COPY text: after `\x`, a hex digit must follow.
        case copyHex
        /// COPY text: after a field's leading `\N`, the field must end.
        case copyAfterNull
    }

    /// The scanner's specializations (``ScanDialect``), chosen once per file.
    private enum ScanPath {
        case standard, sequences, copyText
    }

    /// Scans one record into `spans`, `recordStart`, `recordEnd`, reading more input as needed,
    /// with the scanner chosen for the file.
    private func scanRecord() throws -> Outcome {
        switch scanPath {
        case .standard: return try scanRecord(StandardScan.self)
        case .sequences: return try scanRecord(SequenceScan.self)
        case .copyText: return try scanRecord(CopyTextScan.self)
        }
    }

    /// The length of `sequence` when the window's bytes at `p` (whose first byte matches) start
    /// it, 0 when they do not, -1 when the window ends first and more input may follow.
    @inline(__always)
    private func match(_ sequence: [UInt8], at p: Int, end: Int) -> Int {
        var index = 1
        while index < sequence.count {
            if p + index >= end { return atEnd ? 0 : -1 }
            if buffer[p + index] != sequence[index] { return 0 }
            index += 1
        }
        return sequence.count
    }

    /// Scans one record with the dialect `D`: each dialect's checks compile away in the others.
    private func scanRecord<D: ScanDialect>(_: D.Type) throws -> Outcome {
        if D.copyText && copyEnded { return .end }
        var spans = self.spans
        self.spans = []
        spans.removeAll(keepingCapacity: true)
        defer { self.spans = spans }
        scanProblem = nil
        if skipLF || !bomChecked { try leadIn() }

        let classes = UnsafePointer(byteClass)
        let skipInitialSpace = options.skipInitialSpace
        let comment = options.comment.map(Int.init) ?? -1
        var isComment = false
        var base = buffer
        var end = dataEnd
        var p = pos
        var rs = p
        var lineNumber = line
        var ls = lineStart
        var state = State.fieldStart
        var fieldStart = p
        var fieldLine = lineNumber
        var fieldColumn = p - ls + 1
        var contentStart = p
        var escaped = false
        var terminatorIsCR = false
        recordLine = lineNumber
        // Separators longer than a byte (the sequences dialect only: nothing to load in the others).
        let delimiterSequence = D.matchesSequences ? self.delimiterSequence : []
        let terminatorSequence = D.matchesSequences ? self.terminatorSequence ?? [] : []
        let customTerminator = D.matchesSequences && !terminatorSequence.isEmpty
        // A separator's first byte was seen at the window's end: read on before deciding.
        var needMore = false

        scan: while true {
            if p == end || (D.matchesSequences && needMore) {
                needMore = false
                if end - rs >= maxRecordBytes {
                    throw tooLongError(fieldLine: fieldLine, fieldColumn: fieldColumn)
                }
                let (shift, count) = try refill(keep: rs)
                p -= shift
                rs -= shift
                ls -= shift
                fieldStart -= shift
                contentStart -= shift
                base = buffer
                end = dataEnd
                if count == 0 && (!D.matchesSequences || p == end) {
                    // End of input.
                    switch state {
                    case .fieldStart:
                        if spans.isEmpty {
                            pos = p
                            lineStart = ls
                            return .end
                        }
                        contentStart = p
                    case .unquoted, .copyHex, .copyAfterNull:
                        break
                    case .escapeInUnquoted:
                        if D.copyText && scanProblem == nil {
                            scanProblem = (.badEscape("a backslash ends the input"), lineNumber, p - ls)
                        }
                    case .comment:
                        break scan
                    case .quoted, .quotedAfterCR, .escapeInQuoted:
                        if !scanningHeader {
                            // An unclosed quote: the record ends with the line the quote opened
                            // on, is returned as a problem, and reading goes on with the next line.
                            return resynchronize(
                                recordStart: rs, quoteContent: contentStart, end: end, spans: &spans,
                                fieldLine: fieldLine, fieldColumn: fieldColumn)
                        }
                        line = lineNumber
                        throw FerryError(
                            .invalidInput,
                            "quoted field is not closed before the end of the input",
                            at: InputLocation(
                                file: sourceName, line: fieldLine, column: fieldColumn,
                                record: scanningHeader ? nil : recordCount + 1
                            )
                        )
                    case .quoteInQuoted:
                        spans.append(
                            Span(
                                start: contentStart - rs, end: p - 1 - rs, line: fieldLine, column: fieldColumn,
                                quoted: true, escaped: escaped)
                        )
                        break scan
                    }
                    spans.append(
                        Span(
                            start: contentStart - rs, end: p - rs, line: fieldLine, column: fieldColumn, quoted: false,
                            escaped: escaped))
                    break scan
                }
                continue
            }
            switch state {
            case .fieldStart:
                if Int(base[p]) == comment && p == rs {
                    // A comment line: skipped like a blank line (its line still counts).
                    isComment = true
                    state = .comment
                    continue scan
                }
                if skipInitialSpace && base[p] == 32 {
                    // `a, "b"`: blanks before a field are not part of it.
                    p += 1
                    fieldColumn += 1
                    continue scan
                }
                if classes[Int(base[p])] == 4 {
                    p += 1
                    contentStart = p
                    state = .quoted
                } else {
                    contentStart = p
                    state = .unquoted
                }
            case .unquoted:
                while p < end && classes[Int(base[p])] == 0 { p += 1 }
                if p == end { continue scan }
                switch classes[Int(base[p])] {
                case 1:
                    var width = 1
                    if D.matchesSequences {
                        width = match(delimiterSequence, at: p, end: end)
                        if width <= 0 {
                            // A lone first byte is text; a separator cut by the window's end is read on.
                            needMore = width < 0
                            p += width == 0 ? 1 : 0
                            continue scan
                        }
                    }
                    spans.append(
                        Span(
                            start: contentStart - rs, end: p - rs, line: fieldLine, column: fieldColumn, quoted: false,
                            escaped: escaped))
                    p += width
                    fieldStart = p
                    fieldLine = lineNumber
                    fieldColumn = p - ls + 1
                    escaped = false
                    state = .fieldStart
                case 4:
                    // A quote inside an unquoted field is taken literally (`37.8"N`), as
                    // Python's csv, sqlite3 and most producers of such files expect.
                    p += 1
                case 5:
                    p += 1
                    escaped = true
                    state = .escapeInUnquoted
                default:
                    if customTerminator {
                        let width = match(terminatorSequence, at: p, end: end)
                        if width <= 0 {
                            // A lone first byte is text; a separator cut by the window's end is read on.
                            needMore = width < 0
                            p += width == 0 ? 1 : 0
                            continue scan
                        }
                    }
                    spans.append(
                        Span(
                            start: contentStart - rs, end: p - rs, line: fieldLine, column: fieldColumn, quoted: false,
                            escaped: escaped))
                    terminatorIsCR = !customTerminator && base[p] == 13
                    break scan
                }
            case .quoted:
                while p < end && classes[Int(base[p])] < 2 { p += 1 }
                if p == end { continue scan }
                switch classes[Int(base[p])] {
                case 4:
                    p += 1
                    state = .quoteInQuoted
                case 2:
                    if customTerminator {
                        let width = match(terminatorSequence, at: p, end: end)
                        if width < 0 {
                            needMore = true
                            continue scan
                        }
                        p += max(width, 1)
                        if width == 0 { continue scan }
                    } else {
                        p += 1
                    }
                    lineNumber += 1
                    ls = p
                case 5:
                    p += 1
                    escaped = true
                    state = .escapeInQuoted
                default:
                    p += 1
                    lineNumber += 1
                    ls = p
                    state = .quotedAfterCR
                }
            case .comment:
                if customTerminator {
                    while p < end && classes[Int(base[p])] != 2 { p += 1 }
                    if p == end { continue scan }
                    let width = match(terminatorSequence, at: p, end: end)
                    if width <= 0 {
                        // A lone first byte is text; a separator cut by the window's end is read on.
                        needMore = width < 0
                        p += width == 0 ? 1 : 0
                        continue scan
                    }
                    break scan
                }
                while p < end && base[p] != 10 && base[p] != 13 { p += 1 }
                if p == end { continue scan }
                terminatorIsCR = base[p] == 13
                break scan
            case .escapeInUnquoted, .escapeInQuoted:
                if D.copyText {
                    // COPY text: an escape names a byte; a letter or digit that names none is a problem.
                    let byte = base[p]
                    p += 1
                    state = .unquoted
                    switch byte {
                    case UInt8(ascii: "N") where p - 2 == contentStart:
                        state = .copyAfterNull
                    case UInt8(ascii: "x"):
                        state = .copyHex
                    case UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"),
                        UInt8(ascii: "v"), UInt8(ascii: "0")...UInt8(ascii: "7"):
                        break
                    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                        UInt8(ascii: "8"), UInt8(ascii: "9"):
                        if scanProblem == nil {
                            let cause =
                                byte == UInt8(ascii: "N")
                                ? "\\N (null) must be the whole field"
                                : "unknown escape \\\(String(UnicodeScalar(byte))) (pgcopy knows \\b \\f \\n \\r \\t \\v \\\\, \\xHH, \\NNN octal and \\N)"
                            scanProblem = (.badEscape(cause), lineNumber, p - 1 - ls)
                        }
                    default:
                        // Any other byte stands for itself (an escaped delimiter, backslash or line break).
                        if byte == 10 {
                            lineNumber += 1
                            ls = p
                        }
                    }
                    continue scan
                }
                // The escaped byte is part of the field, even a delimiter, quote or line break.
                // An escaped LF starts a line (an escaped CR does not: a CRLF's LF may still be unread).
                if base[p] == 10 && !customTerminator {
                    lineNumber += 1
                    ls = p + 1
                }
                p += 1
                state = state == .escapeInUnquoted ? .unquoted : .quoted
            case .copyHex:
                if PostgresValue.hexDigit(base[p]) == nil && scanProblem == nil {
                    scanProblem = (.badEscape("\\x needs a hex digit after it"), lineNumber, p - 1 - ls)
                }
                state = .unquoted
            case .copyAfterNull:
                if classes[Int(base[p])] == 0 || classes[Int(base[p])] == 5, scanProblem == nil {
                    scanProblem = (.badEscape("\\N (null) must be the whole field"), lineNumber, p - 1 - ls)
                }
                state = .unquoted
            case .quotedAfterCR:
                if base[p] == 10 {
                    p += 1
                    ls = p
                }
                state = .quoted
            case .quoteInQuoted:
                var role = classes[Int(base[p])]
                var width = 1
                if D.matchesSequences && (role == 1 || (role == 2 && customTerminator)) {
                    width = match(role == 1 ? delimiterSequence : terminatorSequence, at: p, end: end)
                    if width < 0 {
                        needMore = true
                        continue scan
                    }
                    // A first byte alone is text after the quote.
                    if width == 0 { role = 0 }
                }
                switch role {
                case 4:
                    escaped = true
                    p += 1
                    state = .quoted
                case 1:
                    spans.append(
                        Span(
                            start: contentStart - rs, end: p - 1 - rs, line: fieldLine, column: fieldColumn,
                            quoted: true, escaped: escaped))
                    p += width
                    fieldStart = p
                    fieldLine = lineNumber
                    fieldColumn = p - ls + 1
                    escaped = false
                    state = .fieldStart
                case 2, 3:
                    spans.append(
                        Span(
                            start: contentStart - rs, end: p - 1 - rs, line: fieldLine, column: fieldColumn,
                            quoted: true, escaped: escaped))
                    terminatorIsCR = !customTerminator && base[p] == 13
                    break scan
                default:
                    // `"abc"x`: keep the field's bytes as they are and report the record.
                    if scanProblem == nil { scanProblem = (.textAfterQuote, lineNumber, p - ls + 1) }
                    contentStart = fieldStart
                    escaped = false
                    state = .unquoted
                }
            }
        }

        // Here `p` is at the terminator, or at the end of the input.
        recordStart = rs
        recordEnd = p
        endLine = lineNumber
        endColumn = p - ls + 1
        if p < end {
            p += customTerminator ? terminatorSequence.count : 1
            if terminatorIsCR {
                if p < end {
                    if base[p] == 10 { p += 1 }
                } else {
                    skipLF = true
                }
            }
            lineNumber += 1
            ls = p
        }
        pos = p
        line = lineNumber
        lineStart = ls
        if isComment { return .blank }
        if D.copyText && recordEnd - recordStart == 2 && base[recordStart] == UInt8(ascii: "\\")
            && base[recordStart + 1] == UInt8(ascii: ".")
        {
            // `\.` alone on a line: the end of the data, as COPY reads it.
            copyEnded = true
            return .end
        }
        return recordEnd == recordStart && spans.count == 1 && !spans[0].quoted ? .blank : .record
    }

    /// Skips `count` lines before the header (a title, a report's preamble), whatever they hold.
    private func skipLines(_ count: Int) throws {
        var skipped = 0
        if let terminator = terminatorSequence {
            // Records end with the given terminator: skip that many of them.
            while skipped < count {
                if pos + terminator.count > dataEnd && !atEnd {
                    let (shift, _) = try refill(keep: pos)
                    pos -= shift
                    lineStart -= shift
                    continue
                }
                guard pos < dataEnd else { return }
                if pos + terminator.count <= dataEnd
                    && terminator.indices.allSatisfy({ buffer[pos + $0] == terminator[$0] })
                {
                    pos += terminator.count
                    line += 1
                    lineStart = pos
                    skipped += 1
                } else {
                    pos += 1
                }
            }
            return
        }
        while skipped < count {
            if skipLF || !bomChecked { try leadIn() }
            if pos == dataEnd {
                let (shift, read) = try refill(keep: pos)
                pos -= shift
                lineStart -= shift
                if read == 0 { return }
            }
            while pos < dataEnd && buffer[pos] != 10 && buffer[pos] != 13 { pos += 1 }
            guard pos < dataEnd else { continue }
            if buffer[pos] == 13 {
                pos += 1
                if pos == dataEnd { skipLF = true } else if buffer[pos] == 10 { pos += 1 }
            } else {
                pos += 1
            }
            line += 1
            lineStart = pos
            skipped += 1
        }
    }

    /// Ends the record at the end of the line where an unclosed quote opened (the input ended
    /// inside the quoted field, so everything after it is still in the window) and moves to the
    /// next line: one bad quote costs one rejected record, not the step.
    private func resynchronize(
        recordStart rs: Int, quoteContent: Int, end: Int, spans: inout [Span], fieldLine: Int, fieldColumn: Int
    ) -> Outcome {
        let base = buffer
        var cut = quoteContent
        var next = cut
        if let terminator = terminatorSequence {
            // The record ends at the first terminator after the quote.
            while cut < end
                && !(cut + terminator.count <= end
                    && terminator.indices.allSatisfy({ base[cut + $0] == terminator[$0] }))
            {
                cut += 1
            }
            next = min(cut + terminator.count, end)
        } else {
            while cut < end && base[cut] != 10 && base[cut] != 13 { cut += 1 }
            next = cut
            if next < end {
                next += base[next] == 13 && next + 1 < end && base[next + 1] == 10 ? 2 : 1
            }
        }
        spans.append(
            Span(
                start: quoteContent - rs, end: cut - rs, line: fieldLine, column: fieldColumn, quoted: true,
                escaped: false))
        scanProblem = (.unclosedQuote, fieldLine, fieldColumn)
        recordStart = rs
        recordEnd = cut
        endLine = fieldLine
        // The quote is at column `fieldColumn` of its line.
        endColumn = cut - (quoteContent - fieldColumn) + 1
        pos = next
        line = fieldLine + 1
        lineStart = next
        skipLF = false
        return .record
    }
}

/// The bytes as a string, or nil when they are not valid UTF-8 (never repaired).
///
/// Non-generic on purpose: `String(validating:as:)` goes through generic metadata lookups
/// that cost more than the parse itself.
func validString(_ start: UnsafePointer<UInt8>, _ length: Int) -> String? {
    if !isASCII(start, length) && firstInvalidUTF8(start, length) != length { return nil }
    return String(decoding: UnsafeBufferPointer(start: start, count: length), as: UTF8.self)
}

/// True when no byte has its high bit set; checks eight bytes at a time.
func isASCII(_ start: UnsafePointer<UInt8>, _ length: Int) -> Bool {
    let raw = UnsafeRawPointer(start)
    var index = 0
    var bits: UInt64 = 0
    while index + 8 <= length {
        bits |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
        index += 8
    }
    while index < length {
        bits |= UInt64(start[index])
        index += 1
    }
    return bits & 0x8080_8080_8080_8080 == 0
}

/// The offset of the first byte that does not belong to a valid UTF-8 sequence (`length` if
/// there is none).
func firstInvalidUTF8(_ start: UnsafePointer<UInt8>, _ length: Int) -> Int {
    var index = 0
    while index < length {
        let byte = start[index]
        if byte < 0x80 {
            index += 1
            continue
        }
        let count: Int
        let minimum: UInt32
        var scalar: UInt32
        switch byte {
        case 0xC2...0xDF:
            count = 2
            minimum = 0x80
            scalar = UInt32(byte & 0x1F)
        case 0xE0...0xEF:
            count = 3
            minimum = 0x800
            scalar = UInt32(byte & 0x0F)
        case 0xF0...0xF4:
            count = 4
            minimum = 0x10000
            scalar = UInt32(byte & 0x07)
        default: return index
        }
        var next = index + 1
        while next < index + count {
            guard next < length, start[next] & 0xC0 == 0x80 else { return index }
            scalar = scalar << 6 | UInt32(start[next] & 0x3F)
            next += 1
        }
        if scalar < minimum || scalar > 0x10FFFF || (0xD800...0xDFFF).contains(scalar) { return index }
        index = next
    }
    return length
}

/// UTF-8 checks for consumers of raw field bytes.
package enum UTF8Bytes {
    /// True when the bytes are valid UTF-8 (ASCII checked eight bytes at a time).
    @inline(__always)
    package static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return true }
        return isASCII(base, bytes.count) || firstInvalidUTF8(base, bytes.count) == bytes.count
    }

    /// The number of Unicode scalars (characters for length rules are counted as Core Data does
    /// for most text: ASCII is exact; combining sequences count per scalar).
    package static func scalarCount(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var count = 0
        for byte in bytes where byte & 0xC0 != 0x80 { count += 1 }
        return count
    }
}

/// What a specialization of ``CSVReader``'s scanner handles beyond today's single-byte loop.
private protocol ScanDialect {
    /// The delimiter or the record terminator is several bytes: a byte of their class is only a
    /// candidate until the rest matches.
    static var matchesSequences: Bool { get }
    /// PostgreSQL COPY text: escapes are checked as they are read, and a line of a backslash and
    /// a period ends the data.
    static var copyText: Bool { get }
}

/// A one-byte delimiter, LF/CRLF/CR records: the benchmarked loop.
private enum StandardScan: ScanDialect {
    static var matchesSequences: Bool { false }
    static var copyText: Bool { false }
}

/// A delimiter or a record terminator of several bytes, or a terminator other than a line break.
private enum SequenceScan: ScanDialect {
    static var matchesSequences: Bool { true }
    static var copyText: Bool { false }
}

/// PostgreSQL COPY text.
private enum CopyTextScan: ScanDialect {
    static var matchesSequences: Bool { false }
    static var copyText: Bool { true }
}
