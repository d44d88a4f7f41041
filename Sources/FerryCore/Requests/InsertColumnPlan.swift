/// What a batch insert needs to know about each of its columns: the stored column, the
/// attribute's type (nil for a to-one relationship's key), its validator (nil when validation is
/// off or for a relationship) and its default. One definition for every backend's inserter.
package struct InsertColumnPlan {
    package var storedNames: [String] = []
    package var types: [AttributeType?] = []
    package var validators: [AttributeValidator?] = []
    package var defaults: [Value?] = []
    /// Per column, the to-one relationship it writes (nil for an attribute).
    package var relationships: [RelationshipDescription?] = []
    /// The to-one relationships among the columns, with their `?` parameter numbers (1-based).
    package var keyColumns: [(parameter: Int, relationship: RelationshipDescription)] = []

    /// Resolves `columns` of `entity` in a store of `layout`.
    ///
    /// - Throws: `.usage` for an unknown attribute or a relationship that is not a to-one stored
    ///   in the entity's table; `.invalidModel` for an attribute whose pattern does not compile.
    package init(
        columns: [InsertColumn], of entity: EntityDescription, model: ObjectModel, layout: any StoreLayout,
        validate: Bool
    ) throws {
        for column in columns {
            switch column {
            case .attribute(let name):
                guard let attribute = entity.attribute(named: name) else {
                    throw FerryError(.usage, "\(entity.name) has no attribute '\(name)'")
                }
                types.append(attribute.type)
                relationships.append(nil)
                defaults.append(attribute.defaultValue)
                storedNames.append(layout.column(forAttribute: name, in: entity))
                if validate {
                    do {
                        validators.append(try AttributeValidator(attribute))
                    } catch {
                        throw FerryError(.invalidModel, error.reason, at: attribute.location)
                    }
                } else {
                    validators.append(nil)
                }
            case .relationship(let name):
                guard let relationship = entity.relationship(named: name),
                    case .foreignKey(let column) = layout.storage(of: relationship, in: entity, model: model)
                else {
                    throw FerryError(
                        .usage, "\(entity.name).\(name) is not a to-one relationship stored in \(entity.name)")
                }
                types.append(nil)
                relationships.append(relationship)
                defaults.append(nil)
                validators.append(nil)
                keyColumns.append((storedNames.count + 1, relationship))
                storedNames.append(column)
            }
        }
    }

    /// Why `value` cannot be written into column `index`: a broken validation rule, or for a
    /// to-one relationship a value that is not an object's key (an integer) nor null; nil when
    /// it can. The same check on every backend, before the row reaches the store.
    package func problem(with value: Value, column index: Int) -> String? {
        if let validator = validators[index] { return validator.problem(with: value) }
        guard let relationship = relationships[index] else { return nil }
        switch value {
        case .null, .integer: return nil
        default:
            return
                "\(relationship.name) must be the key of a \(relationship.destination) (an integer), not the \(value.typeName) '\(value.description)'"
        }
    }
}
