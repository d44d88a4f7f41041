import FerryCore
import Foundation
import Yams

/// Writes models as ferry's YAML model files (docs/files.md), keeping every key that
/// ``ModelLoader`` reads, so that loading the result gives back an equal model.
package enum ModelYAMLWriter {
    /// The YAML text of one model version.
    package static func text(of model: ObjectModel) throws -> String {
        var top: [(String, Node)] = [("name", scalar(model.name)), ("version", scalar(model.version))]
        if let identifier = model.versionIdentifier { top.append(("version_identifier", scalar(identifier))) }
        top.append(("entities", mapping(model.entities.map { ($0.name, entityNode($0)) })))
        if !model.fetchRequests.isEmpty {
            top.append(
                (
                    "fetch_requests",
                    mapping(
                        model.fetchRequests.map { request in
                            var fields: [(String, Node)] = [("entity", scalar(request.entity))]
                            if let predicate = request.predicate { fields.append(("predicate", scalar(predicate))) }
                            if let limit = request.limit { fields.append(("limit", scalar(String(limit)))) }
                            if let size = request.batchSize { fields.append(("batch_size", scalar(String(size)))) }
                            if !request.options.isEmpty { fields.append(("options", dictionary(request.options))) }
                            return (request.name, mapping(fields))
                        })
                ))
        }
        if !model.configurations.isEmpty {
            top.append(
                (
                    "configurations",
                    mapping(
                        model.configurations.map { configuration in
                            var fields: [(String, Node)] = [("entities", sequence(configuration.entities.map(scalar)))]
                            if configuration.usedWithCloudKit { fields.append(("cloudkit", scalar("true"))) }
                            return (configuration.name, mapping(fields))
                        })
                ))
        }
        return try serialize(mapping(top))
    }

    /// The text of a bundle index (`model.yml`) listing `files` in order.
    static func indexText(name: String, current: String, files: [String]) throws -> String {
        try serialize(
            mapping([("name", scalar(name)), ("current", scalar(current)), ("versions", sequence(files.map(scalar)))]))
    }

    /// Writes `bundle` into the (new, empty) folder `folder`: `model.yml` and one file per version.
    static func writeBundle(_ bundle: ModelBundle, to folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var files: [String] = []
        for version in bundle.versions {
            let file = fileName(for: version.version, taken: files)
            files.append(file)
            try Data(text(of: version).utf8).write(
                to: URL(fileURLWithPath: (folder as NSString).appendingPathComponent(file)))
        }
        let index = try indexText(name: bundle.name, current: bundle.currentVersion, files: files)
        try Data(index.utf8).write(to: URL(fileURLWithPath: (folder as NSString).appendingPathComponent("model.yml")))
    }

    /// A file name for a version label: the label with `/` and leading dots replaced, unique.
    private static func fileName(for label: String, taken: [String]) -> String {
        var base = String(label.map { $0 == "/" || $0 == "\\" ? "_" : $0 })
        while base.hasPrefix(".") { base = "_" + base.dropFirst() }
        if base.isEmpty || base.lowercased() == "model" { base = "v" + base }
        var name = base + ".yml"
        var counter = 2
        while taken.contains(name) {
            name = "\(base)-\(counter).yml"
            counter += 1
        }
        return name
    }

    // MARK: - Descriptions

    private static func entityNode(_ entity: EntityDescription) -> Node {
        var fields: [(String, Node)] = []
        if let parent = entity.parent { fields.append(("parent", scalar(parent))) }
        if entity.isAbstract { fields.append(("abstract", scalar("true"))) }
        if let className = entity.className { fields.append(("class_name", scalar(className))) }
        if let renamed = entity.renamedFrom { fields.append(("renamed_from", scalar(renamed))) }
        if let modifier = entity.hashModifier { fields.append(("hash_modifier", scalar(modifier))) }
        if !entity.attributes.isEmpty {
            fields.append(("attributes", mapping(entity.attributes.map { ($0.name, attributeNode($0)) })))
        }
        if !entity.relationships.isEmpty {
            fields.append(("relationships", mapping(entity.relationships.map { ($0.name, relationshipNode($0)) })))
        }
        if !entity.uniquenessConstraints.isEmpty {
            fields.append(
                ("unique", sequence(entity.uniquenessConstraints.map { sequence($0.map(scalar), flow: true) })))
        }
        if !entity.indexes.isEmpty {
            fields.append(
                (
                    "indexes",
                    sequence(
                        entity.indexes.map { index in
                            var parts: [(String, Node)] = []
                            if let name = index.name { parts.append(("name", scalar(name))) }
                            parts.append(("attributes", sequence(index.attributes.map(scalar), flow: true)))
                            if !index.descending.isEmpty {
                                parts.append(("descending", sequence(index.descending.map(scalar), flow: true)))
                            }
                            return mapping(parts)
                        })
                ))
        }
        if !entity.fetchedProperties.isEmpty {
            fields.append(
                (
                    "fetched_properties",
                    mapping(
                        entity.fetchedProperties.map { property in
                            var parts: [(String, Node)] = [("entity", scalar(property.entity))]
                            if let predicate = property.predicate { parts.append(("predicate", scalar(predicate))) }
                            return (property.name, mapping(parts))
                        })
                ))
        }
        if !entity.userInfo.isEmpty { fields.append(("user_info", dictionary(entity.userInfo))) }
        return mapping(fields)
    }

    private static func attributeNode(_ attribute: AttributeDescription) -> Node {
        var fields: [(String, Node)] = [
            ("type", scalar(attribute.coreDataKind?.typeName ?? attribute.type.rawValue)),
            ("optional", scalar(attribute.isOptional ? "true" : "false")),
        ]
        if let value = attribute.defaultValue {
            fields.append(("default", value.isNull ? Node("~") : scalar(text(value))))
        }
        let rules = attribute.validation
        if let value = rules.minValue { fields.append(("min", scalar(text(value)))) }
        if let value = rules.maxValue { fields.append(("max", scalar(text(value)))) }
        if let length = rules.minLength { fields.append(("min_length", scalar(String(length)))) }
        if let length = rules.maxLength { fields.append(("max_length", scalar(String(length)))) }
        if let pattern = rules.pattern { fields.append(("pattern", scalar(pattern))) }
        if attribute.isTransient { fields.append(("transient", scalar("true"))) }
        if attribute.preservesAfterDeletion { fields.append(("preserve_after_deletion", scalar("true"))) }
        if attribute.allowsExternalBinaryDataStorage { fields.append(("allows_external_storage", scalar("true"))) }
        if let derivation = attribute.derivation { fields.append(("derived", scalar(derivation))) }
        if case .transformable(let transformer, let valueClass) = attribute.coreDataKind {
            if let transformer { fields.append(("transformer", scalar(transformer))) }
            if let valueClass { fields.append(("value_class", scalar(valueClass))) }
        }
        if let renamed = attribute.renamedFrom { fields.append(("renamed_from", scalar(renamed))) }
        if let modifier = attribute.hashModifier { fields.append(("hash_modifier", scalar(modifier))) }
        if !attribute.userInfo.isEmpty { fields.append(("user_info", dictionary(attribute.userInfo))) }
        return mapping(fields)
    }

    private static func relationshipNode(_ relationship: RelationshipDescription) -> Node {
        var fields: [(String, Node)] = [("destination", scalar(relationship.destination))]
        if relationship.isToMany { fields.append(("to_many", scalar("true"))) }
        if relationship.isOrdered { fields.append(("ordered", scalar("true"))) }
        if let inverse = relationship.inverse { fields.append(("inverse", scalar(inverse))) }
        fields.append(("delete_rule", scalar(relationship.deleteRule.rawValue)))
        fields.append(("optional", scalar(relationship.isOptional ? "true" : "false")))
        if let min = relationship.minCount { fields.append(("min_count", scalar(String(min)))) }
        if let max = relationship.maxCount { fields.append(("max_count", scalar(String(max)))) }
        if let renamed = relationship.renamedFrom { fields.append(("renamed_from", scalar(renamed))) }
        if let modifier = relationship.hashModifier { fields.append(("hash_modifier", scalar(modifier))) }
        if !relationship.userInfo.isEmpty { fields.append(("user_info", dictionary(relationship.userInfo))) }
        return mapping(fields)
    }

    /// A value as text that ``Coercion`` reads back into the same value.
    static func text(_ value: Value) -> String {
        switch value {
        case .double(let number): return String(number)
        default: return value.description
        }
    }

    // MARK: - Nodes

    /// A string scalar; quoted when plain YAML would read it as null.
    static func scalar(_ text: String) -> Node {
        let nullLike = ["", "~", "null", "Null", "NULL"].contains(text)
        return Node(text, .implicit, nullLike ? .doubleQuoted : .any)
    }

    static func mapping(_ pairs: [(String, Node)]) -> Node {
        .mapping(Node.Mapping(pairs.map { (scalar($0.0), $0.1) }))
    }

    private static func dictionary(_ values: [String: String]) -> Node {
        mapping(values.sorted { $0.key < $1.key }.map { ($0.key, scalar($0.value)) })
    }

    private static func sequence(_ items: [Node], flow: Bool = false) -> Node {
        .sequence(Node.Sequence(items, .implicit, flow ? .flow : .block))
    }

    static func serialize(_ node: Node) throws -> String {
        try Yams.serialize(node: node, indent: 2, width: -1, allowUnicode: true, sortKeys: false)
    }
}
