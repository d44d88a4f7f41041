/// One difference between two model versions, with what lightweight (inferred) migration makes
/// of it. Listed by ``ModelDiff`` and shown by `ferry model diff`.
///
/// Names are the destination's (a removed entity or property keeps its source name); `detail`
/// says what changed in words (`int16 → int32`, `renamed from fullName`).
public struct ModelChange: Sendable, Hashable, Codable {
    /// What changed.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// An entity the source does not have.
        case entityAdded = "entity_added"
        /// An entity the destination does not have.
        case entityRemoved = "entity_removed"
        /// An entity renamed (`renamed_from`).
        case entityRenamed = "entity_renamed"
        /// The entity's version hash modifier changed.
        case entityHashModifierChanged = "entity_hash_modifier_changed"
        /// The entity's parent entity changed (it joined, left or moved within a hierarchy).
        case entityParentChanged = "entity_parent_changed"
        /// The entity became abstract, or stopped being abstract.
        case entityAbstractChanged = "entity_abstract_changed"
        /// An attribute the source entity does not have.
        case attributeAdded = "attribute_added"
        /// An attribute the destination entity does not have.
        case attributeRemoved = "attribute_removed"
        /// An attribute renamed (`renamed_from`).
        case attributeRenamed = "attribute_renamed"
        /// The attribute's type changed.
        case attributeTypeChanged = "attribute_type_changed"
        /// The attribute became optional or non-optional.
        case attributeOptionalityChanged = "attribute_optionality_changed"
        /// The attribute's default value changed.
        case attributeDefaultChanged = "attribute_default_changed"
        /// The attribute's validation rules changed.
        case attributeValidationChanged = "attribute_validation_changed"
        /// The attribute's version hash modifier changed.
        case attributeHashModifierChanged = "attribute_hash_modifier_changed"
        /// Transient, derived or Core Data kind (transformable, object ID) changed.
        case attributeStorageChanged = "attribute_storage_changed"
        /// A relationship the source entity does not have.
        case relationshipAdded = "relationship_added"
        /// A relationship the destination entity does not have.
        case relationshipRemoved = "relationship_removed"
        /// A relationship renamed (`renamed_from`).
        case relationshipRenamed = "relationship_renamed"
        /// The relationship's destination entity changed.
        case relationshipDestinationChanged = "relationship_destination_changed"
        /// To-one ↔ to-many.
        case relationshipCardinalityChanged = "relationship_cardinality_changed"
        /// The relationship's inverse changed.
        case relationshipInverseChanged = "relationship_inverse_changed"
        /// The relationship became optional or non-optional.
        case relationshipOptionalityChanged = "relationship_optionality_changed"
        /// The relationship's delete rule changed.
        case relationshipDeleteRuleChanged = "relationship_delete_rule_changed"
        /// The to-many relationship's minimum or maximum count changed.
        case relationshipCountChanged = "relationship_count_changed"
        /// The relationship's version hash modifier changed.
        case relationshipHashModifierChanged = "relationship_hash_modifier_changed"
        /// Ordered ↔ unordered to-many.
        case relationshipOrderingChanged = "relationship_ordering_changed"
        /// A property changed from an attribute to a relationship of the same name, or back.
        case propertyKindChanged = "property_kind_changed"
        /// A uniqueness constraint the source entity does not have.
        case uniquenessConstraintAdded = "uniqueness_constraint_added"
        /// A uniqueness constraint the destination entity does not have.
        case uniquenessConstraintRemoved = "uniqueness_constraint_removed"
        /// An index the source entity does not have.
        case indexAdded = "index_added"
        /// An index the destination entity does not have.
        case indexRemoved = "index_removed"
        /// A `renamed_from` that names nothing in the previous version, or that another
        /// entity or property claims too.
        case renameUnresolved = "rename_unresolved"
    }

    /// Whether inference can do it.
    public enum Verdict: String, Sendable, Hashable, Codable {
        /// Lightweight migration does it (possibly with a `warning`).
        case inferred
        /// Lightweight migration cannot do it: `reason` says why, `fix` what would.
        case refused
    }

    /// What kind of change it is.
    public var kind: Kind
    /// The entity (destination name; the source name for a removed entity).
    public var entity: String
    /// The attribute or relationship, or nil for entity-level changes.
    public var property: String?
    /// What changed, in words: `added (string, optional)`, `int16 → int32`.
    public var detail: String
    /// Whether lightweight migration can do it.
    public var verdict: Verdict
    /// For a refused change: why, naming the entity and property.
    public var reason: String?
    /// For a refused change: what would make it inferable, or the mapping file to write.
    public var fix: String?
    /// For an inferred change: something that may fail at migration time or lose data.
    public var warning: String?

    /// A change of `kind` to `entity` (and `property`), inferred unless `verdict` says otherwise.
    public init(
        kind: Kind, entity: String, property: String? = nil, detail: String, verdict: Verdict = .inferred,
        reason: String? = nil, fix: String? = nil, warning: String? = nil
    ) {
        self.kind = kind
        self.entity = entity
        self.property = property
        self.detail = detail
        self.verdict = verdict
        self.reason = reason
        self.fix = fix
        self.warning = warning
    }

    /// True when lightweight migration can do this change.
    public var isInferable: Bool { verdict == .inferred }

    /// `Entity.property` or `Entity`.
    public var subject: String { property.map { "\(entity).\($0)" } ?? entity }
}
