/// The parts of ferry's requests each engine's session runs its own way: a request hands its
/// compiled plan to the session (``DatabaseConnection/engineSession()``) instead of asking which
/// engine the store is in. ``Connection`` (SQLite) and ``PostgresDatabase`` adopt it; the hot
/// loops stay specialised inside each engine's implementation.
protocol EngineSession: DatabaseConnection {
    /// Where a cursor over `query` (compiled from `request`) reads its rows.
    func fetchRows(
        for request: FetchRequest, query: FetchQuery, model: ObjectModel, layout: any StoreLayout
    ) throws -> FetchRows
    /// Runs a planned batch update.
    func runBatchUpdate(_ plan: BatchUpdatePlan) throws -> BatchUpdateResult
    /// Runs a batch insert into `store` (whose session this is) in one write transaction.
    func runBatchInsert(_ request: BatchInsertRequest, in store: Store) throws -> BatchInsertResult
}

extension DatabaseConnection {
    /// This session as an ``EngineSession`` (every engine's session is one).
    func engineSession() throws -> any EngineSession {
        guard let session = self as? any EngineSession else {
            throw FerryError(.internal, "no engine session for \(type(of: self))")
        }
        return session
    }
}

/// Where a ``FetchCursor`` reads rows: one engine's concrete row source, so that the cursor's
/// accessors stay specialised (no dynamic dispatch per value).
struct FetchRows {
    /// SQLite's statement, stepped in place.
    var statement: Statement?
    /// PostgreSQL's `COPY … TO STDOUT` stream, when the server evaluates the whole predicate.
    var copyRows: PostgresCopyRows?
    /// PostgreSQL's cursor, ferry evaluating what the server cannot.
    var postgresRows: PostgresFetchRows?
    /// How the stored values the source yields decode.
    var coding: DispatchedValueCoding
}

// MARK: - SQLite

extension Connection: EngineSession {
    func fetchRows(
        for request: FetchRequest, query: FetchQuery, model: ObjectModel, layout: any StoreLayout
    ) throws -> FetchRows {
        let statement = try prepare(query.sql)
        try statement.bind(query.arguments)
        return FetchRows(statement: statement, coding: DispatchedValueCoding(layout.valueCoding))
    }

    func runBatchUpdate(_ plan: BatchUpdatePlan) throws -> BatchUpdateResult { try plan.run(onSQLite: self) }

    /// Row by row through a ``BatchInserter``.
    func runBatchInsert(_ request: BatchInsertRequest, in store: Store) throws -> BatchInsertResult {
        try store.write { connection in
            let inserter = try BatchInserter(
                connection: connection, model: store.model, layout: store.layout, entity: request.entity,
                columns: request.columns, policy: request.conflictPolicy, validate: request.validate)
            var result = BatchInsertResult()
            var row = Array(repeating: Value.null, count: request.columns.count)
            while try !request.rowHandler(&row) {
                let outcome = try inserter.insert(row)
                if case .rejected(let reason, _) = outcome { request.onReject?(result.read, reason) }
                result.count(outcome)
            }
            return result
        }
    }
}
