/// A fetch request stored in the model under a name (Core Data's fetch request template):
/// usable by name wherever ferry fetches (`ferry export --fetch NAME`).
public struct FetchRequestTemplate: Sendable, Hashable, Codable {
    /// The name the request is used by.
    public var name: String
    /// The entity fetched.
    public var entity: String
    /// An NSPredicate-syntax filter (see docs/predicates.md), or nil for every object.
    public var predicate: String?
    /// The most objects returned, or nil for no limit.
    public var limit: Int?
    /// Core Data's batch size hint; ferry keeps it but does not need it.
    public var batchSize: Int?
    /// Other Core Data flags (`includeSubentities`, `returnObjectsAsFaults`, …) kept verbatim.
    /// Where the request was declared, for error messages.
    @DecodedOrEmpty public var options: [String: String] = [:]
    public var location: InputLocation?

    /// A stored fetch request named `name` of `entity`.
    public init(
        name: String, entity: String, predicate: String? = nil, limit: Int? = nil, batchSize: Int? = nil,
        options: [String: String] = [:], location: InputLocation? = nil
    ) {
        self.name = name
        self.entity = entity
        self.predicate = predicate
        self.limit = limit
        self.batchSize = batchSize
        self.options = options
        self.location = location
    }
}

/// A fetched property: a named query on an entity that stores nothing (Core Data's
/// `NSFetchedPropertyDescription`).
public struct FetchedPropertyDescription: Sendable, Hashable, Codable {
    /// The property's name.
    public var name: String
    /// The entity the query fetches.
    public var entity: String
    /// An NSPredicate-syntax filter (may use `$FETCH_SOURCE` and `$FETCHED_PROPERTY`).
    public var predicate: String?
    /// Where the property was declared, for error messages.
    public var location: InputLocation?

    /// A fetched property named `name` querying `entity`.
    public init(name: String, entity: String, predicate: String? = nil, location: InputLocation? = nil) {
        self.name = name
        self.entity = entity
        self.predicate = predicate
        self.location = location
    }
}
