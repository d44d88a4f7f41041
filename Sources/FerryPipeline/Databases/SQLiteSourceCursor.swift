import FerryCore
import Foundation

/// The rows of a SQLite table or query: one statement stepped on a read-only connection
/// (`PRAGMA query_only` too), so a source query can never change the database.
final class SQLiteSourceCursor: DatabaseCursor {
    let columns: [DatabaseColumn]
    private let connection: Connection
    private let statement: Statement
    private let source: DatabaseSource
    private var done = false
    /// The increasing column's index, for an incremental read.
    private var markIndex: Int?
    private(set) var lastMark: IncrementalMark?

    /// The rows of `source`'s selection of the SQLite file at `path`; with an incremental
    /// selection, those at or past `mark` only.
    init(path: String, source: DatabaseSource, from mark: IncrementalMark? = nil) throws {
        self.source = source
        guard FileManager.default.fileExists(atPath: path) else {
            throw FerryError(.noInput, "the SQLite database '\(path)' does not exist", at: source.selectionLocation)
        }
        connection = try Connection(path: path, readOnly: true, create: false)
        try connection.execute("PRAGMA query_only = ON")
        connection.setBusyTimeout(milliseconds: 30_000)
        let base: Statement
        switch source.selection {
        case .table(let name):
            let tables = try Self.tableNames(connection)
            guard
                let table = tables.first(where: { $0 == name })
                    ?? tables.first(where: { $0.lowercased() == name.lowercased() })
            else {
                throw FerryError(
                    .invalidDefinition,
                    "the SQLite database '\(path)' has no table '\(name)'\(Suggestions.didYouMean(name, in: tables))",
                    at: source.selectionLocation,
                    notes: tables.isEmpty ? ["it has no tables"] : ["its tables: \(tables.joined(separator: ", "))"])
            }
            base = try connection.prepare("SELECT * FROM \(SQL.quote(table))")
        case .query(let sql):
            do {
                base = try connection.prepareSingle(sql)
            } catch let error as FerryError {
                throw FerryError(
                    .invalidDefinition, "the query on '\(path)' fails: \(error.message)", at: source.selectionLocation)
            }
            guard base.isReadOnly, base.columnCount > 0 else {
                throw FerryError(
                    .invalidDefinition,
                    "the query on '\(path)' is not a read-only query; a source query must only read (SELECT … or WITH … SELECT …)",
                    at: source.selectionLocation)
            }
        case .entity(let name):
            throw FerryError(
                .invalidDefinition,
                "'entity: \(name)' reads a Core Data store; for a SQLite database use 'table:' or 'query:'",
                at: source.selectionLocation)
        }
        if let incremental = source.incremental {
            let query = try IncrementalQuery(
                base: base.sql, columns: (0..<base.columnCount).map { base.columnName(at: $0) },
                incremental: incremental, source: source, bound: mark != nil, placeholder: "?", quote: SQL.quote)
            do {
                statement = try connection.prepare(query.sql)
                if let mark { try statement.bind([mark.databaseValue]) }
            } catch let error as FerryError {
                throw FerryError(
                    .invalidDefinition, "the incremental read of \(source.label) fails: \(error.message)",
                    at: incremental.location ?? source.selectionLocation)
            }
            markIndex = query.columnIndex
        } else {
            statement = base
        }
        let prepared = statement
        columns = (0..<prepared.columnCount).map { index in
            DatabaseColumn(
                name: prepared.columnName(at: index), type: SourceColumnType.sqlite(prepared.declaredType(at: index)))
        }
    }

    /// The user tables and views of a database (not SQLite's own `sqlite_…` tables), by name.
    static func tableNames(_ connection: Connection) throws -> [String] {
        try connection.rows(
            "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        ).compactMap { $0[0].text }
    }

    func next() throws -> [Value]? {
        guard !done else { return nil }
        do {
            guard try statement.step() else {
                done = true
                return nil
            }
        } catch let error as FerryError {
            throw FerryError(
                error.code, "reading \(source.label) failed: \(error.message)", at: source.selectionLocation)
        }
        var values: [Value] = []
        values.reserveCapacity(columns.count)
        for index in 0..<columns.count {
            switch statement.storageClass(at: index) {
            case .null: values.append(.null)
            case .integer: values.append(.integer(statement.int64(at: index)))
            case .real: values.append(.double(statement.double(at: index)))
            case .text: values.append(.string(statement.text(at: index) ?? ""))
            case .blob: values.append(.binary(statement.blob(at: index)))
            }
        }
        if let markIndex, let mark = IncrementalQuery.mark(of: values[markIndex]) { lastMark = mark }
        return values
    }
}
