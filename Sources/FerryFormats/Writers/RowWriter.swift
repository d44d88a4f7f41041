public import FerryCore

/// Writes the rows of a `FetchCursor` as CSV, a JSON array or NDJSON, losslessly and in a
/// form ferry's own readers import back to the same values.
///
/// | Type | CSV | JSON / NDJSON |
/// | --- | --- | --- |
/// | nil | empty, unquoted field | `null` |
/// | string, uuid, uri | the text (quoted when needed; `""` for the empty string) | a JSON string |
/// | int16/32/64 | digits | a number |
/// | double, float | shortest text that reads back to the same value (`0.1`, `1e+308`, `-0.0`, `inf`) | a number (`inf`, `-inf` as strings) |
/// | decimal | the exact canonical text | a number spelled exactly (`12345678901234567890.123456789`) |
/// | bool | `true` / `false` | `true` / `false` |
/// | date | `2024-05-01T12:30:00.250Z` | the same, as a string |
/// | binary | base64 (`""` when empty) | a base64 string |
/// | json | the JSON text | the JSON value itself, embedded |
///
/// Rows stream through an ``OutputFile``; memory stays flat. Values are read from SQLite's
/// memory and written as bytes; only unusual stored forms (a value another tool stored in an
/// unexpected storage class) go through `Value`.
public final class RowWriter {
    /// The output formats.
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// RFC 4180 CSV with a header row.
        case csv
        /// One JSON array of objects.
        case json
        /// One JSON object per line.
        case ndjson
    }

    /// The output format.
    public let format: Format
    /// The columns written, in order (the cursor's columns).
    public let columns: [FetchColumn]
    /// The CSV delimiter (a comma; a tab for TSV).
    public let delimiter: UInt8
    private let output: OutputFile
    /// The bytes not yet written. Only this writer touches it, so Swift's dynamic exclusivity
    /// checks (a runtime call around every access: a fifth of an export's time) are off.
    @exclusivity(unchecked) private var buffer: [UInt8] = []
    private let kinds: [Kind]
    /// `"name":` of every column (JSON), back to back: column i's at ``keyRanges``[i]. One array
    /// of bytes, so writing a key costs no reference counting.
    private let keyBytes: [UInt8]
    private let keyRanges: [Range<Int>]
    /// Rows written so far.
    @exclusivity(unchecked) public private(set) var count = 0
    @exclusivity(unchecked) private var started = false

    private enum Kind { case integer, bool, double, decimal, text, date, binary, json }

    private static let flushSize = 1 << 16

    /// A writer of `columns` in `format`; `delimiter` separates CSV fields (a comma, a tab for TSV).
    public init(output: OutputFile, format: Format, columns: [FetchColumn], delimiter: UInt8 = UInt8(ascii: ",")) {
        self.output = output
        self.format = format
        self.delimiter = delimiter
        self.columns = columns
        buffer.reserveCapacity(Self.flushSize + 4096)
        kinds = columns.map { column in
            switch column.type {
            case .int16, .int32, .int64: return .integer
            case .bool: return .bool
            case .double, .float: return .double
            case .decimal: return .decimal
            case .string, .uuid, .uri: return .text
            case .date: return .date
            case .binary: return .binary
            case .json: return .json
            }
        }
        var keyBytes: [UInt8] = []
        keyRanges = columns.map { column in
            let start = keyBytes.count
            keyBytes += Array((JSONText.quote(column.name) + ":").utf8)
            return start..<keyBytes.count
        }
        self.keyBytes = keyBytes
    }

    /// Writes the CSV header or the opening `[` of a JSON array (called by the first row when not
    /// called before).
    public func begin() throws {
        guard !started else { return }
        started = true
        switch format {
        case .csv:
            for (index, column) in columns.enumerated() {
                if index > 0 { buffer.append(delimiter) }
                var name = column.name
                name.withUTF8 { appendCSVText($0) }
            }
            buffer.append(contentsOf: [13, 10])
        case .json:
            buffer.append(UInt8(ascii: "["))
        case .ndjson:
            break
        }
    }

    /// Writes the cursor's current row (after `cursor.advance()` returned true).
    @inline(__always)
    public func write(_ cursor: FetchCursor) throws {
        if !started { try begin() }
        switch format {
        case .csv: writeCSV(cursor)
        case .json:
            buffer.append(contentsOf: count == 0 ? [10] : [44, 10])
            writeJSONObject(cursor)
        case .ndjson:
            writeJSONObject(cursor)
            buffer.append(10)
        }
        count += 1
        if buffer.count >= Self.flushSize { try flushBuffer() }
    }

    /// Writes every remaining row of the cursor and returns how many were written.
    @discardableResult
    public func writeAll(_ cursor: FetchCursor) throws -> Int {
        try begin()
        let before = count
        while try cursor.advance() { try write(cursor) }
        return count - before
    }

    /// Writes the closing `]` of a JSON array and flushes (does not close the output).
    public func finish() throws {
        if !started { try begin() }
        if format == .json { buffer.append(contentsOf: count == 0 ? [93, 10] : [10, 93, 10]) }
        try flushBuffer()
        try output.flush()
    }

    private func flushBuffer() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBufferPointer { try output.write(bytes: $0) }
        buffer.removeAll(keepingCapacity: true)
    }

    // MARK: - CSV

    private func writeCSV(_ cursor: FetchCursor) {
        for index in 0..<kinds.count {
            if index > 0 { buffer.append(delimiter) }
            let storage = cursor.storageClass(at: index)
            if storage == .null { continue }
            switch (kinds[index], storage) {
            case (.integer, .integer): appendInteger(cursor.int64(at: index))
            case (.bool, .integer): appendBool(cursor.int64(at: index) != 0)
            case (.double, .real): appendDouble(cursor.double(at: index))
            case (.text, .text), (.decimal, .text), (.json, .text):
                cursor.withTextBytes(at: index) { appendCSVText($0) }
            case (.date, .text):
                cursor.withTextBytes(at: index) { bytes in
                    if Self.isStoredDate(bytes) {
                        buffer.append(contentsOf: bytes)
                    } else {
                        appendCSVGeneric(cursor.value(at: index))
                    }
                }
            case (.binary, .blob):
                cursor.withBlobBytes(at: index) { bytes in
                    if bytes.isEmpty { buffer.append(contentsOf: [34, 34]) } else { appendBase64(bytes) }
                }
            default:
                appendCSVGeneric(cursor.value(at: index))
            }
        }
        buffer.append(13)
        buffer.append(10)
    }

    private func appendCSVGeneric(_ value: Value) {
        switch value {
        case .null: break
        case .integer(let v): appendInteger(v)
        case .double(let v): appendDouble(v)
        case .bool(let v): appendBool(v)
        case .binary(let bytes):
            if bytes.isEmpty {
                buffer.append(contentsOf: [34, 34])
            } else {
                bytes.withUnsafeBufferPointer { appendBase64($0) }
            }
        case .decimal(var text), .string(var text), .uuid(var text), .uri(var text), .json(var text):
            text.withUTF8 { appendCSVText($0) }
        case .date(let instant):
            var text = DateCoding.format(instant)
            text.withUTF8 { buffer.append(contentsOf: $0) }
        }
    }

    /// A CSV field: as is, unless it is empty (`""`, so that it does not read back as nil) or
    /// holds the delimiter, a quote, CR or LF (then quoted, with quotes doubled).
    private func appendCSVText(_ bytes: UnsafeBufferPointer<UInt8>) {
        if bytes.isEmpty {
            buffer.append(contentsOf: [34, 34])
            return
        }
        var needsQuotes = false
        let delimiter = self.delimiter
        for byte in bytes where byte == delimiter || byte == 34 || byte == 10 || byte == 13 {
            needsQuotes = true
            break
        }
        guard needsQuotes else {
            buffer.append(contentsOf: bytes)
            return
        }
        buffer.append(34)
        var start = 0
        for (offset, byte) in bytes.enumerated() where byte == 34 {
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...offset]))
            buffer.append(34)
            start = offset + 1
        }
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        buffer.append(34)
    }

    // MARK: - JSON

    private func writeJSONObject(_ cursor: FetchCursor) {
        buffer.append(UInt8(ascii: "{"))
        for index in 0..<kinds.count {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            keyBytes.withUnsafeBufferPointer {
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: $0[keyRanges[index]]))
            }
            let storage = cursor.storageClass(at: index)
            switch (kinds[index], storage) {
            case (_, .null): buffer.append(contentsOf: Self.nullBytes)
            case (.integer, .integer): appendInteger(cursor.int64(at: index))
            case (.bool, .integer): appendBool(cursor.int64(at: index) != 0)
            case (.double, .real): appendJSONDouble(cursor.double(at: index))
            case (.text, .text), (.date, .text):
                cursor.withTextBytes(at: index) { appendJSONString($0) }
            case (.decimal, .text):
                cursor.withTextBytes(at: index) { bytes in
                    if JSONSyntax.isNumber(bytes) { buffer.append(contentsOf: bytes) } else { appendJSONString(bytes) }
                }
            case (.json, .text):
                cursor.withTextBytes(at: index) { bytes in
                    if JSONSyntax.isValue(bytes) { buffer.append(contentsOf: bytes) } else { appendJSONString(bytes) }
                }
            case (.binary, .blob):
                cursor.withBlobBytes(at: index) { bytes in
                    buffer.append(34)
                    appendBase64(bytes)
                    buffer.append(34)
                }
            default:
                appendJSONGeneric(cursor.value(at: index))
            }
        }
        buffer.append(UInt8(ascii: "}"))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
    private static let nullBytes: [UInt8] = Array("null".utf8)

    private func appendJSONGeneric(_ value: Value) {
        switch value {
        case .null: buffer.append(contentsOf: Self.nullBytes)
        case .integer(let v): appendInteger(v)
        case .double(let v): appendJSONDouble(v)
        case .bool(let v): appendBool(v)
        case .binary(let bytes):
            buffer.append(34)
            bytes.withUnsafeBufferPointer { appendBase64($0) }
            buffer.append(34)
        case .decimal(var text):
            text.withUTF8 { bytes in
                if JSONSyntax.isNumber(bytes) { buffer.append(contentsOf: bytes) } else { appendJSONString(bytes) }
            }
        case .json(var text):
            text.withUTF8 { bytes in
                if JSONSyntax.isValue(bytes) { buffer.append(contentsOf: bytes) } else { appendJSONString(bytes) }
            }
        case .string(var text), .uuid(var text), .uri(var text):
            text.withUTF8 { appendJSONString($0) }
        case .date(let instant):
            var text = DateCoding.format(instant)
            text.withUTF8 { appendJSONString($0) }
        }
    }

    /// A JSON string: quotes, backslashes and control characters escaped, other bytes as they are.
    private func appendJSONString(_ bytes: UnsafeBufferPointer<UInt8>) {
        buffer.append(34)
        var start = 0
        for (offset, byte) in bytes.enumerated() where byte < 0x20 || byte == 34 || byte == 92 {
            if start < offset { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<offset])) }
            start = offset + 1
            switch byte {
            case 34: buffer.append(contentsOf: [92, 34])
            case 92: buffer.append(contentsOf: [92, 92])
            case 10: buffer.append(contentsOf: [92, 110])
            case 13: buffer.append(contentsOf: [92, 114])
            case 9: buffer.append(contentsOf: [92, 116])
            default:
                let hex = Self.hexDigits
                buffer.append(contentsOf: [92, 117, 48, 48, hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            }
        }
        if start < bytes.count { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...])) }
        buffer.append(34)
    }

    private func appendJSONDouble(_ value: Double) {
        if value.isFinite {
            appendDouble(value)
        } else {
            buffer.append(34)
            appendDouble(value)
            buffer.append(34)
        }
    }

    // MARK: - Scalars

    private func appendInteger(_ value: Int64) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        if magnitude < 10 {
            buffer.append(48 + UInt8(magnitude))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        withUnsafeMutableBytes(of: &digits) { raw in
            var position = raw.count
            while magnitude > 0 {
                position -= 1
                raw[position] = 48 + UInt8(magnitude % 10)
                magnitude /= 10
            }
            buffer.append(contentsOf: raw[position...])
        }
    }

    private func appendBool(_ value: Bool) {
        buffer.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
    }

    private static let trueBytes: [UInt8] = Array("true".utf8)
    private static let falseBytes: [UInt8] = Array("false".utf8)

    /// Swift's shortest round-tripping spelling: `0.1`, `1e+308`, `5e-324`, `-0.0`, `inf`.
    private func appendDouble(_ value: Double) {
        var text = value.description
        text.withUTF8 { buffer.append(contentsOf: $0) }
    }

    private static let base64Alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private func appendBase64(_ bytes: UnsafeBufferPointer<UInt8>) {
        let alphabet = Self.base64Alphabet
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            buffer.append(alphabet[Int(chunk >> 18 & 63)])
            buffer.append(alphabet[Int(chunk >> 12 & 63)])
            buffer.append(alphabet[Int(chunk >> 6 & 63)])
            buffer.append(alphabet[Int(chunk & 63)])
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let chunk = UInt32(bytes[index]) << 16
            buffer.append(alphabet[Int(chunk >> 18 & 63)])
            buffer.append(alphabet[Int(chunk >> 12 & 63)])
            buffer.append(contentsOf: [61, 61])
        } else if rest == 2 {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            buffer.append(alphabet[Int(chunk >> 18 & 63)])
            buffer.append(alphabet[Int(chunk >> 12 & 63)])
            buffer.append(alphabet[Int(chunk >> 6 & 63)])
            buffer.append(61)
        }
    }

    /// True for the fixed-width stored form `YYYY-MM-DDTHH:MM:SS.sssZ` (copied as is).
    @inline(__always)
    private static func isStoredDate(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.count == 24 && bytes[4] == 45 && bytes[10] == 84 && bytes[19] == 46 && bytes[23] == 90
    }
}
