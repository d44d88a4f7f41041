/// Core Data attribute types that ferry stores as one of its own types.
public enum CoreDataAttributeKind: Sendable, Hashable, Codable {
    /// Transformable: bytes produced by a value transformer, opaque to ferry; stored as `binary`.
    /// `transformer` is the transformer's name (nil: Core Data's legacy default), `valueClass`
    /// the class of the transformed value (`customClassName`, e.g. `[String]`).
    case transformable(transformer: String?, valueClass: String?)
    /// Object ID: a managed object's URI representation; stored as `uri`.
    case objectID
    /// Undefined: only for transient attributes, which have no storage; typed `binary`.
    case undefined

    /// The ferry type a value of this kind is stored as.
    public var storedType: AttributeType {
        switch self {
        case .transformable, .undefined: return .binary
        case .objectID: return .uri
        }
    }

    /// The name used for this kind in YAML models (`type: transformable`) and messages.
    public var typeName: String {
        switch self {
        case .transformable: return "transformable"
        case .objectID: return "object_id"
        case .undefined: return "undefined"
        }
    }
}
