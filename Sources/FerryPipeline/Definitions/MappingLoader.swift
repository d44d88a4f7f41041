import FerryCore
import Foundation

/// Reads a mapping file (`mappings/2-to-3.yml`, see docs/migration.md, "Mapping files") into a
/// `MappingModel` for one version step.
///
/// The loader starts from what inference does (`ModelDiff.bestEffortMapping()`) and lays the
/// file's entries over it: an attribute given a value replaces its inferred copy, an entity
/// mapping's `source`, `filter`, `distinct` and `policy` are set, and a mapping with a new name
/// and `entity:` adds a second mapping into a destination entity. Whatever the file does not
/// mention stays inferred.
///
/// ```swift
/// let bundle = try ModelLoader().load(path: "samples/models/Shop")
/// let path = MappingLoader.mappingFilePath(in: bundle, from: "2", to: "3")
/// let mapping = try MappingLoader().load(path: path, source: v2, destination: v3)
/// ```
///
/// Every problem is reported, each at its `file:line:column` (`FerryErrors`, code
/// `invalidDefinition`; predicate problems keep code `invalidPredicate`): unknown keys,
/// entities, attributes and relationships (with suggestions), `from`/`to` that do not match the
/// models, filters that do not parse or bind, value expressions that do not parse, bind to the
/// source entity or fit their attribute (code `invalidExpression`), `mapping:` naming no
/// mapping, and every change inference refuses that the file leaves uncovered.
///
/// Locations in the result point into the file: an entity mapping's `location` is its key; an
/// attribute's or relationship's `location`, `filterLocation` and `distinctLocation` are where
/// the value's text starts, so an expression parsed with that location reports columns in the
/// file.
public struct MappingLoader: Sendable {
    /// A loader.
    public init() {}

    package static let topKeys = ["from", "to", "description", "entities"]
    package static let entityKeys = ["entity", "source", "filter", "distinct", "attributes", "relationships", "policy"]
    package static let attributeValueKeys = ["value", "source"]
    package static let relationshipValueKeys = ["mapping", "source"]

    /// Loads the mapping file at `path` for the step from `source` to `destination`.
    /// - Throws: `FerryErrors` listing every problem, each located in the file.
    ///
    /// `parameters` are the values of `$name` in the file's expressions (migration parameters);
    /// an expression naming another parameter is an error.
    public func load(
        path: String, source: ObjectModel, destination: ObjectModel, parameters: [String: Value] = [:]
    ) throws -> MappingModel {
        let root: YAMLNode?
        do {
            root = try YAMLNode.load(path: path, code: .invalidDefinition)
        } catch {
            throw FerryErrors([error])
        }
        let reader = DefinitionReader(code: .invalidDefinition)
        var builder = Builder(
            path: path, source: source, destination: destination, parameters: parameters, reader: reader)
        if let root {
            builder.read(root)
        } else {
            builder.checkFileName()
            builder.checkRefusals()
        }
        if !reader.errors.isEmpty { throw FerryErrors(reader.errors) }
        return builder.model
    }
}

// MARK: - Bundles

extension MappingLoader {
    /// Where the mapping file of the step `from` → `to` of a bundle is expected:
    /// `<bundle folder>/mappings/<from>-to-<to>.yml` (or `.yaml` when only that exists); nil
    /// when the bundle was not read from a file.
    public static func mappingFilePath(in bundle: ModelBundle, from: String, to: String) -> String? {
        guard let file = bundle.location?.file else { return nil }
        var isDirectory: ObjCBool = false
        let folder =
            FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) && isDirectory.boolValue
            ? file : (file as NSString).deletingLastPathComponent
        let mappings = (folder as NSString).appendingPathComponent("mappings")
        let yml = (mappings as NSString).appendingPathComponent("\(from)-to-\(to).yml")
        let yaml = (mappings as NSString).appendingPathComponent("\(from)-to-\(to).yaml")
        if !FileManager.default.fileExists(atPath: yml), FileManager.default.fileExists(atPath: yaml) { return yaml }
        return yml
    }

    /// The mapping file of the step `from` → `to` when it exists, else nil.
    public static func existingMappingFile(in bundle: ModelBundle, from: String, to: String) -> String? {
        guard let path = mappingFilePath(in: bundle, from: from, to: to), FileManager.default.fileExists(atPath: path)
        else { return nil }
        return path
    }

    /// The mapping of one adjacent version step of `bundle`, found as a migration finds it
    /// (`MigrationMappings`): its mapping file, an Xcode mapping model beside the model
    /// package, else the inferred mapping.
    /// - Throws: `FerryErrors` for a bad mapping file or mapping model; `FerryError`
    ///   (`.migration`) when there is none and inference refuses a change.
    public func mapping(
        for step: ModelDiff, in bundle: ModelBundle, parameters: [String: Value] = [:]
    ) throws -> MappingModel {
        try MigrationMappings.provider(for: bundle, parameters: parameters)(step.source, step.destination)
    }
}

// MARK: - Reading

private struct Builder {
    typealias EntityMapping = MappingModel.EntityMapping

    let path: String
    let source: ObjectModel
    let destination: ObjectModel
    let parameters: [String: Value]
    let reader: DefinitionReader
    let diff: ModelDiff
    var model: MappingModel
    /// The file's entity entries, by mapping name, once read.
    var entries: [String: EntityEntry] = [:]
    var entitiesLocation: InputLocation?
    /// Entity entries that could not be read (already reported): their refusals are not.
    var unreadable: Set<String> = []

    /// What the file says about one entity mapping.
    struct EntityEntry {
        var name: String
        var keyLocation: InputLocation
        var mapping: YAMLMapping
        /// The file set `source:` (to another entity or to none) or `distinct:`: attributes and
        /// relationships were inferred again for it, and refusals of the diff do not apply.
        var reinferred = false
        var attributes: Set<String> = []
        var relationships: Set<String> = []
    }

    init(
        path: String, source: ObjectModel, destination: ObjectModel, parameters: [String: Value],
        reader: DefinitionReader
    ) {
        self.path = path
        self.source = source
        self.destination = destination
        self.parameters = parameters
        self.reader = reader
        diff = ModelDiff(from: source, to: destination)
        model = MappingModel(
            source: source, destination: destination, inferred: diff.bestEffortMapping(),
            location: InputLocation(file: path, line: 1, column: 1))
    }

    var fileStart: InputLocation { InputLocation(file: path, line: 1, column: 1) }

    mutating func read(_ root: YAMLNode) {
        guard let top = reader.mapping(root, for: "the mapping file") else { return }
        reader.checkKeys(top, allowed: MappingLoader.topKeys, in: "the mapping file")
        checkFileName()
        checkVersion(top["from"], key: "from", model: source, role: "source")
        checkVersion(top["to"], key: "to", model: destination, role: "destination")
        entitiesLocation = top.keyLocation("entities")
        var order: [String] = []
        if let node = top["entities"], let entities = reader.mapping(node, for: "entities") {
            for entry in entities.entries {
                if let name = readEntity(entry) { order.append(name) } else { unreadable.insert(entry.key) }
            }
        }
        for name in order { readProperties(of: name) }
        checkRefusals()
        checkReinferred(order)
        reorder()
    }

    // MARK: Versions

    /// A file named `A-to-B.yml` must be used for the step A → B.
    func checkFileName() {
        let base = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        let parts = base.components(separatedBy: "-to-")
        guard parts.count == 2, parts[0] != source.version || parts[1] != destination.version else { return }
        reader.fail(
            "the mapping file '\((path as NSString).lastPathComponent)' is named for versions \(parts[0]) → \(parts[1]), but it is used for \(source.name) \(source.version) → \(destination.version)",
            at: fileStart,
            notes: ["name it \(source.version)-to-\(destination.version).yml, or use it for the step its name says"])
    }

    func checkVersion(_ node: YAMLNode?, key: String, model: ObjectModel, role: String) {
        guard let node, let label = reader.string(node, for: key) else { return }
        if label != model.version {
            reader.fail(
                "'\(key): \(label)' does not match the \(role) model, \(model.name) version \(model.version)",
                at: node.location)
        }
    }

    // MARK: Entity mappings

    /// Reads an entity entry's mapping-level keys; returns its mapping name.
    mutating func readEntity(_ entry: YAMLMapping.Entry) -> String? {
        guard let mapping = reader.mapping(entry.value, for: entry.key) else { return nil }
        reader.checkKeys(mapping, allowed: MappingLoader.entityKeys, in: "the mapping of '\(entry.key)'")
        let name = entry.key
        var destinationName = name
        if let node = mapping["entity"] {
            guard let entity = reader.string(node, for: "entity") else { return nil }
            guard destination.entity(named: entity) != nil else {
                reader.fail(
                    "unknown destination entity '\(entity)' in \(destination.name) version \(destination.version)\(Suggestions.didYouMean(entity, in: destination.entityNames))",
                    at: node.location)
                return nil
            }
            if entity != name, destination.entity(named: name) != nil {
                reader.fail(
                    "the mapping name '\(name)' is an entity of \(destination.name) version \(destination.version); give a mapping into \(entity) another name",
                    at: entry.keyLocation)
                return nil
            }
            destinationName = entity
        } else if destination.entity(named: name) == nil {
            reader.fail(
                "unknown destination entity '\(name)' in \(destination.name) version \(destination.version)\(Suggestions.didYouMean(name, in: destination.entityNames))",
                at: entry.keyLocation,
                notes: ["a second mapping into an entity needs `entity:` naming it"])
            return nil
        }
        guard let destinationEntity = destination.entity(named: destinationName) else { return nil }

        var index = model.entities.firstIndex { $0.name == name }
        let isNew = index == nil
        if index == nil {
            // A second mapping into the entity, placed after the others into it.
            let created = EntityMapping(
                name: name, destination: destinationName, source: nil, attributes: [], relationships: [])
            let position =
                (model.entities.lastIndex { $0.destination == destinationName } ?? (model.entities.count - 1)) + 1
            model.entities.insert(created, at: position)
            index = position
        }
        guard let index else { return nil }
        var result = model.entities[index]
        result.location = entry.keyLocation
        var fileEntry = EntityEntry(name: name, keyLocation: entry.keyLocation, mapping: mapping)

        var sourceName = result.source
        var sourceGiven = false
        if let node = mapping["source"] {
            sourceGiven = true
            if node.isNull {
                sourceName = nil
            } else if let text = reader.string(node, for: "source") {
                if source.entity(named: text) != nil {
                    sourceName = text
                } else if text == "none" {
                    sourceName = nil
                } else {
                    reader.fail(
                        "unknown source entity '\(text)' in \(source.name) version \(source.version)\(Suggestions.didYouMean(text, in: source.entityNames))",
                        at: node.location)
                    return nil
                }
            }
        } else if isNew {
            reader.fail(
                "the mapping '\(name)' into \(destinationName) needs a 'source' (an entity of \(source.name) version \(source.version))",
                at: entry.keyLocation)
            return nil
        }
        let sourceEntity = sourceName.flatMap { source.entity(named: $0) }

        if let node = mapping["distinct"], let text = reader.string(node, for: "distinct") {
            if sourceEntity == nil {
                reader.fail("'distinct' needs a source entity, but the mapping '\(name)' has none", at: node.location)
            } else if checkExpression(text, at: node.textLocation, key: "distinct", source: sourceEntity) {
                result.distinct = text
                result.distinctLocation = node.textLocation
            }
        }
        if let node = mapping["filter"], let text = reader.string(node, for: "filter") {
            if let sourceEntity {
                do {
                    _ = try Predicate(format: text, location: node.textLocation).bound(to: sourceEntity, model: source)
                    result.filter = text
                    result.filterLocation = node.textLocation
                } catch {
                    reader.record(error)
                }
            } else {
                reader.fail("'filter' needs a source entity, but the mapping '\(name)' has none", at: node.location)
            }
        }
        if let node = mapping["policy"], let text = reader.string(node, for: "policy") {
            if Self.isIdentifier(text) {
                result.policy = text
                result.policyLocation = node.location
            } else {
                reader.fail(
                    "'policy' names a registered policy, like PhoneNormalizer; '\(text)' is not a name",
                    at: node.location)
            }
        }

        if isNew || (sourceGiven && sourceName != result.source) || result.distinct != nil {
            result.source = sourceName
            reinfer(&result, into: destinationEntity, from: sourceEntity)
            fileEntry.reinferred = true
        } else if sourceGiven {
            fileEntry.reinferred = sourceName == nil
            result.source = sourceName
        }
        model.entities[index] = result
        entries[name] = fileEntry
        return name
    }

    /// Infers attribute and relationship values anew for a mapping whose source the file chose:
    /// same-named attributes are copied (widened when lossless), others get their default or nil;
    /// same-named relationships are carried. A `distinct` mapping copies nothing.
    func reinfer(_ mapping: inout EntityMapping, into entity: EntityDescription, from sourceEntity: EntityDescription?)
    {
        let copies = mapping.distinct == nil ? sourceEntity : nil
        mapping.attributes = entity.attributes.map { attribute in
            let fill = attribute.isOptional ? Value.null : (attribute.defaultValue ?? .null)
            if let old = copies?.attribute(named: attribute.name) {
                if old.type == attribute.type {
                    return MappingModel.AttributeMapping(
                        destination: attribute.name, value: .copy(source: old.name, conversion: nil, valueIfNil: fill))
                }
                if let conversion = TypeConversion(from: old.type, to: attribute.type) {
                    return MappingModel.AttributeMapping(
                        destination: attribute.name,
                        value: .copy(source: old.name, conversion: conversion, valueIfNil: fill))
                }
            }
            return MappingModel.AttributeMapping(
                destination: attribute.name, value: .constant(attribute.defaultValue ?? .null))
        }
        mapping.relationships = entity.relationships.map { relationship in
            if let old = copies?.relationship(named: relationship.name) {
                return MappingModel.RelationshipMapping(destination: relationship.name, value: .carry(source: old.name))
            }
            return MappingModel.RelationshipMapping(destination: relationship.name, value: .none)
        }
    }

    // MARK: Attributes and relationships

    mutating func readProperties(of name: String) {
        guard var entry = entries[name], let index = model.entities.firstIndex(where: { $0.name == name }),
            let entity = destination.entity(named: model.entities[index].destination)
        else { return }
        var mapping = model.entities[index]
        let sourceEntity = mapping.source.flatMap { source.entity(named: $0) }
        if let node = entry.mapping["attributes"], let attributes = reader.mapping(node, for: "attributes") {
            for item in attributes.entries {
                guard let attribute = entity.attribute(named: item.key) else {
                    if entity.relationship(named: item.key) != nil {
                        reader.fail(
                            "'\(item.key)' is a relationship of \(entity.name); map it under 'relationships'",
                            at: item.keyLocation)
                    } else {
                        reader.fail(
                            "\(entity.name) has no attribute '\(item.key)'\(Suggestions.didYouMean(item.key, in: entity.attributes.map(\.name)))",
                            at: item.keyLocation)
                    }
                    continue
                }
                entry.attributes.insert(attribute.name)
                guard let value = attributeValue(item.value, for: attribute, of: entity, sourceEntity: sourceEntity),
                    let position = mapping.attributes.firstIndex(where: { $0.destination == attribute.name })
                else { continue }
                mapping.attributes[position] = MappingModel.AttributeMapping(
                    destination: attribute.name, value: value.0, location: value.1)
            }
        }
        if let node = entry.mapping["relationships"], let relationships = reader.mapping(node, for: "relationships") {
            for item in relationships.entries {
                guard let relationship = entity.relationship(named: item.key) else {
                    if entity.attribute(named: item.key) != nil {
                        reader.fail(
                            "'\(item.key)' is an attribute of \(entity.name); map it under 'attributes'",
                            at: item.keyLocation)
                    } else {
                        reader.fail(
                            "\(entity.name) has no relationship '\(item.key)'\(Suggestions.didYouMean(item.key, in: entity.relationships.map(\.name)))",
                            at: item.keyLocation)
                    }
                    continue
                }
                entry.relationships.insert(relationship.name)
                guard
                    let value = relationshipValue(
                        item.value, for: relationship, of: entity, mapping: mapping, sourceEntity: sourceEntity),
                    let position = mapping.relationships.firstIndex(where: { $0.destination == relationship.name })
                else { continue }
                mapping.relationships[position] = MappingModel.RelationshipMapping(
                    destination: relationship.name, value: value, location: item.value.textLocation)
            }
        }
        model.entities[index] = mapping
        entries[name] = entry
    }

    /// An attribute's value: an expression (a scalar), nil (null), `{value: constant}` or
    /// `{source: attribute}`; with the location of the value's text.
    func attributeValue(
        _ node: YAMLNode, for attribute: AttributeDescription, of entity: EntityDescription,
        sourceEntity: EntityDescription?
    ) -> (MappingModel.AttributeValue, InputLocation)? {
        let subject = "\(entity.name).\(attribute.name)"
        switch node.content {
        case .scalar(_, isNull: true):
            guard attribute.isOptional else {
                reader.fail("\(subject) is non-optional; it cannot be set to nil", at: node.location)
                return nil
            }
            return (.constant(.null), node.location)
        case .scalar:
            guard let text = reader.string(node, for: attribute.name),
                checkExpression(
                    text, at: node.textLocation, key: attribute.name, source: sourceEntity, fitting: attribute)
            else { return nil }
            return (.expression(text), node.textLocation)
        case .sequence:
            reader.wrongType("an expression, {value: …} or {source: …}", for: attribute.name, found: node)
            return nil
        case .mapping:
            guard let mapping = reader.mapping(node, for: attribute.name) else { return nil }
            reader.checkKeys(mapping, allowed: MappingLoader.attributeValueKeys, in: "the value of '\(attribute.name)'")
            switch (mapping["value"], mapping["source"]) {
            case (.some(let valueNode), nil):
                if valueNode.isNull {
                    return attributeValue(valueNode, for: attribute, of: entity, sourceEntity: sourceEntity)
                }
                guard let text = reader.string(valueNode, for: "value") else { return nil }
                switch Coercion.coerce(text, to: attribute.type) {
                case .success(let value): return (.constant(value), valueNode.textLocation)
                case .failure(let failure):
                    reader.fail(
                        "the value for \(subject) is not a valid \(attribute.type.rawValue): \(failure.reason)",
                        at: valueNode.textLocation)
                    return nil
                }
            case (nil, .some(let sourceNode)):
                guard let name = reader.string(sourceNode, for: "source") else { return nil }
                guard let sourceEntity else {
                    reader.fail(
                        "'source: \(name)' needs a source entity, but the mapping has none", at: sourceNode.location)
                    return nil
                }
                guard let old = sourceEntity.attribute(named: name) else {
                    reader.fail(
                        "source entity \(sourceEntity.name) has no attribute '\(name)'\(Suggestions.didYouMean(name, in: sourceEntity.attributes.map(\.name)))",
                        at: sourceNode.location)
                    return nil
                }
                let conversion = TypeConversion(from: old.type, to: attribute.type)
                guard old.type == attribute.type || conversion != nil else {
                    reader.fail(
                        "\(sourceEntity.name).\(old.name) is \(old.type.rawValue) and \(subject) is \(attribute.type.rawValue); only lossless widenings are copied, convert it with an expression",
                        at: sourceNode.location)
                    return nil
                }
                let fill = attribute.isOptional ? Value.null : (attribute.defaultValue ?? .null)
                return (.copy(source: old.name, conversion: conversion, valueIfNil: fill), sourceNode.location)
            default:
                reader.fail(
                    "the value of '\(attribute.name)' needs one of 'value' (a constant) or 'source' (a source attribute)",
                    at: node.location)
                return nil
            }
        }
    }

    /// A relationship's value: `{mapping: name}`, `{source: relationship}` or `none` (null).
    func relationshipValue(
        _ node: YAMLNode, for relationship: RelationshipDescription, of entity: EntityDescription,
        mapping: EntityMapping,
        sourceEntity: EntityDescription?
    ) -> MappingModel.RelationshipValue? {
        let subject = "\(entity.name).\(relationship.name)"
        switch node.content {
        case .scalar(_, isNull: true):
            return MappingModel.RelationshipValue.none
        case .scalar(let text, _) where text == "none":
            return MappingModel.RelationshipValue.none
        case .mapping:
            break
        default:
            reader.wrongType("{mapping: …}, {source: …} or none", for: relationship.name, found: node)
            return nil
        }
        guard let values = reader.mapping(node, for: relationship.name) else { return nil }
        reader.checkKeys(
            values, allowed: MappingLoader.relationshipValueKeys, in: "the value of '\(relationship.name)'")
        switch (values["mapping"], values["source"]) {
        case (.some(let mappingNode), nil):
            guard let name = reader.string(mappingNode, for: "mapping") else { return nil }
            guard let target = model.entity(named: name) else {
                reader.fail(
                    "no entity mapping named '\(name)'\(Suggestions.didYouMean(name, in: model.entities.map(\.name)))",
                    at: mappingNode.location)
                return nil
            }
            guard target.destination == relationship.destination else {
                reader.fail(
                    "the mapping '\(name)' makes \(target.destination) objects, but \(subject) links to \(relationship.destination)",
                    at: mappingNode.location)
                return nil
            }
            guard let ownSource = mapping.source, target.source == ownSource else {
                reader.fail(
                    "the mapping '\(name)' maps from \(target.source ?? "no entity"), but '\(mapping.name)' maps from \(mapping.source ?? "no entity"); `mapping:` links the objects made from the same source object",
                    at: mappingNode.location)
                return nil
            }
            return .fromMapping(name)
        case (nil, .some(let sourceNode)):
            guard let name = reader.string(sourceNode, for: "source") else { return nil }
            guard let sourceEntity else {
                reader.fail(
                    "'source: \(name)' needs a source entity, but the mapping '\(mapping.name)' has none",
                    at: sourceNode.location)
                return nil
            }
            if name.contains(".") {
                return keyPath(name, at: sourceNode.location, for: relationship, of: entity, from: sourceEntity)
            }
            guard sourceEntity.relationship(named: name) != nil else {
                let hint =
                    sourceEntity.attribute(named: name) != nil
                    ? "; it is an attribute (use `mapping:` to link to objects made from it)"
                    : Suggestions.didYouMean(name, in: sourceEntity.relationships.map(\.name))
                reader.fail(
                    "source entity \(sourceEntity.name) has no relationship '\(name)'\(hint)", at: sourceNode.location)
                return nil
            }
            return .carry(source: name)
        default:
            reader.fail(
                "the value of '\(relationship.name)' needs one of 'mapping' (an entity mapping's name) or 'source' (a source relationship)",
                at: node.location)
            return nil
        }
    }

    /// `{source: country.continent}`: a chain of to-one source relationships, into a to-one
    /// relationship stored on this side, linking the object made from the one it reaches.
    func keyPath(
        _ text: String, at location: InputLocation, for relationship: RelationshipDescription,
        of entity: EntityDescription, from sourceEntity: EntityDescription
    ) -> MappingModel.RelationshipValue? {
        let path = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var current = sourceEntity
        for name in path {
            guard let hop = current.relationship(named: name) else {
                reader.fail(
                    "'\(text)': \(current.name) has no relationship '\(name)'\(Suggestions.didYouMean(name, in: current.relationships.map(\.name)))",
                    at: location)
                return nil
            }
            guard !hop.isToMany, let next = source.entity(named: hop.destination) else {
                reader.fail(
                    "'\(text)': \(current.name).\(name) is to-many; a key path follows to-one relationships",
                    at: location)
                return nil
            }
            current = next
        }
        guard !relationship.isToMany,
            case .foreignKey = FerryLayout().storage(of: relationship, in: entity, model: destination)
        else {
            reader.fail(
                "'\(text)' links one object; \(entity.name).\(relationship.name) is \(relationship.isToMany ? "to-many" : "stored on its inverse's side"): set its inverse instead",
                at: location)
            return nil
        }
        guard
            model.entities.contains(where: { $0.source == current.name && $0.destination == relationship.destination })
        else {
            reader.fail(
                "'\(text)' reaches \(current.name) objects, but no mapping makes \(relationship.destination) objects from them",
                at: location)
            return nil
        }
        return .keyPath(path)
    }

    // MARK: Coverage

    /// Reports every change inference refused that the file does not cover.
    func checkRefusals() {
        for change in diff.refusals {
            let entry = entries[change.entity]
            if entry?.reinferred == true || unreadable.contains(change.entity) { continue }
            let location = entry?.keyLocation ?? entitiesLocation ?? fileStart
            let reason = change.reason ?? change.detail
            guard let property = change.property else {
                if entry?.mapping["source"] != nil { continue }
                reader.fail(
                    "the file does not cover \(change.subject): \(reason); add `source: …` under `\(change.entity)` in this file",
                    at: location)
                continue
            }
            if entry?.attributes.contains(property) == true || entry?.relationships.contains(property) == true {
                continue
            }
            let section =
                destination.entity(named: change.entity)?.relationship(named: property) != nil
                ? "relationships" : "attributes"
            reader.fail(
                "the file does not cover \(change.subject): \(reason); add `\(section): {\(property): …}` under `\(change.entity)` in this file",
                at: location)
        }
    }

    /// For mappings whose source the file chose: every non-optional attribute without a value
    /// and every non-optional relationship left empty that the file does not mention.
    func checkReinferred(_ order: [String]) {
        for name in order {
            guard let entry = entries[name], entry.reinferred, let mapping = model.entity(named: name),
                mapping.source != nil,
                let entity = destination.entity(named: mapping.destination)
            else { continue }
            for attribute in entity.attributes where !attribute.isOptional && !entry.attributes.contains(attribute.name)
            {
                guard case .constant(.null) = mapping.attribute(named: attribute.name)?.value else { continue }
                reader.fail(
                    "the mapping '\(name)' gives non-optional \(entity.name).\(attribute.name) no value (\(mapping.source ?? "") has no attribute of that name and type, and it has no default); add `attributes: {\(attribute.name): …}` under `\(name)` in this file",
                    at: entry.keyLocation)
            }
            for relationship in entity.relationships
            where !relationship.isOptional && !entry.relationships.contains(relationship.name) {
                guard mapping.relationship(named: relationship.name)?.value == MappingModel.RelationshipValue.none
                else { continue }
                reader.fail(
                    "the mapping '\(name)' leaves non-optional \(entity.name).\(relationship.name) empty; add `relationships: {\(relationship.name): …}` under `\(name)` in this file",
                    at: entry.keyLocation)
            }
        }
    }

    // MARK: Order

    /// Puts mappings that others name in `mapping:` before them, keeping model order otherwise.
    mutating func reorder() {
        let order = model.orderedByReferences()
        if let first = order.cycle.first {
            reader.fail(
                "the mappings \(order.cycle.map { "'\($0.name)'" }.joined(separator: ", ")) refer to each other through `mapping:`; one of them must run first",
                at: first.location ?? fileStart)
            return
        }
        model.entities = order.ordered
    }

    // MARK: Helpers

    /// Parses a value expression, binds it to the source entity (and the mapping parameters)
    /// and, for an attribute's value, checks that its result fits the attribute; records the
    /// problems, located in the file.
    func checkExpression(
        _ text: String, at location: InputLocation, key: String, source sourceEntity: EntityDescription?,
        fitting attribute: AttributeDescription? = nil
    ) -> Bool {
        if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            reader.fail("the expression for '\(key)' is empty", at: location)
            return false
        }
        do {
            let bound = try Expression.parse(text, location: location).bind(
                source: sourceEntity, model: source, parameters: parameters)
            if let attribute { _ = try bound.fitted(to: attribute) }
            return true
        } catch {
            reader.record(error)
            return false
        }
    }

    static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic)
        else { return false }
        return text.unicodeScalars.allSatisfy {
            $0 == "_" || $0 == "." || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
        }
    }
}
