import FerryCore
import Foundation

/// Reads one Xcode model version (the `contents` XML of a `.xcdatamodel` folder) into an
/// ``ObjectModel``, collecting every problem at `contents:line:column`.
///
/// Elements ferry does not know are errors (their meaning would be lost); XML attributes that
/// only matter to Xcode's code generation or diagrams (`syncable`, `usesScalarValueType`,
/// `elements`, …) are read and ignored.
struct XcodeModelReader {
    let path: String
    private(set) var errors: [FerryError] = []

    init(path: String) { self.path = path }

    /// The model in `data`, or nil when the XML is malformed (then `errors` says where).
    mutating func read(_ data: Data, name: String, version: String) -> ObjectModel? {
        let root: XMLElementNode
        do {
            root = try XMLElementNode.parse(data, path: path, code: .invalidModel)
        } catch let error as FerryError {
            errors.append(error)
            return nil
        } catch {
            errors.append(
                FerryError(.invalidModel, "malformed XML: \(error)", at: InputLocation(file: path, line: 1, column: 1)))
            return nil
        }
        guard root.name == "model" else {
            fail("expected a <model> root element, found <\(root.name)>", at: root)
            return nil
        }
        var model = ObjectModel(
            name: name, version: version, entities: [], location: InputLocation(file: path, line: 1, column: 1))
        model.origin = .xcode
        if let identifier = root.attributes["userDefinedModelVersionIdentifier"], !identifier.isEmpty {
            model.versionIdentifier = identifier
        }
        for child in root.children {
            switch child.name {
            case "entity": if let entity = readEntity(child) { model.entities.append(entity) }
            case "fetchRequest": if let request = readFetchRequest(child) { model.fetchRequests.append(request) }
            case "configuration": model.configurations.append(readConfiguration(child))
            case "elements": continue
            default: fail("unknown element <\(child.name)> in <model>", at: child)
            }
        }
        return model
    }

    // MARK: - Entities

    private mutating func readEntity(_ element: XMLElementNode) -> EntityDescription? {
        guard let name = required("name", of: element) else { return nil }
        var entity = EntityDescription(name: name, location: element.location)
        entity.parent = element.attributes["parentEntity"]
        entity.isAbstract = flag("isAbstract", of: element)
        entity.className = nonEmpty(element.attributes["representedClassName"])
        entity.renamedFrom = renamingIdentifier(of: element, name: name)
        entity.hashModifier = nonEmpty(element.attributes["versionHashModifier"])
        var named: [IndexDescription] = []
        var unnamed: [IndexDescription] = []
        for child in element.children {
            switch child.name {
            case "attribute":
                guard let attribute = readAttribute(child, entity: name) else { continue }
                entity.attributes.append(attribute)
                if flag("indexed", of: child) {
                    unnamed.append(IndexDescription(attributes: [attribute.name], location: child.location))
                }
            case "relationship":
                if let relationship = readRelationship(child, entity: name) {
                    entity.relationships.append(relationship)
                }
            case "fetchedProperty":
                if let property = readFetchedProperty(child) { entity.fetchedProperties.append(property) }
            case "fetchIndex":
                if let index = readFetchIndex(child, entity: name) { named.append(index) }
            case "compoundIndexes":
                for index in elements(child, named: "compoundIndex") {
                    let names = values(index, element: "index", attribute: "value")
                    if names.isEmpty {
                        fail("<compoundIndex> of '\(name)' names no property", at: index)
                    } else {
                        unnamed.append(IndexDescription(attributes: names, location: index.location))
                    }
                }
            case "uniquenessConstraints":
                for constraint in elements(child, named: "uniquenessConstraint") {
                    let names = values(constraint, element: "constraint", attribute: "value")
                    if names.isEmpty {
                        fail("<uniquenessConstraint> of '\(name)' names no property", at: constraint)
                    } else {
                        entity.uniquenessConstraints.append(names)
                        entity.uniquenessConstraintLocations.append(constraint.location)
                    }
                }
            case "userInfo": entity.userInfo = readUserInfo(child)
            default: fail("unknown element <\(child.name)> in entity '\(name)'", at: child)
            }
        }
        entity.indexes = named + unnamed
        return entity
    }

    private mutating func readAttribute(_ element: XMLElementNode, entity: String) -> AttributeDescription? {
        guard let name = required("name", of: element), let typeName = required("attributeType", of: element) else {
            return nil
        }
        guard let spelling = XcodeSpelling.attributeTypes.first(where: { $0.xml == typeName }) else {
            fail(
                "unknown attributeType '\(typeName)' for attribute '\(entity).\(name)'\(Suggestions.didYouMean(typeName, in: XcodeSpelling.attributeTypes.map(\.xml)))",
                at: element)
            return nil
        }
        var attribute = AttributeDescription(
            name: name, type: spelling.type, isOptional: flag("optional", of: element), location: element.location)
        attribute.isTransient = flag("transient", of: element)
        attribute.preservesAfterDeletion = flag("preserveAfterDeletion", of: element)
        attribute.allowsExternalBinaryDataStorage = flag("allowsExternalBinaryDataStorage", of: element)
        attribute.renamedFrom = renamingIdentifier(of: element, name: name)
        attribute.hashModifier = nonEmpty(element.attributes["versionHashModifier"])
        switch spelling.kind {
        case .transformable:
            attribute.coreDataKind = .transformable(
                transformer: nonEmpty(element.attributes["valueTransformerName"]),
                valueClass: nonEmpty(element.attributes["customClassName"]))
        case let kind?: attribute.coreDataKind = kind
        case nil: break
        }
        if flag("derived", of: element) {
            let expression = element.attributes["derivation"] ?? element.attributes["derivationExpression"]
            guard let expression = nonEmpty(expression) else {
                fail("derived attribute '\(entity).\(name)' has no derivation", at: element)
                return nil
            }
            attribute.derivation = expression
        }
        for child in element.children {
            switch child.name {
            case "userInfo": attribute.userInfo = readUserInfo(child)
            default: fail("unknown element <\(child.name)> in attribute '\(entity).\(name)'", at: child)
            }
        }
        if attribute.userInfo[XcodeSpelling.jsonUserInfoKey] == "json", attribute.type == .string {
            attribute.type = .json
            attribute.userInfo[XcodeSpelling.jsonUserInfoKey] = nil
        }
        readDefaultAndRules(element, into: &attribute, path: "\(entity).\(name)")
        return attribute
    }

    /// `defaultValueString`, `minValueString`, `maxValueString`, `regularExpressionString` and
    /// their date forms (seconds since 2001-01-01). Xcode accepts sloppy defaults (`0.0` or `NO`
    /// for integers), so numbers are read leniently.
    private mutating func readDefaultAndRules(
        _ element: XMLElementNode, into attribute: inout AttributeDescription, path: String
    ) {
        let type = attribute.type
        func value(_ key: String) -> Value? {
            guard let text = element.attributes[key] else { return nil }
            if type == .string { return .string(text) }
            if case .success(let value) = Coercion.coerce(text, to: type) { return value }
            if type.isInteger, let number = Double(text), number.rounded() == number, let range = type.integerRange,
                let integer = Int64(exactly: number), range.contains(integer)
            {
                return .integer(integer)
            }
            if type.isInteger, text == "NO" || text == "YES" { return .integer(text == "YES" ? 1 : 0) }
            fail("invalid \(key) '\(text)' for \(type.rawValue) attribute '\(path)'", at: element)
            return nil
        }
        func date(_ key: String) -> Value? {
            guard let text = element.attributes[key] else { return nil }
            guard let seconds = Double(text), seconds.isFinite else {
                fail("invalid \(key) '\(text)' for attribute '\(path)': expected seconds since 2001-01-01", at: element)
                return nil
            }
            return .date(Int64((seconds * 1000).rounded()) + XcodeSpelling.referenceDateOffset * 1000)
        }
        func length(_ key: String) -> Int? {
            guard let text = element.attributes[key] else { return nil }
            guard let number = Int(text), number >= 0 else {
                fail("invalid \(key) '\(text)' for attribute '\(path)': expected a length", at: element)
                return nil
            }
            return number
        }
        let valued = attribute.coreDataKind == nil && type != .binary
        if valued {
            attribute.defaultValue = type == .date ? date("defaultDateTimeInterval") : value("defaultValueString")
        }
        if type.isNumeric {
            attribute.validation.minValue = value("minValueString")
            attribute.validation.maxValue = value("maxValueString")
        } else if type == .date {
            attribute.validation.minValue = date("minDateTimeInterval")
            attribute.validation.maxValue = date("maxDateTimeInterval")
        } else if type == .string || type == .uri || type == .binary || type == .json {
            attribute.validation.minLength = length("minValueString")
            attribute.validation.maxLength = length("maxValueString")
        }
        attribute.validation.pattern = nonEmpty(element.attributes["regularExpressionString"])
    }

    private mutating func readRelationship(_ element: XMLElementNode, entity: String) -> RelationshipDescription? {
        guard let name = required("name", of: element), let destination = required("destinationEntity", of: element)
        else { return nil }
        var relationship = RelationshipDescription(name: name, destination: destination, location: element.location)
        relationship.isToMany = flag("toMany", of: element)
        relationship.isOptional = flag("optional", of: element)
        relationship.isOrdered = flag("ordered", of: element)
        relationship.inverse = nonEmpty(element.attributes["inverseName"])
        relationship.renamedFrom = renamingIdentifier(of: element, name: name)
        relationship.hashModifier = nonEmpty(element.attributes["versionHashModifier"])
        if let rule = element.attributes["deletionRule"] {
            if let match = XcodeSpelling.deleteRules.first(where: { $0.xml == rule }) {
                relationship.deleteRule = match.rule
            } else {
                fail(
                    "unknown deletionRule '\(rule)' for relationship '\(entity).\(name)'\(Suggestions.didYouMean(rule, in: XcodeSpelling.deleteRules.map(\.xml)))",
                    at: element)
            }
        }
        let minCount = count("minCount", of: element, path: "\(entity).\(name)")
        let maxCount = count("maxCount", of: element, path: "\(entity).\(name)")
        if relationship.isToMany {
            // Core Data: 0 means no bound.
            relationship.minCount = minCount == 0 ? nil : minCount
            relationship.maxCount = maxCount == 0 ? nil : maxCount
        } else if let maxCount, maxCount != 1 {
            fail(
                "to-one relationship '\(entity).\(name)' has maxCount \(maxCount); a to-one has maxCount 1 (set toMany=\"YES\" for more)",
                at: element)
        }
        for child in element.children {
            switch child.name {
            case "userInfo": relationship.userInfo = readUserInfo(child)
            default: fail("unknown element <\(child.name)> in relationship '\(entity).\(name)'", at: child)
            }
        }
        return relationship
    }

    private mutating func readFetchedProperty(_ element: XMLElementNode) -> FetchedPropertyDescription? {
        guard let name = required("name", of: element) else { return nil }
        guard let request = element.children(named: "fetchRequest").first else {
            fail("fetched property '\(name)' has no <fetchRequest>", at: element)
            return nil
        }
        guard let entity = required("entity", of: request) else { return nil }
        return FetchedPropertyDescription(
            name: name, entity: entity, predicate: nonEmpty(request.attributes["predicateString"]),
            location: element.location)
    }

    private mutating func readFetchIndex(_ element: XMLElementNode, entity: String) -> IndexDescription? {
        guard let name = required("name", of: element) else { return nil }
        var index = IndexDescription(name: name, attributes: [], location: element.location)
        for item in elements(element, named: "fetchIndexElement") {
            guard let property = item.attributes["property"] else {
                fail(
                    "fetch index '\(entity).\(name)' has an element without 'property' (expression elements are not supported)",
                    at: item)
                continue
            }
            if let type = item.attributes["type"], type != "Binary" {
                fail(
                    "fetch index '\(entity).\(name)' has element type '\(type)'; ferry supports only 'Binary' indexes",
                    at: item)
            }
            switch item.attributes["order"] ?? "ascending" {
            case "ascending": break
            case "descending": index.descending.append(property)
            case let order:
                fail(
                    "invalid order '\(order)' in fetch index '\(entity).\(name)' (expected ascending or descending)",
                    at: item)
            }
            index.attributes.append(property)
        }
        if index.attributes.isEmpty { fail("fetch index '\(entity).\(name)' has no elements", at: element) }
        return index
    }

    // MARK: - Model level

    /// Flags of `<fetchRequest>` that ferry keeps verbatim in ``FetchRequestTemplate/options``.
    static let fetchRequestOwnKeys: Set<String> = ["name", "entity", "predicateString", "fetchLimit", "fetchBatchSize"]

    private mutating func readFetchRequest(_ element: XMLElementNode) -> FetchRequestTemplate? {
        guard let name = required("name", of: element), let entity = required("entity", of: element) else { return nil }
        var request = FetchRequestTemplate(
            name: name, entity: entity, predicate: nonEmpty(element.attributes["predicateString"]),
            location: element.location)
        request.limit = count("fetchLimit", of: element, path: "fetch request '\(name)'").flatMap { $0 == 0 ? nil : $0 }
        request.batchSize = count("fetchBatchSize", of: element, path: "fetch request '\(name)'").flatMap {
            $0 == 0 ? nil : $0
        }
        request.options = element.attributes.filter { !Self.fetchRequestOwnKeys.contains($0.key) }
        return request
    }

    private mutating func readConfiguration(_ element: XMLElementNode) -> ModelConfiguration {
        let name = required("name", of: element) ?? ""
        return ModelConfiguration(
            name: name, entities: values(element, element: "memberEntity", attribute: "name"),
            usedWithCloudKit: flag("usedWithCloudKit", of: element))
    }

    // MARK: - Values

    private mutating func readUserInfo(_ element: XMLElementNode) -> [String: String] {
        var info: [String: String] = [:]
        for entry in elements(element, named: "entry") {
            guard let key = required("key", of: entry) else { continue }
            info[key] = entry.attributes["value"] ?? ""
        }
        return info
    }

    /// Core Data's renaming identifier (`elementID`) when it differs from the element's name.
    private func renamingIdentifier(of element: XMLElementNode, name: String) -> String? {
        guard let identifier = nonEmpty(element.attributes["elementID"]), identifier != name else { return nil }
        return identifier
    }

    /// The children named `name`; any other child is reported.
    private mutating func elements(_ element: XMLElementNode, named name: String) -> [XMLElementNode] {
        for child in element.children where child.name != name {
            fail("unknown element <\(child.name)> in <\(element.name)> (expected <\(name)>)", at: child)
        }
        return element.children(named: name)
    }

    /// The `attribute` of every child `<element>`, each required.
    private mutating func values(_ parent: XMLElementNode, element: String, attribute: String) -> [String] {
        elements(parent, named: element).compactMap { required(attribute, of: $0) }
    }

    private mutating func required(_ key: String, of element: XMLElementNode) -> String? {
        guard let value = element.attributes[key], !value.isEmpty else {
            fail("<\(element.name)> needs a '\(key)' attribute", at: element)
            return nil
        }
        return value
    }

    /// A `YES`/`NO` attribute; absent is NO.
    private mutating func flag(_ key: String, of element: XMLElementNode) -> Bool {
        guard let value = element.attributes[key] else { return false }
        switch value {
        case "YES": return true
        case "NO": return false
        default:
            fail(
                "invalid value '\(value)' for '\(key)' of <\(element.name)>\(element.attributes["name"].map { " '\($0)'" } ?? ""): expected YES or NO",
                at: element)
            return false
        }
    }

    private mutating func count(_ key: String, of element: XMLElementNode, path: String) -> Int? {
        guard let text = element.attributes[key] else { return nil }
        guard let value = Int(text), value >= 0 else {
            fail("invalid \(key) '\(text)' for \(path): expected a whole number ≥ 0", at: element)
            return nil
        }
        return value
    }

    private func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    private mutating func fail(_ message: String, at element: XMLElementNode) {
        errors.append(FerryError(.invalidModel, message, at: element.location))
    }
}
