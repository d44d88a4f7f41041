import FerryCore
import Foundation

/// What an Xcode mapping model (`Name.xcmappingmodel/xcmapping.xml`, COREDATA.md §4) says,
/// before it is checked against the models: the two model versions it names and its entity
/// mappings in `mappingnumber` order, each with its attribute and relationship mappings.
public struct XcodeMappingFile: Sendable {
    /// The package's name without `.xcmappingmodel` (`Migration2to3`).
    public var name: String
    /// The package's path.
    public var path: String
    /// The source and destination version labels: the last component of `sourcemodelpath` /
    /// `destinationmodelpath` without `.xcdatamodel`.
    public var sourceVersion: String
    /// The destination version's label (see `sourceVersion`).
    public var destinationVersion: String
    /// `sourcemodelpath` as stored: relative to the Xcode project's folder.
    public var sourceModelPath: String
    var entityMappings: [EntityMapping]

    struct EntityMapping: Sendable {
        var source: String?
        var destination: String
        var number: Int
        /// `migrationpolicyclassname`; nil when the element is absent or empty.
        var policyClassName: String?
        var attributes: [PropertyMapping]
        var relationships: [PropertyMapping]
        var location: InputLocation
    }

    struct PropertyMapping: Sendable {
        var name: String
        /// The stored value expression; nil when the mapping stores none (the implicit default).
        var expression: ArchivedExpression?
        var location: InputLocation
    }
}

/// Reads `.xcmappingmodel` packages. Objects are resolved by id, following only the graph
/// mapping model → entity mappings → attribute and relationship mappings (editing leftovers
/// that no entity mapping lists are ignored, as Xcode does).
///
/// Every problem is an error at `xcmapping.xml:line:column` (code `invalidDefinition`):
/// malformed XML, a missing or doubled `XDDEVMAPPINGMODEL`, dangling ids, missing names, value
/// expressions that are not keyed archives of an expression, and fields ferry does not read
/// (so that nothing a mapping says is silently dropped).
public struct XcodeMappingReader: Sendable {
    /// The extension of a mapping model package (`Name.xcmappingmodel`).
    public static let packageExtension = "xcmappingmodel"
    static let documentName = "xcmapping.xml"

    /// A reader.
    public init() {}

    /// True when `path` names a mapping model package (or its `xcmapping.xml`).
    public static func isMappingModel(_ path: String) -> Bool {
        var trimmed = path
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        if (trimmed as NSString).lastPathComponent == documentName {
            trimmed = (trimmed as NSString).deletingLastPathComponent
        }
        return (trimmed as NSString).pathExtension == packageExtension
    }

    /// Reads the package at `path` (the `.xcmappingmodel` folder or its `xcmapping.xml`).
    /// - Throws: `FerryErrors` listing every problem.
    public func read(path: String) throws -> XcodeMappingFile {
        var package = path
        while package.count > 1, package.hasSuffix("/") { package.removeLast() }
        if (package as NSString).lastPathComponent == Self.documentName {
            package = (package as NSString).deletingLastPathComponent
        }
        let document = (package as NSString).appendingPathComponent(Self.documentName)
        guard let data = FileIO.contents(atPath: document).map({ Data($0) }) else {
            let exists = FileManager.default.fileExists(atPath: package)
            throw FerryErrors([
                FerryError(
                    .io,
                    exists
                        ? "'\(package)' has no readable \(Self.documentName)"
                        : "no mapping model at '\(path)': No such file or directory",
                    at: InputLocation(file: exists ? document : path))
            ])
        }
        let root: XMLElementNode
        do {
            root = try XMLElementNode.parse(data, path: document, code: .invalidDefinition)
        } catch let error as FerryError {
            throw FerryErrors([error])
        }
        let name = ((package as NSString).lastPathComponent as NSString).deletingPathExtension
        var parser = DocumentParser(path: document, name: name, package: package)
        let file = parser.parse(root)
        if !parser.errors.isEmpty { throw FerryErrors(parser.errors) }
        guard let file else {
            throw FerryErrors([
                FerryError(.invalidDefinition, "\(document) holds no mapping model", at: InputLocation(file: document))
            ])
        }
        return file
    }
}

extension XcodeMappingFile {
    /// The mapping translated for the step `source` → `destination` (see
    /// `XcodeMappingTranslation` for the rules).
    /// - Throws: `FerryErrors` naming every entity and property mapping ferry cannot translate.
    public func mappingModel(from source: ObjectModel, to destination: ObjectModel) throws -> MappingModel {
        var translation = XcodeMappingTranslation(file: self, source: source, destination: destination)
        return try translation.translate()
    }

    /// The model package the mapping was made for, found by walking up from the mapping package
    /// until `sourcemodelpath` (project-relative) names an existing folder; nil when none does.
    public var modelPackagePath: String? {
        let versionFolder = sourceModelPath
        let package =
            (versionFolder as NSString).pathExtension == "xcdatamodel"
            ? (versionFolder as NSString).deletingLastPathComponent : versionFolder
        // An absolute, standardized folder: walking up "./X.xcmappingmodel" by NSString path
        // arithmetic reached an empty path, on which Foundation traps (SIGILL).
        var folder = URL(fileURLWithPath: path).standardizedFileURL.deletingLastPathComponent()
        while true {
            let candidate = folder.appendingPathComponent(package).path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
            let parent = folder.deletingLastPathComponent()
            if parent.path == folder.path || parent.path.isEmpty { return nil }
            folder = parent
        }
    }
}

// MARK: - The XML store document

/// One `<object>` of the document: its fields by name.
private struct StoredObject {
    var type: String
    var id: String
    var attributes: [String: XMLElementNode]
    var relationships: [String: [String]]
    var element: XMLElementNode
}

private struct DocumentParser {
    let path: String
    let name: String
    let package: String
    var errors: [FerryError] = []
    var objects: [String: StoredObject] = [:]

    init(path: String, name: String, package: String) {
        self.path = path
        self.name = name
        self.package = package
    }

    static let knownFields: [String: Set<String>] = [
        "XDDEVMAPPINGMODEL": [
            "sourcemodelpath", "destinationmodelpath", "sourcemodeldata", "destinationmodeldata", "entitymappings",
        ],
        "XDDEVENTITYMAPPING": [
            "sourcename", "destinationname", "mappingtypename", "mappingnumber", "migrationpolicyclassname",
            "autogenerateexpression",
            "mappingmodel", "attributemappings", "relationshipmappings",
        ],
        "XDDEVATTRIBUTEMAPPING": ["name", "valueexpressiondata", "entitymapping", "autogenerateexpression"],
        "XDDEVRELATIONSHIPMAPPING": [
            "name", "valueexpressiondata", "entitymapping", "autogenerateexpression", "sourcekeypath",
            "sourcemappingname",
        ],
    ]

    mutating func fail(_ message: String, at element: XMLElementNode) {
        errors.append(FerryError(.invalidDefinition, message, at: element.location))
    }

    mutating func parse(_ root: XMLElementNode) -> XcodeMappingFile? {
        guard root.name == "database" else {
            fail(
                "\(XcodeMappingReader.documentName) must be a Core Data XML store document (<database>), found <\(root.name)>",
                at: root)
            return nil
        }
        for element in root.children(named: "object") {
            guard let type = element.attributes["type"], let id = element.attributes["id"] else {
                fail("an <object> needs 'type' and 'id'", at: element)
                continue
            }
            var object = StoredObject(type: type, id: id, attributes: [:], relationships: [:], element: element)
            let known = Self.knownFields[type]
            if known == nil { fail("unknown mapping object type '\(type)'", at: element) }
            for field in element.children {
                guard let fieldName = field.attributes["name"],
                    field.name == "attribute" || field.name == "relationship"
                else {
                    fail(
                        "an <object> holds <attribute name=…> and <relationship name=…> elements, found <\(field.name)>",
                        at: field)
                    continue
                }
                if let known, !known.contains(fieldName) {
                    fail(
                        "the \(type) field '\(fieldName)' is not read by ferry; edit the mapping in Xcode, or write it as a ferry mapping file",
                        at: field)
                    continue
                }
                if field.name == "attribute" {
                    object.attributes[fieldName] = field
                } else {
                    object.relationships[fieldName] = (field.attributes["idrefs"] ?? "").split(separator: " ").map(
                        String.init)
                }
            }
            if objects[id] != nil { fail("two objects have the id '\(id)'", at: element) }
            objects[id] = object
        }
        let models = objects.values.filter { $0.type == "XDDEVMAPPINGMODEL" }.sorted { $0.id < $1.id }
        guard let model = models.first else {
            fail("\(XcodeMappingReader.documentName) has no XDDEVMAPPINGMODEL object", at: root)
            return nil
        }
        if models.count > 1 {
            fail(
                "\(XcodeMappingReader.documentName) has \(models.count) XDDEVMAPPINGMODEL objects; a mapping model has one",
                at: models[1].element)
        }
        let sourcePath = string(model, "sourcemodelpath")
        let sourceVersion = modelVersion(model, field: "sourcemodelpath")
        let destinationVersion = modelVersion(model, field: "destinationmodelpath")
        var entityMappings: [XcodeMappingFile.EntityMapping] = []
        for object in related(model, "entitymappings", type: "XDDEVENTITYMAPPING") {
            if let mapping = entityMapping(object) { entityMappings.append(mapping) }
        }
        entityMappings.sort { $0.number < $1.number }
        guard let sourcePath, let sourceVersion, let destinationVersion else { return nil }
        return XcodeMappingFile(
            name: name, path: package, sourceVersion: sourceVersion, destinationVersion: destinationVersion,
            sourceModelPath: sourcePath,
            entityMappings: entityMappings)
    }

    /// The version label a model path names (`…/Model 2.xcdatamodel` → `Model 2`).
    mutating func modelVersion(_ object: StoredObject, field: String) -> String? {
        guard let text = string(object, field) else {
            fail("the mapping model has no '\(field)': which model version it maps is unknown", at: object.element)
            return nil
        }
        var last = (text as NSString).lastPathComponent
        if (last as NSString).pathExtension == "xcdatamodel" { last = (last as NSString).deletingPathExtension }
        return last
    }

    mutating func entityMapping(_ object: StoredObject) -> XcodeMappingFile.EntityMapping? {
        guard let destination = string(object, "destinationname") else {
            fail("an entity mapping without 'destinationname'", at: object.element)
            return nil
        }
        var number = Int.max
        if let text = string(object, "mappingnumber") {
            guard let value = Int(text) else {
                fail(
                    "'mappingnumber' must be an integer, found '\(text)'",
                    at: object.attributes["mappingnumber"] ?? object.element)
                return nil
            }
            number = value
        }
        let attributes = related(object, "attributemappings", type: "XDDEVATTRIBUTEMAPPING").compactMap {
            propertyMapping($0, owner: destination)
        }
        let relationships = related(object, "relationshipmappings", type: "XDDEVRELATIONSHIPMAPPING").compactMap {
            propertyMapping($0, owner: destination)
        }
        return XcodeMappingFile.EntityMapping(
            source: string(object, "sourcename"), destination: destination, number: number,
            policyClassName: string(object, "migrationpolicyclassname"), attributes: attributes,
            relationships: relationships,
            location: object.element.location)
    }

    mutating func propertyMapping(_ object: StoredObject, owner: String) -> XcodeMappingFile.PropertyMapping? {
        guard let name = string(object, "name") else {
            fail("a property mapping of \(owner) without 'name'", at: object.element)
            return nil
        }
        var expression: ArchivedExpression?
        if let field = object.attributes["valueexpressiondata"],
            !field.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        {
            let base64 = field.text.filter { !$0.isWhitespace }
            if let data = Data(base64Encoded: base64) {
                do {
                    expression = try ArchivedExpression.decode(
                        [UInt8](data), source: "the value expression of \(owner).\(name)")
                } catch let error as FerryError {
                    errors.append(FerryError(.invalidDefinition, error.message, at: field.location))
                } catch {
                    fail("the value expression of \(owner).\(name): \(error)", at: field)
                }
            } else {
                fail("the value expression of \(owner).\(name) is not base64", at: field)
            }
        } else if let keyPath = string(object, "sourcekeypath") {
            // Xcode's two-string spelling of FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", NAME, KEYPATH).
            guard let mappingName = string(object, "sourcemappingname") else {
                fail("\(owner).\(name) has a 'sourcekeypath' but no 'sourcemappingname'", at: object.element)
                return nil
            }
            var path = keyPath.trimmingCharacters(in: .whitespaces)
            let operand: ArchivedExpression
            if path == "$source" {
                operand = .variable("source")
                path = ""
            } else if path.hasPrefix("$source.") {
                path.removeFirst("$source.".count)
                operand = .variable("source")
            } else {
                fail(
                    "\(owner).\(name): the source key path '\(keyPath)' does not start with $source",
                    at: object.attributes["sourcekeypath"] ?? object.element)
                return nil
            }
            expression = .function(
                operand: .variable("manager"), selector: "destinationInstancesForEntityMappingNamed:sourceInstances:",
                arguments: [
                    .constant(.string(mappingName)), path.isEmpty ? operand : .keyPath(operand: operand, path: path),
                ])
        }
        return XcodeMappingFile.PropertyMapping(name: name, expression: expression, location: object.element.location)
    }

    /// The objects a relationship field lists, each checked to exist and have the expected type.
    mutating func related(_ object: StoredObject, _ field: String, type: String) -> [StoredObject] {
        var result: [StoredObject] = []
        for id in object.relationships[field] ?? [] {
            guard let target = objects[id] else {
                fail("'\(field)' of \(object.id) names '\(id)', which is no object of the document", at: object.element)
                continue
            }
            guard target.type == type else {
                fail(
                    "'\(field)' of \(object.id) names '\(id)', a \(target.type); expected a \(type)", at: object.element
                )
                continue
            }
            result.append(target)
        }
        return result
    }

    /// A string field's text; nil when absent or empty.
    func string(_ object: StoredObject, _ field: String) -> String? {
        guard let element = object.attributes[field] else { return nil }
        let text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
