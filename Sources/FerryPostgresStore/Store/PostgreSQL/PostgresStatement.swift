import FerryCore
import FerryPostgres

/// One of ferry's statements (SQLite's `?` and `?N` placeholders) run many times on a
/// PostgreSQL store, each time with other arguments: its placeholders are rewritten once, and
/// the session prepares it on its first run and executes it by name after (`FerryPostgres`'s
/// `executePrepared`), so the server parses and analyzes it once instead of every time.
/// Arguments, results, errors and ``PostgresDatabase/changes`` are those of the
/// ``PostgresDatabase`` methods of the same names.
package struct PostgresStatement: PreparedStatement {
    private let database: PostgresDatabase
    /// The SQL with PostgreSQL's placeholders (`$N`).
    package let text: String

    init(database: PostgresDatabase, sql: String) {
        self.database = database
        text = PostgresDatabase.numberedPlaceholders(sql)
    }

    /// Runs the statement, discarding any rows; the rows it changed are the database's `changes`.
    package func execute(_ arguments: [DatabaseValue]) throws {
        database.changes = try database.run(numbered: text, arguments, prepared: true).affectedRows
    }

    /// All rows of the query, each as an array of column values.
    package func rows(_ arguments: [DatabaseValue]) throws -> [[DatabaseValue]] {
        PostgresDatabase.rows(of: try database.run(numbered: text, arguments, prepared: true))
    }

    /// The first column of the first row, or nil when there is no row.
    package func scalar(_ arguments: [DatabaseValue]) throws -> DatabaseValue? {
        PostgresDatabase.firstValue(of: try database.run(numbered: text, arguments, prepared: true))
    }

    /// Nothing to let go of: each run's result is read whole.
    package func finish() {}
}
