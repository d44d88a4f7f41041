import FerryCore

/// The Core Data concepts of YAML models (see docs/files.md): inheritance, transient, derived and
/// transformable attributes, ordered relationships, user info, fetched properties, stored fetch
/// requests and configurations.
extension ModelLoader {
    package static let fetchRequestKeys = ["entity", "predicate", "limit", "batch_size", "options"]
    package static let configurationKeys = ["entities", "cloudkit"]
    package static let fetchedPropertyKeys = ["entity", "predicate"]

    func loadModelExtras(_ top: YAMLMapping, into model: inout ObjectModel, reader: DefinitionReader) {
        model.versionIdentifier = top["version_identifier"].flatMap {
            reader.optionalString($0, for: "version_identifier")
        }
        if let node = top["fetch_requests"], let requests = reader.mapping(node, for: "fetch_requests") {
            for entry in requests.entries {
                guard
                    let (mapping, entity) = query(
                        entry, kind: "fetch request", keys: Self.fetchRequestKeys, reader: reader)
                else { continue }
                var request = FetchRequestTemplate(name: entry.key, entity: entity, location: entry.keyLocation)
                request.predicate = mapping["predicate"].flatMap { reader.optionalString($0, for: "predicate") }
                request.limit = mapping["limit"].flatMap { reader.int($0, for: "limit") }
                request.batchSize = mapping["batch_size"].flatMap { reader.int($0, for: "batch_size") }
                request.options = mapping["options"].map { userInfo($0, reader: reader) } ?? [:]
                model.fetchRequests.append(request)
            }
        }
        if let node = top["configurations"], let configurations = reader.mapping(node, for: "configurations") {
            for entry in configurations.entries {
                guard let mapping = reader.mapping(entry.value, for: entry.key) else { continue }
                reader.checkKeys(mapping, allowed: Self.configurationKeys, in: "configuration '\(entry.key)'")
                let entities = mapping["entities"].flatMap { reader.strings($0, for: "entities") } ?? []
                let cloudKit = mapping["cloudkit"].flatMap { reader.bool($0, for: "cloudkit") } ?? false
                model.configurations.append(
                    ModelConfiguration(name: entry.key, entities: entities, usedWithCloudKit: cloudKit))
            }
        }
    }

    func loadEntityExtras(_ mapping: YAMLMapping, into entity: inout EntityDescription, reader: DefinitionReader) {
        entity.parent = mapping["parent"].flatMap { reader.string($0, for: "parent") }
        entity.isAbstract = mapping["abstract"].flatMap { reader.bool($0, for: "abstract") } ?? false
        entity.className = mapping["class_name"].flatMap { reader.string($0, for: "class_name") }
        entity.userInfo = mapping["user_info"].map { userInfo($0, reader: reader) } ?? [:]
        if let node = mapping["fetched_properties"], let properties = reader.mapping(node, for: "fetched_properties") {
            for entry in properties.entries {
                guard
                    let (property, target) = query(
                        entry, kind: "fetched property", keys: Self.fetchedPropertyKeys, reader: reader)
                else { continue }
                let predicate = property["predicate"].flatMap { reader.optionalString($0, for: "predicate") }
                entity.fetchedProperties.append(
                    FetchedPropertyDescription(
                        name: entry.key, entity: target, predicate: predicate, location: entry.keyLocation))
            }
        }
    }

    func loadAttributeExtras(
        _ mapping: YAMLMapping, into attribute: inout AttributeDescription, reader: DefinitionReader
    ) {
        if let node = mapping["transient"], let value = reader.bool(node, for: "transient") {
            attribute.isTransient = value
        }
        if let node = mapping["preserve_after_deletion"],
            let value = reader.bool(node, for: "preserve_after_deletion")
        {
            attribute.preservesAfterDeletion = value
        }
        if let node = mapping["allows_external_storage"], let value = reader.bool(node, for: "allows_external_storage")
        {
            attribute.allowsExternalBinaryDataStorage = value
        }
        attribute.derivation = mapping["derived"].flatMap { reader.string($0, for: "derived") }
        attribute.userInfo = mapping["user_info"].map { userInfo($0, reader: reader) } ?? [:]
        let transformer = mapping["transformer"].flatMap { reader.string($0, for: "transformer") }
        let valueClass = mapping["value_class"].flatMap { reader.string($0, for: "value_class") }
        if case .transformable = attribute.coreDataKind {
            attribute.coreDataKind = .transformable(transformer: transformer, valueClass: valueClass)
        } else {
            for key in ["transformer", "value_class"] where mapping[key] != nil {
                reader.fail(
                    "'\(key)' applies only to transformable attributes, not to attribute '\(attribute.name)'",
                    at: mapping.keyLocation(key) ?? mapping.location)
            }
        }
    }

    /// A fetch request or fetched property: its mapping (keys checked) and its required `entity`.
    private func query(
        _ entry: YAMLMapping.Entry, kind: String, keys: [String], reader: DefinitionReader
    ) -> (YAMLMapping, String)? {
        guard let mapping = reader.mapping(entry.value, for: entry.key) else { return nil }
        reader.checkKeys(mapping, allowed: keys, in: "\(kind) '\(entry.key)'")
        guard let entityNode = mapping["entity"] else {
            reader.fail("\(kind) '\(entry.key)' needs an 'entity'", at: entry.keyLocation)
            return nil
        }
        guard let entity = reader.string(entityNode, for: "entity") else { return nil }
        return (mapping, entity)
    }

    /// A mapping of text keys to text values (Core Data's `userInfo`).
    func userInfo(_ node: YAMLNode, reader: DefinitionReader) -> [String: String] {
        guard let mapping = reader.mapping(node, for: "user_info") else { return [:] }
        var info: [String: String] = [:]
        for entry in mapping.entries {
            if let value = reader.optionalString(entry.value, for: entry.key) {
                info[entry.key] = value
            } else if entry.value.isNull {
                info[entry.key] = ""
            }
        }
        return info
    }
}
