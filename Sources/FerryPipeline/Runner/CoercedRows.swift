import FerryCore
import FerryPostgres
import FerryPostgresStore

/// Where the fast path puts a record's values: the insert statement itself
/// (``BatchInserter``), or ``CoercedRows`` that the importing thread binds later.
protocol DirectRowSink: AnyObject {
    func bindDirect(_ value: Value, column index: Int) throws
    func bindDirect(utf8 bytes: UnsafeBufferPointer<UInt8>, column index: Int) throws
    func bindDirect(_ value: Int64, column index: Int) throws
    func bindDirect(_ value: Double, column index: Int) throws
}

extension BatchInserter: DirectRowSink {}

/// Records whose attribute values the read-ahead thread already coerced and validated, and
/// whose reference keys it coerced: the importing thread only binds them, resolves the keys and
/// writes the rows. Part of a ``RecordBatch``; cleared and reused with it.
final class CoercedRows: DirectRowSink {
    enum Cell {
        case null
        case integer(Int64)
        case double(Double)
        /// UTF-8 text in ``bytes``.
        case text(start: Int, count: Int)
        case value(Value)
    }

    let columnCount: Int
    let referenceCount: Int
    @exclusivity(unchecked) private var cells: [Cell] = []
    @exclusivity(unchecked) private var keys: [ImportPlan.ReferenceKey] = []
    @exclusivity(unchecked) private var bytes: [UInt8] = []
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var rowBase = 0
    @exclusivity(unchecked) private var byteMark = 0
    @exclusivity(unchecked) private var keyMark = 0

    init(columnCount: Int, referenceCount: Int) {
        self.columnCount = columnCount
        self.referenceCount = referenceCount
    }

    func clear() {
        cells.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        if bytes.capacity > 4 << 20 { bytes = [] } else { bytes.removeAll(keepingCapacity: true) }
        count = 0
    }

    /// Starts a row (every column NULL until bound).
    func beginRow() {
        rowBase = cells.count
        byteMark = bytes.count
        keyMark = keys.count
        cells.append(contentsOf: repeatElement(.null, count: columnCount))
    }

    /// Adds the next reference key of the row begun.
    func addKey(_ key: ImportPlan.ReferenceKey) { keys.append(key) }

    /// Keeps the row begun; returns its index.
    func commitRow() -> Int {
        count += 1
        return count - 1
    }

    /// Drops the row begun (the record takes the general path on the importing thread).
    func abandonRow() {
        cells.removeSubrange(rowBase...)
        bytes.removeSubrange(byteMark...)
        keys.removeSubrange(keyMark...)
    }

    func bindDirect(_ value: Value, column index: Int) throws {
        cells[rowBase + index] = value.isNull ? .null : .value(value)
    }

    func bindDirect(utf8 field: UnsafeBufferPointer<UInt8>, column index: Int) throws {
        let start = bytes.count
        bytes.append(contentsOf: field)
        cells[rowBase + index] = .text(start: start, count: field.count)
    }

    func bindDirect(_ value: Int64, column index: Int) throws {
        cells[rowBase + index] = .integer(value)
    }

    func bindDirect(_ value: Double, column index: Int) throws {
        cells[rowBase + index] = .double(value)
    }

    /// Binds row `row`'s attribute values to the inserter's statement.
    func bind(_ row: Int, to inserter: BatchInserter) throws {
        let base = row * columnCount
        for column in 0..<columnCount {
            switch cells[base + column] {
            case .null: try inserter.bindDirect(Value.null, column: column)
            case .integer(let value): try inserter.bindDirect(value, column: column)
            case .double(let value): try inserter.bindDirect(value, column: column)
            case .value(let value): try inserter.bindDirect(value, column: column)
            case .text(let start, let count):
                try bytes.withUnsafeBufferPointer {
                    try inserter.bindDirect(
                        utf8: UnsafeBufferPointer(rebasing: $0[start..<(start + count)]), column: column)
                }
            }
        }
    }

    /// Binds the attribute values of `count` rows from `first` as the rows of `insert` (text
    /// borrowed from this batch, not copied), then runs `body` (which binds the rest and writes)
    /// while the borrowed bytes are guaranteed in place.
    func withRows<T>(
        from first: Int, count: Int, boundTo insert: MultiRowInsert, _ body: () throws -> T
    ) throws -> T {
        try bytes.withUnsafeBufferPointer { bytes in
            for row in 0..<count {
                let base = (first + row) * columnCount
                for column in 0..<columnCount {
                    switch cells[base + column] {
                    case .null: try insert.bind(Value.null, row: row, column: column)
                    case .integer(let value): try insert.bind(value, row: row, column: column)
                    case .double(let value): try insert.bind(value, row: row, column: column)
                    case .value(let value): try insert.bind(value, row: row, column: column)
                    case .text(let start, let count):
                        try insert.bind(
                            borrowingUTF8: UnsafeBufferPointer(rebasing: bytes[start..<(start + count)]), row: row,
                            column: column)
                    }
                }
            }
            return try body()
        }
    }

    /// Appends row `row`'s attribute values to the COPY row begun in `copy`, as `inserter`
    /// stages them (integers as digits, text and other values already in their text form escaped
    /// from these bytes, the rest as ``PostgresStagedInserter/appendEncoded(_:to:)`` writes
    /// them); false when a value needs the general path (null where a value is required). Throws
    /// for text holding U+0000.
    func encode(_ row: Int, into copy: inout PostgresCopyText, for inserter: PostgresStagedInserter) throws -> Bool {
        let base = row * columnCount
        return try bytes.withUnsafeBufferPointer { bytes in
            for column in 0..<columnCount {
                switch cells[base + column] {
                case .null:
                    if inserter.requiresValue(column: column) { return false }
                    copy.appendNull()
                case .integer(let value): copy.appendField(value)
                case .double(let value): try copy.appendField(PostgresValue.real(value))
                case .value(let value): try inserter.appendEncoded(value, to: &copy)
                case .text(let start, let count):
                    try copy.appendField(utf8: UnsafeBufferPointer(rebasing: bytes[start..<(start + count)]))
                }
            }
            return true
        }
    }

    /// The key of reference `offset` of row `row`.
    func referenceKey(_ row: Int, _ offset: Int) -> ImportPlan.ReferenceKey {
        keys[row * referenceCount + offset]
    }
}
