import FerryCore

/// Which parts of a version step its mapping (a mapping file or an Xcode mapping model) states
/// itself, rather than leaving them to inference: what a diff picture marks `mapped`.
package struct MappingCoverage: Sendable, Hashable {
    /// Whether the step has a mapping at all (then inference does not refuse the step).
    package var hasMapping: Bool
    /// Destination entities the mapping has an entry for.
    package var entities: Set<String>
    /// `Entity.property` for each attribute and relationship the mapping sets.
    package var properties: Set<String>

    /// No mapping: every change is inferred, or needs a mapping.
    package static let none = MappingCoverage(hasMapping: false, entities: [], properties: [])

    /// A step without a mapping, or with the parts of it a file wrote.
    package init(hasMapping: Bool, entities: Set<String>, properties: Set<String>) {
        self.hasMapping = hasMapping
        self.entities = entities
        self.properties = properties
    }

    /// What `mapping` states: its entries that carry a location in a file (inference's entries
    /// have none).
    package init(mapping: MappingModel) {
        hasMapping = true
        entities = []
        properties = []
        for entity in mapping.entities where entity.location != nil {
            entities.insert(entity.destination)
            for attribute in entity.attributes where attribute.location != nil {
                properties.insert("\(entity.destination).\(attribute.destination)")
            }
            for relationship in entity.relationships where relationship.location != nil {
                properties.insert("\(entity.destination).\(relationship.destination)")
            }
        }
    }

    /// Several steps' coverage, as one range draws them.
    package init(merging steps: [MappingCoverage]) {
        hasMapping = steps.contains { $0.hasMapping }
        entities = steps.reduce(into: []) { $0.formUnion($1.entities) }
        properties = steps.reduce(into: []) { $0.formUnion($1.properties) }
    }

    /// Who does `change`: the mapping when it states the property (or, for a new or renamed
    /// entity, the entity), else inference, else the mapping when the step has one, else
    /// nobody yet.
    package func origin(of change: ModelChange) -> DiagramMark.Origin {
        let stated: Bool
        if let property = change.property {
            stated = properties.contains("\(change.entity).\(property)")
        } else {
            stated = [.entityAdded, .entityRenamed].contains(change.kind) && entities.contains(change.entity)
        }
        if stated { return .mapped }
        if change.isInferable { return .inferred }
        return hasMapping ? .mapped : .needsMapping
    }
}

extension DiagramMark.Kind {
    /// The mark a change draws.
    init(_ kind: ModelChange.Kind) {
        switch kind {
        case .entityAdded, .attributeAdded, .relationshipAdded: self = .added
        case .entityRemoved, .attributeRemoved, .relationshipRemoved: self = .removed
        case .entityRenamed, .attributeRenamed, .relationshipRenamed: self = .renamed
        default: self = .changed
        }
    }

    /// Which of two kinds a part with both shows: added and removed over renamed over changed.
    var rank: Int {
        switch self {
        case .added, .removed: 2
        case .renamed: 1
        case .changed: 0
        }
    }
}

extension DiagramMark.Origin {
    /// Which of two origins a part with both shows: the one that needs the most.
    var rank: Int {
        switch self {
        case .inferred: 0
        case .mapped: 1
        case .needsMapping: 2
        }
    }
}

extension DiagramMark {
    /// This mark and `other` on one part: the stronger kind and origin, both details.
    func merged(with other: DiagramMark) -> DiagramMark {
        DiagramMark(
            kind: other.kind.rank > kind.rank ? other.kind : kind,
            origin: other.origin.rank > origin.rank ? other.origin : origin, detail: "\(detail); \(other.detail)")
    }
}

extension Optional where Wrapped == DiagramMark {
    /// Adds `mark` to whatever mark is there.
    mutating func add(_ mark: DiagramMark) {
        self = self.map { $0.merged(with: mark) } ?? mark
    }
}

extension ModelDiagram {
    /// The picture of `newer` with every change of `diff` marked, and what `older` had that
    /// `newer` lost drawn as removed.
    ///
    /// `older` and `newer` are the versions as declared (a Core Data diff compares sub-entities
    /// with the properties they inherit; the picture draws each property on the entity that
    /// declares it). `coverage` says which changes the step's mapping makes.
    package init(diff: ModelDiff, older: ObjectModel, newer: ObjectModel, coverage: MappingCoverage) {
        self.init(model: newer)
        title = "\(newer.name) \(older.version) → \(newer.version)"
        for change in diff.changes {
            let mark = DiagramMark(kind: .init(change.kind), origin: coverage.origin(of: change), detail: change.detail)
            apply(change, mark, diff: diff, older: older, newer: newer)
        }
        legend = DiagramMark.Kind.allCases.filter { kind in
            entities.contains { entity in
                entity.mark?.kind == kind || entity.attributes.contains { $0.mark?.kind == kind }
            }
                || relationships.contains { $0.mark?.kind == kind }
        }
    }

    private mutating func apply(
        _ change: ModelChange, _ mark: DiagramMark, diff: ModelDiff, older: ObjectModel, newer: ObjectModel
    ) {
        let olderName = diff.entitySources[change.entity] ?? change.entity
        if change.kind == .entityRemoved, let removed = older.entity(named: change.entity) {
            var entity = Self.entity(removed)
            entity.mark = mark
            entities.append(entity)
            for relationship in removed.relationships {
                addRemoved(relationship, of: removed.name, mark: mark, diff: diff, older: older)
            }
            return
        }
        guard let index = entities.firstIndex(where: { $0.name == change.entity }) else { return }
        guard let property = change.property else {
            entities[index].mark.add(mark)
            return
        }
        if let attribute = entities[index].attributes.firstIndex(where: { $0.name == property }) {
            entities[index].attributes[attribute].mark.add(mark)
        } else if let relationship = relationships.firstIndex(where: { $0.has(property, on: change.entity) }) {
            relationships[relationship].mark.add(mark)
        } else if mark.kind == .removed, let old = older.entity(named: olderName),
            let attribute = old.attribute(named: property)
        {
            var drawn = Self.entity(EntityDescription(name: old.name, attributes: [attribute])).attributes[0]
            drawn.mark = mark
            entities[index].attributes.append(drawn)
        } else if mark.kind == .removed, let old = older.entity(named: olderName),
            let relationship = old.relationship(named: property)
        {
            addRemoved(relationship, of: change.entity, mark: mark, diff: diff, older: older)
        } else if let entity = newer.entity(named: change.entity),
            newer.ancestors(of: entity).contains(where: { $0.propertyNames.contains(property) })
        {
            // Inherited: the ancestor that declares it shows its own change.
            return
        } else {
            var entityMark = mark
            entityMark.detail = "\(property): \(mark.detail)"
            entities[index].mark.add(entityMark)
        }
    }

    /// Draws a relationship `older` had (on `entity`, a name of the picture) as removed, unless
    /// it or its inverse is drawn already.
    private mutating func addRemoved(
        _ relationship: RelationshipDescription, of entity: String, mark: DiagramMark, diff: ModelDiff,
        older: ObjectModel
    ) {
        let newerName = { (name: String) in diff.entitySources.first { $0.value == name }?.key ?? name }
        let destination =
            entities.contains { $0.name == relationship.destination }
            ? relationship.destination : newerName(relationship.destination)
        guard entities.contains(where: { $0.name == destination }),
            !relationships.contains(where: { drawn in
                drawn.has(relationship.name, on: entity)
                    || (relationship.inverse.map { drawn.has($0, on: destination) } ?? false)
            })
        else { return }
        let inverse = relationship.inverse.flatMap { name in
            older.entity(named: relationship.destination).flatMap { older.relationship(named: name, in: $0) }
        }
        relationships.append(
            Relationship(
                forward: Self.end(relationship, of: entity), destination: destination,
                inverse: inverse.map { Self.end($0, of: destination) }, mark: mark))
    }
}

extension ModelDiagram.Relationship {
    /// Whether `name` on `entity` is one of this line's ends.
    func has(_ name: String, on entity: String) -> Bool {
        (forward.entity == entity && forward.name == name) || (inverse?.entity == entity && inverse?.name == name)
    }
}
