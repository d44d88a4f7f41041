/// What ferry's SQL generators need from a database session, whatever the engine: statements with
/// bound ``DatabaseValue``s (`?` or `?N` placeholders, as SQLite writes them), typed result rows
/// (read whole or streamed), scalar queries, row counts, transactions with savepoints, and the key
/// of an inserted row.
///
/// ``Connection`` (SQLite) adopts it without a change in behaviour or speed; the import hot path
/// and other SQLite-only code keep using ``Connection`` and its ``Statement``s directly.
/// `PostgresDatabase` (`FerryPostgresStore`) adopts it over `FerryPostgres`. A ``Store`` hands
/// its session out as `any DatabaseConnection` through ``Store/readDatabase(_:)`` and
/// ``Store/writeDatabase(_:)``.
package protocol DatabaseConnection: AnyObject {
    /// Where the session points, for messages: a file path, or a URL without its password.
    var location: String { get }
    /// Runs one statement, discarding any rows it returns.
    func execute(_ sql: String) throws
    /// Runs one statement with arguments bound to its placeholders.
    func execute(_ sql: String, _ arguments: [DatabaseValue]) throws
    /// Runs a script of ferry's own fixed SQL (several statements, no values).
    func executeScript(_ sql: String) throws
    /// Runs one statement whose outcome the open transaction's end may report instead (an
    /// engine across a network sends it with the next statement, saving a round trip).
    func executeWithNext(_ sql: String, _ arguments: [DatabaseValue]) throws
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
    /// Opens a transaction that writes, taking the engine's write lock at once, for a caller that
    /// ends it with `COMMIT` or `ROLLBACK` itself.
    func beginWriting() throws
    /// A statement run many times (a lookup or a mark per record), prepared once.
    func prepared(_ sql: String) throws -> any PreparedStatement
    /// A name for a temporary table that no other table of this session has (`prefix` itself where
    /// temporary tables go with their statement's connection and are dropped after use).
    func uniqueTemporaryName(_ prefix: String) -> String
    /// Turns off the engine's own check of each written row's foreign keys for the session's next
    /// transactions, when the engine checks them row by row and no transaction is open; true
    /// when it did, and ``resumeForeignKeyChecks()`` must follow.
    func suspendForeignKeyChecks() throws -> Bool
    /// Turns the check ``suspendForeignKeyChecks()`` turned off back on.
    func resumeForeignKeyChecks() throws
    /// True when a statement that fails ends the whole transaction (PostgreSQL's), so that a
    /// caller checks what would fail before running it; false when only the statement fails.
    var failedStatementEndsTransaction: Bool { get }
    /// The keys of the objects of `entity` that `predicate` selects, in key order (inside the
    /// caller's transaction), ferry evaluating on the rows what the engine does not.
    func keys(
        of entity: EntityDescription, matching predicate: Predicate, model: ObjectModel, layout: any StoreLayout
    ) throws -> [Int64]
    /// For a bulk load inside the current write transaction into `table` (quoted) while it holds
    /// no rows: lifts the engine's per-row checks of the table's references and returns the
    /// statements that put them back, each checking every row at once; run them before the
    /// commit (a rollback puts the checks back by itself). Empty when the engine has nothing to
    /// lift in a transaction or the table holds rows (SQLite's own per-row check is turned off
    /// outside the transaction instead).
    func liftReferenceChecks(forBulkLoadInto table: String) throws -> [String]
    /// Writes the rows `rows` hands to its argument into `table` (unquoted, in the session's own
    /// schema or database) as `columns`, in the engine's fastest bulk form (PostgreSQL's `COPY`,
    /// SQLite's one prepared `INSERT`), inside the caller's transaction.
    func bulkLoad(
        into table: String, columns: [String], layout: any StoreLayout,
        _ rows: (_ append: ([DatabaseValue]) throws -> Void) throws -> Void
    ) throws
    /// Moves the generator of the integer key `column` of `table` (unquoted) past its largest
    /// value, after rows were written with their keys, so that rows inserted later get new keys;
    /// nothing where the engine takes the next key from the rows themselves (SQLite's rowid).
    func advanceKeyGenerator(of table: String, column: String) throws
    /// A lookup that resolves many keys of one match column in one round trip, where one query
    /// per batch is cheaper than one per key (a server); nil where a lookup per key costs as
    /// little (SQLite). `source` is a quoted table or subquery, the columns quoted.
    func batchKeyLookup(source: String, keyColumn: String, matchColumn: String) -> (any BatchKeyLookup)?
}

/// Resolves many keys of one match column in one query (``DatabaseConnection/batchKeyLookup(source:keyColumn:matchColumn:)``).
package protocol BatchKeyLookup: AnyObject {
    /// Whether `key` can be sent in a batch (others are looked up alone).
    func canSend(_ key: DatabaseValue) -> Bool
    /// The primary key of the object holding each of `keys` (nil: none holds it), in order.
    func primaryKeys(of keys: [DatabaseValue]) throws -> [Int64?]
    /// ``primaryKeys(of:)`` of several lookups of the same session (this one among them), in
    /// order: one query for all where the engine can.
    func primaryKeys(_ requests: [(lookup: any BatchKeyLookup, keys: [DatabaseValue])]) throws -> [[Int64?]]
}

extension BatchKeyLookup {
    /// One query per lookup.
    package func primaryKeys(_ requests: [(lookup: any BatchKeyLookup, keys: [DatabaseValue])]) throws -> [[Int64?]] {
        try requests.map { try $0.lookup.primaryKeys(of: $0.keys) }
    }
}

/// A statement of a ``DatabaseConnection`` prepared once and run many times
/// (``DatabaseConnection/prepared(_:)``).
package protocol PreparedStatement {
    /// Runs the statement with `arguments` bound to its placeholders, discarding any rows.
    func execute(_ arguments: [DatabaseValue]) throws
    /// The first column of the first row the statement answers with `arguments`, nil when none.
    func scalar(_ arguments: [DatabaseValue]) throws -> DatabaseValue?
    /// Lets go of the statement's last result (an unfinished SQLite statement keeps its tables locked).
    func finish()
}

extension DatabaseConnection {
    package func liftReferenceChecks(forBulkLoadInto table: String) throws -> [String] { [] }

    /// At once, as ``execute(_:_:)``.
    package func executeWithNext(_ sql: String, _ arguments: [DatabaseValue]) throws { try execute(sql, arguments) }

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

    /// `BEGIN IMMEDIATE`: the write lock is taken now, not at the first write.
    package func beginWriting() throws { try execute("BEGIN IMMEDIATE") }

    package func prepared(_ sql: String) throws -> any PreparedStatement { try prepare(sql) }

    /// SQLite's temporary tables are the connection's own: the name is used as it is.
    package func uniqueTemporaryName(_ prefix: String) -> String { prefix }

    /// `PRAGMA foreign_keys = OFF` when it is on and no transaction is open (inside one the pragma
    /// does nothing).
    package func suspendForeignKeyChecks() throws -> Bool {
        guard !isInTransaction, try scalar("PRAGMA foreign_keys")?.int64 == 1 else { return false }
        try execute("PRAGMA foreign_keys = OFF")
        return true
    }

    package func resumeForeignKeyChecks() throws { try execute("PRAGMA foreign_keys = ON") }

    /// One prepared `INSERT`, stepped per row.
    package func bulkLoad(
        into table: String, columns: [String], layout: any StoreLayout,
        _ rows: (_ append: ([DatabaseValue]) throws -> Void) throws -> Void
    ) throws {
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let statement = try prepare(
            "INSERT INTO \(layout.dialect.quote(table)) (\(columns.map(layout.dialect.quote).joined(separator: ", "))) VALUES (\(marks))"
        )
        try rows { row in
            try statement.bind(row)
            _ = try statement.step()
            statement.reset()
        }
    }

    /// SQLite's rowid follows the largest key by itself.
    package func advanceKeyGenerator(of table: String, column: String) throws {}

    /// A lookup per key is as cheap on SQLite (a prepared statement in the process).
    package func batchKeyLookup(source: String, keyColumn: String, matchColumn: String) -> (any BatchKeyLookup)? {
        nil
    }

    package var failedStatementEndsTransaction: Bool { false }

    /// SQLite evaluates every predicate itself (with ferry's functions).
    package func keys(
        of entity: EntityDescription, matching predicate: Predicate, model: ObjectModel, layout: any StoreLayout
    ) throws -> [Int64] {
        let selection = try predicate.sql(for: entity, model: model, layout: layout, alias: "t0")
        let key = "t0." + layout.dialect.quote(layout.keyColumn)
        return try rows(
            "SELECT \(key) FROM \(selection.from) WHERE \(selection.sql) ORDER BY \(key)", selection.arguments
        ).compactMap { $0.first?.int64 }
    }
}

extension Statement: PreparedStatement {
    package func execute(_ arguments: [DatabaseValue]) throws {
        reset()
        try bind(arguments)
        _ = try step()
    }

    package func scalar(_ arguments: [DatabaseValue]) throws -> DatabaseValue? {
        reset()
        try bind(arguments)
        // Done with the row at once: an active statement would keep its tables locked.
        defer { reset() }
        return try step() ? value(at: 0) : nil
    }

    package func finish() { reset() }
}

/// A failed statement's engine error, kept as a `FerryError`'s underlying error, as far as a
/// request words a broken constraint in the model's terms.
package protocol ConstraintFailure: Error {
    /// True for a uniqueness constraint's violation.
    var isUniqueConstraint: Bool { get }
    /// True for a required column set to NULL.
    var isNotNullConstraint: Bool { get }
    /// The columns the engine's `message` names as the constraint's, in `table`.
    func constraintColumns(in message: String, table: String) -> [String]
}
