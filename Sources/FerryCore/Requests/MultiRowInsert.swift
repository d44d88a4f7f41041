/// Several rows of a ``BatchInserter`` written by one `INSERT … VALUES (…), (…), …` statement:
/// the import fast path's bulk write, for rows whose values were coerced and validated before
/// (the read-ahead thread's batches).
///
/// SQLite then runs the statement's setup (its cursors on the table and each index, the
/// transaction check) once for ``rowCount`` rows instead of once per row, and text is bound
/// without a copy: together about half of SQLite's CPU time per row for a table like the
/// benchmark's (see docs/benchmarks.md). The statement is `INSERT OR FAIL`: a constraint that
/// refuses one of its rows stops it there, the rows before that one stay written (in order) and
/// ``write()`` says how many they are, so the caller writes the refused record and the ones after
/// it one by one. (SQLite's default, `ABORT`, would undo the statement's rows instead, which
/// costs a statement journal: a copy of every existing page the statement changes, a 4 KiB copy
/// per row when an index is written in random order.)
package final class MultiRowInsert {
    /// Rows per statement: past 16, the gain per added row is below 1 % (measured with the
    /// benchmark's table).
    package static let maximumRows = 16
    /// SQLite's historical limit on parameters per statement (999), which every build accepts.
    static let maximumParameters = 999

    /// The rows each statement writes.
    package let rowCount: Int
    /// The values of each row, in the inserter's column order.
    package let columnCount: Int
    private let statement: Statement
    private let connection: Connection
    private let coding: DispatchedValueCoding

    /// Prepares the statement for `rows` rows of `columns` (quoted names) in `table`; nil when
    /// fewer than two rows fit in one statement.
    init?(connection: Connection, table: String, columns: [String], coding: DispatchedValueCoding) throws {
        guard !columns.isEmpty else { return nil }
        let rows = min(Self.maximumRows, Self.maximumParameters / columns.count)
        guard rows >= 2 else { return nil }
        let row = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let values = "VALUES " + Array(repeating: row, count: rows).joined(separator: ", ")
        statement = try connection.prepare(
            "INSERT OR FAIL INTO \(table) (\(columns.joined(separator: ", "))) \(values)")
        self.connection = connection
        self.coding = coding
        rowCount = rows
        columnCount = columns.count
    }

    /// Starts a new set of rows (every parameter must then be bound before ``write()``).
    @inline(__always)
    package func begin() { statement.reset() }

    @inline(__always)
    private func parameter(_ row: Int, _ column: Int) -> Int { row &* columnCount &+ column &+ 1 }

    /// Binds a value through the store's value coding.
    @inline(__always)
    package func bind(_ value: Value, row: Int, column: Int) throws {
        try coding.bind(value, to: statement, at: parameter(row, column))
    }

    @inline(__always)
    package func bind(_ value: Int64, row: Int, column: Int) throws {
        try statement.bind(value, at: parameter(row, column))
    }

    @inline(__always)
    package func bind(_ value: Double, row: Int, column: Int) throws {
        try statement.bind(value, at: parameter(row, column))
    }

    /// Binds UTF-8 text without a copy: the bytes must stay valid and unchanged until ``write()``
    /// returns.
    @inline(__always)
    package func bind(borrowingUTF8 bytes: UnsafeBufferPointer<UInt8>, row: Int, column: Int) throws {
        try statement.bind(borrowingUTF8: bytes, at: parameter(row, column))
    }

    /// Writes the bound rows and returns how many were written: ``rowCount``, or the index of
    /// the row a constraint refused (the rows before it are written, it and the rows after it are
    /// not). Other store failures throw.
    package func write() throws -> Int {
        do {
            try statement.step()
        } catch let error as FerryError {
            guard let result = error.underlying as? SQLiteResult, result.isConstraint else { throw error }
            // With OR FAIL, SQLite counts the rows the statement wrote before it stopped.
            return connection.changes
        }
        return rowCount
    }
}
