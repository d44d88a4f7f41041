/// The rows and status of one statement, read completely from the server.
public struct PostgresResult: Sendable {
    /// The result's columns, in order.
    public var columns: [Column]
    /// The rows, each with one value per column.
    public var rows: [PostgresRow]
    /// Rows inserted, updated, deleted, copied or selected, as the command tag reports; 0 for
    /// statements that report none.
    public var affectedRows: Int

    /// A result column: its name and PostgreSQL type OID.
    public struct Column: Sendable, Hashable {
        /// The column's name.
        public var name: String
        /// The column's PostgreSQL type OID (`23` int4, `25` text, …).
        public var typeOID: UInt32
    }
}

/// One result row; values are read by position or column name, with typed accessors that throw
/// ``PostgresError`` (kind `.typeMismatch`) naming the column when the value is of another type.
public struct PostgresRow: Sendable {
    /// The column names, shared by every row of a result.
    public let columnNames: [String]
    /// The values, one per column.
    public let values: [PostgresValue]

    /// The value of column `index`.
    public subscript(index: Int) -> PostgresValue { values[index] }

    /// The value of the first column called `name`, or nil if there is none.
    public subscript(name: String) -> PostgresValue? {
        columnNames.firstIndex(of: name).map { values[$0] }
    }

    /// True when the value of column `column` is NULL.
    public func isNull(_ column: Int) -> Bool { values[column] == .null }

    /// The integer of column `column` (`smallint`, `integer`, `bigint`); throws for another type or NULL.
    public func int(_ column: Int) throws(PostgresError) -> Int64 {
        guard case .integer(let value) = values[column] else { throw mismatch(column, "integer") }
        return value
    }

    /// The boolean of column `column`; throws for another type or NULL.
    public func bool(_ column: Int) throws(PostgresError) -> Bool {
        guard case .bool(let value) = values[column] else { throw mismatch(column, "boolean") }
        return value
    }

    /// The number of column `column` (a double, or an integer converted); throws for another type or NULL.
    public func double(_ column: Int) throws(PostgresError) -> Double {
        switch values[column] {
        case .real(let value): return value
        case .integer(let value): return Double(value)
        default: throw mismatch(column, "double")
        }
    }

    /// Text of any non-NULL value of type text or one decoded as text (`numeric`, `uuid`, …).
    public func string(_ column: Int) throws(PostgresError) -> String {
        guard case .text(let value) = values[column] else { throw mismatch(column, "text") }
        return value
    }

    /// The bytes of a `bytea` column; throws for another type or NULL.
    public func bytes(_ column: Int) throws(PostgresError) -> [UInt8] {
        guard case .bytes(let value) = values[column] else { throw mismatch(column, "bytea") }
        return value
    }

    private func mismatch(_ column: Int, _ expected: String) -> PostgresError {
        PostgresError(
            kind: .typeMismatch,
            message: "column \(column + 1) '\(columnNames[column])' is \(values[column].typeName), "
                + "not \(expected)")
    }
}
