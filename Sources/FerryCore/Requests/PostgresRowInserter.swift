/// Inserts records into one entity of a PostgreSQL store one statement at a time, with the same
/// outcomes and reasons as ``BatchInserter`` on SQLite, so an import's counts, rejects and budget
/// are the same on both backends.
///
/// Nothing a record does may abort the step's transaction (PostgreSQL cannot go on after a failed
/// statement), so problems are decided before or without an error: validation rules, required
/// values and defaults in ferry; uniqueness through `INSERT … ON CONFLICT DO NOTHING` (a row that
/// was not inserted conflicts: the constraint is then looked up to name it, as SQLite does);
/// `update` and `replace` find the existing object through a uniqueness constraint the record
/// supplies and change it inside a savepoint, so an update that collides with another object
/// is rejected alone. `mode: sync` is not available on PostgreSQL.
package final class PostgresRowInserter: RecordInserting {
    package let entity: EntityDescription
    package let columns: [InsertColumn]
    package let policy: ConflictPolicy
    private let database: any DatabaseConnection
    private let layout: any StoreLayout
    private let rules: PostgresRecordRules
    private let table: String
    private let quotedNames: [String]
    /// For each of ``PostgresRecordRules/constraints``: the query finding the object holding its values.
    private let finders: [String]
    /// For `replace`: the assignments giving unsupplied attributes their defaults.
    private let resetAssignments: [String]

    /// Prepares the SQL for `columns` of `entityName` in a PostgreSQL store of `layout`.
    package init(
        database: any DatabaseConnection, model: ObjectModel, layout: any StoreLayout, entity entityName: String,
        columns: [InsertColumn],
        policy: ConflictPolicy = .error, validate: Bool = true
    ) throws {
        rules = try PostgresRecordRules(
            model: model, layout: layout, entity: entityName, columns: columns, validate: validate)
        let entity = rules.entity
        self.entity = entity
        self.columns = columns
        self.policy = policy
        self.database = database
        self.layout = layout
        let dialect = layout.dialect
        let table = layout.quotedTable(for: entity)
        self.table = table
        quotedNames = rules.plan.storedNames.map { dialect.quote($0) }
        let supplied = Set(columns.map(\.name))
        finders = rules.constraints.map { constraint in
            let condition = constraint.attributes.enumerated().map {
                "\(layout.quotedColumn(forAttribute: $0.element, in: entity)) = ?\($0.offset + 1)"
            }
            return
                "SELECT \(dialect.quote(layout.keyColumn)) FROM \(table) WHERE \(condition.joined(separator: " AND ")) LIMIT 1"
        }
        if (policy == .update || policy == .replace) && rules.constraints.isEmpty {
            throw FerryError(
                .usage,
                "on_conflict: \(policy.rawValue) needs the record to supply every attribute of one of \(entity.name)'s uniqueness constraints"
            )
        }
        resetAssignments =
            policy != .replace
            ? []
            : entity.attributes.filter { !supplied.contains($0.name) }.map { attribute in
                "\(layout.quotedColumn(forAttribute: attribute.name, in: entity)) = \(attribute.defaultValue.map { layout.valueCoding.sqlLiteral($0, in: dialect) } ?? "NULL")"
            }
    }

    package func insert(_ values: [Value], supplied: [Bool]? = nil) throws -> InsertOutcome {
        var encoded = [DatabaseValue](repeating: .null, count: values.count)
        if let rejection = rules.encode(values, supplied: supplied, into: &encoded) { return rejection }
        if policy == .update || policy == .replace, let key = try existingKey(encoded) {
            return try update(key: key, encoded: encoded, supplied: supplied)
        }
        return try insertNew(encoded)
    }

    /// Inserts a row the store does not have yet; a uniqueness conflict rejects it (`keep` skips it).
    private func insertNew(_ encoded: [DatabaseValue]) throws -> InsertOutcome {
        if let rejection = rules.missingValue(in: encoded) { return rejection }
        let placeholders = encoded.indices.map { "?\($0 + 1)" }.joined(separator: ", ")
        let sql =
            quotedNames.isEmpty
            ? "INSERT INTO \(table) DEFAULT VALUES ON CONFLICT DO NOTHING"
            : "INSERT INTO \(table) (\(quotedNames.joined(separator: ", "))) VALUES (\(placeholders)) ON CONFLICT DO NOTHING"
        try database.execute(sql, encoded)
        if database.changes == 1 { return .inserted }
        if policy == .keep { return .skipped }
        return try conflict(encoded)
    }

    /// Changes the existing object `key` in place (keeping its identity and the relationships to it).
    private func update(key: Int64, encoded: [DatabaseValue], supplied: [Bool]?) throws -> InsertOutcome {
        var assignments: [String] = []
        var arguments: [DatabaseValue] = []
        for index in encoded.indices where policy == .replace || (supplied?[index] ?? true) {
            arguments.append(encoded[index])
            assignments.append("\(quotedNames[index]) = ?\(arguments.count)")
        }
        assignments += resetAssignments
        guard !assignments.isEmpty else { return .skipped }
        arguments.append(.integer(key))
        let sql =
            "UPDATE \(table) SET \(assignments.joined(separator: ", ")) WHERE \(layout.dialect.quote(layout.keyColumn)) = ?\(arguments.count)"
        do {
            try database.savepoint("ferry_update") { try database.execute(sql, arguments) }
        } catch let error as FerryError where error.code == .constraint {
            // Another object holds one of the new unique values (or a required value is missing).
            if let index = encoded.indices.first(where: {
                rules.requiredColumns[$0] && encoded[$0].isNull && (policy == .replace || (supplied?[$0] ?? true))
            }) {
                return .rejected(reason: "\(rules.plan.storedNames[index]) is required", column: index)
            }
            return try conflict(encoded, excluding: key)
        }
        return .updated
    }

    /// The key of the object holding the record's values of a uniqueness constraint, if any.
    private func existingKey(_ encoded: [DatabaseValue]) throws -> Int64? {
        try holder(of: encoded, excluding: nil, in: Array(rules.constraints.indices))?.key
    }

    /// The first uniqueness constraint of `order` (indexes into the rules' constraints) whose values in
    /// `encoded` an object other than `excluded` holds, with that object's key. NULLs never conflict.
    private func holder(
        of encoded: [DatabaseValue], excluding excluded: Int64?, in order: [Int]
    ) throws -> (constraint: Int, key: Int64)? {
        for offset in order {
            let arguments = rules.constraints[offset].columns.map { encoded[$0] }
            if arguments.contains(where: \.isNull) { continue }
            if let key = try database.scalar(finders[offset], arguments)?.int64, key != excluded {
                return (offset, key)
            }
        }
        return nil
    }

    /// The rejection of a row that broke a uniqueness constraint, naming the constraint as
    /// SQLite does. When several are broken, SQLite names the one declared last (it checks the
    /// newest index first).
    private func conflict(_ encoded: [DatabaseValue], excluding excluded: Int64? = nil) throws -> InsertOutcome {
        rules.conflict(
            constraint: try holder(of: encoded, excluding: excluded, in: rules.constraints.indices.reversed())?
                .constraint)
    }
}
