import FerryCore

/// PostgreSQL's side of the requests (``EngineSession``): rows by `COPY` or a cursor, batch
/// updates in the server, batch inserts staged and merged in sets.
extension PostgresDatabase: EngineSession {
    package func fetchRows(
        for request: FetchRequest, query: FetchQuery, model: ObjectModel, layout: any StoreLayout
    ) throws -> FetchRows {
        // Rows come in ferry's own forms, whatever the store's coding.
        let coding = DispatchedValueCoding(FerryValueCoding())
        if query.predicateIsExact, let rows = try PostgresCopyRows(query, database: self) {
            return FetchRows(source: rows, coding: coding)
        }
        return FetchRows(
            source: try PostgresFetchRows(request, database: self, model: model, layout: layout), coding: coding)
    }

    package func runBatchUpdate(_ plan: BatchUpdatePlan) throws -> BatchUpdateResult {
        try plan.run(onPostgreSQL: self)
    }

    /// Staged and merged in sets (``PostgresBatchInsert``).
    package func runBatchInsert(_ request: BatchInsertRequest, in store: Store) throws -> BatchInsertResult {
        try store.writeDatabase { _ in
            try PostgresBatchInsert.run(request, on: self, model: store.model, layout: store.layout)
        }
    }
}
