internal import CFerrySQLite

/// A prepared statement, finalized when released. Bind, step, reset, repeat.
package final class Statement {
    let handle: OpaquePointer
    unowned let connection: Connection
    /// The SQL text, for error messages.
    package let sql: String

    init(handle: OpaquePointer, connection: Connection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    package var columnCount: Int { Int(sqlite3_column_count(handle)) }

    package func columnName(at index: Int) -> String {
        sqlite3_column_name(handle, Int32(index)).map { String(cString: $0) } ?? ""
    }

    /// The type a result column was declared with in its table (`INTEGER`, `VARCHAR(20)`), or
    /// nil for an expression or a column declared without a type.
    package func declaredType(at index: Int) -> String? {
        sqlite3_column_decltype(handle, Int32(index)).map { String(cString: $0) }
    }

    /// True when running the statement cannot change the database (`sqlite3_stmt_readonly`).
    package var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    // MARK: - Binding (1-based indexes, as SQLite's)

    package func bind(_ arguments: [DatabaseValue]) throws {
        for (offset, value) in arguments.enumerated() {
            try bind(value, at: offset + 1)
        }
    }

    package func bind(_ value: DatabaseValue, at index: Int) throws {
        switch value {
        case .null: try bindNull(at: index)
        case .integer(let v): try bind(v, at: index)
        case .real(let v): try bind(v, at: index)
        case .text(let v): try bind(v, at: index)
        case .blob(let v): try bind(blob: v, at: index)
        }
    }

    @inline(__always)
    package func bindNull(at index: Int) throws {
        try check(sqlite3_bind_null(handle, Int32(index)))
    }

    @inline(__always)
    package func bind(_ value: Int64, at index: Int) throws {
        try check(sqlite3_bind_int64(handle, Int32(index), value))
    }

    @inline(__always)
    package func bind(_ value: Double, at index: Int) throws {
        try check(sqlite3_bind_double(handle, Int32(index), value))
    }

    @inline(__always)
    package func bind(_ value: String, at index: Int) throws {
        var value = value
        let code = value.withUTF8 { buffer -> Int32 in
            guard let base = buffer.baseAddress, buffer.count > 0 else {
                return sqlite3_bind_text(handle, Int32(index), "", 0, ferry_sqlite_transient())
            }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                sqlite3_bind_text(handle, Int32(index), $0, Int32(buffer.count), ferry_sqlite_transient())
            }
        }
        try check(code)
    }

    /// Binds UTF-8 bytes as TEXT (copied by SQLite), without making a String.
    @inline(__always)
    package func bind(utf8 bytes: UnsafeBufferPointer<UInt8>, at index: Int) throws {
        try bindText(bytes, at: index, destructor: ferry_sqlite_transient())
    }

    /// Binds UTF-8 bytes as TEXT without a copy (`SQLITE_STATIC`): the bytes must stay valid and
    /// unchanged until the statement has been stepped, and every parameter bound this way must be
    /// bound again before the next step.
    @inline(__always)
    package func bind(borrowingUTF8 bytes: UnsafeBufferPointer<UInt8>, at index: Int) throws {
        try bindText(bytes, at: index, destructor: ferry_sqlite_static())
    }

    @inline(__always)
    private func bindText(
        _ bytes: UnsafeBufferPointer<UInt8>, at index: Int, destructor: sqlite3_destructor_type?
    ) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            // An empty text: nothing to borrow, SQLite keeps its own.
            try check(sqlite3_bind_text(handle, Int32(index), "", 0, ferry_sqlite_transient()))
            return
        }
        let code = base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            sqlite3_bind_text(handle, Int32(index), $0, Int32(bytes.count), destructor)
        }
        try check(code)
    }

    /// Binds the value of a column of `other`'s current row as it is stored (no conversion;
    /// SQLite copies it).
    @inline(__always)
    package func bind(columnOf other: Statement, at column: Int, to index: Int) throws {
        try check(sqlite3_bind_value(handle, Int32(index), sqlite3_column_value(other.handle, Int32(column))))
    }

    package func bind(blob: [UInt8], at index: Int) throws {
        let code = blob.withUnsafeBytes { buffer in
            sqlite3_bind_blob(
                handle, Int32(index), buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count),
                ferry_sqlite_transient())
        }
        try check(code)
    }

    // MARK: - Stepping

    /// Advances; true when a row is available, false when done.
    @discardableResult
    package func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let message = String(cString: sqlite3_errmsg(connection.handle))
            let extended = sqlite3_extended_errcode(connection.handle)
            let systemError = sqlite3_system_errno(connection.handle)  // before the reset clears it
            sqlite3_reset(handle)
            throw Connection.error(
                code: extended != 0 ? extended : code, message: message, sql: sql, path: connection.path,
                systemError: systemError)
        }
    }

    /// Resets the statement so it can run again; bindings are kept unless cleared.
    package func reset(clearBindings: Bool = false) {
        sqlite3_reset(handle)
        if clearBindings { sqlite3_clear_bindings(handle) }
    }

    // MARK: - Reading columns (0-based)

    package func value(at index: Int) -> DatabaseValue {
        let i = Int32(index)
        switch sqlite3_column_type(handle, i) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, i))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, i))
        case SQLITE_TEXT: return .text(text(at: index) ?? "")
        case SQLITE_BLOB: return .blob(blob(at: index))
        default: return .null
        }
    }

    /// The storage class of a column of the current row.
    @inline(__always)
    package func storageClass(at index: Int) -> DatabaseValue.StorageClass {
        switch sqlite3_column_type(handle, Int32(index)) {
        case SQLITE_INTEGER: return .integer
        case SQLITE_FLOAT: return .real
        case SQLITE_TEXT: return .text
        case SQLITE_BLOB: return .blob
        default: return .null
        }
    }

    /// Calls `body` with the column's bytes (BLOB or text) without copying them.
    package func withBlobBytes<T>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        let pointer = sqlite3_column_blob(handle, Int32(index))
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return try body(
            UnsafeBufferPointer(start: pointer?.assumingMemoryBound(to: UInt8.self), count: pointer == nil ? 0 : count))
    }

    package func isNull(at index: Int) -> Bool { sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL }
    package func int64(at index: Int) -> Int64 { sqlite3_column_int64(handle, Int32(index)) }
    package func double(at index: Int) -> Double { sqlite3_column_double(handle, Int32(index)) }

    package func text(at index: Int) -> String? {
        guard let pointer = sqlite3_column_text(handle, Int32(index)) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// Calls `body` with the column's UTF-8 bytes without copying them into a String.
    package func withTextBytes<T>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        let pointer = sqlite3_column_text(handle, Int32(index))
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return try body(UnsafeBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
    }

    package func blob(at index: Int) -> [UInt8] {
        guard let pointer = sqlite3_column_blob(handle, Int32(index)) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return [UInt8](UnsafeRawBufferPointer(start: pointer, count: count))
    }

    @inline(__always)
    private func check(_ code: Int32) throws {
        if code != SQLITE_OK {
            throw Connection.error(
                code: code, message: String(cString: sqlite3_errmsg(connection.handle)), sql: sql,
                path: connection.path, systemError: sqlite3_system_errno(connection.handle))
        }
    }
}

@available(*, unavailable, message: "a Statement belongs to one connection and one thread")
extension Statement: Sendable {}
