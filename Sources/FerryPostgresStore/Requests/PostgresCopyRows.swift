import FerryCore
import FerryPostgres

/// The rows of a ``FetchRequest`` on a PostgreSQL store whose filter the server evaluates whole
/// (or that has none), for a ``FetchCursor``: `COPY (SELECT …) TO STDOUT` streams them with no
/// round trip per batch, and each field goes from COPY's text straight into ferry's stored form
/// in one reused buffer, nothing allocated per value.
///
/// The stored forms are exactly those `PostgresFetchRows` hands out
/// (`PostgresValueCoding/storedForm(_:as:)`): integers and booleans (`t`/`f` as 1/0) parsed from
/// their digits, reals as `Double` reads them, a `timestamptz` (`2024-05-01 12:30:00.25+00`,
/// the session is in UTC) rewritten as the fixed-width `2024-05-01T12:30:00.250Z`, `bytea`
/// decoded from its hex output, `numeric`, `uuid`, `jsonb` and text as the server wrote them.
/// A field of any other shape (a date between two milliseconds, `infinity`) takes that general
/// path, so the two never differ.
final class PostgresCopyRows {
    private enum Kind { case integer, bool, real, text, date, binary }

    private let stream: PostgresCopyOutStream
    private let database: PostgresDatabase
    /// The statement, for errors.
    private let sql: String
    private let types: [AttributeType]
    private let kinds: [Kind]
    private let coding = PostgresValueCoding()
    /// The current row: per column, its storage class, its number (integers and booleans), its
    /// real, and where its bytes (text, blob) are in ``bytes``.
    @exclusivity(unchecked) private(set) var classes: [DatabaseValue.StorageClass]
    @exclusivity(unchecked) private var integers: [Int64]
    @exclusivity(unchecked) private var reals: [Double]
    @exclusivity(unchecked) private var ranges: [Range<Int>]
    /// The current row's text and blob bytes, back to back: memory of its own rather than an
    /// array, so handing a field to a writer's closure costs no reference counting.
    @exclusivity(unchecked) private var bytes: UnsafeMutableBufferPointer<UInt8>
    @exclusivity(unchecked) private var used = 0
    /// Where escaped fields are decoded.
    @exclusivity(unchecked) private var scratch: [UInt8] = []
    /// Where dates and blobs are converted (a field may lie in ``scratch``).
    @exclusivity(unchecked) private var converted: [UInt8] = []

    /// Starts the COPY of `query` (compiled without the key column); nil when an argument
    /// cannot be written into the statement as a literal (then read through a cursor).
    init?(_ query: FetchQuery, database: PostgresDatabase) throws {
        guard let sql = PostgresDatabase.inliningArguments(query.sql, query.arguments) else { return nil }
        do {
            stream = try database.connection.copyOut(sql)
        } catch {
            throw database.failure(error, sql: sql)
        }
        self.database = database
        self.sql = sql
        types = query.columns.map(\.type)
        kinds = types.map { type in
            switch type {
            case .int16, .int32, .int64: .integer
            case .bool: .bool
            case .double, .float: .real
            case .decimal, .string, .uuid, .uri, .json: .text
            case .date: .date
            case .binary: .binary
            }
        }
        classes = Array(repeating: .null, count: types.count)
        integers = Array(repeating: 0, count: types.count)
        reals = Array(repeating: 0, count: types.count)
        ranges = Array(repeating: 0..<0, count: types.count)
        bytes = .allocate(capacity: 4096)
    }

    deinit {
        bytes.deallocate()
    }

    /// Moves to the next row; false after the last.
    package func advance() throws -> Bool {
        let row: UnsafeBufferPointer<UInt8>?
        do {
            row = try stream.nextRow()
        } catch {
            throw database.failure(error, sql: sql)
        }
        guard let row else { return false }
        used = 0
        let count = kinds.count
        let fields = PostgresCopyTextFields.forEach(in: row, scratch: &scratch) { index, field in
            if index < count { read(field, at: index) }
        }
        // A query of no columns selects one NULL.
        guard fields == count || count == 0 else {
            throw FerryError(
                .internal, "PostgreSQL's COPY sent a row of \(fields) fields for \(count) columns (\(sql.prefix(200)))")
        }
        return true
    }

    /// Stops the server sending rows (the reader failed): the statement, and its transaction,
    /// fail; a later statement on the session works once that transaction ended.
    package func cancel() { stream.cancel() }

    // MARK: - The current row

    @inline(__always)
    package func int64(at index: Int) -> Int64 {
        switch classes[index] {
        case .integer: integers[index]
        case .real: Int64(exactly: reals[index].rounded(.towardZero)) ?? 0
        default: 0
        }
    }

    @inline(__always)
    package func double(at index: Int) -> Double {
        switch classes[index] {
        case .integer: Double(integers[index])
        case .real: reals[index]
        default: 0
        }
    }

    /// Whether the column holds text or blob bytes (read them with ``withBytes(at:_:)``).
    @inline(__always)
    func hasBytes(at index: Int) -> Bool {
        classes[index] == .text || classes[index] == .blob
    }

    /// The column's text or blob bytes, without copying.
    @inline(__always)
    func withBytes<T>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try body(UnsafeBufferPointer(rebasing: bytes[ranges[index]]))
    }

    /// The column's stored value.
    package func value(at index: Int) -> DatabaseValue {
        switch classes[index] {
        case .null: .null
        case .integer: .integer(integers[index])
        case .real: .real(reals[index])
        case .text: .text(String(decoding: UnsafeBufferPointer(rebasing: bytes[ranges[index]]), as: UTF8.self))
        case .blob: .blob(Array(UnsafeBufferPointer(rebasing: bytes[ranges[index]])))
        }
    }

    // MARK: - Decoding

    @inline(__always)
    private func read(_ field: UnsafeBufferPointer<UInt8>?, at index: Int) {
        guard let field else {
            classes[index] = .null
            return
        }
        switch kinds[index] {
        case .integer:
            if let value = Self.integer(field) { return set(.integer, value, at: index) }
        case .bool:
            if field.count == 1, field[0] == UInt8(ascii: "t") { return set(.integer, 1, at: index) }
            if field.count == 1, field[0] == UInt8(ascii: "f") { return set(.integer, 0, at: index) }
        case .real:
            break
        case .text:
            return keep(field, as: .text, at: index)
        case .date:
            converted.removeAll(keepingCapacity: true)
            if Self.appendStoredDate(field, to: &converted) {
                return converted.withUnsafeBufferPointer { keep($0, as: .text, at: index) }
            }
        case .binary:
            converted.removeAll(keepingCapacity: true)
            if PostgresValue.appendHexBytea(field, to: &converted) {
                return converted.withUnsafeBufferPointer { keep($0, as: .blob, at: index) }
            }
        }
        readGenerally(field, at: index)
    }

    /// Copies `field` to the row's bytes as column `index`'s value of class `storage`.
    @inline(__always)
    private func keep(_ field: UnsafeBufferPointer<UInt8>, as storage: DatabaseValue.StorageClass, at index: Int) {
        if used + field.count > bytes.count {
            let grown = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(bytes.count * 2, used + field.count))
            _ = grown.initialize(from: UnsafeBufferPointer(rebasing: bytes[..<used]))
            bytes.deallocate()
            bytes = grown
        }
        _ = UnsafeMutableBufferPointer(rebasing: bytes[used..<(used + field.count)]).initialize(from: field)
        classes[index] = storage
        ranges[index] = used..<(used + field.count)
        used += field.count
    }

    @inline(__always)
    private func set(_ storage: DatabaseValue.StorageClass, _ integer: Int64, at index: Int) {
        classes[index] = storage
        integers[index] = integer
    }

    /// The field as a cursor's row would give it: PostgreSQL's text decoded by the column's
    /// type, then in ferry's stored form.
    private func readGenerally(_ field: UnsafeBufferPointer<UInt8>, at index: Int) {
        let oid: UInt32
        switch kinds[index] {
        case .integer: oid = PostgresValue.TypeOID.int8
        case .bool: oid = PostgresValue.TypeOID.bool
        case .real: oid = PostgresValue.TypeOID.float8
        case .binary: oid = PostgresValue.TypeOID.bytea
        case .text, .date: oid = 0
        }
        let read = PostgresValue(text: String(decoding: field, as: UTF8.self), typeOID: oid)
        let stored = coding.storedForm(PostgresDatabase.databaseValue(read), as: types[index])
        switch stored {
        case .null:
            classes[index] = .null
        case .integer(let value):
            set(.integer, value, at: index)
        case .real(let value):
            classes[index] = .real
            reals[index] = value
        case .text(var text):
            text.withUTF8 { keep($0, as: .text, at: index) }
        case .blob(let blob):
            blob.withUnsafeBufferPointer { keep($0, as: .blob, at: index) }
        }
    }

    /// An integer written as PostgreSQL writes one (an optional `-`, then digits); nil for
    /// anything else or out of range.
    @inline(__always)
    static func integer(_ field: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard !field.isEmpty else { return nil }
        let negative = field[0] == UInt8(ascii: "-")
        var index = negative ? 1 : 0
        guard index < field.count else { return nil }
        // Accumulated negatively, so that Int64.min fits.
        var value: Int64 = 0
        while index < field.count {
            let digit = field[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = times10.subtractingReportingOverflow(Int64(digit))
            guard !overflow, !overflow2 else { return nil }
            value = next
            index += 1
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    /// Appends the stored form of a `timestamptz` in PostgreSQL's ISO output in UTC with whole
    /// milliseconds (`YYYY-MM-DD HH:MM:SS[.f…]+00`, up to three fractional digits): the same
    /// digits as `YYYY-MM-DDTHH:MM:SS.fffZ`. False for any other shape (more digits, a year
    /// past 9999, BC, `infinity`).
    static func appendStoredDate(_ field: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) -> Bool {
        let count = field.count
        guard count == 22 || (24...26).contains(count),
            field[4] == UInt8(ascii: "-"), field[7] == UInt8(ascii: "-"), field[10] == UInt8(ascii: " "),
            field[13] == UInt8(ascii: ":"), field[16] == UInt8(ascii: ":"),
            field[count - 3] == UInt8(ascii: "+"), field[count - 2] == UInt8(ascii: "0"),
            field[count - 1] == UInt8(ascii: "0"),
            count == 22 || field[19] == UInt8(ascii: ".")
        else { return false }
        let separators: UInt32 = 1 << 4 | 1 << 7 | 1 << 10 | 1 << 13 | 1 << 16 | 1 << 19
        let fractionEnd = count - 3
        for position in 0..<fractionEnd where separators & (1 << position) == 0 && field[position] &- 48 >= 10 {
            return false
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: field[0..<10]))
        bytes.append(UInt8(ascii: "T"))
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: field[11..<19]))
        bytes.append(UInt8(ascii: "."))
        if count > 22 { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: field[20..<fractionEnd])) }
        for _ in 0..<(3 - max(0, fractionEnd - 20)) { bytes.append(UInt8(ascii: "0")) }
        bytes.append(UInt8(ascii: "Z"))
        return true
    }
}
