import FerryCore
import FerryFormats

/// Infers a one-entity model from sample records, the way sqlite-utils does: column names from
/// the header or keys, types from the values (integers, then numbers, booleans, ISO-8601 dates,
/// UUIDs, JSON for nested values, else strings). Every attribute is optional.
public enum ModelInference {
    /// Field name → the narrowest type every non-null sample value fits.
    public static func inferEntity(named name: String, fieldNames: [String], samples: [SourceRecord], overrides: [String: AttributeType], unique: [[String]] = []) -> EntityDescription {
        var attributes: [AttributeDescription] = []
        for (index, field) in fieldNames.enumerated() {
            let type = overrides[field] ?? inferType(samples.compactMap { $0[index]?.value })
            attributes.append(AttributeDescription(name: field, type: type))
        }
        return EntityDescription(name: name, attributes: attributes, uniquenessConstraints: unique)
    }

    /// The narrowest type for a set of field values.
    public static func inferType(_ values: [FieldValue]) -> AttributeType {
        var candidates: Set<AttributeType> = [.int64, .double, .bool, .date, .uuid, .json]
        var sawValue = false
        for value in values {
            switch value {
            case .null:
                continue
            case .text(let text):
                if text.isEmpty { continue }
                sawValue = true
                if Int64(text) == nil { candidates.remove(.int64) }
                if candidates.contains(.double) && Coercion.parseDouble(text) == nil || text.lowercased().hasPrefix("inf") || text.lowercased().hasPrefix("nan") { candidates.remove(.double) }
                if !["true", "false"].contains(text.lowercased()) { candidates.remove(.bool) }
                if candidates.contains(.date) && (text.count < 10 || DateCoding.parseISO8601(text) == nil) { candidates.remove(.date) }
                if candidates.contains(.uuid) && (text.count != 36 || Coercion.canonicalUUID(text) == nil) { candidates.remove(.uuid) }
                candidates.remove(.json)
            case .number(let text):
                sawValue = true
                if Int64(text) == nil { candidates.remove(.int64) }
                candidates.subtract([.bool, .date, .uuid, .json])
            case .bool:
                sawValue = true
                candidates.subtract([.int64, .double, .date, .uuid, .json])
            case .json:
                sawValue = true
                candidates = candidates.intersection([.json])
            }
            if candidates.isEmpty { break }
        }
        guard sawValue else { return .string }
        for type in [AttributeType.int64, .double, .bool, .date, .uuid, .json] where candidates.contains(type) {
            return type
        }
        return .string
    }
}
