/// What ferry's SQL generators need from a database session, whatever the engine: statements with
/// bound ``DatabaseValue``s (`?` or `?N` placeholders, as SQLite writes them), typed result rows
/// (read whole or streamed), scalar queries, row counts, transactions with savepoints, and the key
/// of an inserted row.
///
/// ``Connection`` (SQLite) adopts it without a change in behaviour or speed; the import hot path
/// and other SQLite-only code keep using ``Connection`` and its ``Statement``s directly.
/// ``PostgresDatabase`` adopts it over `FerryPostgres`. A ``Store`` hands its session out as
/// `any DatabaseConnection` through ``Store/readDatabase(_:)`` and ``Store/writeDatabase(_:)``.
package protocol DatabaseConnection: AnyObject {
    /// Where the session points, for messages: a file path, or a URL without its password.
    var location: String { get }
    /// Runs one statement, discarding any rows it returns.
    func execute(_ sql: String) throws
    /// Runs one statement with arguments bound to its placeholders.
    func execute(_ sql: String, _ arguments: [DatabaseValue]) throws
    /// Runs a script of ferry's own fixed SQL (several statements, no values).
    func executeScript(_ sql: String) throws
    /// All rows of a query, each as an array of column values.
    func rows(_ sql: String, _ arguments: [DatabaseValue]) throws -> [[DatabaseValue]]
    /// The first column of the first row, or nil when there is no row.
    func scalar(_ sql: String, _ arguments: [DatabaseValue]) throws -> DatabaseValue?
    /// Calls `body` with each row of a query in turn, without holding all rows in memory.
    func forEachRow(_ sql: String, _ arguments: [DatabaseValue], _ body: ([DatabaseValue]) throws -> Void) throws
    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { get }
    /// True when a transaction is open.
    var isInTransaction: Bool { get }
    /// Runs `body` in a transaction that reads: committed when it returns, rolled back when it throws.
    func readTransaction<T>(_ body: () throws -> T) throws -> T
    /// Runs `body` in a transaction that writes, taking the engine's write lock at once.
    func writeTransaction<T>(_ body: () throws -> T) throws -> T
    /// Runs `body` inside a savepoint, rolled back to when it throws (nests inside a transaction).
    func savepoint<T>(_ name: String, _ body: () throws -> T) throws -> T
    /// Runs an `INSERT` and returns the value the engine gave the integer key column `keyColumn`.
    func insertReturningKey(_ sql: String, _ arguments: [DatabaseValue], keyColumn: String) throws -> Int64
    /// For a bulk load inside the current write transaction into `table` (quoted) while it holds
    /// no rows: lifts the engine's per-row checks of the table's references and returns the
    /// statements that put them back, each checking every row at once; run them before the
    /// commit (a rollback puts the checks back by itself). Empty when the engine has nothing to
    /// lift in a transaction or the table holds rows (SQLite's own per-row check is turned off
    /// outside the transaction instead).
    func liftReferenceChecks(forBulkLoadInto table: String) throws -> [String]
}

extension DatabaseConnection {
    package func liftReferenceChecks(forBulkLoadInto table: String) throws -> [String] { [] }

    /// All rows of a query without arguments.
    package func rows(_ sql: String) throws -> [[DatabaseValue]] { try rows(sql, []) }
    /// The first column of the first row of a query without arguments.
    package func scalar(_ sql: String) throws -> DatabaseValue? { try scalar(sql, []) }
}

extension Connection: DatabaseConnection {
    package var location: String { path }

    package func forEachRow(
        _ sql: String, _ arguments: [DatabaseValue], _ body: ([DatabaseValue]) throws -> Void
    ) throws {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        let count = statement.columnCount
        while try statement.step() {
            try body((0..<count).map { statement.value(at: $0) })
        }
    }

    package func readTransaction<T>(_ body: () throws -> T) throws -> T { try transaction(.deferred, body) }

    package func writeTransaction<T>(_ body: () throws -> T) throws -> T { try transaction(.immediate, body) }

    package func insertReturningKey(_ sql: String, _ arguments: [DatabaseValue], keyColumn: String) throws -> Int64 {
        try execute(sql, arguments)
        return lastInsertRowID
    }
}
