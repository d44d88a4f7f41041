import FerryCore

/// One result column of a database source: its name and, when the database declares one, the
/// ferry attribute type its values have (``SourceColumnType``).
package struct DatabaseColumn: Sendable, Hashable {
    package var name: String
    /// The type the database declares for the column; nil when it declares none that ferry
    /// knows (a SQLite expression, an untyped column): inference then looks at the values.
    package var type: AttributeType?

    package init(name: String, type: AttributeType?) {
        self.name = name
        self.type = type
    }
}

/// A forward-only cursor over the rows of a database source: a stepped SQLite statement, a
/// PostgreSQL server-side cursor, a Core Data fetch. It holds a bounded number of rows, never the
/// whole result, and keeps each value's type.
protocol DatabaseCursor: AnyObject {
    /// The result columns, in row order.
    var columns: [DatabaseColumn] { get }
    /// The next row's values (one per column), or nil after the last row.
    func next() throws -> [Value]?
    /// The mark of the last row read, for an incremental read (nil otherwise, or before a row).
    var lastMark: IncrementalMark? { get }
}
