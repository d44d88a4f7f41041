import Foundation

/// Encodes a model version as Core Data caches it in a store's `Z_MODELCACHE`: raw DEFLATE of
/// an `NSKeyedArchiver` archive whose root is an `NSManagedObjectModel` (COREDATA.md §2.2,
/// Appendix B), the inverse of ``CachedModelDecoder``.
///
/// The archive has the classes and keys of the real caches: `NSEntities` an
/// `NSKnownKeysDictionary1` of the entities by name; each `NSEntityDescription` with
/// `NSProperties` listing its inherited properties too (the ancestor's own description objects),
/// `NSSubentities`, `NSSuperentity`, `NSRenamingIdentifier` (the name when none is given),
/// `NSUniqueTuples`, `NSFetchIndexDescriptions` mirrored into `NSCompoundIndexes`; attributes
/// with their `NSAttributeType` code, value class, default value, `_P` bits (0xF1, plus 0x02 when
/// optional and 0x08 when transient), `NSFlagsKey` 16 for preserve-after-deletion;
/// relationships with destination and inverse (objects and names), `NSMinCount`/`NSMaxCount`
/// (a to-one 1, a to-many its bound or 0), `NSDeleteRule` and `NSIsOrdered`.
///
/// Not written: predicates (of fetched properties and fetch request templates: a template with
/// a predicate is left out rather than cached without it), derivations (a new store whose model
/// has a derived attribute keeps an empty cache; migrations to such a version are refused),
/// validation predicates and the external-storage flag.
/// Whether Core Data itself accepts the cache is not known (it does not run on Linux).
package enum CachedModelEncoder {
    /// The blob of `Z_MODELCACHE.Z_CONTENT` for `model`.
    package static func modelCache(for model: ObjectModel) throws -> [UInt8] {
        try RawDeflate.deflate(archive(model))
    }

    /// The keyed archive (uncompressed) of `model`.
    package static func archive(_ model: ObjectModel) -> [UInt8] {
        var encoder = Encoder(model: model)
        return encoder.encode()
    }

    /// `NSDeleteRule` codes.
    static let deleteRuleCodes: [DeleteRule: Int64] = [.noAction: 0, .nullify: 1, .cascade: 2, .deny: 3]

    /// `_P` of every property in the real caches: 0xF1, 0x02 set when optional, 0x08 when
    /// transient (the other bits' meanings are not known).
    static func propertyFlags(optional: Bool, transient: Bool) -> Int64 {
        0xF1 | (optional ? 0x02 : 0) | (transient ? 0x08 : 0)
    }

    /// The class Core Data gives an attribute's values (`NSAttributeValueClassName`).
    static func valueClassName(_ attribute: AttributeDescription) -> String? {
        switch attribute.coreDataKind {
        case .transformable(_, let valueClass): return valueClass
        case .objectID, .undefined: return nil
        case nil: break
        }
        switch attribute.type {
        case .int16, .int32, .int64, .double, .float, .bool: return "NSNumber"
        case .decimal: return "NSDecimalNumber"
        case .string, .json: return "NSString"
        case .date: return "NSDate"
        case .binary: return "NSData"
        case .uuid: return "NSUUID"
        case .uri: return "NSURL"
        }
    }

    private struct Encoder {
        let model: ObjectModel
        var writer = KeyedArchiveWriter()
        /// Entity name → its description's reference.
        var entityReferences: [String: PropertyListValue] = [:]
        /// (declaring entity, property name) → the property description's reference.
        var propertyReferences: [String: [String: PropertyListValue]] = [:]

        init(model: ObjectModel) { self.model = model }

        mutating func encode() -> [UInt8] {
            let root = writer.reserve()
            let entities = model.entities.sorted { $0.name < $1.name }
            for entity in entities {
                entityReferences[entity.name] = writer.reserve()
                for name in ownPropertyNames(entity) {
                    propertyReferences[entity.name, default: [:]][name] = writer.reserve()
                }
            }
            for entity in entities { define(entity, root: root) }
            var fields: [(String, PropertyListValue)] = [
                ("NSEntities", knownKeysDictionary(entities.map { ($0.name, entityReferences[$0.name] ?? .null) })),
                ("NSFetchRequestTemplates", fetchRequestTemplates()),
                (
                    "NSVersionIdentifiers",
                    writer.array([writer.string(model.versionIdentifier ?? "")], className: "NSSet")
                ),
            ]
            if !model.configurations.isEmpty {
                fields.append(
                    (
                        "NSConfigurations",
                        writer.dictionary(
                            model.configurations.map { configuration in
                                (
                                    configuration.name,
                                    writer.array(
                                        configuration.entities.map { entityReferences[$0] ?? writer.string($0) })
                                )
                            })
                    ))
            }
            writer.define(root, className: "NSManagedObjectModel", fields: fields)
            return writer.encode(root: root)
        }

        /// Names of the properties `entity` declares (not those an ancestor declares, even when
        /// a flattened model repeats them).
        func ownPropertyNames(_ entity: EntityDescription) -> [String] {
            let inherited = Set(
                model.ancestors(of: entity).flatMap { $0.propertyNames + $0.fetchedProperties.map(\.name) })
            return (entity.propertyNames + entity.fetchedProperties.map(\.name)).filter { !inherited.contains($0) }
        }

        /// The reference of property `name` as `entity` sees it (its own or an ancestor's).
        func propertyReference(_ name: String, in entity: EntityDescription) -> PropertyListValue? {
            for owner in [entity] + model.ancestors(of: entity) {
                if let reference = propertyReferences[owner.name]?[name] { return reference }
            }
            return nil
        }

        mutating func define(_ entity: EntityDescription, root: PropertyListValue) {
            guard let reference = entityReferences[entity.name] else { return }
            let own = Set(ownPropertyNames(entity))
            var indexed: Set<String> = []
            var fetchIndexes: [PropertyListValue] = []
            var compoundIndexes: [PropertyListValue] = []
            for index in entity.indexes {
                let elements = index.attributes.map { propertyReference($0, in: entity) ?? writer.string($0) }
                if let name = index.name {
                    let descriptions = index.attributes.map { attribute in
                        writer.object(
                            className: "NSFetchIndexElementDescription",
                            fields: [
                                ("NSPropertyName", writer.string(attribute)), ("NSFetchIndexElementType", .integer(0)),
                                ("NSAscending", .bool(!index.descending.contains(attribute))),
                            ])
                    }
                    fetchIndexes.append(
                        writer.object(
                            className: "NSFetchIndexDescription",
                            fields: [
                                ("NSIndexName", writer.string(name)),
                                ("NSIndexElements", writer.array(descriptions, className: "NSMutableArray")),
                                ("NSPartialIndexPredicate", KeyedArchiveWriter.null),
                            ]))
                    compoundIndexes.append(writer.array(elements))
                } else if index.attributes.count == 1, own.contains(index.attributes[0]),
                    entity.attribute(named: index.attributes[0]) != nil
                {
                    indexed.insert(index.attributes[0])
                } else {
                    compoundIndexes.append(writer.array(elements))
                }
            }
            for attribute in entity.attributes where own.contains(attribute.name) {
                define(attribute, of: entity, indexed: indexed.contains(attribute.name))
            }
            for relationship in entity.relationships where own.contains(relationship.name) {
                define(relationship, of: entity)
            }
            for fetched in entity.fetchedProperties where own.contains(fetched.name) {
                define(fetched, of: entity)
            }
            var everyName: Set<String> = []
            for owner in [entity] + model.ancestors(of: entity) {
                everyName.formUnion(owner.propertyNames + owner.fetchedProperties.map(\.name))
            }
            let properties = everyName.sorted().compactMap { name in
                propertyReference(name, in: entity).map { (key: name, value: $0) }
            }
            let subentities = model.subentities(of: entity.name).sorted { $0.name < $1.name }
            var fields: [(String, PropertyListValue)] = [
                ("NSEntityName", writer.string(entity.name)),
                ("NSClassNameForEntity", writer.string(entity.className)),
                ("NSProperties", writer.dictionary(properties, className: "NSMutableDictionary")),
                (
                    "NSSubentities",
                    writer.dictionary(
                        subentities.map { (key: $0.name, value: entityReferences[$0.name] ?? KeyedArchiveWriter.null) },
                        className: "NSMutableDictionary")
                ),
                ("NSSuperentity", entity.parent.flatMap { entityReferences[$0] } ?? KeyedArchiveWriter.null),
                ("NSManagedObjectModel", root),
                ("NSRenamingIdentifier", writer.string(entity.renamedFrom ?? entity.name)),
                ("NSVersionHashModifier", writer.string(entity.hashModifier)),
                ("NSUserInfo", userInfo(entity.userInfo)),
                ("NSFetchIndexDescriptions", writer.array(fetchIndexes, className: "NSMutableArray")),
                ("NSCompoundIndexes", writer.array(compoundIndexes, className: "NSMutableArray")),
            ]
            if entity.isAbstract { fields.append(("NSIsAbstract", .bool(true))) }
            // The constraints the entity declares itself (a flattened model repeats its ancestors').
            let constraints = CoreDataVersionHashes.ownConstraints(of: entity, in: model)
            if !constraints.isEmpty {
                fields.append(
                    ("NSUniqueTuples", writer.array(constraints.map { writer.array($0.map { writer.string($0) }) })))
            }
            writer.define(reference, className: "NSEntityDescription", fields: fields)
        }

        /// Fields every property description has.
        mutating func propertyFields(
            name: String, of entity: EntityDescription, optional: Bool, transient: Bool, renamedFrom: String?,
            hashModifier: String?, userInfo info: [String: String]
        ) -> [(String, PropertyListValue)] {
            var fields: [(String, PropertyListValue)] = [
                ("NSPropertyName", writer.string(name)),
                ("NSEntity", entityReferences[entity.name] ?? KeyedArchiveWriter.null),
                ("_P", .integer(CachedModelEncoder.propertyFlags(optional: optional, transient: transient))),
                ("NSRenamingIdentifier", writer.string(renamedFrom ?? name)),
            ]
            if optional { fields.append(("NSIsOptional", .bool(true))) }
            if transient { fields.append(("NSIsTransient", .bool(true))) }
            if let hashModifier { fields.append(("NSVersionHashModifier", writer.string(hashModifier))) }
            if !info.isEmpty { fields.append(("NSUserInfo", userInfo(info))) }
            return fields
        }

        mutating func define(_ attribute: AttributeDescription, of entity: EntityDescription, indexed: Bool) {
            guard let reference = propertyReferences[entity.name]?[attribute.name] else { return }
            var fields = propertyFields(
                name: attribute.name, of: entity, optional: attribute.isOptional, transient: attribute.isTransient,
                renamedFrom: attribute.renamedFrom, hashModifier: attribute.hashModifier, userInfo: attribute.userInfo)
            var transformer: String?
            if case .transformable(let name, _) = attribute.coreDataKind { transformer = name }
            fields += [
                ("NSAttributeType", .integer(Int64(CoreDataVersionHashes.attributeTypeCode(attribute)))),
                ("NSAttributeValueClassName", writer.string(CachedModelEncoder.valueClassName(attribute))),
                ("NSDefaultValue", defaultValue(attribute.defaultValue)),
                ("NSValueTransformerName", writer.string(transformer)),
                ("NSFlagsKey", .integer(attribute.preservesAfterDeletion ? 16 : 0)),
            ]
            if indexed { fields.append(("NSIsIndexed", .bool(true))) }
            writer.define(reference, className: "NSAttributeDescription", fields: fields)
        }

        mutating func define(_ relationship: RelationshipDescription, of entity: EntityDescription) {
            guard let reference = propertyReferences[entity.name]?[relationship.name] else { return }
            var fields = propertyFields(
                name: relationship.name, of: entity, optional: relationship.isOptional, transient: false,
                renamedFrom: relationship.renamedFrom, hashModifier: relationship.hashModifier,
                userInfo: relationship.userInfo)
            let destination = model.entity(named: relationship.destination)
            let inverse = relationship.inverse.flatMap { name in destination.flatMap { propertyReference(name, in: $0) }
            }
            fields += [
                ("NSDestinationEntity", entityReferences[relationship.destination] ?? KeyedArchiveWriter.null),
                ("_NSDestinationEntityName", writer.string(relationship.destination)),
                ("NSInverseRelationship", inverse ?? KeyedArchiveWriter.null),
                ("_NSInverseRelationshipName", writer.string(relationship.inverse)),
                ("NSMinCount", .integer(Int64(relationship.minCount ?? 0))),
                ("NSMaxCount", .integer(Int64(relationship.isToMany ? relationship.maxCount ?? 0 : 1))),
                ("NSDeleteRule", .integer(CachedModelEncoder.deleteRuleCodes[relationship.deleteRule] ?? 1)),
            ]
            if relationship.isOrdered { fields.append(("NSIsOrdered", .bool(true))) }
            writer.define(reference, className: "NSRelationshipDescription", fields: fields)
        }

        mutating func define(_ fetched: FetchedPropertyDescription, of entity: EntityDescription) {
            guard let reference = propertyReferences[entity.name]?[fetched.name] else { return }
            var fields = propertyFields(
                name: fetched.name, of: entity, optional: true, transient: true, renamedFrom: nil, hashModifier: nil,
                userInfo: [:])
            fields += [
                ("NSFetchRequest", fetchRequest(entity: fetched.entity, limit: nil, batchSize: nil)),
                ("_NSFetchRequestEntityName", writer.string(fetched.entity)),
            ]
            writer.define(reference, className: "NSFetchedPropertyDescription", fields: fields)
        }

        /// Templates without a predicate (one with a predicate is left out: ferry does not
        /// archive predicates, and a template cached without its filter would fetch everything).
        mutating func fetchRequestTemplates() -> PropertyListValue {
            let templates = model.fetchRequests.filter { $0.predicate == nil }.sorted { $0.name < $1.name }
            guard !templates.isEmpty else { return KeyedArchiveWriter.null }
            return writer.dictionary(
                templates.map {
                    (key: $0.name, value: fetchRequest(entity: $0.entity, limit: $0.limit, batchSize: $0.batchSize))
                })
        }

        mutating func fetchRequest(entity: String, limit: Int?, batchSize: Int?) -> PropertyListValue {
            writer.object(
                className: "NSFetchRequest",
                fields: [
                    ("NSEntity", entityReferences[entity] ?? KeyedArchiveWriter.null),
                    ("_NSFetchRequestEntityName", writer.string(entity)),
                    ("NSPredicate", KeyedArchiveWriter.null), ("NSSortDescriptors", KeyedArchiveWriter.null),
                    ("NSFetchLimit", .integer(Int64(limit ?? 0))), ("NSFetchOffset", .integer(0)),
                    ("NSBatchSize", .integer(Int64(batchSize ?? 0))), ("NSResultType", .integer(0)),
                ])
        }

        /// Core Data's dictionary of a model's entities: `NSKnownKeysDictionary1` with its
        /// `NSKnownKeysMappingStrategy1` of the keys.
        mutating func knownKeysDictionary(_ entries: [(String, PropertyListValue)]) -> PropertyListValue {
            let keys = writer.array(entries.map { writer.string($0.0) })
            let mapping = writer.object(
                className: "NSKnownKeysMappingStrategy1",
                fields: [("keys", keys), ("length", .integer(Int64(entries.count))), ("version", .integer(1))])
            return writer.object(
                className: "NSKnownKeysDictionary1",
                fields: [
                    ("searchMapping", mapping), ("values", writer.array(entries.map(\.1))),
                    ("emptyToken", writer.string("__empty_slot_token_4c24_98dc_ac1e_b773__")),
                    ("version", .integer(1)),
                ])
        }

        mutating func userInfo(_ info: [String: String]) -> PropertyListValue {
            writer.dictionary(info.sorted { $0.key < $1.key }.map { (key: $0.key, value: writer.string($0.value)) })
        }

        /// A default value as Foundation archives it: numbers, booleans, strings and data as
        /// plain values, dates as `NSDate`, decimals as `NSDecimalNumber`, UUIDs as `NSUUID`,
        /// URIs as `NSURL`.
        mutating func defaultValue(_ value: Value?) -> PropertyListValue {
            switch value {
            case nil, .null?: return KeyedArchiveWriter.null
            case .integer(let number)?: return writer.value(.integer(number))
            case .double(let number)?: return writer.value(.real(number))
            case .bool(let flag)?: return writer.value(.bool(flag))
            case .string(let text)?, .json(let text)?: return writer.string(text)
            case .binary(let bytes)?: return writer.value(.data(bytes))
            case .date(let instant)?:
                return writer.object(className: "NSDate", fields: [("NS.time", .real(instant.referenceSeconds))])
            case .uuid(let text)?:
                guard let bytes = CoreDataValueCoding.uuidBytes(text) else { return writer.string(text) }
                return writer.object(className: "NSUUID", fields: [("NS.uuidbytes", .data(bytes))])
            case .uri(let text)?:
                return writer.object(
                    className: "NSURL",
                    fields: [("NS.base", KeyedArchiveWriter.null), ("NS.relative", writer.string(text))])
            case .decimal(let text)?:
                guard let fields = ArchivedDecimal(text)?.fields else { return writer.string(text) }
                return writer.object(className: "NSDecimalNumberPlaceholder", fields: fields)
            }
        }
    }
}
