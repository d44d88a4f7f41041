internal import CFerryPostgres

extension PostgresConnection {
    /// Sends a script (statements separated by semicolons, no parameters) without waiting for
    /// it: the server runs it while the caller goes on. Its outcome is read by
    /// ``finishSentScript()``, which the next statement of the session calls first, so a
    /// failure of the script is thrown there at the latest.
    public func sendScript(_ sql: String) throws(PostgresError) {
        try sendScript(sql, inTransactionAfter: nil)
    }

    /// ``sendScript(_:)``; `inTransactionAfter` says whether the session is in a transaction
    /// once the script has run (nil: as when it was sent).
    func sendScript(_ sql: String, inTransactionAfter: Bool?) throws(PostgresError) {
        let connection = try liveHandle(carryingHeld: true)
        let inTransaction = inTransactionAfter ?? isInTransaction
        guard PQsendQuery(connection, takeHeldStatements() + sql) == 1 else {
            throw PostgresError(kind: .server, message: Self.errorText(connection))
        }
        sentScriptInTransaction = inTransaction
    }

    /// Waits for the script ``sendScript(_:)`` sent, if any, and throws its first error.
    public func finishSentScript() throws(PostgresError) {
        guard sentScriptInTransaction != nil, let handle else { return }
        sentScriptInTransaction = nil
        var firstError: PostgresError?
        while let result = PQgetResult(handle) {
            defer { PQclear(result) }
            guard firstError == nil else { continue }
            do throws(PostgresError) {
                try check(result)
            } catch {
                firstError = error
            }
        }
        if let firstError { throw firstError }
    }
}
