import FerryCore

/// What a PostgreSQL store decides about a record in ferry, before it reaches the server: values
/// take their defaults, validation rules run, required values are checked, and a uniqueness
/// conflict is worded as SQLite words it, so ``PostgresStagedInserter`` and
/// `PostgresStagedMerge` reject the records SQLite rejects, with the same reasons.
///
/// PostgreSQL cannot go on with a transaction after a failed statement, so nothing a record does
/// may make one fail: every record-level problem is decided here or by a statement that cannot
/// fail (`ON CONFLICT DO NOTHING`).
struct PostgresRecordRules {
    let entity: EntityDescription
    let columns: [InsertColumn]
    let plan: InsertColumnPlan
    let coding: any ValueCoding
    /// Required attributes the columns do not include and that have no default: an insert
    /// without them is rejected ("X is required"), as SQLite's NOT NULL does.
    let missingRequired: [String]
    /// The columns (indexes) that must not be null on insert.
    let requiredColumns: [Bool]
    /// Each uniqueness constraint the record supplies completely: its column indexes, its
    /// attributes and the names of its stored columns, in the model's order.
    let constraints: [(columns: [Int], attributes: [String], names: [String])]

    init(
        model: ObjectModel, layout: any StoreLayout, entity entityName: String, columns: [InsertColumn], validate: Bool
    ) throws {
        guard let entity = model.entity(named: entityName) else {
            throw FerryError(.usage, "the model has no entity '\(entityName)'")
        }
        self.entity = entity
        self.columns = columns
        plan = try InsertColumnPlan(columns: columns, of: entity, model: model, layout: layout, validate: validate)
        coding = layout.valueCoding
        let supplied = Set(columns.map(\.name))
        missingRequired = entity.attributes.filter {
            !$0.isOptional && $0.defaultValue == nil && !supplied.contains($0.name)
        }.map {
            layout.column(forAttribute: $0.name, in: entity)
        }
        requiredColumns = columns.map { column in
            switch column {
            case .attribute(let name): return entity.attribute(named: name).map { !$0.isOptional } ?? false
            case .relationship(let name): return entity.relationship(named: name).map { !$0.isOptional } ?? false
            }
        }
        var constraints: [(columns: [Int], attributes: [String], names: [String])] = []
        for constraint in entity.uniquenessConstraints {
            let indexes = constraint.compactMap { name in columns.firstIndex { $0.name == name } }
            guard indexes.count == constraint.count else { continue }
            constraints.append((indexes, constraint, constraint.map { layout.column(forAttribute: $0, in: entity) }))
        }
        self.constraints = constraints
    }

    /// Encodes a record's values for the store into `encoded` (defaults for missing values,
    /// validation rules checked); a broken rule comes back as the rejection. Unsupplied values
    /// (`supplied[i] == false`) take their defaults without validation: an update leaves them
    /// alone, an insert needs them only when required.
    func encode(_ values: [Value], supplied: [Bool]?, into encoded: inout [DatabaseValue]) -> InsertOutcome? {
        precondition(values.count == columns.count, "one value per column")
        for index in values.indices {
            var value = values[index]
            if let supplied, !supplied[index] {
                encoded[index] = coding.encode(plan.defaults[index] ?? .null)
                continue
            }
            if value.isNull, let fallback = plan.defaults[index] { value = fallback }
            if let problem = plan.problem(with: value, column: index) {
                return .rejected(reason: problem, column: index)
            }
            encoded[index] = coding.encode(value)
        }
        return nil
    }

    /// The typed value of column `index` of a record `encode` wrote into `encoded` (null for a
    /// relationship's column).
    func decoded(_ encoded: [DatabaseValue], column index: Int) -> Value {
        plan.types[index].map { coding.decode(encoded[index], as: $0) } ?? .null
    }

    /// The rejection of a new row missing a required value (SQLite's NOT NULL), nil when none is missing.
    func missingValue(in encoded: [DatabaseValue]) -> InsertOutcome? {
        if let index = encoded.indices.first(where: { requiredColumns[$0] && encoded[$0].isNull }) {
            return .rejected(reason: "\(plan.storedNames[index]) is required", column: index)
        }
        if let name = missingRequired.first {
            return .rejected(reason: "\(name) is required", column: nil)
        }
        return nil
    }

    /// The rejection SQLite's NOT NULL gives a record that writes null into a required column:
    /// an insert or a `replace` writes every column (and resets the attributes the record does
    /// not have); an `update` of an existing object (`updating`) only the values the record
    /// supplies (`supplied`, nil meaning all).
    func missingValue(in values: [DatabaseValue], supplied: ArraySlice<Bool>?, updating: Bool) -> InsertOutcome? {
        guard updating else { return missingValue(in: values) }
        for index in values.indices where requiredColumns[index] && values[index].isNull {
            if let supplied, !supplied[supplied.startIndex + index] { continue }
            return .rejected(reason: "\(plan.storedNames[index]) is required", column: index)
        }
        return nil
    }

    /// The rejection of a row that broke the uniqueness constraint `index` (into ``constraints``),
    /// worded as SQLite does: "another Customer already has the same id (uniqueness constraint)";
    /// nil names no constraint.
    func conflict(constraint index: Int?) -> InsertOutcome {
        guard let index else {
            return .rejected(
                reason: "another \(entity.name) already has the same values (uniqueness constraint)", column: nil)
        }
        let constraint = constraints[index]
        return conflict(names: constraint.names, column: constraint.columns.first)
    }

    /// The rejection of a row that broke the uniqueness constraint of the stored columns `names`
    /// (`column`: the record column of its first attribute), worded as SQLite does.
    func conflict(names: [String], column: Int?) -> InsertOutcome {
        .rejected(
            reason:
                "another \(entity.name) already has the same \(names.joined(separator: ", ")) (uniqueness constraint)",
            column: column)
    }
}
