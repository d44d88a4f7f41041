import FerryCore
import FerryPostgresStore

/// The few statements a nested import (``NestedObjects``) runs, per backend: the inserter of
/// each nested entity, statements run again and again (a key lookup, a link), and the savepoint
/// records are written under. One implementation of the nesting rules, two of the plumbing.
protocol NestedStore: AnyObject {
    /// The store's session, for statements run once (unlinking the objects absent from a set).
    var database: any DatabaseConnection { get }
    /// A record inserter of `entity` that tells the key of each object written or found.
    func inserter(
        entity: String, columns: [InsertColumn], policy: ConflictPolicy, validate: Bool, matchKey: [String]?
    ) throws -> any KeyedRecordInserting
    /// A statement to run many times with different arguments.
    func statement(_ sql: String) throws -> NestedStatement
    /// How many records may share one savepoint: 1 on SQLite, where a savepoint costs nothing;
    /// more on PostgreSQL, where each savepoint that writes is a subtransaction holding a lock
    /// until the transaction ends, and thousands of them slow every later one down.
    var maximumRecordsPerSavepoint: Int { get }
    /// Opens the savepoint records are written under.
    func beginSavepoint() throws
    /// Undoes what was written since the savepoint opened; the savepoint stays open.
    func rollBackSavepoint() throws
    /// Closes the savepoint, keeping what was written under it.
    func releaseSavepoint() throws
}

/// A statement ``NestedObjects`` runs many times: a prepared statement on SQLite and on
/// PostgreSQL (prepared on the server on its first run).
struct NestedStatement {
    /// Runs the statement.
    let run: ([DatabaseValue]) throws -> Void
    /// The first column of the first row as an integer, nil when there is no row.
    let firstInteger: ([DatabaseValue]) throws -> Int64?
}

/// SQLite: prepared statements, ``BatchInserter``s, a prepared savepoint per record.
final class SQLiteNestedStore: NestedStore {
    let connection: Connection
    let model: ObjectModel
    let layout: any StoreLayout
    /// SAVEPOINT, ROLLBACK TO and RELEASE of the record being written, prepared once.
    private var savepoint: (begin: Statement, rollback: Statement, release: Statement)?

    init(connection: Connection, model: ObjectModel, layout: any StoreLayout) {
        self.connection = connection
        self.model = model
        self.layout = layout
    }

    var database: any DatabaseConnection { connection }

    func inserter(
        entity: String, columns: [InsertColumn], policy: ConflictPolicy, validate: Bool, matchKey: [String]?
    ) throws -> any KeyedRecordInserting {
        try BatchInserter(
            connection: connection, model: model, layout: layout, entity: entity, columns: columns, policy: policy,
            validate: validate, matchKey: matchKey)
    }

    func statement(_ sql: String) throws -> NestedStatement {
        let statement = try connection.prepare(sql)
        return NestedStatement(
            run: { try Self.run(statement, $0) },
            firstInteger: { arguments in
                statement.reset()
                try statement.bind(arguments)
                defer { statement.reset() }
                return try statement.step() ? statement.int64(at: 0) : nil
            })
    }

    var maximumRecordsPerSavepoint: Int { 1 }

    func beginSavepoint() throws {
        let savepoint =
            try self.savepoint ?? (
                connection.prepare("SAVEPOINT ferry_nested"), connection.prepare("ROLLBACK TO ferry_nested"),
                connection.prepare("RELEASE ferry_nested")
            )
        self.savepoint = savepoint
        try Self.run(savepoint.begin)
    }

    func rollBackSavepoint() throws {
        if let savepoint { try Self.run(savepoint.rollback) }
    }

    func releaseSavepoint() throws {
        if let savepoint { try Self.run(savepoint.release) }
    }

    private static func run(_ statement: Statement, _ arguments: [DatabaseValue] = []) throws {
        statement.reset()
        if !arguments.isEmpty { try statement.bind(arguments) }
        while try statement.step() {}
        statement.reset()
    }
}

/// PostgreSQL: ``PostgresRecordInserter``s and prepared statements (``PostgresStatement``), up to
/// 256 records under one savepoint.
final class PostgresNestedStore: NestedStore {
    let postgres: PostgresDatabase
    let model: ObjectModel
    let layout: any StoreLayout

    init(database: PostgresDatabase, model: ObjectModel, layout: any StoreLayout) {
        postgres = database
        self.model = model
        self.layout = layout
    }

    var database: any DatabaseConnection { postgres }

    func inserter(
        entity: String, columns: [InsertColumn], policy: ConflictPolicy, validate: Bool, matchKey: [String]?
    ) throws -> any KeyedRecordInserting {
        try PostgresRecordInserter(
            database: postgres, model: model, layout: layout, entity: entity, columns: columns, policy: policy,
            validate: validate, matchKey: matchKey)
    }

    func statement(_ sql: String) throws -> NestedStatement {
        let statement = postgres.statement(sql)
        return NestedStatement(
            run: { try statement.execute($0) },
            firstInteger: { arguments in
                // No stored text holds U+0000 (PostgreSQL cannot store it), and a parameter
                // holding it would be cut short there: such a key finds nothing.
                if arguments.contains(where: PostgresRecordInserter.holdsNUL) { return nil }
                return try statement.scalar(arguments)?.int64
            })
    }

    var maximumRecordsPerSavepoint: Int { 256 }

    func beginSavepoint() throws { try postgres.execute("SAVEPOINT ferry_nested") }

    func rollBackSavepoint() throws { try postgres.execute("ROLLBACK TO SAVEPOINT ferry_nested") }

    func releaseSavepoint() throws { try postgres.execute("RELEASE SAVEPOINT ferry_nested") }
}
