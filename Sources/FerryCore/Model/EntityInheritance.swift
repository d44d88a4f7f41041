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

    /// True when `entity` is `ancestor` or one of its descendants.
    public func isKind(_ entity: String, of ancestor: String) -> Bool {
        guard let description = self.entity(named: entity) else { return false }
        return entity == ancestor || ancestors(of: description).contains { $0.name == ancestor }
    }
}
