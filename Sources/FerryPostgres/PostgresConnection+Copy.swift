internal import CFerryPostgres

// MARK: - COPY … FROM STDIN

extension PostgresConnection {
    /// Streams rows into `table` through `COPY … FROM STDIN` in text format, in batches of about
    /// `batchBytes` bytes, so memory stays bounded however many rows `produce` appends.
    ///
    /// The statement is atomic: if `produce` throws, a value cannot be encoded (see
    /// ``PostgresCopyWriter/append(_:)``), or the server rejects a row, the server aborts the
    /// COPY, no row of it stays, and the error names the row (1-based) and column. Inside
    /// ``transaction(_:)`` a failed COPY fails the transaction.
    ///
    /// - Returns: the number of rows the server stored.
    @discardableResult
    public func copy(
        into table: String, schema: String? = nil, columns: [String],
        batchBytes: Int = 1 << 20, _ produce: (PostgresCopyWriter) throws -> Void
    ) throws -> Int {
        let connection = try liveHandle()
        let target =
            (schema.map { PostgresIdentifier.quote($0) + "." } ?? "")
            + PostgresIdentifier.quote(table)
        let columnList = columns.map(PostgresIdentifier.quote).joined(separator: ", ")
        let start = PQexec(connection, "COPY \(target) (\(columnList)) FROM STDIN")
        defer { PQclear(start) }
        try check(start)
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            throw PostgresError(kind: .server, message: "the server did not enter COPY IN mode")
        }
        let writer = PostgresCopyWriter(
            connection: self, handle: connection, columns: columns, batchBytes: max(batchBytes, 1))
        do {
            try produce(writer)
            try writer.flush()
        } catch is PostgresCopyWriter.ServerEndedCopy {
            throw finishCopy(connection, failure: nil)
                ?? PostgresError(
                    kind: .server, message: "the server ended COPY into \(target) early")
        } catch {
            PQputCopyEnd(connection, "ferry aborted the COPY: \(error)")
            _ = finishCopy(connection, failure: error)
            throw error
        }
        if PQputCopyEnd(connection, nil) != 1 {
            throw finishCopy(connection, failure: nil)
                ?? PostgresError(kind: .server, message: Self.errorText(connection))
        }
        var stored = 0
        if let error = finishCopy(connection, failure: nil, stored: &stored) { throw error }
        return stored
    }

    /// Reads the results that end a COPY; returns the server's error, if any, with the row and
    /// column from its CONTEXT line (`COPY t, line 3, column age: "x"`).
    private func finishCopy(_ connection: OpaquePointer, failure: (any Error)?) -> PostgresError? {
        var stored = 0
        return finishCopy(connection, failure: failure, stored: &stored)
    }

    private func finishCopy(
        _ connection: OpaquePointer, failure: (any Error)?, stored: inout Int
    ) -> PostgresError? {
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

/// Encodes rows in COPY's text format and hands them to libpq in batches.
///
/// Text is escaped (`\\`, tab, newline, carriage return), NULL is `\N`, `bytea` is `\x` hex.
/// PostgreSQL text cannot hold U+0000: such a value is refused with an error naming the row and
/// column before anything of that row is sent.
public final class PostgresCopyWriter {
    private unowned let connection: PostgresConnection
    private let handle: OpaquePointer
    private let columns: [String]
    private let batchBytes: Int
    private var buffer: [UInt8] = []
    /// Rows appended so far.
    public private(set) var rowCount = 0

    /// Thrown inside ``PostgresConnection/copy(into:schema:columns:batchBytes:_:)`` when libpq
    /// reports that the server has left COPY mode (it rejected an earlier row).
    struct ServerEndedCopy: Error {}

    init(connection: PostgresConnection, handle: OpaquePointer, columns: [String], batchBytes: Int) {
        self.connection = connection
        self.handle = handle
        self.columns = columns
        self.batchBytes = batchBytes
        buffer.reserveCapacity(batchBytes + 4096)
    }

    /// Appends one row: one value per column, in the order the COPY named them.
    public func append(_ row: [PostgresValue]) throws {
        let line = rowCount + 1
        guard row.count == columns.count else {
            throw PostgresError(
                kind: .invalidValue,
                message: "the row has \(row.count) values for \(columns.count) columns",
                copyLine: line)
        }
        let rowStart = buffer.count
        for (index, value) in row.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: "\t")) }
            guard let text = value.textForm else {
                buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
                continue
            }
            if !escape(text) {
                buffer.removeSubrange(rowStart...)
                throw PostgresError(
                    kind: .invalidValue,
                    message: "text contains the NUL character (U+0000), which PostgreSQL cannot store",
                    copyLine: line, copyColumn: columns[index])
            }
        }
        buffer.append(UInt8(ascii: "\n"))
        rowCount += 1
        if buffer.count >= batchBytes { try flush() }
    }

    /// Sends the buffered rows.
    func flush() throws {
        guard !buffer.isEmpty else { return }
        let status = buffer.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) {
                PQputCopyData(handle, $0.baseAddress, Int32($0.count))
            }
        }
        buffer.removeAll(keepingCapacity: true)
        guard status == 1 else { throw ServerEndedCopy() }
    }

    /// Appends `text` escaped for COPY's text format; false if it contains NUL.
    private func escape(_ text: String) -> Bool {
        for byte in text.utf8 {
            switch byte {
            case 0: return false
            case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\t"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            default: buffer.append(byte)
            }
        }
        return true
    }
}
