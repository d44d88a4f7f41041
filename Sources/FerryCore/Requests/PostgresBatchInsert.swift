import FerryPostgres

/// A ``BatchInsertRequest`` on a PostgreSQL store: rows are validated in ferry (optionality,
/// validation rules, defaults, exactly as ``BatchInserter`` does), so rejected rows never reach
/// the server, and the accepted ones stream into the entity's table through `COPY … FROM STDIN`
/// in bounded batches, inside the request's transaction.
///
/// Only the `error` conflict policy for now: a row breaking a uniqueness constraint or a foreign
/// key makes the server fail the COPY, and the whole request is rolled back with PostgreSQL's
/// error (the row and column it names). `update`, `keep` and `replace` are refused.
enum PostgresBatchInsert {
    static func run(
        _ request: BatchInsertRequest, on database: PostgresDatabase, model: ObjectModel, layout: any StoreLayout
    ) throws -> BatchInsertResult {
        guard request.conflictPolicy == .error else {
            throw FerryError(
                .usage, "on_conflict: \(request.conflictPolicy.rawValue) is not available on a PostgreSQL store yet",
                notes: ["on PostgreSQL, imports insert new rows (on_conflict: error)"])
        }
        guard let entity = model.entity(named: request.entity) else {
            throw FerryError(.usage, "the model has no entity '\(request.entity)'")
        }
        let plan = try InsertColumnPlan(
            columns: request.columns, of: entity, model: model, layout: layout, validate: request.validate)
        let (validators, defaults) = (plan.validators, plan.defaults)
        let coding = layout.valueCoding
        var result = BatchInsertResult()
        var row = Array(repeating: Value.null, count: request.columns.count)
        do {
            try database.connection.copy(
                into: layout.table(for: entity), schema: database.schema, columns: plan.storedNames
            ) { writer in
                rows: while try !request.rowHandler(&row) {
                    var encoded: [PostgresValue] = []
                    encoded.reserveCapacity(row.count)
                    for index in row.indices {
                        var value = row[index]
                        if value.isNull, let fallback = defaults[index] { value = fallback }
                        if let validator = validators[index], let problem = validator.problem(with: value) {
                            request.onReject?(result.read, problem)
                            result.count(.rejected(reason: problem, column: index))
                            continue rows
                        }
                        encoded.append(PostgresDatabase.postgresValue(coding.encode(value)))
                    }
                    try writer.append(encoded)
                    result.count(.inserted)
                }
            }
        } catch let error as PostgresError {
            let kind: FerryError.Code = error.sqlState?.hasPrefix("23") == true ? .constraint : .store
            throw FerryError(
                kind,
                "import into \(entity.name) on PostgreSQL store \(database.location) failed: \(error.description); nothing of it was stored"
            )
        }
        return result
    }
}
