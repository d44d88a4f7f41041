/// Decodes an archived `NSManagedObjectModel` (a store's inflated `Z_MODELCACHE`, or a compiled
/// `.mom`) into ferry's ``ObjectModel`` (COREDATA.md Appendix B).
///
/// Sub-entities in a cache repeat their inherited properties; they are dropped so that each
/// entity keeps only what it declares, as in an Xcode model. Class names, version hashes and
/// validation predicates are not carried over. Every malformed piece is an error naming
/// `source`, never a crash.
package enum CachedModelDecoder {
    /// `NSAttributeType` codes (COREDATA.md §1.4) and what ferry makes of them.
    static let attributeTypes: [Int64: (type: AttributeType, kind: CoreDataAttributeKind?)] = [
        0: (.binary, .undefined), 100: (.int16, nil), 200: (.int32, nil), 300: (.int64, nil), 400: (.decimal, nil),
        500: (.double, nil), 600: (.float, nil), 700: (.string, nil), 800: (.bool, nil), 900: (.date, nil),
        1000: (.binary, nil), 1100: (.uuid, nil), 1200: (.uri, nil),
        1800: (.binary, .transformable(transformer: nil, valueClass: nil)),
        2000: (.uri, .objectID),
    ]

    /// `NSDeleteRule` codes.
    static let deleteRules: [Int64: DeleteRule] = [0: .noAction, 1: .nullify, 2: .cascade, 3: .deny]

    package static func decode(_ bytes: [UInt8], name: String, version: String, source: String) throws -> ObjectModel {
        let archive = try KeyedArchive(bytes, source: source)
        let root = try archive.root()
        guard root.isKind(of: "NSManagedObjectModel") else {
            throw FerryError(
                .invalidInput, "\(source): the archive holds a \(root.className), not an NSManagedObjectModel")
        }
        let reader = Reader(archive: archive)
        var model = ObjectModel(name: name, version: version, entities: [])
        var inherited: [String: (parent: String?, properties: Set<String>)] = [:]
        for (entityName, reference) in try archive.dictionary(root["NSEntities"]) {
            guard let object = try archive.object(reference), object.isKind(of: "NSEntityDescription") else {
                throw FerryError(.invalidInput, "\(source): entity '\(entityName)' is not an NSEntityDescription")
            }
            let entity = try reader.entity(object, name: entityName)
            inherited[entity.name] = (entity.parent, Set(entity.propertyNames + entity.fetchedProperties.map(\.name)))
            model.entities.append(entity)
        }
        // Keep each entity's own properties only.
        for index in model.entities.indices {
            var ancestors: Set<String> = []
            var seen: Set<String> = [model.entities[index].name]
            var next = model.entities[index].parent
            while let parent = next, seen.insert(parent).inserted, let info = inherited[parent] {
                ancestors.formUnion(info.properties)
                next = info.parent
            }
            guard !ancestors.isEmpty else { continue }
            model.entities[index].attributes.removeAll { ancestors.contains($0.name) }
            model.entities[index].relationships.removeAll { ancestors.contains($0.name) }
            model.entities[index].fetchedProperties.removeAll { ancestors.contains($0.name) }
            // An inherited attribute's `NSIsIndexed` index belongs to the ancestor.
            model.entities[index].indexes.removeAll {
                $0.name == nil && $0.attributes.count == 1 && ancestors.contains($0.attributes[0])
            }
        }
        model.entities.sort { $0.name < $1.name }
        // An Xcode model's empty identifier is cached as the set of one empty string.
        model.versionIdentifier = try archive.array(root["NSVersionIdentifiers"]).compactMap { try archive.string($0) }
            .filter { !$0.isEmpty }.sorted().first
        for (configuration, reference) in try archive.dictionary(root["NSConfigurations"]) {
            let members = try archive.array(reference).map { try reader.entityName($0) }
            model.configurations.append(ModelConfiguration(name: configuration, entities: members.sorted()))
        }
        model.configurations.sort { $0.name < $1.name }
        for (requestName, reference) in try archive.dictionary(root["NSFetchRequestTemplates"]) {
            guard let request = try archive.object(reference) else { continue }
            guard
                let entity = try reader.entityName(
                    request["NSEntity"], fallback: request["_NSFetchRequestEntityName"] ?? request["NSEntityName"])
            else {
                throw FerryError(.invalidInput, "\(source): fetch request '\(requestName)' names no entity")
            }
            var template = FetchRequestTemplate(name: requestName, entity: entity)
            template.limit = try archive.integer(request["NSFetchLimit"]).flatMap { $0 > 0 ? Int(exactly: $0) : nil }
            template.batchSize = try archive.integer(request["NSBatchSize"]).flatMap { $0 > 0 ? Int(exactly: $0) : nil }
            model.fetchRequests.append(template)
        }
        model.fetchRequests.sort { $0.name < $1.name }
        return model
    }

    /// Reads entity and property objects of one archive.
    private struct Reader {
        let archive: KeyedArchive
        var source: String { archive.source }

        func entity(_ object: KeyedArchive.Object, name key: String) throws -> EntityDescription {
            let name = try archive.string(object["NSEntityName"]) ?? key
            var entity = EntityDescription(name: name)
            entity.className = try archive.string(object["NSClassNameForEntity"])
            entity.isAbstract = try archive.bool(object["NSIsAbstract"]) ?? false
            entity.renamedFrom = try renamingIdentifier(object, name: name)
            entity.hashModifier = try nonEmpty(archive.string(object["NSVersionHashModifier"]))
            entity.userInfo = try userInfo(object["NSUserInfo"])
            if object["NSSuperentity"] != nil, let parent = try archive.object(object["NSSuperentity"]) {
                entity.parent = try archive.string(parent["NSEntityName"])
            }
            for (propertyName, reference) in try archive.dictionary(object["NSProperties"]) {
                guard let property = try archive.object(reference) else { continue }
                let path = "\(name).\(propertyName)"
                if property.isKind(of: "NSRelationshipDescription") {
                    entity.relationships.append(try relationship(property, name: propertyName, path: path))
                } else if property.isKind(of: "NSFetchedPropertyDescription") {
                    let target =
                        try entityName(nil, fallback: property["_NSFetchRequestEntityName"])
                        ?? archive.object(property["NSFetchRequest"]).flatMap {
                            try entityName($0["NSEntity"], fallback: $0["_NSFetchRequestEntityName"])
                        }
                    entity.fetchedProperties.append(
                        FetchedPropertyDescription(name: propertyName, entity: target ?? ""))
                } else if property.isKind(of: "NSAttributeDescription") {
                    let attribute = try attribute(property, name: propertyName, path: path)
                    entity.attributes.append(attribute)
                    if try archive.bool(property["NSIsIndexed"]) == true {
                        entity.indexes.append(IndexDescription(attributes: [attribute.name]))
                    }
                } else {
                    throw FerryError(
                        .invalidInput,
                        "\(source): property '\(path)' is a \(property.className), not an attribute or relationship")
                }
            }
            entity.attributes.sort { $0.name < $1.name }
            entity.relationships.sort { $0.name < $1.name }
            entity.fetchedProperties.sort { $0.name < $1.name }
            for tuple in try archive.array(object["NSUniqueTuples"]) {
                let names = try archive.array(tuple).map { try propertyName($0) }
                if !names.isEmpty { entity.uniquenessConstraints.append(names) }
            }
            let fetchIndexes = try archive.array(object["NSFetchIndexDescriptions"])
            for reference in fetchIndexes {
                guard let index = try archive.object(reference) else { continue }
                var names: [String] = []
                var descending: [String] = []
                for element in try archive.array(index["NSIndexElements"]) {
                    guard let element = try archive.object(element) else { continue }
                    let property = try propertyName(element["NSPropertyName"] ?? element["NSProperty"])
                    names.append(property)
                    if try archive.bool(element["NSAscending"]) == false { descending.append(property) }
                }
                if !names.isEmpty {
                    entity.indexes.append(
                        IndexDescription(
                            name: try archive.string(index["NSIndexName"]), attributes: names, descending: descending))
                }
            }
            // Legacy compound indexes; Core Data mirrors fetch indexes here too (COREDATA.md §1.6),
            // and those mirrors are not indexes of their own.
            let mirrored = Set(entity.indexes.filter { $0.name != nil }.map(\.attributes))
            for compound in try archive.array(object["NSCompoundIndexes"]) {
                let names = try archive.array(compound).map { try propertyName($0) }
                if !names.isEmpty && !mirrored.contains(names) {
                    entity.indexes.append(IndexDescription(attributes: names))
                }
            }
            return entity
        }

        func attribute(_ object: KeyedArchive.Object, name: String, path: String) throws -> AttributeDescription {
            let code = try archive.integer(object["NSAttributeType"]) ?? 0
            guard let (type, kind) = CachedModelDecoder.attributeTypes[code] else {
                throw FerryError(.invalidInput, "\(source): attribute '\(path)' has the unknown attribute type \(code)")
            }
            var attribute = AttributeDescription(
                name: name, type: type, isOptional: try archive.bool(object["NSIsOptional"]) ?? false)
            attribute.isTransient = try archive.bool(object["NSIsTransient"]) ?? false
            // NSFlagsKey 16: preserveAfterDeletion (COREDATA.md Appendix B).
            attribute.preservesAfterDeletion = (try archive.integer(object["NSFlagsKey"]) ?? 0) & 16 != 0
            attribute.renamedFrom = try renamingIdentifier(object, name: name)
            attribute.hashModifier = try nonEmpty(archive.string(object["NSVersionHashModifier"]))
            attribute.userInfo = try userInfo(object["NSUserInfo"])
            if case .transformable = kind {
                attribute.coreDataKind = .transformable(
                    transformer: try nonEmpty(archive.string(object["NSValueTransformerName"])),
                    valueClass: try nonEmpty(archive.string(object["NSAttributeValueClassName"])))
            } else {
                attribute.coreDataKind = kind
                if kind == nil {
                    attribute.defaultValue = try defaultValue(object["NSDefaultValue"], type: type, path: path)
                }
            }
            if object.isKind(of: "NSDerivedAttributeDescription") {
                attribute.derivation = try CachedModelDecoder.derivation(object["NSDerivationExpression"], in: archive)
            }
            return attribute
        }

        func relationship(_ object: KeyedArchive.Object, name: String, path: String) throws -> RelationshipDescription {
            guard
                let destination = try entityName(
                    object["NSDestinationEntity"], fallback: object["_NSDestinationEntityName"])
            else {
                throw FerryError(.invalidInput, "\(source): relationship '\(path)' has no destination entity")
            }
            var inverse = try archive.string(object["_NSInverseRelationshipName"])
            if inverse == nil, let target = try archive.object(object["NSInverseRelationship"]) {
                inverse = try archive.string(target["NSPropertyName"])
            }
            let maxCount = try archive.integer(object["NSMaxCount"]) ?? 0
            let minCount = try archive.integer(object["NSMinCount"]) ?? 0
            let code = try archive.integer(object["NSDeleteRule"]) ?? 1
            guard let rule = CachedModelDecoder.deleteRules[code] else {
                throw FerryError(.invalidInput, "\(source): relationship '\(path)' has the unknown delete rule \(code)")
            }
            let toMany = maxCount != 1
            var relationship = RelationshipDescription(
                name: name, destination: destination, isToMany: toMany, inverse: inverse, deleteRule: rule,
                isOptional: try archive.bool(object["NSIsOptional"]) ?? false,
                minCount: toMany && minCount > 0 ? Int(exactly: minCount) : nil,
                maxCount: toMany && maxCount > 1 ? Int(exactly: maxCount) : nil)
            relationship.isOrdered = try archive.bool(object["NSIsOrdered"]) ?? false
            relationship.renamedFrom = try renamingIdentifier(object, name: name)
            relationship.hashModifier = try nonEmpty(archive.string(object["NSVersionHashModifier"]))
            relationship.userInfo = try userInfo(object["NSUserInfo"])
            return relationship
        }

        /// An entity's name from a reference to its description, else from a name string.
        func entityName(_ reference: PropertyListValue?, fallback: PropertyListValue? = nil) throws -> String? {
            if let reference, let resolved = try archive.resolve(reference) {
                if resolved.string != nil { return resolved.string }
                if let object = try archive.object(reference) {
                    if object.isKind(of: "NSEntityDescription") { return try archive.string(object["NSEntityName"]) }
                    return try archive.string(reference)
                }
            }
            return try archive.string(fallback)
        }

        func entityName(_ reference: PropertyListValue) throws -> String {
            guard let name = try entityName(reference, fallback: nil) else {
                throw FerryError(.invalidInput, "\(source): a configuration lists an entity without a name")
            }
            return name
        }

        /// A property name, or the name of a referenced property description.
        func propertyName(_ reference: PropertyListValue?) throws -> String {
            if let object = try? archive.object(reference),
                object.isKind(of: "NSPropertyDescription") || object["NSPropertyName"] != nil
            {
                if let name = try archive.string(object["NSPropertyName"]) { return name }
            }
            guard let name = try archive.string(reference) else {
                throw FerryError(.invalidInput, "\(source): an index or uniqueness constraint names no property")
            }
            return name
        }

        /// The renaming identifier when it differs from the name (Core Data sets it to the
        /// name when none is given).
        func renamingIdentifier(_ object: KeyedArchive.Object, name: String) throws -> String? {
            guard let identifier = try nonEmpty(archive.string(object["NSRenamingIdentifier"])), identifier != name
            else { return nil }
            return identifier
        }

        func userInfo(_ reference: PropertyListValue?) throws -> [String: String] {
            var info: [String: String] = [:]
            for (key, value) in try archive.dictionary(reference) {
                if let text = try? archive.string(value) {
                    info[key] = text
                } else if let number = try archive.resolve(value) {
                    info[key] = "\(number.integer.map(String.init) ?? number.real.map { String($0) } ?? "")"
                }
            }
            return info
        }

        func defaultValue(_ reference: PropertyListValue?, type: AttributeType, path: String) throws -> Value? {
            guard let value = try archive.resolve(reference) else { return nil }
            func wrong() -> FerryError {
                FerryError(
                    .invalidInput,
                    "\(source): the default value of attribute '\(path)' does not fit its type \(type.rawValue)")
            }
            switch type {
            case .int16, .int32, .int64:
                guard let number = value.integer else { throw wrong() }
                return .integer(number)
            case .bool:
                guard let flag = value.bool else { throw wrong() }
                return .bool(flag)
            case .double, .float:
                guard let number = value.real else { throw wrong() }
                return .double(number)
            case .decimal:
                if let text = value.string { return .decimal(text) }
                if value.dictionary != nil, let object = try archive.object(reference) {
                    if let decimal = ArchivedDecimal(
                        exponent: try archive.integer(object["NS.exponent"]),
                        negative: try archive.bool(object["NS.negative"]),
                        mantissa: try archive.resolve(object["NS.mantissa"])?.data,
                        byteOrder: try archive.integer(object["NS.mantissa.bo"]))
                    {
                        return .decimal(decimal.text)
                    }
                    if let text = try archive.string(object["NS.decimal"] ?? object["NS.string"]) {
                        return .decimal(text)
                    }
                }
                guard let number = value.real else { throw wrong() }
                if case .success(let decimal) = Coercion.coerce(String(number), to: .decimal) { return decimal }
                throw wrong()
            case .string, .uri:
                // An `NSURL` keeps its text in `NS.relative`.
                let url = value.dictionary != nil ? try archive.object(reference).flatMap { $0["NS.relative"] } : nil
                guard let text = try archive.string(url ?? reference) else { throw wrong() }
                return type == .string ? .string(text) : .uri(text)
            case .date:
                let seconds: Double?
                if case .date(let interval) = value {
                    seconds = interval
                } else if value.dictionary != nil, let object = try archive.object(reference) {
                    seconds = try archive.resolve(object["NS.time"])?.real
                } else {
                    seconds = value.real
                }
                guard let seconds, let instant = Timestamp(referenceSeconds: seconds) else { throw wrong() }
                return .date(instant)
            case .uuid:
                if value.dictionary != nil, let object = try archive.object(reference),
                    let bytes = try archive.resolve(object["NS.uuidbytes"])?.data, bytes.count == 16
                {
                    return .uuid(CoreDataValueCoding.uuidText(bytes))
                }
                throw wrong()
            case .binary, .json:
                if let bytes = value.data { return .binary(bytes) }
                if let object = try archive.object(reference), let bytes = try archive.resolve(object["NS.data"])?.data
                {
                    return .binary(bytes)
                }
                throw wrong()
            }
        }

        private func nonEmpty(_ text: String?) -> String? {
            guard let text, !text.isEmpty else { return nil }
            return text
        }
    }

    /// A derived attribute's derivation as NSExpression format text (`pages.@count`,
    /// `FUNCTION(…)`); an expression form ferry does not decode is an error, not a guess.
    static func derivation(_ reference: PropertyListValue?, in archive: KeyedArchive) throws -> String {
        guard let expression = try ArchivedExpression.decode(reference, in: archive) else { return "" }
        if let form = expression.undecodedForm {
            throw FerryError(
                .invalidInput, "\(archive.source): ferry cannot read a derivation that uses an archived \(form)")
        }
        return expression.description
    }
}
