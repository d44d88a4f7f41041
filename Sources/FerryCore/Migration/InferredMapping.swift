/// What lightweight migration does for one source → destination pair of model versions: for each
/// destination entity, where its records come from, and for each of its attributes and
/// relationships, where their values come from. Core Data's inferred `NSMappingModel`.
///
/// Made by ``ModelDiff/inferredMapping()`` (or ``infer(from:to:through:)``), which refuses,
/// with every reason, a diff that has changes inference cannot do. The migration engine executes
/// it:
///
/// - For each ``EntityMapping`` with a `source`, every source record becomes one destination
///   record; an entity mapping without a `source` starts empty.
/// - For each ``AttributeMapping``: the value is the source attribute's (converted by
///   `conversion` when the type widened); when there is no source attribute, or the source value
///   is nil, the value is `valueIfNil` (`.null`, or the default value of a new attribute or of an
///   attribute that became non-optional).
/// - For each ``RelationshipMapping`` with a `source`, the links of the source relationship are
///   carried over (to the destination records made from the linked source records); a to-one
///   that became to-many holds its one link. Without a `source` the relationship starts empty.
/// - Source entities, attributes and relationships that nothing maps from are dropped.
///
/// ```swift
/// let mapping = try InferredMapping.infer(from: v1, to: v3, through: [v2])
/// for entity in mapping.entities where entity.source != nil { ... }
/// ```
public struct InferredMapping: Sendable, Hashable, Codable {
    /// The model name and version labels, and the version hashes of both sides.
    public var modelName: String
    /// The source version's label.
    public var sourceVersion: String
    /// The destination version's label.
    public var destinationVersion: String
    /// The source version's hash (hex SHA-256).
    public var sourceHash: String
    /// The destination version's hash (hex SHA-256).
    public var destinationHash: String
    /// One per destination entity, in destination model order.
    public var entities: [EntityMapping]
    /// Source entities whose records are not carried over.
    public var droppedEntities: [String]

    /// A mapping between two versions of model `modelName`.
    public init(
        modelName: String, sourceVersion: String, destinationVersion: String, sourceHash: String,
        destinationHash: String,
        entities: [EntityMapping], droppedEntities: [String]
    ) {
        self.modelName = modelName
        self.sourceVersion = sourceVersion
        self.destinationVersion = destinationVersion
        self.sourceHash = sourceHash
        self.destinationHash = destinationHash
        self.entities = entities
        self.droppedEntities = droppedEntities
    }

    /// The mapping for a destination entity.
    public func entity(named name: String) -> EntityMapping? {
        entities.first { $0.destination == name }
    }

    /// The inferred mapping from `source` to `destination`, resolving renames through the
    /// `intermediates` (the versions between them, oldest first).
    /// - Throws: `FerryError` (code `.migration`) listing every change inference refuses, each
    ///   with its reason and fix.
    public static func infer(
        from source: ObjectModel, to destination: ObjectModel, through intermediates: [ObjectModel] = []
    ) throws -> InferredMapping {
        try ModelDiff(from: source, to: destination, through: intermediates).inferredMapping()
    }

    /// Where one destination entity's records come from.
    public struct EntityMapping: Sendable, Hashable, Codable {
        /// The destination entity's name.
        public var destination: String
        /// The source entity's name, or nil for a new (empty) entity.
        public var source: String?
        /// One per destination attribute, in model order.
        public var attributes: [AttributeMapping]
        /// One per destination relationship, in model order.
        public var relationships: [RelationshipMapping]
        /// Source attributes and relationships whose values are not carried over.
        public var droppedProperties: [String]

        /// The mapping of `destination` from `source` (nil: a new, empty entity).
        public init(
            destination: String, source: String?, attributes: [AttributeMapping], relationships: [RelationshipMapping],
            droppedProperties: [String] = []
        ) {
            self.destination = destination
            self.source = source
            self.attributes = attributes
            self.relationships = relationships
            self.droppedProperties = droppedProperties
        }

        /// The mapping of the destination attribute with this name.
        public func attribute(named name: String) -> AttributeMapping? {
            attributes.first { $0.destination == name }
        }

        /// The mapping of the destination relationship with this name.
        public func relationship(named name: String) -> RelationshipMapping? {
            relationships.first { $0.destination == name }
        }
    }

    /// Where one destination attribute's values come from.
    public struct AttributeMapping: Sendable, Hashable, Codable {
        /// The destination attribute's name.
        public var destination: String
        /// The source attribute's name, or nil for a new attribute.
        public var source: String?
        /// The widening applied to source values, or nil when the type is unchanged.
        public var conversion: TypeConversion?
        /// The value written when there is no source attribute or the source value is nil: the
        /// default of a new attribute (else `.null`); for a carried-over attribute, its default
        /// when it became non-optional (else `.null`, keeping nil as nil).
        public var valueIfNil: Value

        /// The mapping of `destination` from `source` (nil: a new attribute), converted by `conversion`.
        public init(destination: String, source: String?, conversion: TypeConversion? = nil, valueIfNil: Value = .null)
        {
            self.destination = destination
            self.source = source
            self.conversion = conversion
            self.valueIfNil = valueIfNil
        }

        /// The destination value for a source value (pass `.null` for a new attribute).
        public func value(from sourceValue: Value) -> Value {
            guard source != nil, !sourceValue.isNull else { return valueIfNil }
            return conversion?.apply(to: sourceValue) ?? sourceValue
        }
    }

    /// Where one destination relationship's links come from.
    public struct RelationshipMapping: Sendable, Hashable, Codable {
        /// The destination relationship's name.
        public var destination: String
        /// The source relationship's name, or nil for a new (empty) relationship.
        public var source: String?

        /// The mapping of `destination` from `source` (nil: a new, empty relationship).
        public init(destination: String, source: String?) {
            self.destination = destination
            self.source = source
        }
    }
}
