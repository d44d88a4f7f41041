/// A batch update's `set:` expression bound to the updated entity: the new value of one
/// attribute, computed from the object's values before the update.
///
/// This is the one place a `set:` value expression is checked and compiled (for every store
/// kind): it is a mapping expression (see docs/expressions.md) whose bare names are the object's
/// attributes, fitted to the attribute's type. When the store computes exactly what ferry would
/// (``BoundExpression/sql(column:syntax:)``), the value is SQL over `t0`; otherwise ferry
/// evaluates it per object.
package struct SetExpression {
    /// How the new value is computed.
    package enum Form {
        /// SQL over the updated row `t0`, with its bound arguments.
        case sql(String, [DatabaseValue])
        /// Evaluated by ferry for each selected object: `keyPathSQL[i]` is the SQL over `t0` of
        /// the expression's key path number `i`.
        case evaluated(BoundExpression, keyPathSQL: [String])
    }

    package let attribute: AttributeDescription
    package let form: Form
    /// The expression bound to the entity, and the SQL over `t0` of its key path number `i`:
    /// what ferry evaluates per object whatever ``form`` is (on PostgreSQL, every expression).
    package let bound: BoundExpression
    package let keyPathSQL: [String]

    /// Checks `expression` against `entity` and the type of `attribute`, and compiles it.
    ///
    /// - Parameter now: the value of `now()` (milliseconds since 1970), one for the whole request.
    /// - Throws: `.invalidExpression` at the offending token: unknown attributes, wrong types, a
    ///   result that does not fit the attribute.
    static func bind(
        _ expression: Expression, to attribute: AttributeDescription, of entity: EntityDescription, model: ObjectModel,
        layout: any StoreLayout, now: Int64
    ) throws(FerryError) -> SetExpression {
        let bound = try expression.bind(source: entity, model: model, now: now).fitted(to: attribute)
        let keyPathSQL = bound.keyPaths.map {
            EntityPlan.keyPathSQL($0.components, in: entity, model: model, layout: layout)
        }
        if let sql = bound.sql(column: { keyPathSQL[$0] }, dialect: layout.dialect) {
            return SetExpression(
                attribute: attribute, form: .sql(sql.text, sql.arguments.map(layout.valueCoding.encode)), bound: bound,
                keyPathSQL: keyPathSQL)
        }
        return SetExpression(
            attribute: attribute, form: .evaluated(bound, keyPathSQL: keyPathSQL), bound: bound, keyPathSQL: keyPathSQL)
    }
}

/// The values of one selected object's key paths, decoded from its row, for evaluation.
package struct SetExpressionRow: ExpressionContext {
    let values: [Value]
    package let objectDescription: String?

    package init(values: [Value], objectDescription: String?) {
        self.values = values
        self.objectDescription = objectDescription
    }

    package func value(atSlot slot: Int) -> Value { values[slot] }
}

/// The per-object values of a batch update's evaluated `set:` expressions, computed before the
/// update into a temporary table (`k` the object's key, `v0`, `v1`, … one column per expression)
/// so that the set-based validation and the `UPDATE` read them like any other SQL value.
package struct EvaluatedSetValues {
    static let table = "temp.ferry_set_values"

    /// One evaluated expression and its column in the table.
    struct Column {
        var expression: BoundExpression
        var keyPathSQL: [String]
    }

    var columns: [Column] = []

    /// Adds an expression and returns the SQL of its value for the row `t0`.
    mutating func add(_ expression: BoundExpression, keyPathSQL: [String], key: String) -> String {
        columns.append(Column(expression: expression, keyPathSQL: keyPathSQL))
        return "(SELECT v\(columns.count - 1) FROM \(Self.table) WHERE k = t0.\(key))"
    }

    /// Evaluates every expression for every object `predicate` selects and fills the table;
    /// the first value that cannot be computed throws (`.validation`, naming the object) before
    /// anything is written.
    func fill(
        on connection: Connection, entity: EntityDescription, layout: any StoreLayout, key: String,
        predicate: PredicateSQL
    ) throws {
        guard !columns.isEmpty else { return }
        let names = columns.indices.map { "v\($0)" }
        try connection.execute("DROP TABLE IF EXISTS \(Self.table)")
        try connection.execute("CREATE TABLE \(Self.table) (k INTEGER PRIMARY KEY, \(names.joined(separator: ", ")))")
        let selected = columns.flatMap(\.keyPathSQL)
        let select =
            "SELECT t0.\(key)\(selected.isEmpty ? "" : ", " + selected.joined(separator: ", ")) FROM \(predicate.from) WHERE \(predicate.sql)"
        let placeholders = Array(repeating: "?", count: names.count + 1).joined(separator: ", ")
        let insert = try connection.prepare(
            "INSERT INTO \(Self.table) (k, \(names.joined(separator: ", "))) VALUES (\(placeholders))")
        try connection.forEachRow(select, predicate.arguments) { row in
            var output: [DatabaseValue] = [row[0]]
            var next = 1
            for column in columns {
                let keyPaths = column.expression.keyPaths
                let values = keyPaths.indices.map {
                    layout.valueCoding.decode(row[next + $0], as: keyPaths[$0].attribute.type)
                }
                next += keyPaths.count
                let context = SetExpressionRow(
                    values: values, objectDescription: "\(entity.name) \(layout.keyColumn) \(row[0])")
                output.append(layout.valueCoding.encode(try column.expression.evaluate(on: context)))
            }
            try insert.bind(output)
            _ = try insert.step()
            insert.reset()
        }
    }

    /// Drops the table.
    func drop(on connection: Connection) throws {
        guard !columns.isEmpty else { return }
        try connection.execute("DROP TABLE IF EXISTS \(Self.table)")
    }
}
