public import FerryCore

/// A streaming reader of fixed-width text: one record per line, each field a column of
/// characters given by a ``FixedWidthLayout``, padding blanks (spaces and tabs) trimmed from
/// both ends.
///
/// Positions count characters (Unicode scalars) of the UTF-8 text, so a file in another encoding
/// (`encoding: latin-1`) or compressed reads as its characters line up; every reported column is
/// a byte column of the decoded line, like the other readers'. Memory is bounded by the longest
/// line. Blank lines are skipped (but counted for line numbers).
///
/// A line that cannot be a record on its own is returned with ``SourceRecord/problem`` set,
/// located where the trouble is: a line shorter than the layout (at its end, naming the first
/// column it lacks; unless ``FixedWidthLayout/shortLines`` pads it), text after the last column (at that text), invalid UTF-8. Trimmed fields
/// equal to a null word are ``FieldValue/null``.
public final class FixedWidthReader: RecordReader {
    /// The path as the user gave it, or `<stdin>`.
    public var sourceName: String { input.name }
    /// The layout's column names, in order.
    public let fieldNames: [String]

    private let input: InputFile
    /// The part of the file read so far, 0…1; nil for standard input or a pipe.
    public var progressFraction: Double? { input.progress.fraction }
    /// How much of the file has been read (nil for standard input or a pipe).
    public var inputProgress: InputProgress? { input.progress }
    private let layout: FixedWidthLayout
    private let lines: LineWindow
    private let nullTokens: Set<String>
    private let indexByName: [String: Int]
    private var otherNames: [String: Int] = [:]
    private var prepared = false
    private var number = 0
    private var lastLine = 0
    /// Scalar start offsets of the current line (reused between lines).
    private var offsets: [Int] = []

    /// Opens `path` (`-` for standard input) and reads it with `layout`.
    public convenience init(
        path: String, layout: FixedWidthLayout, nullTokens: Set<String> = [""], encoding: TextEncoding? = nil
    ) throws {
        self.init(input: try InputFile(path: path, encoding: encoding), layout: layout, nullTokens: nullTokens)
    }

    /// A reader with a given chunk size and record limit (tests use tiny ones).
    init(
        input: InputFile, layout: FixedWidthLayout, nullTokens: Set<String>, chunkSize: Int = 1 << 18,
        maxRecordBytes: Int = RecordLimits.defaultMaxRecordBytes
    ) {
        self.input = input
        self.layout = layout
        self.nullTokens = nullTokens
        lines = LineWindow(input: input, chunkSize: chunkSize, maxLineBytes: maxRecordBytes)
        fieldNames = layout.columns.map(\.name)
        var indexByName: [String: Int] = [:]
        for (index, name) in fieldNames.enumerated() where indexByName[name] == nil { indexByName[name] = index }
        self.indexByName = indexByName
    }

    /// The index of a column; a name that is not a column gets an index that is never filled.
    public func fieldIndex(of name: String) -> Int {
        if let index = indexByName[name] ?? otherNames[name] { return index }
        let index = fieldNames.count + otherNames.count
        otherNames[name] = index
        return index
    }

    /// True when the layout has this column.
    public func hasField(_ name: String) -> Bool { indexByName[name] != nil }

    /// Where the reader is now: the current line.
    public var currentLocation: InputLocation {
        InputLocation(file: sourceName, line: max(lastLine, 1), column: 1, record: number > 0 ? number : nil)
    }

    /// Checks the layout and skips the lines before the first record.
    public func prepare() throws {
        guard !prepared else { return }
        let problems = layout.problems()
        guard problems.isEmpty else {
            throw FerryError(.invalidDefinition, problems.joined(separator: "; "), at: InputLocation(file: sourceName))
        }
        prepared = true
        for _ in 0..<layout.skipLines {
            guard try lines.nextLine(record: 1) != nil else { break }
        }
    }

    /// The next record, or nil at the end of the input.
    public func next() throws -> SourceRecord? {
        try prepare()
        while let (start, end) = try lines.nextLine(record: number + 1) {
            let base = UnsafePointer(lines.window.base)
            var index = start
            while index < end && (base[index] == 0x20 || base[index] == 0x09) { index += 1 }
            if index == end { continue }
            number += 1
            lastLine = lines.lineNumber
            return record(UnsafeBufferPointer(start: base + start, count: end - start))
        }
        return nil
    }

    /// The record of one non-blank line (without its line break).
    private func record(_ line: UnsafeBufferPointer<UInt8>) -> SourceRecord {
        let raw = Array(line)
        func problem(_ message: String, byte: Int) -> SourceRecord {
            let location = InputLocation(file: sourceName, line: lastLine, column: byte + 1, record: number)
            return SourceRecord(
                number: number, line: lastLine, fields: [], rawBytes: raw,
                problem: FerryError(.invalidInput, message, at: location))
        }
        let invalid = line.baseAddress.map { firstInvalidUTF8($0, line.count) } ?? line.count
        if invalid < line.count {
            let hex = String(line[invalid], radix: 16, uppercase: true)
            // A transcoded input marks a sequence invalid in its encoding with 0xFF (never UTF-8).
            let reason = input.encoding.map { line[invalid] == 0xFF ? "text that is not valid \($0)" : nil } ?? nil
            return problem(reason ?? "invalid UTF-8 (byte 0x\(hex.count == 1 ? "0" : "")\(hex))", byte: invalid)
        }
        // Where each character starts (one more entry: the end of the line).
        offsets.removeAll(keepingCapacity: true)
        for (index, byte) in line.enumerated() where byte & 0xC0 != 0x80 { offsets.append(index) }
        let characters = offsets.count
        offsets.append(line.count)
        if characters < layout.width && layout.shortLines == .pad {
            // Blanks past the line's end: what a column lacks reads as blanks, trimmed below.
            offsets.append(contentsOf: repeatElement(line.count, count: layout.width - characters))
        } else if characters < layout.width,
            let lacking = layout.columns.filter({ $0.end > characters }).min(by: { $0.start < $1.start })
        {
            return problem(
                "the line has \(characters) character\(characters == 1 ? "" : "s") but the layout needs \(layout.width): column '\(lacking.name)' is characters \(lacking.start)–\(lacking.end)",
                byte: line.count)
        }
        if let extra = (layout.width..<max(layout.width, characters)).first(where: {
            line[offsets[$0]] != 0x20 && line[offsets[$0]] != 0x09
        }) {
            let text = String(decoding: line[offsets[extra]...], as: UTF8.self)
            return problem(
                "text after the last column (character \(extra + 1) of a \(layout.width)-character layout): '\(text)'",
                byte: offsets[extra])
        }
        var fields: [Field?] = []
        fields.reserveCapacity(layout.columns.count)
        for column in layout.columns {
            var from = offsets[column.start - 1]
            var to = offsets[column.end]
            let startColumn = from + 1
            while from < to && (line[from] == 0x20 || line[from] == 0x09) { from += 1 }
            while to > from && (line[to - 1] == 0x20 || line[to - 1] == 0x09) { to -= 1 }
            let text = String(decoding: line[from..<to], as: UTF8.self)
            fields.append(
                Field(value: nullTokens.contains(text) ? .null : .text(text), line: lastLine, column: startColumn))
        }
        return SourceRecord(number: number, line: lastLine, fields: fields, rawBytes: raw)
    }
}
