import Foundation

/// Changes attributes of every object of an entity that a predicate selects, with one set-based
/// `UPDATE … SET … WHERE …`, in the spirit of Core Data's `NSBatchUpdateRequest`.
///
/// ```swift
/// var request = BatchUpdateRequest(
///     entity: "Customer", predicate: try Predicate(format: "email ENDSWITH[c] '@OLD.example'"),
///     propertiesToUpdate: [
///         "active": .constant(.bool(false)),
///         "email": .expression(try Expression.parse("lowercase(trim(email))", bareNamesAreAttributes: true)),
///     ])
/// let result = try store.execute(request)          // result.updated: records changed
/// ```
///
/// An expression is a value expression (docs/expressions.md) over the object's values before
/// the update; parse it with `bareNamesAreAttributes: true` so that `email` reads the object's
/// attribute. It runs as SQL when SQLite computes exactly what ferry would, and is otherwise
/// evaluated by ferry per object before anything is written.
///
/// New values are validated unless ``validate`` is false: a constant once, against the
/// attribute's type, optionality and rules; an expression with one set-based check query inside
/// the transaction, before anything is written. A failure throws `.validation` naming the
/// attribute, the rule, how many records break it and the first primary keys; a uniqueness
/// violation throws `.constraint`. Either way nothing is changed.
public struct BatchUpdateRequest: Sendable {
    /// The new value of one attribute.
    public enum PropertyValue: Sendable {
        /// A value, converted to the attribute's type (`.string("42")` fits an integer).
        case constant(Value)
        /// A value expression over the object's attributes and to-one key paths (their values
        /// before the update), parsed with `bareNamesAreAttributes: true`.
        case expression(Expression)
    }

    /// The entity whose objects are updated.
    public var entity: String
    /// The objects to update (all by default).
    public var predicate: Predicate
    /// Attribute name → new value (relationships cannot be set, as with Core Data).
    public var propertiesToUpdate: [String: PropertyValue]
    /// Check the new values against the model's rules (on by default).
    public var validate: Bool
    /// Where each property's value was written (a job's `set:` entry), for error messages.
    public var propertyLocations: [String: InputLocation]
    /// Where the request was written (a job step), for errors about the entity.
    public var location: InputLocation?

    /// An update of the `entity` objects that `predicate` selects, setting `propertiesToUpdate`.
    ///
    /// ```swift
    /// let request = BatchUpdateRequest(entity: "Order", predicate: try Predicate(format: "status == 'open'"),
    ///                                  propertiesToUpdate: ["status": .constant(.string("closed"))])
    /// let result = try store.execute(request)      // result.updated
    /// ```
    public init(
        entity: String, predicate: Predicate = .constant(true), propertiesToUpdate: [String: PropertyValue],
        validate: Bool = true,
        propertyLocations: [String: InputLocation] = [:], location: InputLocation? = nil
    ) {
        self.entity = entity
        self.predicate = predicate
        self.propertiesToUpdate = propertiesToUpdate
        self.validate = validate
        self.propertyLocations = propertyLocations
        self.location = location
    }
}

/// What a batch update did.
public struct BatchUpdateResult: Sendable, Hashable {
    /// Records the predicate selected, all of which were updated.
    public var updated: Int

    /// A result of `updated` objects.
    public init(updated: Int) { self.updated = updated }
}

extension Store {
    /// Runs a batch update in one write transaction (or inside the caller's, as a savepoint).
    /// With `dryRun`, everything runs, including validation, and is then rolled back: the result
    /// says how many records would change.
    public func execute(_ request: BatchUpdateRequest, dryRun: Bool = false) throws -> BatchUpdateResult {
        let plan = try request.plan(model: model, layout: layout)
        return try rollingBackDatabaseWhen(dryRun) { database in try plan.run(on: database) }
    }

    /// Runs `body` in a write transaction on the store's session, whatever its backend; when
    /// `rollBack` is true, undoes it and still returns its result.
    func rollingBackDatabaseWhen<T>(_ rollBack: Bool, _ body: (any DatabaseConnection) throws -> T) throws -> T {
        var result: T?
        do {
            try writeDatabase { database in
                result = try body(database)
                if rollBack { throw DryRunRollback() }
            }
        } catch is DryRunRollback {}
        guard let result else { throw FerryError(.internal, "a batch request returned no result") }
        return result
    }
}

/// Thrown out of a transaction to roll a dry run back.
struct DryRunRollback: Error {}

extension BatchUpdateRequest {
    /// Checks the request against `model` without touching any store: entity, attributes,
    /// predicate, constants (types and rules) and expressions (names and types). Throws the
    /// first problem.
    public func check(model: ObjectModel) throws(FerryError) {
        // What is valid does not depend on the layout; ferry's serves to compile it.
        _ = try plan(model: model, layout: FerryLayout())
    }

    func plan(model: ObjectModel, layout: any StoreLayout) throws(FerryError) -> BatchUpdatePlan {
        guard let entity = model.entity(named: self.entity) else {
            throw FerryError(
                .invalidDefinition,
                "unknown entity '\(self.entity)' in model '\(model.name)'\(Suggestions.didYouMean(self.entity, in: model.entityNames))",
                at: location)
        }
        guard !propertiesToUpdate.isEmpty else {
            throw FerryError(.invalidDefinition, "the update of \(entity.name) sets no attributes", at: location)
        }
        let filter = try predicate.filter(for: entity, model: model, layout: layout, alias: "t0")
        let where_ = filter.sql
        let residual = filter.isExact ? nil : predicate
        let now = DateCoding.nowMilliseconds()
        let key = layout.dialect.quote(layout.keyColumn)
        var evaluated = EvaluatedSetValues()
        var assignments: [String] = []
        var setArguments: [DatabaseValue] = []
        var checks: [BatchUpdatePlan.Check] = []
        var expressionAttributes: [String] = []
        var constantAssignments: [String] = []
        var constantArguments: [DatabaseValue] = []
        var perObject: [(column: String, expression: SetExpression)] = []
        // Attribute order first, so that SQL text and messages do not depend on dictionary order.
        let unknown = propertiesToUpdate.keys.filter { entity.attribute(named: $0) == nil }.sorted()
        if let name = unknown.first {
            let message: String
            if let relationship = entity.relationship(named: name) {
                message =
                    "'\(name)' is a relationship of \(entity.name); a batch update sets attributes only (relationship '\(relationship.name)' cannot be set)"
            } else {
                message =
                    "\(entity.name) has no attribute '\(name)'\(Suggestions.didYouMean(name, in: entity.attributes.map(\.name)))"
            }
            throw FerryError(.invalidDefinition, message, at: propertyLocations[name] ?? location)
        }
        for attribute in entity.attributes {
            guard let value = propertiesToUpdate[attribute.name] else { continue }
            let column = layout.quotedColumn(forAttribute: attribute.name, in: entity)
            switch value {
            case .constant(let constant):
                let converted: Value
                switch Coercion.convert(constant, to: attribute.type) {
                case .success(let value): converted = value
                case .failure(let failure):
                    throw FerryError(
                        .validation, "cannot set \(entity.name).\(attribute.name) to '\(constant)': \(failure.reason)",
                        at: propertyLocations[attribute.name] ?? location)
                }
                if validate {
                    let validator: AttributeValidator
                    do {
                        validator = try AttributeValidator(attribute)
                    } catch {
                        throw FerryError(.invalidModel, error.reason, at: attribute.location)
                    }
                    if let problem = validator.problem(with: converted) {
                        throw FerryError(
                            .validation, "cannot set \(entity.name).\(attribute.name) to '\(converted)': \(problem)",
                            at: propertyLocations[attribute.name] ?? location)
                    }
                }
                assignments.append("\(column) = ?")
                setArguments.append(layout.valueCoding.encode(converted))
                constantAssignments.append("\(column) = ?")
                constantArguments.append(layout.valueCoding.encode(converted))
            case .expression(let expression):
                expressionAttributes.append(attribute.name)
                let value: BatchUpdatePlan.Value
                let bound = try SetExpression.bind(
                    expression, to: attribute, of: entity, model: model, layout: layout, now: now)
                perObject.append((column, bound))
                switch bound.form {
                case .sql(let sql, let arguments): value = BatchUpdatePlan.Value(sql: sql, arguments: arguments)
                case .evaluated(let bound, let keyPathSQL):
                    value = BatchUpdatePlan.Value(
                        sql: evaluated.add(bound, keyPathSQL: keyPathSQL, key: key), arguments: [])
                }
                assignments.append("\(column) = \(value.sql)")
                setArguments += value.arguments
                if validate {
                    checks.append(BatchUpdatePlan.Check(attribute: attribute, value: value))
                }
            }
        }
        // Each change of an object counts in its version (Core Data's Z_OPT).
        if let increment = layout.versionIncrement { assignments.append(increment) }
        let table = layout.quotedTable(for: entity)
        return BatchUpdatePlan(
            entity: entity, model: model, layout: layout, table: table, key: key, evaluated: evaluated,
            assignments: assignments.joined(separator: ", "), setArguments: setArguments,
            predicate: where_, residual: residual, checks: checks, expressionAttributes: expressionAttributes,
            evaluatedByFerry: EvaluatedUpdate(
                constantAssignments: constantAssignments, constantArguments: constantArguments, values: perObject,
                validate: validate),
            location: location)
    }
}

/// A batch update whose `set:` expressions ferry evaluates per object, for an engine whose SQL
/// has none of ferry's expression functions: the constant assignments, and each attribute's
/// expression.
package struct EvaluatedUpdate {
    /// `column = ?` assignments of the constant values, with their arguments.
    package var constantAssignments: [String]
    package var constantArguments: [DatabaseValue]
    /// The quoted column of each attribute set by an expression, and the expression.
    package var values: [(column: String, expression: SetExpression)]
    package var validate: Bool
}

/// A batch update compiled for one model: the UPDATE statement, the expressions ferry evaluates
/// per object, and the checks of its expression values.
package struct BatchUpdatePlan {
    /// The SQL of an expression's new value over the row `t0`, with its bound arguments.
    package struct Value {
        var sql: String
        var arguments: [DatabaseValue]
    }

    package struct Check {
        var attribute: AttributeDescription
        var value: Value
    }

    /// One rule of one attribute as SQL over the checked value's column.
    struct Rule {
        var attribute: String
        var label: String
        var violation: String
        var arguments: [DatabaseValue]
    }

    package var entity: EntityDescription
    package var model: ObjectModel
    package var layout: any StoreLayout
    package var table: String
    /// The quoted key column.
    package var key: String
    /// The `set:` expressions ferry evaluates per object before the update.
    package var evaluated: EvaluatedSetValues
    /// `column = value` assignments, with `?` for ``setArguments``.
    package var assignments: String
    package var setArguments: [DatabaseValue]
    package var predicate: PredicateSQL
    /// On PostgreSQL, a predicate ``predicate`` only approximates (``PredicateFilter``):
    /// ferry selects the objects and the update goes by key.
    package var residual: Predicate?
    package var checks: [Check]
    /// Attributes set by an expression (compiled with SQLite's functions).
    package var expressionAttributes: [String]
    /// For an engine without ferry's expression functions, when ``expressionAttributes`` is not
    /// empty: the update with every expression evaluated by ferry per object.
    package var evaluatedByFerry: EvaluatedUpdate
    package var location: InputLocation?

    package var updateSQL: String { "UPDATE \(table) AS t0 SET \(assignments) WHERE \(predicate.sql)" }
    package var updateArguments: [DatabaseValue] { setArguments + predicate.arguments }

    func run(on database: any DatabaseConnection) throws -> BatchUpdateResult {
        try database.engineSession().runBatchUpdate(self)
    }

    /// On SQLite: values checked set-based before the one `UPDATE`.
    func run(onSQLite connection: Connection) throws -> BatchUpdateResult {
        try evaluated.fill(on: connection, entity: entity, layout: layout, key: key, predicate: predicate)
        try validate(on: connection)
        let updated: Int
        do {
            try connection.execute(updateSQL, updateArguments)
            updated = connection.changes
        } catch let error as FerryError {
            throw translate(error)
        }
        try evaluated.drop(on: connection)
        return BatchUpdateResult(updated: updated)
    }

    // MARK: - Set-based validation of expression values

    /// Runs one query over the selected records that counts, for every rule of every expression
    /// attribute, the records whose new value breaks it.
    private func validate(on connection: Connection) throws {
        var values: [String] = []
        var valueArguments: [DatabaseValue] = []
        var rules: [Rule] = []
        for (index, check) in checks.enumerated() {
            let column = "v\(index)"
            values.append("\(check.value.sql) AS \(column)")
            valueArguments += check.value.arguments
            rules += Self.rules(for: check.attribute, column: column, layout: layout)
        }
        guard !rules.isEmpty else { return }
        let source =
            "(SELECT t0.\(key) AS ferry_pk, \(values.joined(separator: ", ")) FROM \(predicate.from) WHERE \(predicate.sql))"
        let sums = rules.map { "COALESCE(SUM(CASE WHEN \($0.violation) THEN 1 ELSE 0 END), 0)" }
        let ruleArguments = rules.flatMap(\.arguments)
        let counts = try connection.rows(
            "SELECT \(sums.joined(separator: ", ")) FROM \(source)",
            ruleArguments + valueArguments + predicate.arguments)
        guard let row = counts.first else { return }
        for (index, rule) in rules.enumerated() {
            let count = row[index].int64 ?? 0
            guard count > 0 else { continue }
            let keys = try connection.rows(
                "SELECT ferry_pk FROM \(source) WHERE \(rule.violation) ORDER BY ferry_pk LIMIT 5",
                valueArguments + predicate.arguments + rule.arguments
            ).compactMap { $0.first?.int64 }
            let shown = keys.map(String.init).joined(separator: ", ") + (count > Int64(keys.count) ? ", …" : "")
            throw FerryError(
                .validation,
                "the new value of \(entity.name).\(rule.attribute) breaks '\(rule.label)' for \(count) record\(count == 1 ? "" : "s") (ferry_pk \(shown)); nothing was changed",
                at: location)
        }
    }

    /// The rules of an attribute as SQL conditions over `column` that hold when a value breaks them.
    static func rules(for attribute: AttributeDescription, column v: String, layout: any StoreLayout) -> [Rule] {
        let isInteger = layout.dialect.isInteger(v)
        var rules: [Rule] = []
        func add(_ label: String, _ violation: String, _ arguments: [DatabaseValue] = []) {
            rules.append(Rule(attribute: attribute.name, label: label, violation: violation, arguments: arguments))
        }
        if !attribute.isOptional { add("optional: false", "\(v) IS NULL") }
        if let range = attribute.type.integerRange {
            if attribute.type == .int64 {
                add("type: int64", "\(v) IS NOT NULL AND NOT \(isInteger)")
            } else {
                add(
                    "type: \(attribute.type.rawValue)",
                    "\(v) IS NOT NULL AND (NOT \(isInteger) OR \(v) < ? OR \(v) > ?)",
                    [.integer(range.lowerBound), .integer(range.upperBound)])
            }
        }
        // The validation rules: the conditions verify uses, so an update keeps what verify accepts.
        for condition in RuleCondition.conditions(for: attribute, value: v, coding: layout.valueCoding) {
            add(label(of: condition.rule), condition.violation, condition.arguments)
        }
        return rules
    }

    /// How a validation rule is named in messages: `min: 0`, `pattern: ^[A-Z]+$`.
    package static func label(of rule: RuleCondition.Rule) -> String {
        switch rule {
        case .minValue(let min): return "min: \(min)"
        case .maxValue(let max): return "max: \(max)"
        case .minLength(let min): return "min_length: \(min)"
        case .maxLength(let max): return "max_length: \(max)"
        case .pattern(let pattern): return "pattern: \(pattern)"
        }
    }

    // MARK: - Constraint errors

    /// A uniqueness or NOT NULL failure of the UPDATE, in the model's words.
    package func translate(_ error: FerryError) -> FerryError {
        let columns: [String]
        let isUnique: Bool
        let isNotNull: Bool
        if let failure = error.underlying as? any ConstraintFailure {
            columns = failure.constraintColumns(in: error.message, table: entity.name)
            isUnique = failure.isUniqueConstraint
            isNotNull = failure.isNotNullConstraint
        } else {
            return error
        }
        if isUnique {
            return FerryError(
                .constraint,
                "the update would give two \(entity.name) objects the same \(columns.joined(separator: " and ")) (uniqueness constraint on \(columns.joined(separator: ", "))); nothing was changed",
                at: location)
        }
        if isNotNull {
            return FerryError(
                .constraint,
                "the update would set \(entity.name).\(columns.joined(separator: ", ")), which is required, to nil; nothing was changed",
                at: location)
        }
        return error
    }
}
