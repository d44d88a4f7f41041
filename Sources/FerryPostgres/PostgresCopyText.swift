/// Rows encoded in `COPY … FROM STDIN`'s text format, in one growing byte buffer: what
/// ``PostgresCopyWriter`` and ``PostgresCopyStream`` send.
///
/// Fields are separated by tabs and rows end with a newline; text is escaped (`\\`, tab,
/// newline, carriage return), NULL is `\N`, `bytea` is `\x` hex, integers are written digit by
/// digit. PostgreSQL text cannot hold U+0000: such a value is refused with an error naming the
/// row (1-based) and column, and nothing of that row stays in the buffer.
///
/// A value type: building a batch allocates nothing per value beyond the buffer's growth.
public struct PostgresCopyText: Sendable {
    /// The column names, in the order the COPY names them (for error messages and the field count).
    public let columns: [String]
    /// The encoded rows.
    public private(set) var bytes: [UInt8] = []
    /// Complete rows in ``bytes``.
    public private(set) var rowCount = 0
    /// Fields of the current row appended so far, and where that row starts in ``bytes``.
    private var fieldsInRow = 0
    private var rowStart = 0

    /// An empty buffer for rows of `columns`, with room for about `capacity` bytes.
    public init(columns: [String], capacity: Int = 0) {
        self.columns = columns
        bytes.reserveCapacity(capacity)
    }

    /// Appends one row: one value per column, in the order of ``columns``.
    public mutating func append(_ row: [PostgresValue]) throws(PostgresError) {
        guard row.count == columns.count else {
            throw PostgresError(
                kind: .invalidValue,
                message: "the row has \(row.count) values for \(columns.count) columns",
                copyLine: rowCount + 1)
        }
        for value in row { try appendField(value) }
        endRow()
    }

    /// Appends the next field of the current row; after the last one, ``endRow()``.
    public mutating func appendField(_ value: PostgresValue) throws(PostgresError) {
        switch value {
        case .null:
            appendNull()
        case .bool(let flag):
            beginField()
            bytes.append(flag ? UInt8(ascii: "t") : UInt8(ascii: "f"))
        case .integer(let number):
            appendField(number)
        case .real, .bytes:
            // Rare in bulk loads: their text form is built, then escaped like any text.
            beginField()
            if let text = value.textForm { appendEscaped(text) }
        case .text(let text):
            beginField()
            guard appendEscaped(text) else { throw nulRefused(column: fieldsInRow - 1) }
        }
    }

    /// Appends NULL (`\N`) as the next field of the current row.
    public mutating func appendNull() {
        beginField()
        bytes.append(UInt8(ascii: "\\"))
        bytes.append(UInt8(ascii: "N"))
    }

    /// Appends an integer, digit by digit, as the next field of the current row (an integer
    /// column's value; a `boolean` column takes 1 and 0).
    public mutating func appendField(_ number: Int64) {
        beginField()
        appendDecimal(number)
    }

    /// Appends UTF-8 text, escaped, as the next field of the current row: the bytes of a value
    /// already in its column's text input form (text, a canonical `numeric`, a `uuid`, an ISO
    /// date). Text holding U+0000 is refused as in `appendField(_ value:)`, and
    /// nothing of the current row stays.
    public mutating func appendField(utf8: UnsafeBufferPointer<UInt8>) throws(PostgresError) {
        beginField()
        guard appendEscaped(utf8) else { throw nulRefused(column: fieldsInRow - 1) }
    }

    /// Starts the next field: notes where a row starts, or separates it from the field before.
    @inline(__always)
    private mutating func beginField() {
        if fieldsInRow == 0 {
            rowStart = bytes.count
        } else {
            bytes.append(UInt8(ascii: "\t"))
        }
        fieldsInRow += 1
    }

    /// Drops the current row and returns the error for text holding U+0000 in `column`.
    private mutating func nulRefused(column: Int) -> PostgresError {
        discardRow()
        return PostgresError(
            kind: .invalidValue,
            message: "text contains the NUL character (U+0000), which PostgreSQL cannot store",
            copyLine: rowCount + 1, copyColumn: column < columns.count ? columns[column] : nil)
    }

    /// Ends the current row (its fields must number ``columns``' count).
    public mutating func endRow() {
        precondition(fieldsInRow == columns.count, "a COPY row has one field per column")
        bytes.append(UInt8(ascii: "\n"))
        fieldsInRow = 0
        rowCount += 1
    }

    /// Drops the fields of the current, unfinished row.
    public mutating func discardRow() {
        if fieldsInRow > 0 { bytes.removeSubrange(rowStart...) }
        fieldsInRow = 0
    }

    /// Empties the buffer, keeping its capacity.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        rowCount = 0
        fieldsInRow = 0
    }

    private mutating func appendDecimal(_ number: Int64) {
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var first = digits.count
            repeat {
                first -= 1
                digits[first] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[first...]))
        }
    }

    /// Appends `text` escaped; false (nothing appended past the special bytes before it) if it
    /// contains NUL.
    @discardableResult
    private mutating func appendEscaped(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { appendEscaped($0) }
    }

    /// Appends UTF-8 bytes escaped (the runs between special bytes copied whole); false if they
    /// contain NUL.
    private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        var runStart = 0
        for index in 0..<utf8.count {
            let escaped: UInt8
            switch utf8[index] {
            case 0: return false
            case UInt8(ascii: "\\"): escaped = UInt8(ascii: "\\")
            case UInt8(ascii: "\t"): escaped = UInt8(ascii: "t")
            case UInt8(ascii: "\n"): escaped = UInt8(ascii: "n")
            case UInt8(ascii: "\r"): escaped = UInt8(ascii: "r")
            default: continue
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
            bytes.append(UInt8(ascii: "\\"))
            bytes.append(escaped)
            runStart = index + 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        return true
    }
}
