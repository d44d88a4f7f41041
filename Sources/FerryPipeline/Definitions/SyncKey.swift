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
            try checkUnique(key, of: entity, keyStyle: step.keyStyle, at: step.keyLocation ?? step.location)
            return key
        }
        if let key = modelKey(of: entity, keyStyle: step.keyStyle) { return key }
        throw FerryError(
            .invalidDefinition,
            "'mode: sync' needs a key to match the source's records with the store's: '\(entity.name)' has no uniqueness constraint of attributes; add 'key: [attribute]' to the step or 'unique:' to the model",
            at: step.modeLocation ?? step.location)
    }

    /// Refuses a sync key that does not identify one object: the deletions would take every row
    /// sharing a source record's key values but the one its record matched (a mistyped `key:`
    /// deleted 998 of 1,000 rows). A key is unique when it is exactly the attributes of one of
    /// the entity's uniqueness constraints (in any order), or the entity's own key
    /// (``modelKey(of:keyStyle:)``: the attribute its user info marks as the primary key, or
    /// `remoteID` with `key_style: snake_case`).
    package static func checkUnique(
        _ key: [String], of entity: EntityDescription, keyStyle: SourceKeyStyle, at location: InputLocation?
    ) throws(FerryError) {
        let names = Set(key)
        if entity.uniquenessConstraints.contains(where: { Set($0) == names }) { return }
        if let own = modelKey(of: entity, keyStyle: keyStyle), Set(own) == names { return }
        let constraints = entity.uniquenessConstraints.filter { $0.allSatisfy { entity.attribute(named: $0) != nil } }
        let known =
            constraints.isEmpty
            ? "'\(entity.name)' has no uniqueness constraint of attributes"
            : "the uniqueness constraints of '\(entity.name)' are \(constraints.map { "[\($0.joined(separator: ", "))]" }.joined(separator: ", "))"
        throw FerryError(
            .invalidDefinition,
            "'mode: sync' needs a key that identifies one \(entity.name): [\(key.joined(separator: ", "))] is not unique in the model (\(known)); rows sharing a key value with a record of the source would be deleted",
            at: location,
            notes: [
                "use the attributes of a uniqueness constraint as 'key' (--key), or declare the key unique in the model ('unique:' on the entity, or 'unique: true' on the attribute)"
            ])
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
