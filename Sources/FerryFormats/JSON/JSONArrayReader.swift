public import FerryCore

/// Reads the objects of a JSON array as records, streaming: the array may be the whole document
/// or sit at an RFC 6901 JSON pointer inside it (`/data/items`).
///
/// The reader walks to the pointer token by token without holding the document, then reads the
/// array's elements one at a time through a bounded window. Each object's top-level keys are
/// fields (see ``FieldValue`` for the value mapping: nested objects and arrays become compact
/// JSON text); when an object repeats a key, the last occurrence wins. While walking to the
/// pointer, the first occurrence of a key is followed.
///
/// An element that is not an object is returned as a record with ``SourceRecord/problem`` set.
/// A malformed document is a thrown `FerryError` (`.invalidInput`) located at the offending
/// byte, with the number of the element being read. After the array, the rest of the document is
/// still checked.
///
/// ```swift
/// let reader = try JSONArrayReader(path: "orders.json", pointer: "/data/items")
/// let id = reader.fieldIndex(of: "id")
/// while let record = try reader.next() { print(record[id]?.value as Any) }
/// ```
public final class JSONArrayReader: JSONObjectReader {
    /// The path as the user gave it, or `<stdin>`.
    public var sourceName: String { tokenizer.sourceName }
    /// The JSON pointer to the record array, as given (empty for the top level).
    public let pointer: String
    /// How the records are laid out: objects in an array, members of an object, or rows.
    public let shape: JSONShape

    private let referenceTokens: [String]
    private let input: InputFile
    /// The part of the file read so far, 0…1; nil for standard input or a pipe.
    public var progressFraction: Double? { input.progress.fraction }
    /// How much of the file has been read (nil for standard input or a pipe).
    public var inputProgress: InputProgress? { input.progress }
    private let tokenizer: JSONTokenizer
    private let decoder = JSONObjectDecoder()
    @exclusivity(unchecked) private var started = false
    @exclusivity(unchecked) private var finished = false
    @exclusivity(unchecked) private var number = 0
    // The current record: where it starts and, for an element that is not an object, its problem
    // record. An object's raw bytes stay in the window from the tokenizer's mark until the next
    // advance.
    @exclusivity(unchecked) private var recordLine = 0
    @exclusivity(unchecked) private var recordColumn = 1
    @exclusivity(unchecked) private var problemRecord: SourceRecord?
    @exclusivity(unchecked) private var hasCurrent = false
    /// The `object` shape: the field the member names go to.
    private var keyIndex = -1
    /// The `rows` shape: the field index of each position of a row (nil until the header row).
    private var rowIndexes: [Int]?

    /// Opens `path` (`-` for standard input) and prepares to read the array at `pointer`.
    ///
    /// - Parameters:
    ///   - path: the file to read, or `-` for standard input.
    ///   - pointer: an RFC 6901 JSON pointer (`""` is the whole document, `/data/items` a member,
    ///     `/pages/0/rows` an array element; `~1` is `/`, `~0` is `~`).
    ///   - chunkSize: bytes read per `read(2)`; the window holds about two chunks (more only while
    ///     a single record is larger).
    ///   - maxDepth: the deepest nesting accepted before a located error.
    ///   - maxRecordBytes: the most bytes one record (one array element) may have before a located error.
    ///   - encoding: the file's text encoding (nil: UTF-8, or what a byte order mark says).
    ///   - shape: how the records are laid out (``JSONShape``).
    public init(
        path: String, pointer: String = "", chunkSize: Int = 1 << 18, maxDepth: Int = JSONSyntax.maxDepth,
        maxRecordBytes: Int = RecordLimits.defaultMaxRecordBytes, encoding: TextEncoding? = nil,
        shape: JSONShape = .records
    ) throws {
        self.pointer = pointer
        self.shape = shape
        input = try InputFile(path: path, encoding: encoding)
        referenceTokens = try Self.parsePointer(pointer, source: input.name)
        tokenizer = JSONTokenizer(
            window: ByteWindow(input: input, chunkSize: chunkSize), sourceName: input.name, maxDepth: maxDepth,
            maxRecordBytes: maxRecordBytes)
        switch shape {
        case .records: break
        case .object(let keyField): keyIndex = decoder.columnIndexes([keyField])[0]
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
        InputLocation(
            file: sourceName, line: tokenizer.line, column: tokenizer.tokenColumn, record: number > 0 ? number : nil)
    }

    /// The largest the reader's byte window has been (for tests of bounded memory).
    @_spi(Testing) public var windowHighWater: Int { tokenizer.window.highWater }

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
        return try tokenizer.withMarkedBytes(body)
    }

    package func currentRecord() -> SourceRecord {
        if let problemRecord { return problemRecord }
        return SourceRecord(
            number: number, line: recordLine, column: recordColumn, fields: decoder.fields.materialize(),
            rawBytes: tokenizer.markedBytes())
    }

    package func advance() throws -> Bool {
        // The mark kept the previous element's bytes in the window for `currentRecord()`.
        tokenizer.mark = nil
        problemRecord = nil
        hasCurrent = false
        if finished { return false }
        if !started {
            started = true
            try walkToArray()
        }
        // The header row is not a record: its errors carry no record number.
        var headerPending = false
        if case .rows = shape, rowIndexes == nil { headerPending = true }
        tokenizer.record = headerPending ? nil : number + 1
        var token = try tokenizer.next()
        // The `object` shape: a member's name, then its value (the record).
        var start = tokenizer.tokenStart
        var line = tokenizer.line
        var column = tokenizer.tokenColumn
        var key: [UInt8] = []
        if case .object = shape {
            if token == .endObject { return try finish() }
            key = tokenizer.withStringBytes { Array($0) }
            // The raw record starts at the member's name; the mark moves with refills.
            tokenizer.mark = start
            token = try tokenizer.next()
        } else if token == .endArray {
            return try finish()
        }
        if case .rows = shape, rowIndexes == nil {
            // The first element names the columns.
            guard token == .beginArray else {
                throw tokenizer.error(
                    "the first element must be the header row (an array of column names), not \(JSONObjectDecoder.describe(token))",
                    at: tokenizer.tokenStart)
            }
            rowIndexes = try decoder.decodeHeader(tokenizer)
            tokenizer.record = number + 1
            token = try tokenizer.next()
            if token == .endArray { return try finish() }
            start = tokenizer.tokenStart
            line = tokenizer.line
            column = tokenizer.tokenColumn
        }
        number += 1
        recordLine = line
        recordColumn = column
        // The mark keeps the element's bytes in the window (and moves with refills) for `raw`.
        if tokenizer.mark == nil { tokenizer.mark = start }
        var problem: String
        do {
            switch (shape, token) {
            case (.records, .beginObject), (.object, .beginObject):
                try decoder.decodeObject(tokenizer)
                try checkLength(line: line, column: column)
                hasCurrent = true
                guard case .object(let keyField) = shape else { return true }
                guard decoder.fields.kind(keyIndex) == .absent else {
                    problem = "the record has a member '\(keyField)', the key field its name would go to"
                    break
                }
                key.withUnsafeBufferPointer {
                    decoder.fields.set(keyIndex, kind: .string, bytes: $0, line: line, column: column)
                }
                return true
            case (.rows(let columns), .beginArray):
                let count = try decoder.decodeRow(tokenizer, indexes: rowIndexes ?? [])
                try checkLength(line: line, column: column)
                hasCurrent = true
                let expected = rowIndexes?.count ?? 0
                if count == expected { return true }
                problem = JSONObjectDecoder.rowLengthProblem(
                    expected: expected, found: count, headerRow: columns == nil)
            case (_, .beginArray), (_, .beginObject):
                try tokenizer.skipContainer()
                try checkLength(line: line, column: column)
                problem = "expected a JSON \(Self.recordKind(shape)), found \(JSONObjectDecoder.describe(token))"
            default:
                try checkLength(line: line, column: column)
                problem = "expected a JSON \(Self.recordKind(shape)), found \(JSONObjectDecoder.describe(token))"
            }
        } catch {
            tokenizer.mark = nil
            throw error
        }
        problemRecord = SourceRecord(
            number: number, line: line, column: column, fields: [], rawBytes: tokenizer.markedBytes(),
            problem: FerryError(
                .invalidInput, problem, at: InputLocation(file: sourceName, line: line, column: column, record: number))
        )
        tokenizer.mark = nil
        hasCurrent = true
        return true
    }

    /// What one record of a shape is, in messages.
    static func recordKind(_ shape: JSONShape) -> String {
        if case .rows = shape { return "array (a row)" }
        return "object"
    }

    /// The end of the records: the rest of the document is still checked.
    private func finish() throws -> Bool {
        finished = true
        tokenizer.record = nil
        while try tokenizer.next() != .end {}
        return false
    }

    /// The tokenizer refuses a record that outgrows the window (bounding memory); this makes the
    /// limit exact for a record that fit in it, located at the record's start.
    private func checkLength(line: Int, column: Int) throws {
        guard let mark = tokenizer.mark, tokenizer.pos - mark > tokenizer.maxRecordBytes else { return }
        throw FerryError(
            .invalidInput, "record is longer than \(RecordLimits.describe(tokenizer.maxRecordBytes))",
            at: InputLocation(file: sourceName, line: line, column: column, record: number))
    }

    // MARK: - JSON pointer

    /// Splits an RFC 6901 pointer into its unescaped reference tokens.
    static func parsePointer(_ pointer: String, source: String) throws -> [String] {
        if pointer.isEmpty { return [] }
        guard pointer.hasPrefix("/") else {
            throw FerryError(
                .invalidDefinition, "invalid JSON pointer '\(pointer)': it must be empty or start with '/'",
                at: InputLocation(file: source))
        }
        return try pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { part in
            var token = ""
            var escape = false
            for ch in part {
                if escape {
                    switch ch {
                    case "0": token.append("~")
                    case "1": token.append("/")
                    default:
                        throw FerryError(
                            .invalidDefinition, "invalid JSON pointer '\(pointer)': '~' must be followed by 0 or 1",
                            at: InputLocation(file: source))
                    }
                    escape = false
                } else if ch == "~" {
                    escape = true
                } else {
                    token.append(ch)
                }
            }
            if escape {
                throw FerryError(
                    .invalidDefinition, "invalid JSON pointer '\(pointer)': '~' must be followed by 0 or 1",
                    at: InputLocation(file: source))
            }
            return token
        }
    }

    /// Walks from the document's start to the `[` of the record array, skipping other values.
    private func walkToArray() throws {
        var token = try tokenizer.next()
        var line = tokenizer.line
        var column = tokenizer.tokenColumn
        var path = ""
        func notFound(_ reason: String) -> FerryError {
            FerryError(
                .invalidInput, "JSON pointer '\(pointer)' not found: \(reason)",
                at: InputLocation(file: sourceName, line: line, column: column))
        }
        for reference in referenceTokens {
            let here = path.isEmpty ? "the document" : "'\(path)'"
            path += "/" + Self.escapeReference(reference)
            switch token {
            case .beginObject:
                var found = false
                while true {
                    if try tokenizer.next() == .endObject { break }
                    let matches = tokenizer.withStringBytes { $0.elementsEqual(reference.utf8) }
                    let value = try tokenizer.next()
                    if matches {
                        token = value
                        line = tokenizer.line
                        column = tokenizer.tokenColumn
                        found = true
                        break
                    }
                    if value == .beginObject || value == .beginArray { try tokenizer.skipContainer() }
                }
                guard found else { throw notFound("the object at \(here) has no key '\(reference)'") }
            case .beginArray:
                guard let wanted = Self.arrayIndex(reference) else {
                    throw notFound("'\(reference)' is not an array index (\(here) is an array)")
                }
                var index = 0
                while true {
                    let element = try tokenizer.next()
                    if element == .endArray {
                        throw notFound("the array at \(here) has \(index) element\(index == 1 ? "" : "s")")
                    }
                    if index == wanted {
                        token = element
                        line = tokenizer.line
                        column = tokenizer.tokenColumn
                        break
                    }
                    if element == .beginObject || element == .beginArray { try tokenizer.skipContainer() }
                    index += 1
                }
            default:
                throw notFound("\(here) is \(JSONObjectDecoder.describe(token)), not an object or array")
            }
        }
        let container: JSONToken
        if case .object = shape { container = .beginObject } else { container = .beginArray }
        guard token == container else {
            let wanted = container == .beginObject ? "a JSON object of records" : "a JSON array of records"
            let message =
                referenceTokens.isEmpty
                ? "expected \(wanted) at the top level, found \(JSONObjectDecoder.describe(token))"
                : "JSON pointer '\(pointer)' is \(JSONObjectDecoder.describe(token)), not \(container == .beginObject ? "an object" : "an array")"
            throw FerryError(.invalidInput, message, at: InputLocation(file: sourceName, line: line, column: column))
        }
    }

    /// A reference token spelled as in a pointer (`~` as `~0`, `/` as `~1`).
    private static func escapeReference(_ token: String) -> String {
        var text = ""
        for ch in token {
            switch ch {
            case "~": text += "~0"
            case "/": text += "~1"
            default: text.append(ch)
            }
        }
        return text
    }

    /// An RFC 6901 array index: `0` or digits without a leading zero.
    private static func arrayIndex(_ token: String) -> Int? {
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        if token.count > 1 && token.hasPrefix("0") { return nil }
        return Int(token)
    }
}
