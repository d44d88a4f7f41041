/// The parts of ferry's requests each engine's session runs its own way: a request hands its
/// compiled plan to the session (``DatabaseConnection/engineSession()``) instead of asking which
/// engine the store is in. ``Connection`` (SQLite) and PostgreSQL's session adopt it; the hot
/// loops stay specialised inside each engine's implementation.
package protocol EngineSession: DatabaseConnection {
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
    package func engineSession() throws -> any EngineSession {
        guard let session = self as? any EngineSession else {
            throw FerryError(.internal, "no engine session for \(type(of: self))")
        }
        return session
    }
}

/// Where a ``FetchCursor`` reads rows: SQLite's statement, concrete so that the cursor's
/// accessors stay specialised (no dynamic dispatch per value), or another engine's row source.
package struct FetchRows {
    /// SQLite's statement, stepped in place.
    package var statement: Statement?
    /// Another engine's rows (PostgreSQL's `COPY … TO STDOUT` stream or its cursor).
    package var source: (any FetchRowSource)?
    /// How the stored values the source yields decode.
    package var coding: DispatchedValueCoding

    package init(
        statement: Statement? = nil, source: (any FetchRowSource)? = nil, coding: DispatchedValueCoding
    ) {
        self.statement = statement
        self.source = source
        self.coding = coding
    }
}

/// The rows of a fetch as an engine other than SQLite reads them, one current row at a time, in
/// the engine's stored forms. Only ``advance()`` and ``value(at:)`` must be written; the typed
/// accessors default to reading ``value(at:)``, and an engine whose rows are bytes (PostgreSQL's
/// `COPY` text) answers them without building a ``DatabaseValue``.
package protocol FetchRowSource: AnyObject {
    /// Moves to the next row; false at the end.
    func advance() throws -> Bool
    /// Stops reading early (the reader failed): the server stops sending rows.
    func cancel()
    /// The stored value of a column of the current row.
    func value(at index: Int) -> DatabaseValue
    /// The storage class of a column of the current row.
    func storageClass(at index: Int) -> DatabaseValue.StorageClass
    /// A column of the current row as an integer (0 for what is not a number).
    func int64(at index: Int) -> Int64
    /// A column of the current row as a double (0 for what is not a number).
    func double(at index: Int) -> Double
    /// The column's text bytes.
    func withTextBytes<T>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T
    /// The column's blob bytes.
    func withBlobBytes<T>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T
}

extension FetchRowSource {
    package func cancel() {}

    package func storageClass(at index: Int) -> DatabaseValue.StorageClass {
        switch value(at: index) {
        case .null: return .null
        case .integer: return .integer
        case .real: return .real
        case .text: return .text
        case .blob: return .blob
        }
    }

    package func int64(at index: Int) -> Int64 {
        switch value(at: index) {
        case .integer(let v): return v
        case .real(let v): return Int64(exactly: v.rounded(.towardZero)) ?? 0
        default: return 0
        }
    }

    package func double(at index: Int) -> Double {
        switch value(at: index) {
        case .integer(let v): return Double(v)
        case .real(let v): return v
        default: return 0
        }
    }

    package func withTextBytes<T>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        let value = value(at: index)
        var text = value.text ?? value.description
        return try text.withUTF8(body)
    }

    package func withBlobBytes<T>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        switch value(at: index) {
        case .blob(let bytes): return try bytes.withUnsafeBufferPointer(body)
        case .text(var text): return try text.withUTF8(body)
        default: return try body(UnsafeBufferPointer(start: nil, count: 0))
        }
    }
}

// MARK: - SQLite

extension Connection: EngineSession {
    package func fetchRows(
        for request: FetchRequest, query: FetchQuery, model: ObjectModel, layout: any StoreLayout
    ) throws -> FetchRows {
        let statement = try prepare(query.sql)
        try statement.bind(query.arguments)
        return FetchRows(statement: statement, coding: DispatchedValueCoding(layout.valueCoding))
    }

    package func runBatchUpdate(_ plan: BatchUpdatePlan) throws -> BatchUpdateResult { try plan.run(onSQLite: self) }

    /// Row by row through a ``BatchInserter``.
    package func runBatchInsert(_ request: BatchInsertRequest, in store: Store) throws -> BatchInsertResult {
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
