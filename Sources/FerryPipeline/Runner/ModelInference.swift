import FerryCore
import FerryFormats

/// Infers a one-entity model from sample records, the way sqlite-utils does: attribute names
/// from the header or keys (through ``AttributeNaming``), types from the values. Every attribute
/// is optional.
///
/// Inference never loses information: a value is read as a number, boolean, date or UUID only
/// when its text survives the round trip (see ``LosslessText``), so `02134`, `+7095` and `1.2.3`
/// stay strings. A JSON string stays a string unless it is a UTC ISO-8601 date or a canonical
/// UUID (JSON has no type for those); `"01001"`, `"14.90"` and `"true"` stay strings. An empty
/// string is a value (only a string holds it), not a null.
package enum ModelInference {
    /// An inferred entity and the source field each attribute reads.
    package struct Result: Sendable {
        package var entity: EntityDescription
        /// Field name per attribute, in attribute order.
        package var fieldNames: [String]

        package init(entity: EntityDescription, fieldNames: [String]) {
            self.entity = entity
            self.fieldNames = fieldNames
        }

        /// Mappings for the attributes whose names differ from their fields (`first_name` ←
        /// `First Name`), for the import step.
        package var renamedFields: [FieldMapping] {
            zip(entity.attributes, fieldNames).compactMap { attribute, field in
                attribute.name == field ? nil : FieldMapping(attribute: attribute.name, source: .field(field))
            }
        }

        /// Names the attribute inferred from `field` `attribute` (`--field city=address.city`).
        package mutating func name(_ attribute: String, fromField field: String) {
            guard let position = fieldNames.firstIndex(of: field) else { return }
            entity.attributes[position].name = attribute
        }

        /// `attribute type` per attribute, with `(from "Field")` when the names differ.
        package var summary: String {
            zip(entity.attributes, fieldNames).map { attribute, field in
                let from = attribute.name == field ? "" : " (from \(JSONText.quote(field)))"
                return "\(attribute.name) \(attribute.type.rawValue)\(from)"
            }.joined(separator: ", ")
        }
    }

    /// Field name → the narrowest lossless type every non-null sample value fits.
    /// - Parameters:
    ///   - overrides: types by field name (or by attribute name).
    ///   - unique: uniqueness constraints, by field or attribute names.
    ///   - textIsUntyped: true for CSV (text may be a number); false for JSON, whose strings
    ///     are strings.
    ///   - decimalComma: CSV numbers are written `1.234,56` (see ``DecimalCommaText``).
    package static func infer(
        entityNamed name: String, fieldNames: [String], samples: [SourceRecord],
        overrides: [String: AttributeType] = [:],
        unique: [[String]] = [], textIsUntyped: Bool = true, decimalComma: Bool = false
    ) -> Result {
        let names = AttributeNaming.attributeNames(for: fieldNames)
        var attributes: [AttributeDescription] = []
        for (index, field) in fieldNames.enumerated() {
            let type =
                overrides[field] ?? overrides[names[index]]
                ?? inferType(
                    samples.compactMap { $0[index]?.value }, textIsUntyped: textIsUntyped, decimalComma: decimalComma)
            attributes.append(AttributeDescription(name: names[index], type: type))
        }
        let attributeByField = Dictionary(zip(fieldNames, names), uniquingKeysWith: { first, _ in first })
        let constraints = unique.map { $0.map { attributeByField[$0] ?? $0 } }
        return Result(
            entity: EntityDescription(name: name, attributes: attributes, uniquenessConstraints: constraints),
            fieldNames: fieldNames)
    }

    /// The narrowest lossless type for a set of field values.
    package static func inferType(
        _ values: [FieldValue], textIsUntyped: Bool = true, decimalComma: Bool = false
    ) -> AttributeType {
        let order: [AttributeType] = [.int64, .double, .decimal, .bool, .date, .uuid, .json, .binary]
        var candidates = Set(order)
        var sawValue = false
        /// Keeps the types a text value can be read as (numbers and booleans only when text is untyped).
        func narrow(text: String, untyped: Bool) {
            if text.isEmpty {
                candidates = []
                return
            }
            candidates.subtract([.json, .binary])
            if !untyped { candidates.subtract([.int64, .double, .decimal, .bool]) }
            let number = decimalComma ? DecimalCommaText.plain(text) ?? "" : text
            if candidates.contains(.int64) && !LosslessText.isInteger(number) { candidates.remove(.int64) }
            if candidates.contains(.double) && !LosslessText.isDouble(number) { candidates.remove(.double) }
            if candidates.contains(.decimal) && !LosslessText.isDecimal(number) { candidates.remove(.decimal) }
            if candidates.contains(.bool) && !LosslessText.isBool(text) { candidates.remove(.bool) }
            if candidates.contains(.date) && !LosslessText.isDate(text) { candidates.remove(.date) }
            if candidates.contains(.uuid) && !LosslessText.isUUID(text) { candidates.remove(.uuid) }
        }
        for value in values {
            switch value {
            case .null, .typed(.null):
                continue
            case .text(let text):
                sawValue = true
                narrow(text: text, untyped: textIsUntyped)
            case .typed(.string(let text)):
                // A database's text is text, like a JSON string: only dates and UUIDs are read from it.
                sawValue = true
                narrow(text: text, untyped: false)
            case .typed(let typed):
                sawValue = true
                candidates.formIntersection(typesHolding(typed))
            case .number(let text):
                sawValue = true
                if Int64(text) == nil { candidates.remove(.int64) }
                if candidates.contains(.double) && !LosslessText.isDoubleNumber(text) { candidates.remove(.double) }
                if candidates.contains(.decimal) && DecimalText.canonical(text) == nil { candidates.remove(.decimal) }
                candidates.subtract([.bool, .date, .uuid, .json, .binary])
            case .bool:
                sawValue = true
                candidates.subtract([.int64, .double, .decimal, .date, .uuid, .json, .binary])
            case .json:
                sawValue = true
                candidates = candidates.intersection([.json])
            }
            if candidates.isEmpty { break }
        }
        guard sawValue else { return .string }
        return order.first { candidates.contains($0) } ?? .string
    }

    /// The inferable types that hold a typed value without loss (a URI has none: it stays a string).
    private static func typesHolding(_ value: Value) -> Set<AttributeType> {
        switch value {
        case .null: return []
        case .integer: return [.int64, .decimal]
        case .double: return [.double]
        case .decimal: return [.decimal]
        case .bool: return [.bool]
        case .date: return [.date]
        case .uuid: return [.uuid]
        case .json: return [.json]
        case .binary: return [.binary]
        case .string, .uri: return []
        }
    }
}
