internal import CFerryPostgres

extension PostgresConnection {
    /// Runs one statement with `$n` parameters as a prepared statement of the session, and reads
    /// its whole result: for statements run many times, which the server then parses and
    /// analyzes once instead of every time.
    ///
    /// The first run of a text with given parameter types prepares it (`PQprepare`, as
    /// `ferry_s1`, `ferry_s2`, …, with the types ``execute(_:_:)`` would send, so the server
    /// infers the same ones); every run executes it by name (`PQexecPrepared`). Results and
    /// errors are those of ``execute(_:_:)``. A statement that fails to prepare is not kept; one
    /// prepared survives a rolled-back transaction or savepoint, as PostgreSQL keeps it; the
    /// statements end with the session (``close()``). Past 256 statements in one session, a new
    /// text runs unprepared.
    @discardableResult
    public func executePrepared(
        _ sql: String, _ parameters: [PostgresValue] = []
    ) throws(PostgresError) -> PostgresResult {
        let connection = try liveHandle()
        let key = PostgresPreparedStatements.Key(sql: sql, types: parameters.map(Self.parameterType))
        guard let name = try preparedName(key, connection: connection) else { return try execute(sql, parameters) }
        let result = Self.withParameters(parameters) { _, values, lengths, formats in
            PQexecPrepared(connection, name, Int32(parameters.count), values, lengths, formats, 0)
        }
        defer { PQclear(result) }
        do {
            return try checkedResult(result)
        } catch {
            // 26000: the statement is gone (a `DEALLOCATE` in the session); 0A000: the server
            // will not run it again (a table it reads changed its result columns). Either way,
            // prepare the text anew next time.
            if error.sqlState == "26000" || error.sqlState == "0A000" { preparedStatements.remove(key) }
            throw error
        }
    }

    /// How many statements ``executePrepared(_:_:)`` holds prepared in this session.
    public var preparedStatementCount: Int { preparedStatements.count }

    /// The name `key` is prepared under, prepared now if it was not; nil when the session holds
    /// as many prepared statements as it may.
    private func preparedName(
        _ key: PostgresPreparedStatements.Key, connection: OpaquePointer
    ) throws(PostgresError) -> String? {
        if let name = preparedStatements.name(for: key) { return name }
        guard let name = preparedStatements.nextName() else { return nil }
        let result = key.types.withUnsafeBufferPointer { types in
            PQprepare(connection, name, key.sql, Int32(types.count), types.baseAddress)
        }
        defer { PQclear(result) }
        try check(result)
        preparedStatements.insert(key, name: name)
        return name
    }
}
