import FerryCore
import Foundation

/// Reads model bundles and model files (see `docs/files.md`) into a `ModelBundle`, checking
/// every version with `ModelChecker`.
///
/// ```swift
/// let bundle = try ModelLoader().load(path: "samples/models/Shop")
/// print(bundle.current.versionHash)
/// ```
///
/// Every problem found is reported, not just the first: the loader throws `FerryErrors`
/// (code `invalidModel`) whose errors each name a `file:line:column`.
public struct ModelLoader: Sendable {
    /// A loader.
    public init() {}

    package static let indexKeys = ["name", "description", "current", "versions"]
    package static let modelKeys = [
        "name", "description", "version", "entities", "version_identifier", "fetch_requests", "configurations",
    ]
    package static let entityKeys = [
        "attributes", "relationships", "unique", "indexes", "renamed_from", "hash_modifier", "parent", "abstract",
        "class_name",
        "fetched_properties", "user_info",
    ]
    package static let attributeKeys = [
        "type", "optional", "default", "unique", "min", "max", "min_length", "max_length", "pattern", "renamed_from",
        "hash_modifier",
        "transient", "derived", "transformer", "value_class", "user_info", "preserve_after_deletion",
        "allows_external_storage",
    ]
    package static let namedIndexKeys = ["name", "attributes", "descending"]
    package static let relationshipKeys = [
        "destination", "to_many", "inverse", "delete_rule", "optional", "min_count", "max_count", "renamed_from",
        "hash_modifier",
        "ordered", "user_info",
    ]

    /// Loads a bundle folder (holding `model.yml`), a bundle index file, a single model file
    /// (one version), an Xcode `.xcdatamodeld` package, a single `.xcdatamodel` version, a
    /// Core Data store (its cached model, as one version named `cache`), or a ferry store, file
    /// or PostgreSQL URL (the model it records, at the store's version).
    /// Throws `FerryErrors` listing every problem.
    public func load(path: String) throws -> ModelBundle {
        let reader = DefinitionReader(code: .invalidModel)
        let bundle = load(path: path, reader: reader)
        if !reader.errors.isEmpty { throw FerryErrors(reader.errors) }
        guard let bundle else {
            throw FerryErrors([FerryError(.invalidModel, "no model", at: InputLocation(file: path))])
        }
        let problems = bundle.versions.flatMap { ModelChecker.check($0) }
        if !problems.isEmpty { throw FerryErrors(problems) }
        return bundle
    }

    /// True for a PostgreSQL URL or a regular file that starts with SQLite's header: a store,
    /// whose recorded model stands for it.
    static func isStoreLocation(_ path: String) -> Bool {
        if StoreLocation(path).isDatabaseServer { return true }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
            let handle = FileHandle(forReadingAtPath: path)
        else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 16)) == Data("SQLite format 3\0".utf8)
    }

    /// A store's model (`read`) as a one-version bundle, or nil with the error recorded.
    private func storeModel(
        at path: String, what: String, reader: DefinitionReader, read: () throws -> ObjectModel
    ) -> ModelBundle? {
        let shown = PathOrURL(path).shown
        do {
            let model = try read()
            return ModelBundle(
                name: model.name, versions: [model], currentVersion: model.version, location: InputLocation(file: shown)
            )
        } catch let error as FerryError {
            reader.record(error)
        } catch {
            reader.record(
                FerryError(
                    .invalidModel, "cannot read \(what) of store '\(shown)': \(error)", at: InputLocation(file: shown)))
        }
        return nil
    }

    private func load(path: String, reader: DefinitionReader) -> ModelBundle? {
        if StoreLocation(path).isCoreData {
            // A Core Data store stands for the model it caches (Z_MODELCACHE).
            return storeModel(at: path, what: "the cached model", reader: reader) {
                try CoreDataStoreFile.read(path).cachedModel()
            }
        }
        if Self.isStoreLocation(path) {
            // A ferry store stands for the model it records (ferry_metadata).
            return storeModel(at: path, what: "the model", reader: reader) {
                guard let model = try Store.metadata(at: path)?.model else {
                    throw FerryError(
                        .invalidModel,
                        "'\(PathOrURL(path).shown)' is a database without a model: neither a ferry store nor a Core Data store",
                        at: InputLocation(file: PathOrURL(path).shown))
                }
                return model
            }
        }
        if XcodeModelPackage.isXcodeModel(path) {
            var errors: [FerryError] = []
            let bundle = XcodeModelPackage.load(path: path, errors: &errors)
            errors.forEach(reader.record)
            return bundle
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            reader.record(
                FerryError(
                    .invalidModel, "no model at '\(path)': No such file or directory", at: InputLocation(file: path)))
            return nil
        }
        var filePath = path
        if isDirectory.boolValue {
            let candidates = ["model.yml", "model.yaml"].map { (path as NSString).appendingPathComponent($0) }
            guard let index = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
                reader.record(
                    FerryError(
                        .invalidModel, "'\(path)' is a folder without a model.yml index", at: InputLocation(file: path))
                )
                return nil
            }
            filePath = index
        }
        guard let root = readRoot(filePath, reader: reader), let top = reader.mapping(root, for: "the model file")
        else { return nil }
        if top["versions"] != nil {
            return loadBundle(top, file: filePath, reader: reader)
        }
        if top["entities"] == nil {
            reader.fail("expected 'entities' (a model) or 'versions' (a model bundle index)", at: top.location)
            return nil
        }
        guard
            let model = loadVersion(
                top, file: filePath, defaultName: Self.baseName(filePath), defaultVersion: "1", reader: reader)
        else { return nil }
        return ModelBundle(name: model.name, versions: [model], currentVersion: model.version, location: model.location)
    }

    private func readRoot(_ file: String, reader: DefinitionReader) -> YAMLNode? {
        do {
            guard let root = try YAMLNode.load(path: file, code: .invalidModel) else {
                reader.fail("the model file is empty", at: InputLocation(file: file, line: 1, column: 1))
                return nil
            }
            return root
        } catch {
            reader.record(error)
            return nil
        }
    }

    static func baseName(_ path: String) -> String {
        ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    }

    // MARK: - Bundle index

    private func loadBundle(_ index: YAMLMapping, file: String, reader: DefinitionReader) -> ModelBundle? {
        reader.checkKeys(index, allowed: Self.indexKeys, in: "the model index")
        let folder = (file as NSString).deletingLastPathComponent
        let name =
            index["name"].flatMap { reader.string($0, for: "name") }
            ?? Self.baseName(folder.isEmpty ? FileManager.default.currentDirectoryPath : folder)
        var versions: [ObjectModel] = []
        var labels: [String: InputLocation] = [:]
        if let node = index["versions"], let items = reader.list(node, for: "versions") {
            if items.isEmpty { reader.fail("'versions' lists no model versions", at: node.location) }
            for item in items {
                guard let relative = reader.string(item, for: "versions") else { continue }
                let versionPath =
                    relative.hasPrefix("/") ? relative : (folder as NSString).appendingPathComponent(relative)
                guard FileManager.default.fileExists(atPath: versionPath) else {
                    reader.fail("model version file '\(relative)' does not exist", at: item.location)
                    continue
                }
                let loaded: ObjectModel?
                if XcodeModelPackage.isXcodeModel(versionPath) {
                    // An Xcode version folder: the index gives the order of an Xcode package's versions.
                    var errors: [FerryError] = []
                    loaded = XcodeModelPackage.loadVersion(folder: versionPath, name: name, errors: &errors)
                    errors.forEach(reader.record)
                } else {
                    guard let root = readRoot(versionPath, reader: reader),
                        let top = reader.mapping(root, for: "the model file")
                    else { continue }
                    loaded = loadVersion(
                        top, file: versionPath, defaultName: name, defaultVersion: Self.baseName(versionPath),
                        reader: reader)
                }
                guard let model = loaded else { continue }
                var named = model
                named.name = name
                if let first = labels[model.version] {
                    reader.fail(
                        "version '\(model.version)' is declared twice (also at \(first))",
                        at: model.location ?? item.location)
                    continue
                }
                labels[model.version] = model.location ?? item.location
                versions.append(named)
            }
        }
        var current = versions.last?.version ?? ""
        if let node = index["current"], let label = reader.string(node, for: "current") {
            if versions.contains(where: { $0.version == label }) {
                current = label
            } else if !versions.isEmpty {
                reader.fail(
                    "current version '\(label)' is not one of the versions (\(versions.map(\.version).joined(separator: ", ")))\(Suggestions.didYouMean(label, in: versions.map(\.version)))",
                    at: node.location)
            }
        }
        guard !versions.isEmpty else { return nil }
        return ModelBundle(
            name: name, versions: versions, currentVersion: current,
            location: InputLocation(file: file, line: 1, column: 1))
    }

    // MARK: - A model version

    private func loadVersion(
        _ top: YAMLMapping, file: String, defaultName: String, defaultVersion: String, reader: DefinitionReader
    ) -> ObjectModel? {
        reader.checkKeys(top, allowed: Self.modelKeys, in: "the model file")
        let name = top["name"].flatMap { reader.string($0, for: "name") } ?? defaultName
        let version = top["version"].flatMap { reader.string($0, for: "version") } ?? defaultVersion
        var entities: [EntityDescription] = []
        if let node = top["entities"], let mapping = reader.mapping(node, for: "entities"),
            reader.checkCount(
                mapping.entries.count, maximum: DefinitionLimits.maximumEntities, of: "entities", in: "the model",
                at: node.location)
        {
            for entry in mapping.entries {
                if let entity = loadEntity(entry, reader: reader) { entities.append(entity) }
            }
        } else if top["entities"] == nil {
            reader.fail("the model file has no 'entities'", at: top.location)
        }
        var model = ObjectModel(
            name: name, version: version, entities: entities, location: InputLocation(file: file, line: 1, column: 1))
        loadModelExtras(top, into: &model, reader: reader)
        return model
    }

    private func loadEntity(_ entry: YAMLMapping.Entry, reader: DefinitionReader) -> EntityDescription? {
        guard let mapping = reader.mapping(entry.value, for: entry.key) else { return nil }
        reader.checkKeys(mapping, allowed: Self.entityKeys, in: "entity '\(entry.key)'")
        var entity = EntityDescription(name: entry.key, location: entry.keyLocation)
        var constraints: [([String], InputLocation?)] = []
        let properties = ["attributes", "relationships"].compactMap { mapping[$0] }.reduce(0) { count, node in
            if case .mapping(let pairs) = node.content { return count + pairs.count }
            return count
        }
        guard
            reader.checkCount(
                properties, maximum: DefinitionLimits.maximumProperties, of: "attributes and relationships",
                in: "entity '\(entry.key)'", at: entry.keyLocation)
        else { return nil }
        if let node = mapping["attributes"], let attributes = reader.mapping(node, for: "attributes") {
            for attributeEntry in attributes.entries {
                guard let (attribute, unique) = loadAttribute(attributeEntry, reader: reader) else { continue }
                entity.attributes.append(attribute)
                if unique { constraints.append(([attribute.name], attribute.location)) }
            }
        }
        if let node = mapping["relationships"], let relationships = reader.mapping(node, for: "relationships") {
            for relationshipEntry in relationships.entries {
                if let relationship = loadRelationship(relationshipEntry, reader: reader) {
                    entity.relationships.append(relationship)
                }
            }
        }
        if let node = mapping["unique"], let items = reader.list(node, for: "unique") {
            for item in items {
                guard let names = reader.strings(item, for: "unique") else { continue }
                if names.isEmpty {
                    reader.fail("a uniqueness constraint needs at least one attribute", at: item.location)
                    continue
                }
                constraints.append((names, item.location))
            }
        }
        for (names, location) in constraints
        where !entity.uniquenessConstraints.contains(where: { Set($0) == Set(names) }) {
            entity.uniquenessConstraints.append(names)
            entity.uniquenessConstraintLocations.append(location)
        }
        if let node = mapping["indexes"], let items = reader.list(node, for: "indexes") {
            for item in items {
                if let index = loadIndex(item, reader: reader) { entity.indexes.append(index) }
            }
        }
        entity.renamedFrom = mapping["renamed_from"].flatMap { reader.string($0, for: "renamed_from") }
        entity.hashModifier = mapping["hash_modifier"].flatMap { reader.string($0, for: "hash_modifier") }
        loadEntityExtras(mapping, into: &entity, reader: reader)
        return entity
    }

    package static var typeNames: [String] {
        AttributeType.allCases.map(\.rawValue) + coreDataKinds.map(\.typeName) + AttributeType.aliases.keys.sorted()
    }

    /// The type, and the Core Data kind for `transformable`, `object_id` and `undefined`.
    private func attributeType(
        _ node: YAMLNode, attribute: String, reader: DefinitionReader
    ) -> (AttributeType, CoreDataAttributeKind?)? {
        guard let text = reader.string(node, for: "type") else { return nil }
        if let type = AttributeType(name: text) { return (type, nil) }
        if let kind = Self.coreDataKinds.first(where: { $0.typeName == text.lowercased() }) {
            return (kind.storedType, kind)
        }
        reader.fail(
            "unknown type '\(text)' for attribute '\(attribute)'\(Suggestions.didYouMean(text, in: Self.typeNames))",
            at: node.location,
            notes: [
                "types: \((AttributeType.allCases.map(\.rawValue) + Self.coreDataKinds.map(\.typeName)).joined(separator: ", "))"
            ])
        return nil
    }

    static let coreDataKinds: [CoreDataAttributeKind] = [
        .transformable(transformer: nil, valueClass: nil), .objectID, .undefined,
    ]

    /// The attribute, and whether it declared `unique: true`.
    private func loadAttribute(_ entry: YAMLMapping.Entry, reader: DefinitionReader) -> (AttributeDescription, Bool)? {
        let name = entry.key
        if case .scalar(_, isNull: false) = entry.value.content {
            guard let (type, kind) = attributeType(entry.value, attribute: name, reader: reader) else { return nil }
            var attribute = AttributeDescription(name: name, type: type, location: entry.keyLocation)
            attribute.coreDataKind = kind
            return (attribute, false)
        }
        guard case .mapping = entry.value.content, let mapping = reader.mapping(entry.value, for: name) else {
            reader.wrongType("a type or a mapping", for: name, found: entry.value)
            return nil
        }
        reader.checkKeys(mapping, allowed: Self.attributeKeys, in: "attribute '\(name)'")
        guard let typeNode = mapping["type"] else {
            reader.fail("attribute '\(name)' needs a 'type'", at: entry.keyLocation)
            return nil
        }
        guard let (type, kind) = attributeType(typeNode, attribute: name, reader: reader) else { return nil }
        var attribute = AttributeDescription(name: name, type: type, location: entry.keyLocation)
        attribute.coreDataKind = kind
        if let node = mapping["optional"], let value = reader.bool(node, for: "optional") {
            attribute.isOptional = value
        }
        let unique = mapping["unique"].flatMap { reader.bool($0, for: "unique") } ?? false
        func typed(_ key: String) -> Value? {
            guard let node = mapping[key], let text = reader.optionalString(node, for: key) else { return nil }
            switch Coercion.coerce(text, to: type) {
            case .success(let value): return value
            case .failure(let failure):
                reader.fail("invalid '\(key)' for attribute '\(name)': \(failure.reason)", at: node.location)
                return nil
            }
        }
        attribute.defaultValue = typed("default")
        for key in ["min", "max"] where mapping[key] != nil {
            guard type.isNumeric || type == .date, let node = mapping[key] else {
                reader.fail(
                    "'\(key)' applies only to numbers and dates, not to \(type.rawValue) attribute '\(name)'",
                    at: mapping.keyLocation(key) ?? entry.keyLocation)
                continue
            }
            _ = node
            if key == "min" {
                attribute.validation.minValue = typed(key)
            } else {
                attribute.validation.maxValue = typed(key)
            }
        }
        for key in ["min_length", "max_length"] {
            guard let node = mapping[key] else { continue }
            guard type == .string || type == .uri || type == .binary else {
                reader.fail(
                    "'\(key)' applies only to string, uri and binary attributes, not to \(type.rawValue) attribute '\(name)'",
                    at: mapping.keyLocation(key) ?? entry.keyLocation)
                continue
            }
            let value = reader.int(node, for: key)
            if key == "min_length" {
                attribute.validation.minLength = value
            } else {
                attribute.validation.maxLength = value
            }
        }
        if let node = mapping["pattern"], let pattern = reader.string(node, for: "pattern") {
            // Reported here at the value, and left out so that nothing compiles it.
            if let problem = PatternLimits.problem(with: pattern) {
                reader.fail("\(problem) for '\(name)'", at: node.textLocation)
            } else {
                attribute.validation.pattern = pattern
            }
        }
        attribute.renamedFrom = mapping["renamed_from"].flatMap { reader.string($0, for: "renamed_from") }
        attribute.hashModifier = mapping["hash_modifier"].flatMap { reader.string($0, for: "hash_modifier") }
        loadAttributeExtras(mapping, into: &attribute, reader: reader)
        return (attribute, unique)
    }

    private func loadRelationship(_ entry: YAMLMapping.Entry, reader: DefinitionReader) -> RelationshipDescription? {
        let name = entry.key
        guard let mapping = reader.mapping(entry.value, for: name) else { return nil }
        reader.checkKeys(mapping, allowed: Self.relationshipKeys, in: "relationship '\(name)'")
        guard let destinationNode = mapping["destination"] else {
            reader.fail("relationship '\(name)' needs a 'destination'", at: entry.keyLocation)
            return nil
        }
        guard let destination = reader.string(destinationNode, for: "destination") else { return nil }
        var relationship = RelationshipDescription(name: name, destination: destination, location: entry.keyLocation)
        if let node = mapping["to_many"], let value = reader.bool(node, for: "to_many") {
            relationship.isToMany = value
        }
        relationship.inverse = mapping["inverse"].flatMap { reader.optionalString($0, for: "inverse") }
        if let node = mapping["delete_rule"], let rule = reader.choice(node, for: "delete_rule", as: DeleteRule.self) {
            relationship.deleteRule = rule
        }
        if let node = mapping["optional"], let value = reader.bool(node, for: "optional") {
            relationship.isOptional = value
        }
        relationship.minCount = mapping["min_count"].flatMap { reader.int($0, for: "min_count") }
        relationship.maxCount = mapping["max_count"].flatMap { reader.int($0, for: "max_count") }
        relationship.renamedFrom = mapping["renamed_from"].flatMap { reader.string($0, for: "renamed_from") }
        relationship.hashModifier = mapping["hash_modifier"].flatMap { reader.string($0, for: "hash_modifier") }
        if let node = mapping["ordered"], let value = reader.bool(node, for: "ordered") {
            relationship.isOrdered = value
        }
        relationship.userInfo = mapping["user_info"].map { userInfo($0, reader: reader) } ?? [:]
        return relationship
    }

    private func loadIndex(_ node: YAMLNode, reader: DefinitionReader) -> IndexDescription? {
        if case .mapping = node.content {
            guard let mapping = reader.mapping(node, for: "indexes") else { return nil }
            reader.checkKeys(mapping, allowed: Self.namedIndexKeys, in: "an index")
            guard let attributesNode = mapping["attributes"] else {
                reader.fail("an index needs 'attributes'", at: node.location)
                return nil
            }
            guard let names = reader.strings(attributesNode, for: "attributes") else { return nil }
            let name = mapping["name"].flatMap { reader.string($0, for: "name") }
            var descending: [String] = []
            if let node = mapping["descending"], let listed = reader.strings(node, for: "descending") {
                for item in listed where !names.contains(item) {
                    reader.fail(
                        "'descending' names '\(item)', which is not one of the index's attributes (\(names.joined(separator: ", ")))",
                        at: node.location)
                }
                descending = listed.filter(names.contains)
            }
            return IndexDescription(name: name, attributes: names, descending: descending, location: node.location)
        }
        guard let names = reader.strings(node, for: "indexes") else { return nil }
        return IndexDescription(attributes: names, location: node.location)
    }
}
