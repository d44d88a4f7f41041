/// How one version step is migrated: for each destination entity, where its records come from
/// and how each attribute and relationship gets its value. Core Data's `NSMappingModel`.
///
/// Made from the inferred mapping (``ModelDiff/bestEffortMapping()``) with a mapping file's
/// entries laid over it: whatever the file does not mention is inferred, as Core Data does for a
/// mapping model created from an inferred one.
public struct MappingModel: Sendable {
    /// The model version migrated from.
    public var source: ObjectModel
    /// The model version migrated to.
    public var destination: ObjectModel
    /// One per destination entity mapping, in the order they run (destination model order, with
    /// mappings that others refer to through `.fromMapping` first).
    public var entities: [EntityMapping]
    /// The mapping file, when there is one.
    public var location: InputLocation?

    /// A mapping model with these entity mappings.
    public init(
        source: ObjectModel, destination: ObjectModel, entities: [EntityMapping], location: InputLocation? = nil
    ) {
        self.source = source
        self.destination = destination
        self.entities = entities
        self.location = location
    }

    /// The mapping made only by inference (throws when inference refuses a change).
    public static func inferred(from source: ObjectModel, to destination: ObjectModel) throws -> MappingModel {
        let inferred = try ModelDiff(from: source, to: destination).inferredMapping()
        return MappingModel(source: source, destination: destination, inferred: inferred)
    }

    /// A mapping model from an inferred mapping.
    public init(
        source: ObjectModel, destination: ObjectModel, inferred: InferredMapping, location: InputLocation? = nil
    ) {
        self.source = source
        self.destination = destination
        self.location = location
        entities = inferred.entities.map { EntityMapping(inferred: $0) }
    }

    /// The entity mapping with this name; also by Core Data's compiled name of a mapping,
    /// `<Source>To<Destination>` (`PostToPost`), so that policies written for Core Data find it.
    public func entity(named name: String) -> EntityMapping? {
        entities.first { $0.name == name }
            ?? entities.first { mapping in
                mapping.source.map { "\($0)To\(mapping.destination)" } == name
            }
    }

    /// The entity mappings with those that others name in ``RelationshipValue/fromMapping(_:)``
    /// first, in their present order otherwise; `cycle` holds the mappings left when some refer
    /// to each other (then none of them can run first).
    public func orderedByReferences() -> (ordered: [EntityMapping], cycle: [EntityMapping]) {
        var remaining = entities
        var placed: [EntityMapping] = []
        var done: Set<String> = []
        while !remaining.isEmpty {
            let ready = remaining.firstIndex { mapping in
                mapping.relationships.allSatisfy { relationship in
                    guard case .fromMapping(let name) = relationship.value, let target = entity(named: name),
                        target.name != mapping.name
                    else { return true }
                    return done.contains(target.name)
                }
            }
            guard let ready else { return (placed, remaining) }
            let mapping = remaining.remove(at: ready)
            done.insert(mapping.name)
            placed.append(mapping)
        }
        return (placed, [])
    }

    /// Where one destination entity's records come from.
    public struct EntityMapping: Sendable {
        /// The mapping's name, unique in the model: the destination entity's name by default.
        public var name: String
        /// The destination entity.
        public var destination: String
        /// The source entity, or nil for an entity that starts empty.
        public var source: String?
        /// Only source objects matching this predicate (over the source entity) are migrated.
        public var filter: String?
        /// Where `filter:` is in the mapping file.
        public var filterLocation: InputLocation?
        /// When set, one destination object per distinct non-nil value of this expression over
        /// the source objects (SwiftData's `authorName` → `Author` example), instead of one per
        /// source object.
        public var distinct: String?
        /// Where `distinct:` is in the mapping file.
        public var distinctLocation: InputLocation?
        /// How each destination attribute gets its value.
        public var attributes: [AttributeMapping]
        /// How each destination relationship gets its links.
        public var relationships: [RelationshipMapping]
        /// The name of a registered custom ``EntityMigrationPolicy``.
        public var policy: String?
        /// Where `policy:` is in the mapping file.
        public var policyLocation: InputLocation?
        /// Where the entity mapping is in the mapping file.
        public var location: InputLocation?

        /// An entity mapping named `name` filling `destination` from `source` (nil: it starts empty).
        public init(
            name: String, destination: String, source: String?, filter: String? = nil, distinct: String? = nil,
            attributes: [AttributeMapping], relationships: [RelationshipMapping], policy: String? = nil,
            location: InputLocation? = nil
        ) {
            self.name = name
            self.destination = destination
            self.source = source
            self.filter = filter
            self.distinct = distinct
            self.attributes = attributes
            self.relationships = relationships
            self.policy = policy
            self.location = location
        }

        init(inferred: InferredMapping.EntityMapping) {
            self.init(
                name: inferred.destination, destination: inferred.destination, source: inferred.source,
                attributes: inferred.attributes.map { attribute in
                    if let source = attribute.source {
                        return AttributeMapping(
                            destination: attribute.destination,
                            value: .copy(
                                source: source, conversion: attribute.conversion, valueIfNil: attribute.valueIfNil))
                    }
                    return AttributeMapping(destination: attribute.destination, value: .constant(attribute.valueIfNil))
                },
                relationships: inferred.relationships.map { relationship in
                    RelationshipMapping(
                        destination: relationship.destination,
                        value: relationship.source.map { .carry(source: $0) } ?? .none)
                })
        }

        /// The mapping of the destination attribute with this name.
        public func attribute(named name: String) -> AttributeMapping? { attributes.first { $0.destination == name } }
        /// The mapping of the destination relationship with this name.
        public func relationship(named name: String) -> RelationshipMapping? {
            relationships.first { $0.destination == name }
        }
    }

    /// How one destination attribute gets its value.
    public struct AttributeMapping: Sendable {
        /// The destination attribute.
        public var destination: String
        /// Where its value comes from.
        public var value: AttributeValue
        /// Where the mapping is in the mapping file.
        public var location: InputLocation?

        /// A mapping giving `destination` its `value`.
        public init(destination: String, value: AttributeValue, location: InputLocation? = nil) {
            self.destination = destination
            self.value = value
            self.location = location
        }
    }

    /// Where a destination attribute's value comes from.
    public enum AttributeValue: Sendable {
        /// The source attribute's value, widened by `conversion`; `valueIfNil` when it is nil.
        case copy(source: String, conversion: TypeConversion?, valueIfNil: Value)
        /// A value expression over `$source` (docs/expressions.md), as written in the mapping file.
        case expression(String)
        /// A constant (a new attribute's default, or nil).
        case constant(Value)
    }

    /// How one destination relationship gets its links.
    public struct RelationshipMapping: Sendable {
        /// The destination relationship.
        public var destination: String
        /// Where its links come from.
        public var value: RelationshipValue
        /// Where the mapping is in the mapping file.
        public var location: InputLocation?

        /// A mapping giving `destination` its links from `value`.
        public init(destination: String, value: RelationshipValue, location: InputLocation? = nil) {
            self.destination = destination
            self.value = value
            self.location = location
        }
    }

    /// Where a destination relationship's links come from.
    public enum RelationshipValue: Sendable, Hashable {
        /// The links of a source relationship, carried over to the objects made from the linked
        /// source objects.
        case carry(source: String)
        /// The object reached from the source object through a chain of to-one source
        /// relationships (`country.continent`), carried to the object made from it (Core Data's
        /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", M,
        /// $source.country.continent)`). For to-one relationships stored on this side.
        case keyPath([String])
        /// The object(s) that the named entity mapping made from this same source object (Core
        /// Data's `destinationInstances(forEntityMappingName:sourceInstances:)`).
        case fromMapping(String)
        /// Starts empty (a custom policy may fill it in its relationship stage).
        case none
    }
}
