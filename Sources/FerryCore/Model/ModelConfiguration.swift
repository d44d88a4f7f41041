/// A named subset of a model's entities (Core Data's configuration), kept for tools.
public struct ModelConfiguration: Sendable, Hashable, Codable {
    /// The configuration's name.
    public var name: String
    /// The member entities' names.
    public var entities: [String]
    /// Xcode's "Used with CloudKit" flag.
    @DecodedOrEmpty public var usedWithCloudKit = false

    /// A configuration named `name` of `entities`.
    public init(name: String, entities: [String], usedWithCloudKit: Bool = false) {
        self.name = name
        self.entities = entities
        self.usedWithCloudKit = usedWithCloudKit
    }
}
