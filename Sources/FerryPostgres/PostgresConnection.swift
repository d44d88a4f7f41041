internal import CFerryPostgres
import Foundation

/// One session with a PostgreSQL server, through libpq.
///
/// Not `Sendable`: use a connection from one thread at a time (a store serializes access, as
/// with SQLite). The session closes when the connection is released or ``close()`` is called.
/// Statements run synchronously; parameters are `$1`, `$2`, … bound from ``PostgresValue``s.
public final class PostgresConnection {
    /// The URL the connection was opened with (its ``PostgresURL/description`` hides a password).
    public let url: PostgresURL
    var handle: OpaquePointer?
    private var savepointDepth = 0
    /// The `COPY … FROM STDIN` in progress, if any: the next other statement aborts it first.
    var openCopy: PostgresCopyStream?
    /// The `COPY … TO STDOUT` in progress, if any: the next other statement ends it first.
    var openCopyOut: PostgresCopyOutStream?
    /// The statements ``executePrepared(_:_:)`` prepared in this session, by text and parameter types.
    var preparedStatements = PostgresPreparedStatements()
    /// Set while a script sent by ``sendScript(_:)`` has an outcome not read yet: whether the
    /// session was in a transaction when it was sent.
    var sentScriptInTransaction: Bool?
    /// Statements held back to travel in front of the session's next one (``hold(_:inTransaction:)``), and
    /// whether the session is in a transaction once they have run.
    var heldStatements: [String] = []
    var heldInTransaction: Bool?

    /// Opens a session; the password, if the server asks for one, comes from the URL, then
    /// `PGPASSWORD`, then the password file (`~/.pgpass`, `PGPASSFILE`, `passfile=`).
    public init(url: PostgresURL) throws(PostgresError) {
        // Before any stored property is set, so no deinit calls libpq when it could not be loaded.
        var failure = [CChar](repeating: 0, count: 512)
        guard ferry_pq_load(&failure, failure.count) == 1 else {
            let reason = String(decoding: failure.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw PostgresError(
                kind: .connectionFailed,
                message:
                    "cannot connect to \(url): libpq, PostgreSQL's client library, could not be loaded (\(reason)); install it (Debian and Ubuntu: apt-get install libpq5; macOS: brew install libpq) or name it with FERRY_LIBPQ=/path/to/libpq.so.5"
            )
        }
        self.url = url
        let keywords = url.connectionKeywords + [("client_encoding", "UTF8")]
        let connection = Self.connect(keywords)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let reason = connection.map { Self.errorText($0) } ?? "out of memory"
            PQfinish(connection)
            throw PostgresError(
                kind: .connectionFailed,
                message: "cannot connect to \(url): \(redacting(reason, url.password))"
                    + Self.timeoutExplanation(reason, keywords: keywords))
        }
        handle = connection
        PQsetErrorVerbosity(connection, PQERRORS_DEFAULT)
        // libpq prints NOTICEs to stderr by default; a library must not write to the terminal.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
    }

    /// Parses `text` as a ``PostgresURL`` and opens a session.
    public convenience init(_ text: String) throws(PostgresError) {
        try self.init(url: PostgresURL(text))
    }

    deinit {
        PQfinish(handle)
    }

    /// Ends the session (its prepared statements with it); later calls throw. Statements still
    /// held (``hold(_:inTransaction:)``) are dropped: they set up the session or belong to a
    /// transaction that ends with it, uncommitted.
    public func close() {
        heldStatements.removeAll()
        heldInTransaction = nil
        PQfinish(handle)
        handle = nil
        preparedStatements.removeAll()
    }

    /// Runs one statement with `$n` parameters and reads its whole result.
    @discardableResult
    public func execute(
        _ sql: String, _ parameters: [PostgresValue] = []
    ) throws(PostgresError)
        -> PostgresResult
    {
        let connection = try liveHandle()
        let result = Self.withParameters(parameters) { types, values, lengths, formats in
            PQexecParams(
                connection, sql, Int32(parameters.count), types, values, lengths, formats, 0)
        }
        defer { PQclear(result) }
        return try checkedResult(result)
    }

    /// Runs several `;`-separated statements without parameters (DDL scripts), in one round
    /// trip with the statements held (``hold(_:inTransaction:)``).
    public func executeScript(_ sql: String) throws(PostgresError) {
        _ = try scriptResult(sql)
    }

    /// ``executeScript(_:)``, returning the last statement's result (its rows).
    public func scriptResult(_ sql: String) throws(PostgresError) -> PostgresResult {
        let connection = try liveHandle(carryingHeld: true)
        let result = PQexec(connection, takeHeldStatements() + sql)
        defer { PQclear(result) }
        return try checkedResult(result)
    }

    /// Holds `sql` (statements without parameters whose outcome needs no round trip of its own:
    /// the session's settings, `BEGIN`, `SAVEPOINT`, `RELEASE SAVEPOINT`, a row written inside a
    /// transaction) back, to be sent in front of the session's next statement, in one message
    /// with it: a script, the start of a `COPY`, a script sent without waiting; any other
    /// statement sends them on their own first. A held statement's failure is thrown by the
    /// statement that carried it, and the rest of that message does not run; statements still
    /// held when the session closes are dropped (a transaction left open rolls back anyway).
    /// `inTransaction` says whether the session is in a transaction once `sql` has run (nil: as
    /// before it).
    public func hold(_ sql: String, inTransaction: Bool? = nil) {
        let before = isInTransaction
        heldStatements.append(sql)
        heldInTransaction = inTransaction ?? before
    }

    /// True when statements wait to travel with the next one (``hold(_:inTransaction:)``).
    public var holdsStatements: Bool { !heldStatements.isEmpty }

    /// The held statements as the start of a script (`A; B; `), forgotten from now on.
    func takeHeldStatements() -> String {
        guard !heldStatements.isEmpty else { return "" }
        defer {
            heldStatements.removeAll()
            heldInTransaction = nil
        }
        return heldStatements.joined(separator: "; ") + "; "
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// Nested calls use savepoints, so an inner failure undoes only the inner work.
    ///
    /// `BEGIN`, `SAVEPOINT` and `RELEASE SAVEPOINT` are held (``hold(_:inTransaction:)``): they
    /// travel with the next statement, costing no round trip of their own. With `readOnly` (the body
    /// writes nothing), the `COMMIT` is sent without waiting for its outcome, which the
    /// session's next statement reads (``sendScript(_:)``): the server ends the transaction
    /// (and lets go of its locks) at once, while ferry goes on.
    @discardableResult
    public func transaction<T>(readOnly: Bool = false, _ body: () throws -> T) throws -> T {
        let savepoint: String?
        _ = try liveHandle(carryingHeld: true)
        if !isInTransaction {
            savepoint = nil
            hold("BEGIN", inTransaction: true)
        } else {
            savepointDepth += 1
            let name = "ferry_savepoint_\(savepointDepth)"
            savepoint = name
            hold("SAVEPOINT \(name)")
        }
        defer { if savepoint != nil { savepointDepth -= 1 } }
        let value: T
        do {
            value = try body()
        } catch {
            if let savepoint {
                _ = try? executeScript("ROLLBACK TO SAVEPOINT \(savepoint); RELEASE SAVEPOINT \(savepoint)")
            } else {
                _ = try? executeScript("ROLLBACK")
            }
            throw error
        }
        if let savepoint {
            hold("RELEASE SAVEPOINT \(savepoint)")
        } else if readOnly {
            try sendScript("COMMIT", inTransactionAfter: false)
        } else {
            do {
                try executeScript("COMMIT")
            } catch {
                // A held statement failed, so the COMMIT did not run: end the transaction.
                if let handle, PQtransactionStatus(handle) != PQTRANS_IDLE { PQclear(PQexec(handle, "ROLLBACK")) }
                throw error
            }
        }
        return value
    }

    /// Whether the session is inside a transaction block (also when that transaction failed).
    public var isInTransaction: Bool {
        // Held statements run before anything else: the session is as they leave it.
        if let heldInTransaction { return heldInTransaction }
        // A script still running reports the session as active: it runs in the transaction it
        // was sent in.
        if let sentScriptInTransaction { return sentScriptInTransaction }
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    // MARK: - libpq plumbing

    /// The session's handle, ready for a statement: a `COPY` still open is aborted first, and
    /// the statements held (``hold(_:inTransaction:)``) are sent on their own unless `carryingHeld` (the
    /// caller sends them in front of its statement, ``takeHeldStatements()``).
    func liveHandle(carryingHeld: Bool = false) throws(PostgresError) -> OpaquePointer {
        guard let handle else {
            throw PostgresError(kind: .connectionFailed, message: "the connection to \(url) is closed")
        }
        openCopy?.abortForOtherStatement()
        openCopyOut?.endForOtherStatement()
        try finishSentScript()
        if !carryingHeld && !heldStatements.isEmpty {
            let result = PQexec(handle, takeHeldStatements())
            defer { PQclear(result) }
            try check(result)
        }
        return handle
    }

    /// Throws the server's error if `result` is not a success.
    func check(_ result: OpaquePointer?) throws(PostgresError) {
        guard let result else {
            throw PostgresError(kind: .server, message: Self.errorText(handle))
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_COPY_IN:
            return
        default:
            throw Self.serverError(result, connection: handle)
        }
    }

    /// The rows and status of `result`, or the server's error if it is not a success.
    func checkedResult(_ result: OpaquePointer?) throws(PostgresError) -> PostgresResult {
        try check(result)
        guard let result else { throw PostgresError(kind: .server, message: Self.errorText(handle)) }
        return Self.read(result)
    }

    static func serverError(_ result: OpaquePointer, connection: OpaquePointer?) -> PostgresError {
        func field(_ code: UInt8) -> String? {
            PQresultErrorField(result, Int32(code)).map { String(cString: $0) }
        }
        let primary = field(UInt8(ascii: "M"))
        return PostgresError(
            kind: .server,
            message: primary ?? Self.errorText(connection),
            sqlState: field(UInt8(ascii: "C")),
            detail: field(UInt8(ascii: "D")),
            hint: field(UInt8(ascii: "H")),
            context: field(UInt8(ascii: "W")))
    }

    /// Why libpq gave up, when it gave up waiting: the server did not finish the connection
    /// within the URL's (or ferry's default) `connect_timeout`.
    static func timeoutExplanation(_ reason: String, keywords: [(key: String, value: String)]) -> String {
        guard reason.contains("timeout expired") else { return "" }
        let seconds =
            keywords.last { $0.key == "connect_timeout" }?.value
            ?? ProcessInfo.processInfo.environment["PGCONNECT_TIMEOUT"] ?? "?"
        return
            " (the server did not complete the connection within connect_timeout=\(seconds) seconds; set connect_timeout= in the URL to wait longer)"
    }

    static func errorText(_ connection: OpaquePointer?) -> String {
        guard let connection, let message = PQerrorMessage(connection) else {
            return "unknown libpq error"
        }
        let text = String(cString: message)
        return text.trimmingSuffix { $0 == "\n" || $0 == " " }
    }

    private static func connect(_ keywords: [(key: String, value: String)]) -> OpaquePointer? {
        let keys = keywords.map { strdup($0.key) } + [nil]
        let values = keywords.map { strdup($0.value) } + [nil]
        defer {
            for key in keys { free(key) }
            for value in values { free(value) }
        }
        return keys.map { UnsafePointer($0) }.withUnsafeBufferPointer { keyPointers in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { valuePointers in
                PQconnectdbParams(keyPointers.baseAddress, valuePointers.baseAddress, 0)
            }
        }
    }

    /// The type OID a parameter is sent with: 0 (the server infers the type) for NULL and text,
    /// else `int8`, `bool`, `float8` or `bytea`.
    static func parameterType(_ parameter: PostgresValue) -> UInt32 {
        switch parameter {
        case .null, .text: 0
        case .integer: PostgresValue.TypeOID.int8
        case .bool: PostgresValue.TypeOID.bool
        case .real: PostgresValue.TypeOID.float8
        case .bytes: PostgresValue.TypeOID.bytea
        }
    }

    /// Lays out `parameters` as libpq wants them: their ``parameterType(_:)``s, in text form
    /// except `bytea` (binary).
    static func withParameters<R>(
        _ parameters: [PostgresValue],
        _ body: (
            UnsafePointer<UInt32>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
            UnsafePointer<Int32>?
        ) -> R
    ) -> R {
        let types = parameters.map(parameterType)
        var formats: [Int32] = []
        var lengths: [Int32] = []
        var buffers: [UnsafeMutablePointer<CChar>?] = []
        defer { for buffer in buffers { free(buffer) } }
        for parameter in parameters {
            if case .bytes(let bytes) = parameter {
                let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
                bytes.withUnsafeBytes { raw in
                    UnsafeMutableRawPointer(buffer).copyMemory(
                        from: raw.baseAddress ?? UnsafeRawPointer(buffer), byteCount: bytes.count)
                }
                buffers.append(UnsafeMutablePointer(mutating: buffer))
                formats.append(1)
                lengths.append(Int32(bytes.count))
                continue
            }
            buffers.append(parameter.textForm.map { strdup($0) } ?? nil)
            formats.append(0)
            lengths.append(0)
        }
        let values = buffers.map { UnsafePointer($0) }
        return body(types, values, lengths, formats)
    }

    private static func read(_ result: OpaquePointer) -> PostgresResult {
        let columnCount = Int(PQnfields(result))
        let columns = (0..<columnCount).map { index in
            PostgresResult.Column(
                name: String(cString: PQfname(result, Int32(index))),
                typeOID: PQftype(result, Int32(index)))
        }
        let names = columns.map(\.name)
        let rows = (0..<Int(PQntuples(result))).map { row in
            PostgresRow(
                columnNames: names,
                values: columns.indices.map { column in
                    if PQgetisnull(result, Int32(row), Int32(column)) == 1 { return .null }
                    let text = String(cString: PQgetvalue(result, Int32(row), Int32(column)))
                    return PostgresValue(text: text, typeOID: columns[column].typeOID)
                })
        }
        let tag = String(cString: PQcmdTuples(result))
        return PostgresResult(columns: columns, rows: rows, affectedRows: Int(tag) ?? 0)
    }
}

/// `text` with every occurrence of a non-empty `secret` replaced by `***`.
func redacting(_ text: String, _ secret: String?) -> String {
    guard let secret, !secret.isEmpty else { return text }
    return text.replacing(secret, with: "***")
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var text = self
        while let last = text.last, predicate(last) { text.removeLast() }
        return text
    }
}
