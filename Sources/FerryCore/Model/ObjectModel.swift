/// A version of a data model: entities with attributes, relationships, uniqueness constraints
/// and indexes, in the spirit of Core Data's `NSManagedObjectModel`.
public struct ObjectModel: Sendable, Hashable, Codable {
    /// The model's name (the bundle name), e.g. `Shop`.
    public var name: String
    /// The version label, e.g. `1`, `2`, `v3`.
    public var version: String
    /// The entities, in model order.
    public var entities: [EntityDescription]
    /// Stored fetch requests, usable by name (Core Data's fetch request templates).
    @DecodedOrEmpty public var fetchRequests: [FetchRequestTemplate] = []
    /// Named subsets of the entities (Core Data's configurations).
    @DecodedOrEmpty public var configurations: [ModelConfiguration] = []
    /// A free-form version identifier (Xcode's `userDefinedModelVersionIdentifier`); not hashed.
    public var versionIdentifier: String?
    /// Whether the model was read from a ferry model file or an Xcode data model; decides the
    /// lightweight-migration rules (``MigrationRuleSet``) of diffs to and from it. Not hashed.
    @DecodedOrEmpty public var origin: ModelOrigin = .ferry
    /// Where the model was read from, for error messages.
    public var location: InputLocation?

    /// A model version named `name` with its version label and entities.
    ///
    /// ```swift
    /// let model = ObjectModel(name: "Shop", version: "1", entities: [
    ///     EntityDescription(name: "Customer", attributes: [
    ///         AttributeDescription(name: "id", type: .int64, isOptional: false),
    ///     ], uniquenessConstraints: [["id"]]),
    /// ])
    /// ```
    public init(name: String, version: String, entities: [EntityDescription], location: InputLocation? = nil) {
        self.name = name
        self.version = version
        self.entities = entities
        self.location = location
    }

    /// The stored fetch request with this exact name.
    public func fetchRequest(named name: String) -> FetchRequestTemplate? {
        fetchRequests.first { $0.name == name }
    }

    /// The entity with this exact name.
    public func entity(named name: String) -> EntityDescription? {
        entities.first { $0.name == name }
    }

    /// Names of every entity, in model order.
    public var entityNames: [String] { entities.map(\.name) }
}

/// An entity: a table in the store.
public struct EntityDescription: Sendable, Hashable, Codable {
    /// The entity's name, e.g. `Customer`.
    public var name: String
    /// The attributes, in model order.
    public var attributes: [AttributeDescription]
    /// The relationships, in model order.
    public var relationships: [RelationshipDescription]
    /// Uniqueness constraints: each is a set of attribute (or to-one relationship) names whose
    /// values together are unique, like Core Data's `uniquenessConstraints`.
    public var uniquenessConstraints: [[String]]
    /// The (non-unique) indexes.
    public var indexes: [IndexDescription]
    /// Where each uniqueness constraint was declared (parallel to `uniquenessConstraints`; may be
    /// shorter when the model was built in code).
    public var uniquenessConstraintLocations: [InputLocation?]
    /// The entity's name in the previous model version (Core Data's renaming identifier).
    public var renamedFrom: String?
    /// Changes the version hash without changing the schema (Core Data's version hash modifier).
    public var hashModifier: String?
    /// The parent entity's name: this entity inherits its properties (Core Data's super-entity).
    public var parent: String?
    /// An abstract entity has no instances of its own, only of its sub-entities.
    @DecodedOrEmpty public var isAbstract = false
    /// The class that represents the entity in generated code (Core Data's
    /// `representedClassName`); not part of the version hash.
    public var className: String?
    /// Queries kept with the entity that store nothing (Core Data's fetched properties).
    @DecodedOrEmpty public var fetchedProperties: [FetchedPropertyDescription] = []
    /// Free-form key/value notes for tools (Core Data's `userInfo`); not part of the version hash.
    /// Where the entity was declared, for error messages.
    @DecodedOrEmpty public var userInfo: [String: String] = [:]
    public var location: InputLocation?

    /// An entity with its properties, constraints and indexes.
    public init(
        name: String,
        attributes: [AttributeDescription] = [],
        relationships: [RelationshipDescription] = [],
        uniquenessConstraints: [[String]] = [],
        indexes: [IndexDescription] = [],
        renamedFrom: String? = nil,
        hashModifier: String? = nil,
        location: InputLocation? = nil,
        uniquenessConstraintLocations: [InputLocation?] = []
    ) {
        self.name = name
        self.attributes = attributes
        self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints
        self.uniquenessConstraintLocations = uniquenessConstraintLocations
        self.indexes = indexes
        self.renamedFrom = renamedFrom
        self.hashModifier = hashModifier
        self.location = location
    }

    /// The attribute with this exact name.
    public func attribute(named name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }

    /// The relationship with this exact name.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationships.first { $0.name == name }
    }

    /// Every property name: attributes then relationships.
    public var propertyNames: [String] { attributes.map(\.name) + relationships.map(\.name) }
}

/// An attribute: a column in the entity's table.
public struct AttributeDescription: Sendable, Hashable, Codable {
    /// The attribute's name.
    public var name: String
    /// The attribute's type.
    public var type: AttributeType
    /// Core Data's default: attributes are optional unless declared otherwise.
    public var isOptional: Bool
    /// The default value, already in the attribute's type.
    public var defaultValue: Value?
    /// The rules values must meet on import and update.
    public var validation: ValidationRules
    /// The attribute's name in the previous model version (Core Data's renaming identifier).
    public var renamedFrom: String?
    /// Changes the version hash without changing the schema (Core Data's version hash modifier).
    public var hashModifier: String?
    /// A transient attribute is part of the model but has no storage.
    @DecodedOrEmpty public var isTransient = false
    /// For a derived attribute: the expression the store computes it from (read-only).
    public var derivation: String?
    /// The Core Data type ferry stores as `type`: Transformable (as binary) or Object ID (as a URI).
    public var coreDataKind: CoreDataAttributeKind?
    /// Core Data's `preserveAfterDeletion`: the value is kept in the persistent history's
    /// tombstone of a deleted object. Part of Core Data's version hash only.
    @DecodedOrEmpty public var preservesAfterDeletion = false
    /// Core Data's `allowsExternalBinaryDataStorage`: large values may be stored in files beside
    /// the store.
    @DecodedOrEmpty public var allowsExternalBinaryDataStorage = false
    /// Free-form key/value notes for tools (Core Data's `userInfo`); not part of the version hash.
    /// Where the attribute was declared, for error messages.
    @DecodedOrEmpty public var userInfo: [String: String] = [:]
    public var location: InputLocation?

    /// An attribute of `type`, optional unless `isOptional` is false.
    public init(
        name: String,
        type: AttributeType,
        isOptional: Bool = true,
        defaultValue: Value? = nil,
        validation: ValidationRules = ValidationRules(),
        renamedFrom: String? = nil,
        hashModifier: String? = nil,
        location: InputLocation? = nil
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.validation = validation
        self.renamedFrom = renamedFrom
        self.hashModifier = hashModifier
        self.location = location
    }

    /// True for a derived attribute: read-only, computed by the store.
    public var isDerived: Bool { derivation != nil }

    /// True when the attribute has storage (a column): every attribute that is not transient.
    public var isStored: Bool { !isTransient }
}

/// Validation rules checked on import and update (Core Data's min/max value, min/max length
/// and regular expression predicates).
public struct ValidationRules: Sendable, Hashable, Codable {
    /// Inclusive minimum for numbers and dates, in the attribute's type.
    public var minValue: Value?
    /// Inclusive maximum for numbers and dates, in the attribute's type.
    public var maxValue: Value?
    /// Minimum length in characters (strings, URIs) or bytes (binary).
    public var minLength: Int?
    /// Maximum length in characters (strings, URIs) or bytes (binary).
    public var maxLength: Int?
    /// A regular expression the whole string must match, as with Core Data's `MATCHES`.
    public var pattern: String?

    /// Rules; none by default.
    public init(
        minValue: Value? = nil, maxValue: Value? = nil, minLength: Int? = nil, maxLength: Int? = nil,
        pattern: String? = nil
    ) {
        self.minValue = minValue
        self.maxValue = maxValue
        self.minLength = minLength
        self.maxLength = maxLength
        self.pattern = pattern
    }

    /// True when there is no rule to check.
    public var isEmpty: Bool {
        minValue == nil && maxValue == nil && minLength == nil && maxLength == nil && pattern == nil
    }
}

/// What happens to related objects when an object is deleted.
public enum DeleteRule: String, Sendable, Hashable, Codable, CaseIterable {
    /// Clear the inverse references (the default), delete the related objects too, or refuse the delete while related objects exist.
    case nullify, cascade, deny
    /// Leaves the related objects as they are.
    case noAction = "no_action"
}

/// A relationship to another entity.
public struct RelationshipDescription: Sendable, Hashable, Codable {
    /// The relationship's name.
    public var name: String
    /// The destination entity's name.
    public var destination: String
    /// True for a to-many relationship, false for a to-one.
    public var isToMany: Bool
    /// The name of the inverse relationship on the destination entity.
    public var inverse: String?
    /// What deleting an object does to the objects it relates to.
    public var deleteRule: DeleteRule
    /// Whether the relationship may be empty.
    public var isOptional: Bool
    /// For to-many relationships: the minimum and maximum number of related objects.
    public var minCount: Int?
    /// For to-many relationships: the maximum number of related objects (see `minCount`).
    public var maxCount: Int?
    /// For to-many relationships: whether the related objects keep an order.
    @DecodedOrEmpty public var isOrdered = false
    public var renamedFrom: String?
    /// Changes the version hash without changing the schema (Core Data's version hash modifier).
    public var hashModifier: String?
    /// Free-form key/value notes for tools (Core Data's `userInfo`); not part of the version hash.
    /// Where the relationship was declared, for error messages.
    @DecodedOrEmpty public var userInfo: [String: String] = [:]
    public var location: InputLocation?

    /// A relationship to `destination`; a to-one, optional, nullifying relationship by default.
    public init(
        name: String,
        destination: String,
        isToMany: Bool = false,
        inverse: String? = nil,
        deleteRule: DeleteRule = .nullify,
        isOptional: Bool = true,
        minCount: Int? = nil,
        maxCount: Int? = nil,
        renamedFrom: String? = nil,
        hashModifier: String? = nil,
        location: InputLocation? = nil
    ) {
        self.name = name
        self.destination = destination
        self.isToMany = isToMany
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.isOptional = isOptional
        self.minCount = minCount
        self.maxCount = maxCount
        self.renamedFrom = renamedFrom
        self.hashModifier = hashModifier
        self.location = location
    }
}

/// A (non-unique) index over one or more attributes; uniqueness belongs in
/// `EntityDescription.uniquenessConstraints`.
public struct IndexDescription: Sendable, Hashable, Codable {
    /// The index's name; nil lets the store name it.
    public var name: String?
    /// The indexed attributes, in index order.
    public var attributes: [String]
    /// The attributes (a subset of `attributes`) indexed in descending order.
    /// Where the index was declared, for error messages.
    @DecodedOrEmpty public var descending: [String] = []
    public var location: InputLocation?

    /// An index over `attributes`.
    public init(name: String? = nil, attributes: [String], descending: [String] = [], location: InputLocation? = nil) {
        self.name = name
        self.attributes = attributes
        self.descending = descending
        self.location = location
    }
}

/// The ordered versions of one model, and which one is current (Core Data's `.xcdatamodeld`
/// with its `.xccurrentversion`).
public struct ModelBundle: Sendable, Hashable {
    /// The bundle's name (the model name of its versions).
    public var name: String
    /// Versions, oldest first.
    public var versions: [ObjectModel]
    /// The label of the current version.
    public var currentVersion: String
    /// Where the bundle was read from.
    public var location: InputLocation?

    /// A bundle of `versions` (oldest first) whose current one is `currentVersion`.
    public init(name: String, versions: [ObjectModel], currentVersion: String, location: InputLocation? = nil) {
        self.name = name
        self.versions = versions
        self.currentVersion = currentVersion
        self.location = location
    }

    /// The current version (the last version when no version has the current label).
    public var current: ObjectModel {
        versions.first { $0.version == currentVersion } ?? versions[versions.count - 1]
    }

    /// The version with this label.
    public func version(_ label: String) -> ObjectModel? {
        versions.first { $0.version == label }
    }
}
