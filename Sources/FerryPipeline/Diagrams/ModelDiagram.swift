import FerryCore

/// The picture of one model version, ready to draw: entities with their attributes, each
/// relationship pair once, and inheritance (`ferry model graph`, `ferry model diff --format`).
///
/// Entities keep the model's order, attributes and relationships their entity's order, so the
/// renderers (``MermaidDiagram``, ``DOTDiagram``) write the same text for the same model. A diff
/// picture also carries a ``DiagramMark`` on what changed, and the removed parts of the older
/// version.
package struct ModelDiagram: Sendable, Hashable {
    /// One attribute as drawn: `name: type?`, then `unique`, `transient`, `derived`.
    package struct Attribute: Sendable, Hashable {
        /// The attribute's name.
        package var name: String
        /// Core Data's type name for an Xcode model's attribute, ferry's otherwise.
        package var type: String
        /// Whether the attribute may be nil.
        package var isOptional: Bool
        /// Whether a uniqueness constraint holds this attribute alone (a key imports match on).
        package var isUnique: Bool
        /// Whether the attribute is transient (never stored).
        package var isTransient: Bool
        /// Whether the attribute is derived from other values.
        package var isDerived: Bool
        /// How it differs from the previous version, in a diff.
        package var mark: DiagramMark?

        /// `name: type?` followed by the markers (`unique`, `transient`, `derived`).
        package var text: String {
            var text = "\(name): \(type)\(isOptional ? "?" : "")"
            for (flag, word) in [(isUnique, "unique"), (isTransient, "transient"), (isDerived, "derived")] where flag {
                text += " \(word)"
            }
            return text
        }
    }

    /// One entity as drawn.
    package struct Entity: Sendable, Hashable {
        /// The entity's name.
        package var name: String
        /// The parent entity's name, in an inheritance hierarchy.
        package var parent: String?
        /// Whether the entity is abstract (no instances of its own).
        package var isAbstract: Bool
        /// The entity's own attributes (its ancestors draw theirs).
        package var attributes: [Attribute]
        /// Uniqueness constraints over several properties, or over a relationship (one-attribute
        /// constraints mark the attribute instead).
        package var uniqueness: [[String]]
        /// How it differs from the previous version, in a diff.
        package var mark: DiagramMark?
    }

    /// One end of a relationship: the relationship as declared on its entity.
    package struct End: Sendable, Hashable {
        /// The entity that declares the relationship.
        package var entity: String
        /// The relationship's name.
        package var name: String
        /// Whether it is a to-many relationship.
        package var isToMany: Bool
        /// Whether it may be empty.
        package var isOptional: Bool
        /// A to-many relationship's minimum count.
        package var minCount: Int?
        /// A to-many relationship's maximum count.
        package var maxCount: Int?
        /// What deleting an object of ``entity`` does to the objects this relationship holds.
        package var deleteRule: DeleteRule
        /// Whether a to-many relationship keeps an order.
        package var isOrdered: Bool

        /// How many objects this end holds: `1`, `0..1`, `0..*`, `1..*`, `2..5`.
        package var multiplicity: String {
            guard isToMany else { return isOptional ? "0..1" : "1" }
            let low = max(minCount ?? 0, isOptional ? 0 : 1)
            return "\(low)..\(maxCount.map(String.init) ?? "*")"
        }

        /// `name (delete rule)`, with `ordered` for an ordered to-many.
        package var text: String {
            "\(name)\(isOrdered ? " ordered" : "") (\(deleteRule.rawValue))"
        }
    }

    /// A relationship and its inverse, drawn as one line from ``forward``'s entity to its
    /// destination.
    package struct Relationship: Sendable, Hashable {
        /// The relationship met first in model order.
        package var forward: End
        /// Where ``forward`` points.
        package var destination: String
        /// The inverse relationship, declared on ``destination``; nil for a one-way relationship.
        package var inverse: End?
        /// How it differs from the previous version, in a diff.
        package var mark: DiagramMark?

        /// `orders (deny) / customer (nullify)`: both ends' names and delete rules.
        package var text: String {
            [forward.text, inverse?.text].compactMap { $0 }.joined(separator: " / ")
        }
    }

    /// What the diagram shows: `Shop 3`.
    package var title: String
    /// The entities in model order (removed ones last, in a diff).
    package var entities: [Entity]
    /// Every relationship pair once.
    package var relationships: [Relationship]
    /// The legend of a diff picture: which marks appear, in a fixed order; empty for a plain one.
    package var legend: [DiagramMark.Kind] = []

    /// The picture of `model` (without marks).
    package init(model: ObjectModel) {
        title = "\(model.name) \(model.version)"
        entities = model.entities.map(Self.entity)
        relationships = Self.relationships(of: model)
    }

    /// An entity as drawn, without marks.
    static func entity(_ entity: EntityDescription) -> Entity {
        let single = Set(entity.uniquenessConstraints.compactMap { $0.count == 1 ? $0.first : nil })
        let attributeNames = Set(entity.attributes.map(\.name))
        return Entity(
            name: entity.name, parent: entity.parent, isAbstract: entity.isAbstract,
            attributes: entity.attributes.map { attribute in
                Attribute(
                    name: attribute.name, type: attribute.coreDataKind?.typeName ?? attribute.type.rawValue,
                    isOptional: attribute.isOptional, isUnique: single.contains(attribute.name),
                    isTransient: attribute.isTransient, isDerived: attribute.isDerived)
            },
            uniqueness: entity.uniquenessConstraints.filter { $0.count > 1 || !attributeNames.contains($0.first ?? "") }
        )
    }

    /// An end as drawn.
    static func end(_ relationship: RelationshipDescription, of entity: String) -> End {
        End(
            entity: entity, name: relationship.name, isToMany: relationship.isToMany,
            isOptional: relationship.isOptional, minCount: relationship.minCount, maxCount: relationship.maxCount,
            deleteRule: relationship.deleteRule, isOrdered: relationship.isOrdered)
    }

    /// Every relationship of `model` once: a pair is drawn where its first end appears in model
    /// order, and its inverse is not drawn again.
    static func relationships(of model: ObjectModel) -> [Relationship] {
        var drawn: Set<String> = []
        var relationships: [Relationship] = []
        for entity in model.entities {
            for relationship in entity.relationships where !drawn.contains("\(entity.name).\(relationship.name)") {
                drawn.insert("\(entity.name).\(relationship.name)")
                var inverse: End?
                if let name = relationship.inverse,
                    let target = model.entity(named: relationship.destination),
                    let declared = model.relationship(named: name, in: target),
                    !drawn.contains("\(target.name).\(name)")
                {
                    drawn.insert("\(target.name).\(name)")
                    inverse = end(declared, of: target.name)
                }
                relationships.append(
                    Relationship(
                        forward: end(relationship, of: entity.name), destination: relationship.destination,
                        inverse: inverse))
            }
        }
        return relationships
    }
}

/// What a diff picture marks on an entity, attribute or relationship: how it differs from the
/// older version, and whether inference does it or a mapping must.
package struct DiagramMark: Sendable, Hashable {
    /// The kind of difference, which picks the colour.
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        /// New in the newer version.
        case added
        /// Gone from the newer version (drawn from the older one).
        case removed
        /// Renamed (`renamed_from`).
        case renamed
        /// Kept, with a different type, optionality, rule or shape.
        case changed

        /// The fill colour of a marked entity or row.
        package var fill: String {
            switch self {
            case .added: "#d9f2d9"
            case .removed: "#f8d7da"
            case .renamed: "#d6e6f8"
            case .changed: "#fdf0c4"
            }
        }

        /// The line colour of a marked entity, row or relationship.
        package var stroke: String {
            switch self {
            case .added: "#2e7d32"
            case .removed: "#c62828"
            case .renamed: "#1565c0"
            case .changed: "#b26a00"
            }
        }
    }

    /// Who carries the change out when the store is migrated.
    package enum Origin: String, Sendable, Hashable {
        /// Lightweight migration infers it.
        case inferred
        /// The step's mapping (a mapping file or an Xcode mapping model) does it.
        case mapped
        /// Inference refuses it and no mapping was found: `ferry migrate` would stop.
        case needsMapping = "needs a mapping"
    }

    /// The kind of difference.
    package var kind: Kind
    /// Inferred or mapped.
    package var origin: Origin
    /// The changes in words (`int16 → int32`, `renamed from full_name`), joined with `; `.
    package var detail: String

    /// A mark of `kind`, made by `origin`, saying `detail`.
    package init(kind: Kind, origin: Origin, detail: String) {
        self.kind = kind
        self.origin = origin
        self.detail = detail
    }

    /// `added, inferred`: the words a picture prints beside a marked part.
    package var text: String { "\(kind.rawValue), \(origin.rawValue)" }
}
