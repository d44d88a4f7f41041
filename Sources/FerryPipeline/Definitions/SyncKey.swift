import FerryCore

/// The attributes that identify a record in a `mode: sync` import, and the step settings a
/// sync cannot work with: one rule for `ferry validate` and the run.
package enum SyncKey {
    /// The step's `key:`, else the attribute whose user info marks it as the primary key
    /// (`sync.isPrimaryKey`), else with `key_style: snake_case` an attribute named `remoteID`
    /// (Sync's convention), else the entity's first uniqueness constraint made only of
    /// attributes; an error (located at the step's key, mode or conflict policy) when there is none or the
    /// step's settings contradict a sync.
    package static func attributes(of step: ImportStep, entity: EntityDescription) throws(FerryError) -> [String] {
        if !step.atomic {
            throw FerryError(
                .invalidDefinition,
                "'mode: sync' runs in one transaction (its deletions need the whole source); remove 'atomic: false'",
                at: step.modeLocation ?? step.location)
        }
        if step.onConflictLocation != nil, step.onConflict != .update, step.onConflict != .replace {
            throw FerryError(
                .invalidDefinition,
                "'mode: sync' updates the rows it finds by key: 'on_conflict' may be update (the default) or replace, not \(step.onConflict.rawValue)",
                at: step.onConflictLocation)
        }
        if let key = step.key {
            for name in key where entity.attribute(named: name) == nil {
                throw FerryError(
                    .invalidDefinition,
                    "'key' names '\(name)', which is not an attribute of '\(entity.name)'\(Suggestions.didYouMean(name, in: entity.attributes.map(\.name)))",
                    at: step.keyLocation)
            }
            if Set(key).count != key.count {
                throw FerryError(
                    .invalidDefinition, "'key' names an attribute twice: \(key.joined(separator: ", "))",
                    at: step.keyLocation)
            }
            return key
        }
        if let key = modelKey(of: entity, keyStyle: step.keyStyle) { return key }
        throw FerryError(
            .invalidDefinition,
            "'mode: sync' needs a key to match the source's records with the store's: '\(entity.name)' has no uniqueness constraint of attributes; add 'key: [attribute]' to the step or 'unique:' to the model",
            at: step.modeLocation ?? step.location)
    }

    /// The key the model gives an entity: the attribute whose user info marks it as the primary
    /// key, else with `key_style: snake_case` `remoteID`, else the first uniqueness constraint
    /// made only of attributes; nil when there is none. How a sync and nested objects match rows.
    package static func modelKey(of entity: EntityDescription, keyStyle: SourceKeyStyle) -> [String]? {
        if let primary = entity.attributes.first(where: SourceKeyStyle.isPrimaryKey) {
            return [primary.name]
        }
        if keyStyle == .snakeCase, entity.attribute(named: "remoteID") != nil {
            return ["remoteID"]
        }
        return entity.uniquenessConstraints.first(where: { $0.allSatisfy { entity.attribute(named: $0) != nil } })
    }
}
