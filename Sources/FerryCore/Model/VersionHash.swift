/// Version hashes: SHA-256 over a canonical text of only what affects storage, like Core Data's
/// entity version hashes. Defaults, validation rules, delete rules, relationship counts,
/// renaming hints, user info, class names, fetch requests and transient attributes (which have no
/// storage) do not change them; a hash modifier does. Features a model does not use add nothing
/// to the text, so hashes of models written before those features existed are unchanged.
extension ObjectModel {
    /// The hash of each entity, in lowercase hexadecimal, by entity name.
    public var entityHashes: [String: String] {
        var hashes: [String: String] = [:]
        for entity in entities {
            hashes[entity.name] = SHA256.hex(VersionHash.canonicalText(of: entity))
        }
        return hashes
    }

    /// The hash of the whole model version: of every entity's name and hash, in name order.
    /// The model's name and version label are not part of it.
    public var versionHash: String {
        let lines = entityHashes.sorted { $0.key < $1.key }.map { "\(VersionHash.field($0.key)) \($0.value)\n" }
        return SHA256.hex("ferry-model-1\n" + lines.joined())
    }
}

/// The canonical text behind ``ObjectModel/entityHashes``.
package enum VersionHash {
    /// One line per storage-relevant fact of the entity, properties sorted by name.
    package static func canonicalText(of entity: EntityDescription) -> String {
        var lines: [String] = ["entity \(field(entity.name))"]
        if let modifier = entity.hashModifier { lines.append("modifier \(field(modifier))") }
        if let parent = entity.parent { lines.append("parent \(field(parent))") }
        if entity.isAbstract { lines.append("abstract") }
        for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) where attribute.isStored {
            var line =
                "attribute \(field(attribute.name)) \(attribute.type.rawValue) \(attribute.isOptional ? "optional" : "required")"
            if let modifier = attribute.hashModifier { line += " modifier \(field(modifier))" }
            if let kind = attribute.coreDataKind { line += " as \(kind.typeName)" }
            if let derivation = attribute.derivation { line += " derived \(field(derivation))" }
            lines.append(line)
        }
        for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) {
            var line = "relationship \(field(relationship.name)) \(field(relationship.destination))"
            line += relationship.isToMany ? " to-many" : " to-one"
            line += " inverse \(field(relationship.inverse ?? ""))"
            line += relationship.isOptional ? " optional" : " required"
            if relationship.isOrdered { line += " ordered" }
            if let modifier = relationship.hashModifier { line += " modifier \(field(modifier))" }
            lines.append(line)
        }
        let constraints = entity.uniquenessConstraints.map { $0.sorted().map(field).joined(separator: ",") }.sorted()
        for constraint in constraints { lines.append("unique \(constraint)") }
        // Index column order matters to SQLite, so the attributes keep their order.
        let indexes = entity.indexes.map { index in
            let descending =
                index.descending.isEmpty ? "" : " descending \(index.descending.map(field).joined(separator: ","))"
            return "\(field(index.name ?? "")) \(index.attributes.map(field).joined(separator: ","))" + descending
        }.sorted()
        for index in indexes { lines.append("index \(index)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A length-prefixed field, so that no name or modifier can be mistaken for a separator.
    static func field(_ text: String) -> String { "\(text.utf8.count):\(text)" }
}
