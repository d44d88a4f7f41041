/// How a migration step moves one entity mapping's objects: what `ferry plan` and
/// `ferry migrate --plan` show, and what ``MigrationEntityCopier`` does.
package enum MigrationStrategy: Sendable, Hashable {
    /// A new entity without a source: it starts empty (a policy's begin hook may still make objects).
    case startsEmpty
    /// One `INSERT … SELECT` statement: every value is computed by SQL.
    case insertSelect
    /// Row by row, the values computed in Swift, for the reason given (a custom policy,
    /// `distinct`, an expression or conversion SQL cannot compute exactly).
    case rowByRow(reason: String)

    /// `INSERT … SELECT`, `row by row (policy PhoneNormalizer)`, `starts empty`.
    package var description: String {
        switch self {
        case .startsEmpty: "starts empty"
        case .insertSelect: "INSERT … SELECT"
        case .rowByRow(let reason): "row by row (\(reason))"
        }
    }
}

extension EntityPlan {
    /// The one statement that moves this mapping's objects, or nil when they take the row path:
    /// a custom policy (`hasPolicy`), `distinct`, or a value SQL cannot compute exactly.
    func setBasedSQL(hasPolicy: Bool) -> SQLText? {
        guard !hasPolicy, mapping.distinct == nil else { return nil }
        return insertSelectSQL(into: MigrationStepScope.destinationSchema)
    }

    /// The strategy the copier takes for this plan.
    func strategy(hasPolicy: Bool) -> MigrationStrategy {
        if setBasedSQL(hasPolicy: hasPolicy) != nil { return .insertSelect }
        if let policy = mapping.policy, hasPolicy { return .rowByRow(reason: "policy \(policy)") }
        if mapping.distinct != nil { return .rowByRow(reason: "distinct values") }
        return .rowByRow(reason: "values computed in Swift")
    }
}

extension Migrator {
    /// The strategy of each entity mapping of each step of `steps` (keyed by mapping name), for
    /// a store read with `layout` that the steps write as `destination` describes.
    static func strategies(
        of steps: [MappingModel], sourceLayout: any StoreLayout, destination: MigrationDestination,
        options: MigrationOptions
    ) throws -> [[String: MigrationStrategy]] {
        var layout = sourceLayout
        var result: [[String: MigrationStrategy]] = []
        for mapping in steps {
            let scope = MigrationStepScope(
                mapping: mapping, options: options, now: 0, sourceLayout: layout,
                destinationLayout: destination.layout(for: mapping.destination), destinationKind: destination)
            var strategies: [String: MigrationStrategy] = [:]
            for entityMapping in mapping.entities {
                guard let sourceName = entityMapping.source, let source = mapping.source.entity(named: sourceName),
                    let target = mapping.destination.entity(named: entityMapping.destination)
                else {
                    strategies[entityMapping.name] =
                        entityMapping.policy.map { .rowByRow(reason: "policy \($0) makes the objects") } ?? .startsEmpty
                    continue
                }
                let plan = try EntityPlan(mapping: entityMapping, source: source, destination: target, step: scope)
                strategies[entityMapping.name] = plan.strategy(hasPolicy: entityMapping.policy != nil)
            }
            result.append(strategies)
            layout = scope.destinationLayout
        }
        return result
    }
}
