import FerryCore

/// How Xcode's `contents` XML spells ferry's model concepts; shared by the reader and the writer
/// so that both directions follow one table (see COREDATA.md §1).
enum XcodeSpelling {
    /// `attributeType` values and what ferry makes of them.
    static let attributeTypes: [(xml: String, type: AttributeType, kind: CoreDataAttributeKind?)] = [
        ("Integer 16", .int16, nil),
        ("Integer 32", .int32, nil),
        ("Integer 64", .int64, nil),
        ("Decimal", .decimal, nil),
        ("Double", .double, nil),
        ("Float", .float, nil),
        ("String", .string, nil),
        ("Boolean", .bool, nil),
        ("Date", .date, nil),
        ("Binary", .binary, nil),
        ("UUID", .uuid, nil),
        ("URI", .uri, nil),
        ("Transformable", .binary, .transformable(transformer: nil, valueClass: nil)),
        ("ObjectID", .uri, .objectID),
        ("Undefined", .binary, .undefined),
    ]

    /// The XML spelling of an attribute's type. ferry's `json` is written as a String attribute
    /// marked in its user info (``jsonUserInfoKey``), since Core Data has no JSON type.
    static func xmlType(of attribute: AttributeDescription) -> String {
        switch attribute.coreDataKind {
        case .transformable: return "Transformable"
        case .objectID: return "ObjectID"
        case .undefined: return "Undefined"
        case nil: break
        }
        if attribute.type == .json { return "String" }
        return attributeTypes.first { $0.type == attribute.type && $0.kind == nil }?.xml ?? "String"
    }

    /// The user-info key that marks a String attribute as ferry's `json` type in an Xcode model.
    static let jsonUserInfoKey = "ferry.type"

    /// `deletionRule` values.
    static let deleteRules: [(xml: String, rule: DeleteRule)] = [
        ("Nullify", .nullify), ("Cascade", .cascade), ("Deny", .deny), ("No Action", .noAction),
    ]

    /// Seconds between 1970-01-01 and Core Data's reference date 2001-01-01 (UTC).
    static let referenceDateOffset: Int64 = 978_307_200

    /// Xcode's ordering of attributes and relationships: case-insensitive by name.
    static func precedes(_ a: String, _ b: String) -> Bool {
        let (la, lb) = (a.lowercased(), b.lowercased())
        return la != lb ? la < lb : a < b
    }
}
