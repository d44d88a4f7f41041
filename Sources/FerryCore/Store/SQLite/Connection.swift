internal import CFerrySQLite
import Foundation

/// One SQLite connection: the only owner of a `sqlite3*` handle.
///
/// Not `Sendable`: a ``Store`` serializes access to its connection. Every SQLite failure becomes a
/// ``FerryError`` with code `.store` (or `.constraint`) that names the SQL that failed, never the
/// bound values.
package final class Connection {
    let handle: OpaquePointer
    /// The database path (`:memory:` for in-memory databases).
    package let path: String
    private var functions: [FunctionBox] = []
    private var collations: [CollationBox] = []

    /// Process-wide SQLite settings, made once before the first connection opens: no memory
    /// statistics (ferry never reads them, and they cost a global mutex per allocation, several
    /// per inserted row).
    private static let configured: Void = { _ = ferry_sqlite_disable_memory_statistics() }()

    /// Opens (and by default creates) a database file.
    package init(path: String, readOnly: Bool = false, create: Bool = true) throws {
        Self.configured
        self.path = path
        var db: OpaquePointer?
        var flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        flags |= SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw FerryError(.store, "cannot open store '\(path)': \(message)", underlying: SQLiteResult(code: code))
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        Self.openCounter?.connectionOpened()
    }

    deinit {
        sqlite3_close_v2(handle)
        functions.removeAll()
        collations.removeAll()
    }

    // MARK: - Executing SQL

    /// Runs one statement, discarding any rows it returns.
    ///
    /// Exactly one: text after the statement (but blanks and `;`) is refused, so a value that
    /// found its way into SQL text can never start a second statement (`sqlite3_exec` would run it).
    package func execute(_ sql: String) throws {
        _ = try executeFirst(of: Array(sql.utf8), sql: sql, only: true)
    }

    /// Runs every statement of a script of ferry's own, fixed SQL (schema set-up, test fixtures),
    /// in order. Never for text built from values: use ``execute(_:)`` or bound arguments.
    package func executeScript(_ sql: String) throws {
        var remainder = ArraySlice(Array(sql.utf8))
        while !remainder.allSatisfy(Self.isBlank) {
            remainder = try executeFirst(of: Array(remainder), sql: sql, only: false)
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ";") || byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    /// Compiles the first statement of `bytes`: SQLite's result code, the statement (nil when
    /// only blanks or comments were there) and how many bytes it took.
    private func compileFirst(of bytes: [UInt8]) -> (code: Int32, statement: OpaquePointer?, consumed: Int) {
        var statement: OpaquePointer?
        var consumed = bytes.count
        let code = bytes.withUnsafeBufferPointer { buffer -> Int32 in
            buffer.withMemoryRebound(to: CChar.self) { text in
                var tail: UnsafePointer<CChar>?
                let code = sqlite3_prepare_v3(handle, text.baseAddress, Int32(text.count), 0, &statement, &tail)
                if let tail, let base = text.baseAddress { consumed = base.distance(to: tail) }
                return code
            }
        }
        return (code, statement, consumed)
    }

    /// Prepares and runs the first statement of `bytes`; returns the bytes after it. With `only`,
    /// refuses (before running anything) when more than blanks follow it.
    private func executeFirst(of bytes: [UInt8], sql: String, only: Bool) throws -> ArraySlice<UInt8> {
        let (code, statement, consumed) = compileFirst(of: bytes)
        guard code == SQLITE_OK else {
            throw Connection.error(
                code: code, message: String(cString: sqlite3_errmsg(handle)), sql: sql, path: path,
                systemError: sqlite3_system_errno(handle))
        }
        let remainder = bytes[consumed...]
        guard let statement else { return remainder }  // only blanks or a comment
        let prepared = Statement(handle: statement, connection: self, sql: sql)
        if only && !remainder.allSatisfy(Self.isBlank) {
            throw FerryError(
                .internal, "refused to run SQL text holding more than one statement",
                notes: ["while executing `\(sql.prefix(200))`"])
        }
        while try prepared.step() {}
        return remainder
    }

    /// Runs one statement with arguments.
    package func execute(_ sql: String, _ arguments: [DatabaseValue]) throws {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        while try statement.step() {}
    }

    /// Prepares a statement for repeated use.
    package func prepare(_ sql: String) throws -> Statement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw Connection.error(
                code: code, message: String(cString: sqlite3_errmsg(handle)), sql: sql, path: path,
                systemError: sqlite3_system_errno(handle))
        }
        return Statement(handle: statement, connection: self, sql: sql)
    }

    /// Prepares SQL text that must hold exactly one statement (a user's query): SQLite's own
    /// message when it does not compile, and a refusal when more than blanks and `;` follow it.
    package func prepareSingle(_ sql: String) throws -> Statement {
        let bytes = Array(sql.utf8)
        let (code, statement, consumed) = compileFirst(of: bytes)
        guard code == SQLITE_OK else {
            throw FerryError(
                .invalidInput, String(cString: sqlite3_errmsg(handle)), underlying: SQLiteResult(code: code))
        }
        guard let statement else { throw FerryError(.invalidInput, "the SQL text holds no statement") }
        let prepared = Statement(handle: statement, connection: self, sql: sql)
        let rest = Array(bytes[consumed...])
        if !rest.allSatisfy(Self.isBlank) {
            // What follows may be only comments; anything SQLite compiles is a second statement.
            let second = compileFirst(of: rest)
            sqlite3_finalize(second.statement)
            if second.code != SQLITE_OK || second.statement != nil {
                throw FerryError(
                    .invalidInput, "the SQL text holds more than one statement; a query source runs exactly one")
            }
        }
        return prepared
    }

    /// All rows of a query, each as an array of column values.
    package func rows(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> [[DatabaseValue]] {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        var rows: [[DatabaseValue]] = []
        while try statement.step() {
            rows.append((0..<statement.columnCount).map { statement.value(at: $0) })
        }
        return rows
    }

    /// The first column of the first row, or nil when there is no row.
    package func scalar(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> DatabaseValue? {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        return try statement.step() ? statement.value(at: 0) : nil
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    package var changes: Int { Int(sqlite3_changes64(handle)) }

    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// True when a transaction is open.
    package var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// How long to wait for another process's lock before failing with "store is locked".
    package func setBusyTimeout(milliseconds: Int) {
        sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
    }

    // MARK: - Transactions

    package enum TransactionKind: String, Sendable {
        case deferred = "DEFERRED"
        case immediate = "IMMEDIATE"
        case exclusive = "EXCLUSIVE"
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    package func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        try execute("BEGIN \(kind.rawValue)")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Runs `body` inside a savepoint, rolled back to when it throws (nests inside a transaction).
    package func savepoint<T>(_ name: String = "ferry_savepoint", _ body: () throws -> T) throws -> T {
        try execute("SAVEPOINT \(SQL.quote(name))")
        do {
            let result = try body()
            try execute("RELEASE \(SQL.quote(name))")
            return result
        } catch {
            try? execute("ROLLBACK TO \(SQL.quote(name))")
            try? execute("RELEASE \(SQL.quote(name))")
            throw error
        }
    }

    /// Leaves the write-ahead log untouched when the connection closes (SQLite would otherwise
    /// checkpoint it into the database and delete it): a Core Data store written in place keeps
    /// its `-wal` consistent, as the app left it plus ferry's committed frames.
    package func keepWriteAheadLogOnClose() throws {
        let code = ferry_sqlite_keep_wal_on_close(handle)
        guard code == SQLITE_OK else {
            throw Connection.error(
                code: code, message: String(cString: sqlite3_errmsg(handle)), sql: "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE",
                path: path)
        }
    }

    // MARK: - Custom SQL functions

    /// Registers a scalar SQL function implemented in Swift (predicates' Unicode-aware
    /// comparisons and regular expressions). A thrown error becomes an SQL error.
    package func registerFunction(
        _ name: String,
        argumentCount: Int,
        deterministic: Bool = true,
        _ body: @escaping ([DatabaseValue]) throws -> DatabaseValue
    ) throws {
        let box = FunctionBox(body)
        functions.append(box)
        var flags = SQLITE_UTF8
        if deterministic { flags |= SQLITE_DETERMINISTIC }
        let code = sqlite3_create_function_v2(
            handle, name, Int32(argumentCount), flags, Unmanaged.passUnretained(box).toOpaque(),
            { context, argc, argv in
                guard let context, let box = sqlite3_user_data(context) else { return }
                let function = Unmanaged<FunctionBox>.fromOpaque(box).takeUnretainedValue()
                var arguments: [DatabaseValue] = []
                arguments.reserveCapacity(Int(argc))
                for index in 0..<Int(argc) {
                    arguments.append(DatabaseValue(sqliteValue: argv?[index]))
                }
                do {
                    let result = try function.body(arguments)
                    switch result {
                    case .null: sqlite3_result_null(context)
                    case .integer(let v): sqlite3_result_int64(context, v)
                    case .real(let v): sqlite3_result_double(context, v)
                    case .text(let v):
                        // With its byte length, so a NUL byte inside the text is kept.
                        let bytes = Array(v.utf8)
                        bytes.withUnsafeBufferPointer { buffer in
                            buffer.withMemoryRebound(to: CChar.self) {
                                sqlite3_result_text(context, $0.baseAddress, Int32($0.count), ferry_sqlite_transient())
                            }
                        }
                    case .blob(let v):
                        v.withUnsafeBytes {
                            sqlite3_result_blob(context, $0.baseAddress, Int32($0.count), ferry_sqlite_transient())
                        }
                    }
                } catch {
                    sqlite3_result_error(context, "\(error)", -1)
                }
            }, nil, nil, nil)
        guard code == SQLITE_OK else {
            throw Connection.error(
                code: code, message: String(cString: sqlite3_errmsg(handle)), sql: "function \(name)", path: path,
                systemError: sqlite3_system_errno(handle))
        }
    }

    /// A scalar SQL function as a C callback that reads its arguments in place (for per-row
    /// checks, where ``registerFunction(_:argumentCount:deterministic:_:)``'s conversion of each
    /// argument to a ``DatabaseValue`` would cost more than the check).
    typealias RawFunction = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void

    /// Registers a deterministic ``RawFunction``; `argumentCount` -1 takes any number.
    func registerRawFunction(_ name: String, argumentCount: Int32, _ function: RawFunction) throws {
        let code = sqlite3_create_function_v2(
            handle, name, argumentCount, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, function, nil, nil, nil)
        guard code == SQLITE_OK else {
            throw Connection.error(
                code: code, message: String(cString: sqlite3_errmsg(handle)), sql: "function \(name)", path: path)
        }
    }

    /// Registers a collating sequence implemented in Swift (`ORDER BY x COLLATE name`). `compare`
    /// gets the UTF-8 bytes of both texts and returns a negative number, zero or a positive number.
    package func registerCollation(
        _ name: String, _ compare: @escaping (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Int
    ) throws {
        let box = CollationBox(compare)
        collations.append(box)
        let code = sqlite3_create_collation_v2(
            handle, name, SQLITE_UTF8, Unmanaged.passUnretained(box).toOpaque(),
            { context, count1, bytes1, count2, bytes2 in
                guard let context else { return 0 }
                let collation = Unmanaged<CollationBox>.fromOpaque(context).takeUnretainedValue()
                let a = UnsafeBufferPointer(start: bytes1?.assumingMemoryBound(to: UInt8.self), count: Int(count1))
                let b = UnsafeBufferPointer(start: bytes2?.assumingMemoryBound(to: UInt8.self), count: Int(count2))
                let result = collation.compare(a, b)
                return result < 0 ? -1 : (result > 0 ? 1 : 0)
            }, nil)
        guard code == SQLITE_OK else {
            throw Connection.error(
                code: code, message: String(cString: sqlite3_errmsg(handle)), sql: "collation \(name)", path: path,
                systemError: sqlite3_system_errno(handle))
        }
    }

    // MARK: - Errors

    /// A failed SQLite call as users read it: what happened, in words, to which store file. The
    /// SQL statement and the result code stay in the ``SQLiteResult`` underlying error, out of
    /// the message (ferry's own statements mean nothing to a user; record values never appear).
    ///
    /// - Parameter systemError: the `errno` of the failed system call (`sqlite3_system_errno`),
    ///   which tells a full disk, an exhausted quota or a file size limit from other I/O errors.
    static func error(code: Int32, message: String, sql: String, path: String, systemError: Int32 = 0) -> FerryError {
        var primary = code & 0xFF
        var ranOut = "the disk is full: there is no space left"
        if primary == SQLITE_IOERR || primary == SQLITE_FULL {
            switch systemError {
            case ENOSPC: primary = SQLITE_FULL
            case EDQUOT: (primary, ranOut) = (SQLITE_FULL, "the disk quota is used up: there is no space left")
            case EFBIG:
                (primary, ranOut) = (SQLITE_FULL, "the file size limit (ulimit -f) was reached: there is no room left")
            default: break
            }
        }
        let kind: FerryError.Code = primary == SQLITE_CONSTRAINT ? .constraint : .store
        let store = path == ":memory:" || path.isEmpty ? "the in-memory store" : "store '\(path)'"
        let text: String
        switch primary {
        case SQLITE_BUSY, SQLITE_LOCKED:
            text = "the store is locked by another process (\(store): \(message))"
        case SQLITE_FULL:
            text =
                "\(ranOut) to write \(store) or its temporary files; "
                + "the changes in progress were rolled back, so the store is as it was before them"
        case SQLITE_IOERR:
            text =
                "the disk reported an input/output error on \(store) (\(message)); the changes in progress were rolled back"
        case SQLITE_READONLY:
            text = "\(store) cannot be written: the file or its folder is read-only (\(message))"
        case SQLITE_PERM, SQLITE_AUTH:
            text = "permission denied on \(store) (\(message))"
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            text = "\(store) is damaged or is not a SQLite database (\(message))"
        case SQLITE_CANTOPEN:
            text = "cannot open \(store) (\(message))"
        case SQLITE_NOMEM:
            text = "out of memory while working on \(store)"
        default:
            text = "\(store): \(message)"
        }
        let shown = sql.count > 200 ? String(sql.prefix(200)) + "…" : sql
        return FerryError(kind, text, underlying: SQLiteResult(code: code, statement: shown))
    }
}

extension FerryError {
    /// True for ``Connection/error(code:message:sql:path:systemError:)``'s message of a full disk,
    /// a used-up quota or a file size limit: the file that could not grow is the one being
    /// written, whichever file the connection's main database is.
    package var isOutOfSpace: Bool {
        guard underlying is SQLiteResult else { return false }
        return message.contains(": there is no space left to write ")
            || message.contains(": there is no room left to write ")
    }
}

/// The raw result code of a failed SQLite call, kept as a `FerryError`'s underlying error.
package struct SQLiteResult: Error, Sendable, Hashable {
    /// The extended result code.
    package var code: Int32
    /// The statement that failed (at most 200 characters), for debugging; never shown to users.
    package var statement: String = ""
    /// True for any SQLITE_CONSTRAINT.
    package var isConstraint: Bool { code & 0xFF == SQLITE_CONSTRAINT }
    // Extended result codes are C macros Swift cannot import; these are their documented values.
    package var isUniqueConstraint: Bool { code == 2067 || code == 1555 }  // SQLITE_CONSTRAINT_UNIQUE, _PRIMARYKEY
    package var isNotNullConstraint: Bool { code == 1299 }  // SQLITE_CONSTRAINT_NOTNULL
    package var isForeignKeyConstraint: Bool { code == 787 }  // SQLITE_CONSTRAINT_FOREIGNKEY
}

final class CollationBox {
    let compare: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Int
    init(_ compare: @escaping (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Int) {
        self.compare = compare
    }
}

final class FunctionBox {
    let body: ([DatabaseValue]) throws -> DatabaseValue
    init(_ body: @escaping ([DatabaseValue]) throws -> DatabaseValue) { self.body = body }
}

@available(*, unavailable, message: "a Connection is used by one thread at a time; share a Store instead")
extension Connection: Sendable {}

extension DatabaseValue {
    init(sqliteValue value: OpaquePointer?) {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: self = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            // sqlite3_value_text before sqlite3_value_bytes, as SQLite documents; the byte count
            // keeps a text with an embedded NUL whole.
            if let text = sqlite3_value_text(value) {
                self = .text(
                    String(
                        decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))),
                        as: UTF8.self))
            } else {
                self = .null
            }
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            if let bytes = sqlite3_value_blob(value), count > 0 {
                self = .blob([UInt8](UnsafeRawBufferPointer(start: bytes, count: count)))
            } else {
                self = .blob([])
            }
        default: self = .null
        }
    }
}

extension SQLiteResult: ConstraintFailure {
    /// `email` from SQLite's `UNIQUE constraint failed: Customer.email`.
    package func constraintColumns(in message: String, table: String) -> [String] {
        guard let range = message.range(of: "failed: ") else { return [] }
        return message[range.upperBound...].split(separator: ",").map { part in
            let name = part.trimmingCharacters(in: .whitespaces)
            return name.hasPrefix(table + ".") ? String(name.dropFirst(table.count + 1)) : name
        }
    }
}
