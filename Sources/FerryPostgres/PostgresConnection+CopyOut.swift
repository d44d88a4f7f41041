internal import CFerryPostgres

// MARK: - COPY … TO STDOUT

extension PostgresConnection {
    /// Starts `COPY (query) TO STDOUT` in text format and returns the open stream of its rows:
    /// the server sends them as it produces them, with no round trip per row or per batch.
    ///
    /// `query` takes no parameters (COPY cannot bind any): literals must be written into it.
    /// While the stream is open the connection serves nothing else: any other statement on it
    /// first ends the COPY (reading and dropping its remaining rows; the stream's next read
    /// then throws).
    public func copyOut(_ query: String) throws(PostgresError) -> PostgresCopyOutStream {
        let connection = try liveHandle()
        let start = PQexec(connection, "COPY (\(query)) TO STDOUT")
        defer { PQclear(start) }
        if PQresultStatus(start) != PGRES_COPY_OUT {
            try check(start)
            throw PostgresError(kind: .server, message: "the server did not enter COPY OUT mode")
        }
        let stream = PostgresCopyOutStream(connection: self, handle: connection)
        openCopyOut = stream
        return stream
    }
}

/// An open `COPY … TO STDOUT` (``PostgresConnection/copyOut(_:)``): one row per
/// ``nextRow()``, in COPY's text format (read its fields with ``PostgresCopyTextFields``).
///
/// The server's error, if the query fails part way (a division by zero in row 500,000), is
/// thrown by the read that reaches it.
public final class PostgresCopyOutStream {
    private unowned let connection: PostgresConnection
    private let handle: OpaquePointer
    /// The current row, libpq's allocation, released by the next read.
    private var row: UnsafeMutablePointer<CChar>?
    /// Open until the last row was read, or ``cancel()`` or another statement ended it.
    private var isOpen = true
    /// Why the stream was ended by another statement on the connection, if it was.
    private var endedBy: String?
    /// Rows read so far.
    public private(set) var rowCount = 0

    init(connection: PostgresConnection, handle: OpaquePointer) {
        self.connection = connection
        self.handle = handle
    }

    deinit {
        releaseRow()
    }

    /// The next row's bytes (its fields separated by tabs, ending with a newline), valid until the
    /// next call; nil after the last row.
    public func nextRow() throws(PostgresError) -> UnsafeBufferPointer<UInt8>? {
        releaseRow()
        guard isOpen else {
            if let endedBy { throw PostgresError(kind: .invalidValue, message: "the COPY was ended: \(endedBy)") }
            return nil
        }
        var buffer: UnsafeMutablePointer<CChar>?
        let count = PQgetCopyData(handle, &buffer, 0)
        if count > 0, let buffer {
            row = buffer
            rowCount += 1
            return UnsafeBufferPointer(
                start: UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: Int(count))
        }
        close()
        if let error = finishResults() { throw error }
        if count == -1 { return nil }
        // -2: the connection failed; its message says why.
        throw PostgresError(kind: .server, message: PostgresConnection.errorText(handle))
    }

    /// Asks the server to stop sending rows and ends the COPY (for a reader that failed): the
    /// statement ends with an error, which inside a transaction fails the transaction. Does
    /// nothing once the stream is over.
    public func cancel() {
        guard isOpen else { return }
        if let request = PQgetCancel(handle) {
            var message = [CChar](repeating: 0, count: 256)
            _ = PQcancel(request, &message, Int32(message.count))
            PQfreeCancel(request)
        }
        drain()
    }

    /// Ends the COPY because another statement needs the connection: the rows not read yet are
    /// read and dropped, so the session (and its transaction) stays usable.
    func endForOtherStatement() {
        guard isOpen else { return }
        drain()
        endedBy = "another statement ran on the connection while COPY TO STDOUT was open"
    }

    /// Reads and drops what the server still sends, then the COPY's results.
    private func drain() {
        releaseRow()
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let count = PQgetCopyData(handle, &buffer, 0)
            if let buffer { PQfreemem(buffer) }
            if count < 0 { break }
        }
        close()
        _ = finishResults()
    }

    /// Reads the results that end the COPY; the server's first error, if any.
    private func finishResults() -> PostgresError? {
        var firstError: PostgresError?
        while let result = PQgetResult(handle) {
            defer { PQclear(result) }
            switch PQresultStatus(result) {
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
                break
            case PGRES_COPY_OUT:
                // Still in COPY mode (the connection broke): libpq would return this forever.
                return firstError ?? PostgresError(kind: .server, message: PostgresConnection.errorText(handle))
            default:
                if firstError == nil { firstError = PostgresConnection.serverError(result, connection: handle) }
            }
        }
        return firstError
    }

    private func releaseRow() {
        if let row { PQfreemem(row) }
        row = nil
    }

    private func close() {
        isOpen = false
        if connection.openCopyOut === self { connection.openCopyOut = nil }
    }
}
