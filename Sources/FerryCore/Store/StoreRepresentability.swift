/// What the ferry store layout can hold. Models carry concepts that the layout cannot store
/// faithfully yet (entity inheritance, ordered to-many relationships, derived attributes); a
/// store refuses such a model rather than store it wrongly. Transient attributes are fine: they
/// simply have no column.
extension FerryLayout {
    /// Throws ``FerryError`` (`.invalidModel`) listing every entity and feature of `model` that a
    /// ferry store cannot represent yet.
    package func checkRepresentable(_ model: ObjectModel) throws {
        var problems: [FerryError] = []
        func refuse(_ message: String, at location: InputLocation?) {
            problems.append(
                FerryError(.invalidModel, "a ferry store cannot hold \(message) yet", at: location ?? model.location))
        }
        for entity in model.entities {
            if let parent = entity.parent {
                refuse("entity inheritance: entity '\(entity.name)' has parent entity '\(parent)'", at: entity.location)
            } else if entity.isAbstract {
                refuse("abstract entities: entity '\(entity.name)' is abstract", at: entity.location)
            }
            for attribute in entity.attributes where attribute.isDerived && attribute.isStored {
                refuse(
                    "derived attributes: '\(entity.name).\(attribute.name)' is derived from '\(attribute.derivation ?? "")'",
                    at: attribute.location)
            }
            for relationship in entity.relationships where relationship.isOrdered {
                refuse(
                    "ordered to-many relationships: '\(entity.name).\(relationship.name)' is ordered",
                    at: relationship.location)
            }
        }
        problems += backend.nameProblems(in: model, layout: self)
        if !problems.isEmpty { throw FerryErrors(problems) }
    }
}

extension ObjectModel {
    /// The model as a store holds it: transient attributes (which have no storage) left out.
    public var storedForm: ObjectModel {
        guard entities.contains(where: { $0.attributes.contains { !$0.isStored } }) else { return self }
        var copy = self
        for index in copy.entities.indices {
            copy.entities[index].attributes.removeAll { !$0.isStored }
        }
        return copy
    }
}

extension ModelBundle {
    /// The bundle with every version in its ``ObjectModel/storedForm``.
    public var storedForm: ModelBundle {
        var copy = self
        copy.versions = versions.map(\.storedForm)
        return copy
    }
}
