import FerryCore
import FerryPostgres
import Foundation

/// A PostgreSQL session as a ``DatabaseConnection``: ferry's SQL (with SQLite's `?` and `?N`
/// placeholders) runs on a `FerryPostgres` connection whose `search_path` is the store's schema,
/// so unqualified table names are the store's tables.
///
/// Arguments are sent in text form with no declared type (the server takes the type from the
/// column or operator they meet), except reals (`float8`) and blobs (`bytea`); results come back
/// as ferry's ``DatabaseValue``s: booleans as integers 0/1, `bytea` as blobs, `numeric`,
/// `timestamptz`, `uuid` and `jsonb` as PostgreSQL's text (``PostgresValueCoding`` decodes them).
package final class PostgresDatabase: DatabaseConnection {
    /// The session.
    package let connection: PostgresConnection
    /// The schema the store lives in.
    package let schema: String
    package internal(set) var changes = 0
    fileprivate var cursorCount = 0
    private var temporaryTables = 0

    /// Opens a session to `url` working in `schema` (which need not exist yet), in UTC with ISO
    /// dates so that stored dates read back as ferry wrote them.
    package init(url: PostgresURL, schema: String) throws {
        do {
            connection = try PostgresConnection(url: url)
        } catch {
            throw FerryError(.store, error.message)
        }
        self.schema = schema
        // The session's settings travel with its first statement (no round trip of their own).
        connection.hold(
            """
            SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'iso_8601';
            SET extra_float_digits = 3; SET search_path TO \(PostgresIdentifier.quote(schema))
            """)
    }

    package var location: String { "\(connection.url.description)" }

    /// A name for a temporary table no other part of this session uses: `prefix_N`.
    package func uniqueTemporaryName(_ prefix: String) -> String {
        temporaryTables += 1
        return "\(prefix)_\(temporaryTables)"
    }

    // MARK: - Statements

    package func execute(_ sql: String) throws { try execute(sql, []) }

    package func execute(_ sql: String, _ arguments: [DatabaseValue]) throws {
        changes = try run(sql, arguments).affectedRows
    }

    package func executeScript(_ sql: String) throws {
        do {
            try connection.executeScript(sql)
        } catch {
            throw failure(error, sql: sql)
        }
    }

    /// Sends a script without waiting for its outcome (``PostgresConnection/sendScript(_:)``):
    /// ``finishSentScript()`` or the session's next statement reads it.
    package func sendScript(_ sql: String) throws {
        do {
            try connection.sendScript(sql)
        } catch {
            throw failure(error, sql: sql)
        }
    }

    /// Waits for the script ``sendScript(_:)`` sent, if any; its failure as ferry's error.
    package func finishSentScript() throws {
        do {
            try connection.finishSentScript()
        } catch {
            throw failure(error, sql: "the script sent before")
        }
    }

    package func rows(_ sql: String, _ arguments: [DatabaseValue]) throws -> [[DatabaseValue]] {
        Self.rows(of: try run(sql, arguments))
    }

    package func scalar(_ sql: String, _ arguments: [DatabaseValue]) throws -> DatabaseValue? {
        Self.firstValue(of: try run(sql, arguments))
    }

    /// A statement to run many times: its placeholders are rewritten once, and the server
    /// prepares it once per session (``PostgresStatement``).
    package func statement(_ sql: String) -> PostgresStatement { PostgresStatement(database: self, sql: sql) }

    /// Streams through a cursor, fetched 1,000 rows at a time (in a transaction of its own when
    /// none is open, as cursors need one).
    package func forEachRow(
        _ sql: String, _ arguments: [DatabaseValue], _ body: ([DatabaseValue]) throws -> Void
    ) throws {
        cursorCount += 1
        let cursor = "ferry_cursor_\(cursorCount)"
        if isInTransaction {
            try stream(sql, arguments, cursor: cursor, body)
        } else {
            try readTransaction { try stream(sql, arguments, cursor: cursor, body) }
        }
    }

    private func stream(
        _ sql: String, _ arguments: [DatabaseValue], cursor: String, _ body: ([DatabaseValue]) throws -> Void
    ) throws {
        try run("DECLARE \(cursor) NO SCROLL CURSOR FOR \(sql)", arguments)
        defer { _ = try? connection.execute("CLOSE \(cursor)") }
        while true {
            let batch = try run("FETCH FORWARD 1000 FROM \(cursor)", [])
            for row in batch.rows { try body(row.values.map(Self.databaseValue)) }
            if batch.rows.count < 1000 { return }
        }
    }

    package func insertReturningKey(_ sql: String, _ arguments: [DatabaseValue], keyColumn: String) throws -> Int64 {
        let result = try run(sql + " RETURNING \(PostgresIdentifier.quote(keyColumn))", arguments)
        changes = result.affectedRows
        guard let value = result.rows.first?.values.first, case .integer(let key) = value else {
            throw FerryError(.internal, "INSERT into \(location) returned no key")
        }
        return key
    }

    // MARK: - Transactions

    package var isInTransaction: Bool { connection.isInTransaction }

    /// The `COMMIT` is sent without waiting for it (``PostgresConnection/transaction(readOnly:_:)``).
    package func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try ending { try connection.transaction(readOnly: true, body) }
    }

    /// A failure of the `COMMIT` (or of a statement sent with it,
    /// ``executeWithNext(_:_:)``) is thrown as ferry's error.
    package func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        try ending { try connection.transaction(body) }
    }

    /// Runs `transaction`, turning a server error its end throws into ferry's (``failure(_:sql:)``).
    private func ending<T>(_ transaction: () throws -> T) throws -> T {
        do {
            return try transaction()
        } catch let error as PostgresError {
            throw failure(error, sql: "COMMIT")
        }
    }

    /// `BEGIN`: the store's writer lock is the session's advisory lock, held already.
    package func beginWriting() throws { try execute("BEGIN") }

    package func prepared(_ sql: String) throws -> any PreparedStatement { statement(sql) }

    /// PostgreSQL enforces foreign keys by constraints (deferred to the commit): nothing to suspend.
    package func suspendForeignKeyChecks() throws -> Bool { false }

    package func resumeForeignKeyChecks() throws {}

    /// A failed statement aborts the transaction: nothing runs in it until it is rolled back.
    package var failedStatementEndsTransaction: Bool { true }

    package func keys(
        of entity: EntityDescription, matching predicate: FerryCore.Predicate, model: ObjectModel,
        layout: any StoreLayout
    ) throws -> [Int64] {
        try PostgresFetchRows.keys(of: entity, matching: predicate, database: self, model: model, layout: layout)
    }

    /// A savepoint (FerryPostgres nests transactions as savepoints); outside a transaction, a
    /// transaction.
    package func savepoint<T>(_ name: String, _ body: () throws -> T) throws -> T {
        try ending { try connection.transaction(body) }
    }

    // MARK: - Plumbing

    /// Runs `sql`; when statements are held to travel with the next one
    /// (``PostgresConnection/hold(_:inTransaction:)``: a `BEGIN`, a savepoint's release), with
    /// its arguments written in as literals, in one round trip with them.
    @discardableResult
    private func run(_ sql: String, _ arguments: [DatabaseValue]) throws -> PostgresResult {
        if connection.holdsStatements, let text = Self.inliningArguments(sql, arguments) {
            do {
                return try connection.scriptResult(text)
            } catch {
                throw failure(error, sql: sql)
            }
        }
        return try run(numbered: Self.numberedPlaceholders(sql), arguments, prepared: false)
    }

    /// Runs `sql` (with its arguments) in one message with the session's next statement, inside
    /// the open transaction, whose end reports its failure; at once when no transaction is open
    /// or an argument has no literal.
    package func executeWithNext(_ sql: String, _ arguments: [DatabaseValue]) throws {
        guard isInTransaction, let text = Self.inliningArguments(sql, arguments) else {
            return try execute(sql, arguments)
        }
        connection.hold(text)
    }

    /// Runs `text`, SQL with PostgreSQL's placeholders (`$N`), as a prepared statement of the
    /// session or not; a server error becomes ferry's (``failure(_:sql:)``).
    func run(numbered text: String, _ arguments: [DatabaseValue], prepared: Bool) throws -> PostgresResult {
        let values = arguments.map(Self.postgresValue)
        do {
            return try prepared ? connection.executePrepared(text, values) : connection.execute(text, values)
        } catch {
            throw failure(error, sql: text)
        }
    }

    /// The rows of `result` as ferry's values.
    static func rows(of result: PostgresResult) -> [[DatabaseValue]] {
        result.rows.map { row in row.values.map(databaseValue) }
    }

    /// The first column of the first row of `result`, nil when there is none.
    static func firstValue(of result: PostgresResult) -> DatabaseValue? {
        guard let row = result.rows.first, !row.values.isEmpty else { return nil }
        return databaseValue(row.values[0])
    }

    /// A server error as ferry reports store errors: `.constraint` for integrity violations
    /// (SQLSTATE class 23), `.store` otherwise; the message names the store, never a value bound.
    package func failure(_ error: PostgresError, sql: String) -> FerryError {
        let kind: FerryError.Code = error.sqlState?.hasPrefix("23") == true ? .constraint : .store
        let shown = sql.count > 200 ? String(sql.prefix(200)) + "…" : sql
        return FerryError(
            kind, "PostgreSQL store \(location) (schema \(schema)): \(error.description)",
            underlying: PostgresStatementFailure(sqlState: error.sqlState, statement: shown))
    }

    /// ferry's SQL with SQLite's placeholders (`?`, `?N`) rewritten as PostgreSQL's (`$N`);
    /// question marks inside quoted literals and identifiers are left alone.
    package static func numberedPlaceholders(_ sql: String) -> String {
        replacingPlaceholders(sql) { "$\($0)" }
    }

    /// ferry's SQL with each of SQLite's placeholders (`?`, `?N`, numbered from 1 as SQLite
    /// numbers them) replaced by `replacement(number)`; question marks inside quoted literals and
    /// identifiers are left alone.
    private static func replacingPlaceholders(_ sql: String, _ replacement: (Int) -> String) -> String {
        guard sql.utf8.contains(UInt8(ascii: "?")) else { return sql }
        let bytes = Array(sql.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 16)
        var largest = 0
        var quote: UInt8?
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if let open = quote {
                if byte == open { quote = nil }
                output.append(byte)
                index += 1
                continue
            }
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                quote = byte
                output.append(byte)
                index += 1
            case UInt8(ascii: "?"):
                var end = index + 1
                while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) { end += 1 }
                // As SQLite numbers them: `?N` is N, a bare `?` one more than the largest so far.
                let number =
                    end > index + 1
                    ? Int(String(decoding: bytes[(index + 1)..<end], as: UTF8.self)) ?? largest + 1 : largest + 1
                largest = max(largest, number)
                output.append(contentsOf: Array(replacement(number).utf8))
                index = end
            default:
                output.append(byte)
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// ferry's SQL with its arguments written in as literals, for statements that take no
    /// parameters (`COPY (SELECT …) TO STDOUT`); nil when an argument has no literal (text holding
    /// U+0000). Each literal is typed as ``postgresValue(_:)`` sends the argument: integers and
    /// texts untyped (`E'…'`, so the column or operator decides), reals `float8`, blobs `bytea`.
    package static func inliningArguments(_ sql: String, _ arguments: [DatabaseValue]) -> String? {
        var literals: [String] = []
        for argument in arguments {
            let value = postgresValue(argument)
            guard let text = value.textForm else {
                literals.append("NULL")
                continue
            }
            guard !text.utf8.contains(0) else { return nil }
            switch value {
            case .real: literals.append(escapeStringLiteral(text) + "::float8")
            case .bytes: literals.append(escapeStringLiteral(text) + "::bytea")
            default: literals.append(escapeStringLiteral(text))
            }
        }
        var missing = false
        let text = replacingPlaceholders(sql) { number in
            guard number >= 1, number <= literals.count else {
                missing = true
                return "NULL"
            }
            return literals[number - 1]
        }
        return missing ? nil : text
    }

    /// `text` as an escape string constant (`E'…'`, quotes and backslashes doubled): the same
    /// whatever the session's `standard_conforming_strings`.
    private static func escapeStringLiteral(_ text: String) -> String {
        var literal = "E'"
        for character in text.unicodeScalars {
            switch character {
            case "'": literal += "''"
            case "\\": literal += "\\\\"
            default: literal.unicodeScalars.append(character)
            }
        }
        return literal + "'"
    }

    /// A ferry value as sent to PostgreSQL. Integers and texts go untyped, so that the column or
    /// operator decides (an integer 1 into a `boolean` column is true, a text into `numeric`,
    /// `timestamptz`, `uuid` or `jsonb` is parsed as one).
    static func postgresValue(_ value: DatabaseValue) -> PostgresValue {
        switch value {
        case .null: return .null
        case .integer(let v): return .text(String(v))
        case .real(let v): return .real(v)
        case .text(let v): return .text(v)
        case .blob(let v): return .bytes(v)
        }
    }

    /// A PostgreSQL value as ferry reads it (booleans as 0/1, as SQLite keeps them).
    static func databaseValue(_ value: PostgresValue) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .bool(let v): return .integer(v ? 1 : 0)
        case .integer(let v): return .integer(v)
        case .real(let v): return .real(v)
        case .text(let v): return .text(v)
        case .bytes(let v): return .blob(v)
        }
    }
}

@available(*, unavailable, message: "a PostgresDatabase is used by one thread at a time; share a Store instead")
extension PostgresDatabase: Sendable {}

/// A failed PostgreSQL statement, kept as a `FerryError`'s underlying error: the SQLSTATE and
/// the statement (at most 200 characters), for debugging.
package struct PostgresStatementFailure: Error, Sendable, Hashable {
    package var sqlState: String?
    package var statement: String
    /// True for a unique-constraint violation (SQLSTATE 23505).
    package var isUniqueConstraint: Bool { sqlState == "23505" }
    /// True for a not-null violation (SQLSTATE 23502).
    package var isNotNullConstraint: Bool { sqlState == "23502" }
}

extension PostgresStatementFailure: ConstraintFailure {
    /// The columns PostgreSQL names: `email` from a unique violation's `DETAIL: Key (email)=(…)`,
    /// or from a not-null violation's `null value in column "email"`.
    package func constraintColumns(in message: String, table: String) -> [String] {
        if let start = message.range(of: "Key ("), let end = message[start.upperBound...].range(of: ")=") {
            return message[start.upperBound..<end.lowerBound].split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        if let start = message.range(of: "column \""), let end = message[start.upperBound...].firstIndex(of: "\"") {
            return [String(message[start.upperBound..<end])]
        }
        return []
    }
}

extension PostgresDatabase {
    /// Opens a server-side cursor on a query, read 1,000 rows at a time (inside the caller's
    /// transaction: a cursor lives until the transaction ends).
    package func openCursor(_ sql: String, _ arguments: [DatabaseValue]) throws -> PostgresRowCursor {
        guard isInTransaction else { throw FerryError(.internal, "a PostgreSQL cursor needs an open transaction") }
        cursorCount += 1
        let name = "ferry_cursor_\(cursorCount)"
        try execute("DECLARE \(name) NO SCROLL CURSOR FOR \(sql)", arguments)
        return PostgresRowCursor(database: self, name: name)
    }
}

/// Rows of a server-side cursor, pulled one at a time (``PostgresDatabase/openCursor(_:_:)``).
package final class PostgresRowCursor {
    private let database: PostgresDatabase
    private let name: String
    private var batch: [[DatabaseValue]] = []
    private var position = 0
    private var exhausted = false

    init(database: PostgresDatabase, name: String) {
        self.database = database
        self.name = name
    }

    /// The next row, or nil at the end.
    package func next() throws -> [DatabaseValue]? {
        if position == batch.count {
            guard !exhausted else { return nil }
            batch = try database.rows("FETCH FORWARD 1000 FROM \(name)", [])
            position = 0
            exhausted = batch.count < 1000
            if batch.isEmpty { return nil }
        }
        position += 1
        return batch[position - 1]
    }
}
