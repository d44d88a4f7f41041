internal import CFerryPostgres

// MARK: - COPY … FROM STDIN

extension PostgresConnection {
    /// Streams rows into `table` through `COPY … FROM STDIN` in text format, in batches of about
    /// `batchBytes` bytes, so memory stays bounded however many rows `produce` appends.
    ///
    /// The statement is atomic: if `produce` throws, a value cannot be encoded (see
    /// ``PostgresCopyWriter/append(_:)``), or the server rejects a row, the server aborts the
    /// COPY, no row of it stays, and the error names the row (1-based) and column. Inside
    /// ``transaction(readOnly:_:)`` a failed COPY fails the transaction.
    ///
    /// - Returns: the number of rows the server stored.
    @discardableResult
    public func copy(
        into table: String, schema: String? = nil, columns: [String],
        batchBytes: Int = 1 << 20, _ produce: (PostgresCopyWriter) throws -> Void
    ) throws -> Int {
        let stream = try beginCopy(into: table, schema: schema, columns: columns)
        let writer = PostgresCopyWriter(stream: stream, batchBytes: max(batchBytes, 1))
        do {
            try produce(writer)
            try writer.flush()
        } catch {
            stream.abort(because: error)
            throw error
        }
        return try stream.finish()
    }

    /// Starts `COPY table (columns) FROM STDIN` (text format) and returns the open stream: send
    /// encoded rows with ``PostgresCopyStream/send(_:)`` while doing other work, then
    /// ``PostgresCopyStream/finish()`` (or ``PostgresCopyStream/abort(because:)``). The server
    /// stores rows as they arrive, so the caller can prepare the next rows meanwhile.
    ///
    /// While the stream is open the connection serves nothing else: any other statement on it
    /// first aborts the COPY (its ``PostgresCopyStream/finish()`` then throws).
    public func beginCopy(
        into table: String, schema: String? = nil, columns: [String]
    ) throws(PostgresError) -> PostgresCopyStream {
        let connection = try liveHandle(carryingHeld: true)
        let target =
            (schema.map { PostgresIdentifier.quote($0) + "." } ?? "")
            + PostgresIdentifier.quote(table)
        let columnList = columns.map(PostgresIdentifier.quote).joined(separator: ", ")
        let start = PQexec(connection, takeHeldStatements() + "COPY \(target) (\(columnList)) FROM STDIN")
        defer { PQclear(start) }
        try check(start)
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            throw PostgresError(kind: .server, message: "the server did not enter COPY IN mode")
        }
        let stream = PostgresCopyStream(connection: self, handle: connection, target: target, columns: columns)
        openCopy = stream
        return stream
    }

    /// Reads the results that end a COPY; returns the server's error, if any, with the row and
    /// column from its CONTEXT line (`COPY t, line 3, column age: "x"`).
    func finishCopy(_ connection: OpaquePointer, stored: inout Int) -> PostgresError? {
        var firstError: PostgresError?
        while let result = PQgetResult(connection) {
            defer { PQclear(result) }
            switch PQresultStatus(result) {
            case PGRES_COMMAND_OK:
                stored = Int(String(cString: PQcmdTuples(result))) ?? 0
            case PGRES_COPY_IN:
                // Still in COPY mode (the connection broke while sending): end it.
                PQputCopyEnd(connection, "ferry aborted the COPY")
            default:
                if firstError == nil {
                    var error = Self.serverError(result, connection: connection)
                    (error.copyLine, error.copyColumn) = Self.copyPosition(error.context)
                    firstError = error
                }
            }
        }
        return firstError
    }

    /// The line and column named by a COPY error's CONTEXT, e.g.
    /// `COPY people, line 3, column age: "abc"` → (3, "age").
    static func copyPosition(_ context: String?) -> (Int?, String?) {
        guard let context, let lineRange = context.firstRange(of: ", line ") else {
            return (nil, nil)
        }
        let afterLine = context[lineRange.upperBound...]
        let digits = afterLine.prefix { $0.isASCII && $0.isNumber }
        guard let line = Int(digits) else { return (nil, nil) }
        let rest = afterLine.dropFirst(digits.count)
        guard rest.hasPrefix(", column ") else { return (line, nil) }
        let name = rest.dropFirst(", column ".count).prefix { $0 != ":" && $0 != "\n" }
        return (line, name.isEmpty ? nil : String(name))
    }
}

/// An open `COPY … FROM STDIN` (``PostgresConnection/beginCopy(into:schema:columns:)``): rows
/// reach the server as they are sent, and the statement's result comes with ``finish()``.
///
/// Atomic like any statement: after ``abort(because:)``, a failed ``send(_:)`` or a row the
/// server refuses, no row of the COPY stays (inside a transaction, the transaction fails).
public final class PostgresCopyStream {
    private unowned let connection: PostgresConnection
    private let handle: OpaquePointer
    /// The table, schema-qualified and quoted, for messages.
    private let target: String
    /// The columns the COPY names, in order.
    public let columns: [String]
    /// Open until ``finish()`` or ``abort(because:)``.
    private var isOpen = true
    /// Why the stream was ended by another statement on the connection, if it was.
    private var endedBy: String?

    init(connection: PostgresConnection, handle: OpaquePointer, target: String, columns: [String]) {
        self.connection = connection
        self.handle = handle
        self.target = target
        self.columns = columns
    }

    /// Sends encoded rows (whole lines of ``PostgresCopyText``). Blocks only while the server's
    /// socket buffer is full; throws the server's error when it has already refused a row.
    public func send(_ bytes: ArraySlice<UInt8>) throws(PostgresError) {
        try checkOpen()
        guard !bytes.isEmpty else { return }
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                PQputCopyData(handle, $0.baseAddress, Int32($0.count))
            }
        }
        guard status == 1 else {
            // The server left COPY mode (it refused an earlier row): its error says which.
            close()
            var stored = 0
            throw connection.finishCopy(handle, stored: &stored)
                ?? PostgresError(kind: .server, message: "the server ended COPY into \(target) early")
        }
    }

    /// Ends the COPY and waits for the server to store the last rows.
    ///
    /// - Returns: the number of rows the server stored.
    @discardableResult
    public func finish() throws(PostgresError) -> Int {
        try checkOpen()
        close()
        var stored = 0
        if PQputCopyEnd(handle, nil) != 1 {
            throw connection.finishCopy(handle, stored: &stored)
                ?? PostgresError(kind: .server, message: PostgresConnection.errorText(handle))
        }
        if let error = connection.finishCopy(handle, stored: &stored) { throw error }
        return stored
    }

    /// Ends the COPY as failed, so nothing of it stays; does nothing once the stream is closed.
    public func abort(because error: any Error) {
        guard isOpen else { return }
        close()
        PQputCopyEnd(handle, "ferry aborted the COPY: \(error)")
        var stored = 0
        _ = connection.finishCopy(handle, stored: &stored)
    }

    /// Aborts the COPY because another statement needs the connection.
    func abortForOtherStatement() {
        abort(because: PostgresError(kind: .invalidValue, message: "another statement ran on the connection"))
        endedBy = "another statement ran on the connection while COPY into \(target) was open"
    }

    private func close() {
        isOpen = false
        if connection.openCopy === self { connection.openCopy = nil }
    }

    private func checkOpen() throws(PostgresError) {
        guard isOpen else {
            throw PostgresError(
                kind: .invalidValue,
                message: endedBy.map { "the COPY was aborted: \($0)" } ?? "the COPY into \(target) is already over")
        }
    }
}

/// Encodes rows in COPY's text format (``PostgresCopyText``) and sends them in batches through
/// an open ``PostgresCopyStream``.
///
/// Text is escaped (`\\`, tab, newline, carriage return), NULL is `\N`, `bytea` is `\x` hex.
/// PostgreSQL text cannot hold U+0000: such a value is refused with an error naming the row and
/// column before anything of that row is sent.
public final class PostgresCopyWriter {
    private let stream: PostgresCopyStream
    private let batchBytes: Int
    private var text: PostgresCopyText
    /// Rows appended so far.
    public var rowCount: Int { sentRows + text.rowCount }
    private var sentRows = 0

    init(stream: PostgresCopyStream, batchBytes: Int) {
        self.stream = stream
        self.batchBytes = batchBytes
        text = PostgresCopyText(columns: stream.columns, capacity: batchBytes + 4096)
    }

    /// Appends one row: one value per column, in the order the COPY named them.
    public func append(_ row: [PostgresValue]) throws {
        do {
            try text.append(row)
        } catch {
            var error = error
            error.copyLine = rowCount + 1
            throw error
        }
        if text.bytes.count >= batchBytes { try flush() }
    }

    /// Sends the buffered rows.
    func flush() throws {
        sentRows += text.rowCount
        defer { text.removeAll() }
        try stream.send(text.bytes[...])
    }
}
