/// Entity inheritance (Core Data's super-entities): an entity inherits every property,
/// uniqueness constraint and index of its ancestors.
extension ObjectModel {
    /// The entity's ancestors, nearest first; stops at an unknown parent or a cycle.
    public func ancestors(of entity: EntityDescription) -> [EntityDescription] {
        var chain: [EntityDescription] = []
        var seen: Set<String> = [entity.name]
        var next = entity.parent
        while let name = next, !seen.contains(name), let parent = self.entity(named: name) {
            chain.append(parent)
            seen.insert(name)
            next = parent.parent
        }
        return chain
    }

    /// The entities whose parent is `name`, in model order.
    public func subentities(of name: String) -> [EntityDescription] {
        entities.filter { $0.parent == name }
    }

    /// The attribute named `name` on the entity or its nearest ancestor that declares it.
    public func attribute(named name: String, in entity: EntityDescription) -> AttributeDescription? {
        entity.attribute(named: name) ?? ancestors(of: entity).lazy.compactMap { $0.attribute(named: name) }.first
    }

    /// The relationship named `name` on the entity or its nearest ancestor that declares it.
    public func relationship(named name: String, in entity: EntityDescription) -> RelationshipDescription? {
        entity.relationship(named: name) ?? ancestors(of: entity).lazy.compactMap { $0.relationship(named: name) }.first
    }

    /// The model with every sub-entity also declaring what it inherits (the properties and
    /// uniqueness constraints of its ancestors, root first, before its own; a name it declares
    /// itself is kept as declared), as Core Data's cached models list them. For reading a
    /// store's rows, where a sub-entity's objects have every inherited property: fetches,
    /// predicates and checks then see them on the sub-entity itself. Parents are kept, so the
    /// store's layout still knows the hierarchy.
    public var withInheritedProperties: ObjectModel {
        var model = self
        model.entities = entities.map { entity in
            let ancestors = self.ancestors(of: entity).reversed()
            guard !ancestors.isEmpty else { return entity }
            var flattened = entity
            let own = Set(entity.propertyNames)
            flattened.attributes = ancestors.flatMap(\.attributes).filter { !own.contains($0.name) } + entity.attributes
            flattened.relationships =
                ancestors.flatMap(\.relationships).filter { !own.contains($0.name) } + entity.relationships
            let inherited = ancestors.flatMap(\.uniquenessConstraints).filter {
                !entity.uniquenessConstraints.contains($0)
            }
            flattened.uniquenessConstraints = inherited + entity.uniquenessConstraints
            flattened.uniquenessConstraintLocations =
                Array(repeating: nil, count: inherited.count) + entity.uniquenessConstraintLocations
            return flattened
        }
        return model
    }

    /// The topmost of `entity` and its ancestors that has the property named `name`: the entity
    /// declaring it (in ``withInheritedProperties`` its sub-entities list it too). `entity`
    /// itself when no ancestor has it.
    package func declaringEntity(ofProperty name: String, in entity: EntityDescription) -> EntityDescription {
        ancestors(of: entity).last { $0.relationship(named: name) != nil || $0.attribute(named: name) != nil } ?? entity
    }

    /// True when `entity` is `ancestor` or one of its descendants.
    public func isKind(_ entity: String, of ancestor: String) -> Bool {
        guard let description = self.entity(named: entity) else { return false }
        return entity == ancestor || ancestors(of: description).contains { $0.name == ancestor }
    }
}
