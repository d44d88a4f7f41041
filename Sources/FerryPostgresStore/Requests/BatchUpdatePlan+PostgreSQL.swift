import FerryCore

extension BatchUpdatePlan {
    /// On PostgreSQL: constant values (checked against the attribute's rules when the plan was
    /// made), the objects selected by the server's SQL or, when ferry evaluates part of the
    /// predicate, by key.
    func run(onPostgreSQL database: PostgresDatabase) throws -> BatchUpdateResult {
        if !expressionAttributes.isEmpty { return try evaluatedByFerry.run(self, on: database) }
        var sql = updateSQL
        var arguments = updateArguments
        if let residual {
            let keys = try PostgresFetchRows.keys(
                of: entity, matching: residual, database: database, model: model, layout: layout)
            sql = "UPDATE \(table) AS t0 SET \(assignments) WHERE t0.\(key) = ANY (CAST(? AS bigint[]))"
            arguments = setArguments + [.text("{" + keys.map(String.init).joined(separator: ",") + "}")]
        }
        do {
            try database.execute(sql, arguments)
        } catch let error as FerryError {
            throw translate(error)
        }
        return BatchUpdateResult(updated: database.changes)
    }
}
