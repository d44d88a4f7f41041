/// A ``BatchInsertRequest`` on a PostgreSQL store: the rows go through the import step's
/// ``PostgresStagedInserter`` (rules and defaults decided in ferry, `COPY` into the table or a
/// staging table, every conflict policy), inside the request's transaction, so the counts and
/// the rows reported to `onReject` are those of the same request on SQLite.
enum PostgresBatchInsert {
    static func run(
        _ request: BatchInsertRequest, on database: PostgresDatabase, model: ObjectModel, layout: any StoreLayout
    ) throws -> BatchInsertResult {
        let inserter = try PostgresStagedInserter(
            database: database, model: model, layout: layout, entity: request.entity, columns: request.columns,
            policy: request.conflictPolicy, validate: request.validate)
        var result = BatchInsertResult()
        /// The rows read since the last flush: nil when staged (its outcome comes from the flush).
        var pending: [InsertOutcome?] = []
        func count(_ outcome: InsertOutcome) {
            if case .rejected(let reason, _) = outcome { request.onReject?(result.read, reason) }
            result.count(outcome)
        }
        func flush() throws {
            var outcomes = try inserter.flush().makeIterator()
            for entry in pending {
                if let outcome = entry ?? outcomes.next() { count(outcome) }
            }
            pending.removeAll(keepingCapacity: true)
        }
        var row = Array(repeating: Value.null, count: request.columns.count)
        while try !request.rowHandler(&row) {
            pending.append(try inserter.stage(row, supplied: nil))
            if inserter.isFull { try flush() }
        }
        try flush()
        return result
    }
}
