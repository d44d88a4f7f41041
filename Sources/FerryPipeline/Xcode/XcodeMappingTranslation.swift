import FerryCore
import Foundation

/// Turns an Xcode mapping model into ferry's ``MappingModel`` for one version step, as Xcode
/// compiles it (COREDATA.md §4.4–4.5):
///
/// - an entity mapping without `sourcename` adds objects (starts empty unless a policy creates
///   them); a destination entity that no entity mapping names starts empty; a source entity
///   that none names is dropped;
/// - an attribute mapping without an expression is `$source.<same name>` when the source entity
///   has that attribute (widened when lossless), else the attribute's default;
/// - a relationship mapping without an expression carries the source relationship of the same
///   name, else starts empty;
/// - `$source.<keypath>` is a copy (one attribute) or one of ferry's value expressions (a to-one
///   key path); `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:",
///   "M", $source)` links the object mapping M made from the same source object, with
///   `$source.rel` (or `"destinationInstancesForSourceRelationshipNamed:sourceInstances:"`) it
///   carries the source relationship `rel`; constants are constants;
/// - the policy class name is kept as written (``PolicyRegistry`` resolves it with or without
///   its module prefix).
///
/// Entity mappings are named as ferry names them: the first into an entity by the entity's
/// name, further ones by Core Data's `<Source>To<Destination>`; ``MappingModel/entity(named:)``
/// answers Core Data's names too.
///
/// Every form ferry cannot translate is an error naming the mapping model, the entity mapping,
/// the property and the form, at the property mapping's place in `xcmapping.xml`.
struct XcodeMappingTranslation {
    let file: XcodeMappingFile
    let source: ObjectModel
    let destination: ObjectModel
    var errors: [FerryError] = []
    /// Core Data's entity-mapping names → ferry's.
    var names: [String: String] = [:]
    /// Relationships whose links ferry writes through their inverse (stored on the other side),
    /// checked once every entity mapping is translated.
    var throughInverse:
        [(relationship: RelationshipDescription, inverse: String, expression: ArchivedExpression, context: Context)] =
            []

    static let mappingNamedSelector = "destinationInstancesForEntityMappingNamed:sourceInstances:"
    static let relationshipNamedSelector = "destinationInstancesForSourceRelationshipNamed:sourceInstances:"

    init(file: XcodeMappingFile, source: ObjectModel, destination: ObjectModel) {
        self.file = file
        self.source = source
        self.destination = destination
    }

    var documentPath: String { (file.path as NSString).appendingPathComponent(XcodeMappingReader.documentName) }

    mutating func fail(_ message: String, at location: InputLocation, notes: [String] = []) {
        errors.append(
            FerryError(.invalidDefinition, "mapping model \(file.name): \(message)", at: location, notes: notes))
    }

    /// The translated mapping.
    /// - Throws: ``FerryErrors`` listing every problem.
    mutating func translate() throws -> MappingModel {
        var named: Set<String> = []
        for mapping in file.entityMappings {
            let coreDataName = Self.coreDataName(source: mapping.source, destination: mapping.destination)
            names[coreDataName] = named.insert(mapping.destination).inserted ? mapping.destination : coreDataName
        }
        var entities: [MappingModel.EntityMapping] = []
        for mapping in file.entityMappings {
            if let entity = entityMapping(mapping) { entities.append(entity) }
        }
        for deferred in throughInverse {
            let setting = entities.contains { mapping in
                mapping.destination == deferred.relationship.destination
                    && mapping.relationship(named: deferred.inverse).map {
                        $0.value != MappingModel.RelationshipValue.none
                    } == true
            }
            if !setting {
                untranslatable(
                    deferred.expression, deferred.context,
                    reason:
                        "ferry writes \(deferred.context.property) through its inverse \(deferred.relationship.destination).\(deferred.inverse), which no entity mapping sets"
                )
            }
        }
        let mapped = Set(file.entityMappings.map(\.destination))
        for entity in destination.entities where !mapped.contains(entity.name) {
            entities.append(
                MappingModel.EntityMapping(
                    name: entity.name, destination: entity.name, source: nil,
                    attributes: entity.attributes.map {
                        MappingModel.AttributeMapping(destination: $0.name, value: .constant($0.defaultValue ?? .null))
                    },
                    relationships: entity.relationships.map {
                        MappingModel.RelationshipMapping(destination: $0.name, value: .none)
                    }))
        }
        var model = MappingModel(
            source: source, destination: destination, entities: entities, location: InputLocation(file: documentPath))
        if errors.isEmpty {
            let order = model.orderedByReferences()
            if !order.cycle.isEmpty {
                fail(
                    "the entity mappings \(order.cycle.map { "'\($0.name)'" }.joined(separator: ", ")) link each other's objects made from the same source object; one of them must run first",
                    at: order.cycle[0].location ?? InputLocation(file: documentPath))
            }
            model.entities = order.ordered
        }
        if !errors.isEmpty { throw FerryErrors(errors) }
        return model
    }

    /// Core Data's compiled name of an entity mapping: `<Source>To<Destination>`, or the
    /// destination's name for a mapping that adds objects.
    static func coreDataName(source: String?, destination: String) -> String {
        source.map { "\($0)To\(destination)" } ?? destination
    }

    // MARK: Entity mappings

    mutating func entityMapping(_ mapping: XcodeMappingFile.EntityMapping) -> MappingModel.EntityMapping? {
        let coreDataName = Self.coreDataName(source: mapping.source, destination: mapping.destination)
        guard let entity = destination.entity(named: mapping.destination) else {
            fail(
                "\(coreDataName) maps into '\(mapping.destination)', which is no entity of \(destination.name) version \(destination.version)\(Suggestions.didYouMean(mapping.destination, in: destination.entityNames))",
                at: mapping.location)
            return nil
        }
        var sourceEntity: EntityDescription?
        if let name = mapping.source {
            sourceEntity = source.entity(named: name)
            if sourceEntity == nil {
                fail(
                    "\(coreDataName) maps from '\(name)', which is no entity of \(source.name) version \(source.version)\(Suggestions.didYouMean(name, in: source.entityNames))",
                    at: mapping.location)
                return nil
            }
        }
        let name = names[coreDataName] ?? coreDataName
        var result = MappingModel.EntityMapping(
            name: name, destination: entity.name, source: sourceEntity?.name, attributes: [], relationships: [],
            policy: mapping.policyClassName,
            location: mapping.location)
        if mapping.policyClassName != nil { result.policyLocation = mapping.location }

        let attributeMappings = Dictionary(
            mapping.attributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for stored in mapping.attributes where entity.attribute(named: stored.name) == nil {
            fail(
                "\(coreDataName) maps '\(stored.name)', which is no attribute of \(entity.name)\(Suggestions.didYouMean(stored.name, in: entity.attributes.map(\.name)))",
                at: stored.location)
        }
        for attribute in entity.attributes where attribute.isStored {
            let stored = attributeMappings[attribute.name]
            let context = Context(
                mapping: coreDataName, property: "\(entity.name).\(attribute.name)",
                location: stored?.location ?? mapping.location)
            guard let value = attributeValue(stored?.expression, for: attribute, from: sourceEntity, context: context)
            else { continue }
            result.attributes.append(
                MappingModel.AttributeMapping(destination: attribute.name, value: value, location: stored?.location))
        }

        let relationshipMappings = Dictionary(
            mapping.relationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for stored in mapping.relationships where entity.relationship(named: stored.name) == nil {
            fail(
                "\(coreDataName) maps '\(stored.name)', which is no relationship of \(entity.name)\(Suggestions.didYouMean(stored.name, in: entity.relationships.map(\.name)))",
                at: stored.location)
        }
        for relationship in entity.relationships {
            let stored = relationshipMappings[relationship.name]
            let context = Context(
                mapping: coreDataName, property: "\(entity.name).\(relationship.name)",
                location: stored?.location ?? mapping.location)
            guard
                let value = relationshipValue(
                    stored?.expression, for: relationship, owner: result, from: sourceEntity, context: context)
            else { continue }
            result.relationships.append(
                MappingModel.RelationshipMapping(
                    destination: relationship.name, value: value, location: stored?.location))
        }
        return result
    }

    /// Where a property mapping is, for its errors.
    struct Context {
        var mapping: String
        var property: String
        var location: InputLocation
    }

    mutating func untranslatable(_ expression: ArchivedExpression, _ context: Context, reason: String) {
        fail(
            "\(context.mapping) gives \(context.property) the value expression \(expression), which ferry cannot translate: \(reason)",
            at: context.location,
            notes: [
                "write this step as a ferry mapping file (FROM-to-TO.yml in a --mappings folder, see docs/coredata.md) or move the logic into a registered EntityMigrationPolicy"
            ])
    }

    // MARK: Attributes

    mutating func attributeValue(
        _ expression: ArchivedExpression?, for attribute: AttributeDescription, from sourceEntity: EntityDescription?,
        context: Context
    ) -> MappingModel.AttributeValue? {
        guard let expression else {
            // Xcode's implicit value: $source.<name> when the source entity has that attribute.
            guard let old = sourceEntity?.attribute(named: attribute.name), old.isStored else {
                return .constant(attribute.defaultValue ?? .null)
            }
            return copy(old, into: attribute, context: context, written: "$source.\(attribute.name) (implicit)")
        }
        switch expression {
        case .constant(nil):
            return .constant(.null)
        case .constant(.some(let value)):
            let text: String
            switch value {
            case .string(let string): text = string
            case .integer(let number): text = String(number)
            case .unsignedInteger(let number): text = String(number)
            case .real(let number): text = String(number)
            case .bool(let flag): text = flag ? "true" : "false"
            default:
                untranslatable(expression, context, reason: "a constant of this kind has no ferry value")
                return nil
            }
            switch Coercion.coerce(text, to: attribute.type) {
            case .success(let coerced): return .constant(coerced)
            case .failure(let failure):
                fail(
                    "\(context.mapping) gives \(context.property) the constant \(expression), which is not a valid \(attribute.type.rawValue): \(failure.reason)",
                    at: context.location)
                return nil
            }
        case .keyPath(.variable("source"), let path):
            guard let sourceEntity else {
                fail(
                    "\(context.mapping) gives \(context.property) the value \(expression), but the mapping has no source entity",
                    at: context.location)
                return nil
            }
            if !path.contains("."), let old = sourceEntity.attribute(named: path), old.isStored {
                return copy(old, into: attribute, context: context, written: expression.description)
            }
            if path.contains("@") {
                untranslatable(
                    expression, context,
                    reason: "collection operators (@…) have no counterpart in ferry's value expressions")
                return nil
            }
            let text = "$source.\(path)"
            do {
                let bound = try Expression.parse(text, location: context.location).bind(
                    source: sourceEntity, model: source, parameters: [:])
                _ = try bound.fitted(to: attribute)
            } catch {
                untranslatable(expression, context, reason: error.message)
                return nil
            }
            return .expression(text)
        case .function(.variable("source"), let selector, _):
            untranslatable(
                expression, context,
                reason:
                    "it calls the Objective-C method '\(selector)' on the source object; compute the value with a ferry value expression or in a policy"
            )
            return nil
        default:
            untranslatable(
                expression, context,
                reason: "ferry translates $source key paths, constants and the $manager lookups of related objects")
            return nil
        }
    }

    /// A copy of a source attribute, widened when lossless; an error for any other type change.
    mutating func copy(
        _ old: AttributeDescription, into attribute: AttributeDescription, context: Context, written: String
    ) -> MappingModel.AttributeValue? {
        let fill = attribute.isOptional ? Value.null : (attribute.defaultValue ?? .null)
        if old.type == attribute.type { return .copy(source: old.name, conversion: nil, valueIfNil: fill) }
        if let conversion = TypeConversion(from: old.type, to: attribute.type) {
            return .copy(source: old.name, conversion: conversion, valueIfNil: fill)
        }
        fail(
            "\(context.mapping) gives \(context.property) (\(attribute.type.rawValue)) the value \(written), which is \(old.type.rawValue); only lossless widenings are copied",
            at: context.location, notes: ["convert it with a ferry value expression in a mapping file, or in a policy"])
        return nil
    }

    // MARK: Relationships

    mutating func relationshipValue(
        _ expression: ArchivedExpression?, for relationship: RelationshipDescription, owner: MappingModel.EntityMapping,
        from sourceEntity: EntityDescription?,
        context: Context
    ) -> MappingModel.RelationshipValue? {
        guard let expression else {
            guard let old = sourceEntity?.relationship(named: relationship.name) else {
                return MappingModel.RelationshipValue.none
            }
            return carry(
                old, into: relationship, context: context, written: "the implicit $source.\(relationship.name)",
                implicit: true)
        }
        switch expression {
        case .constant(nil):
            return MappingModel.RelationshipValue.none
        case .function(.variable("manager"), let selector, let arguments)
        where selector == Self.mappingNamedSelector || selector == Self.relationshipNamedSelector:
            guard arguments.count == 2, case .constant(.string(let name))? = arguments.first else {
                untranslatable(expression, context, reason: "\(selector) takes a name and the source instances")
                return nil
            }
            guard let sourceEntity else {
                fail(
                    "\(context.mapping) gives \(context.property) the value \(expression), but the mapping has no source entity",
                    at: context.location)
                return nil
            }
            let instances = arguments[1]
            if selector == Self.mappingNamedSelector, case .variable("source") = instances {
                return fromMapping(
                    named: name, expression: expression, relationship: relationship, owner: owner, context: context)
            }
            guard case .keyPath(.variable("source"), let path) = instances else {
                untranslatable(
                    expression, context, reason: "the source instances must be $source or $source.<relationship>")
                return nil
            }
            if path.contains(".") {
                return keyPath(
                    path, expression: expression, named: selector == Self.mappingNamedSelector ? name : nil,
                    for: relationship, owner: owner, from: sourceEntity, context: context)
            }
            guard let old = sourceEntity.relationship(named: path) else {
                fail(
                    "\(context.mapping) gives \(context.property) the value \(expression), but \(sourceEntity.name) has no relationship '\(path)'\(Suggestions.didYouMean(path, in: sourceEntity.relationships.map(\.name)))",
                    at: context.location)
                return nil
            }
            if selector == Self.relationshipNamedSelector, name != path {
                untranslatable(
                    expression, context,
                    reason: "it names the source relationship '\(name)' but passes the instances of '\(path)'")
                return nil
            }
            if selector == Self.mappingNamedSelector {
                guard
                    let target = file.entityMappings.first(where: {
                        Self.coreDataName(source: $0.source, destination: $0.destination) == name
                    })
                else {
                    fail(
                        "\(context.mapping) gives \(context.property) the objects of entity mapping '\(name)', which the mapping model does not have\(Suggestions.didYouMean(name, in: file.entityMappings.map { Self.coreDataName(source: $0.source, destination: $0.destination) }))",
                        at: context.location)
                    return nil
                }
                guard target.source == old.destination, target.destination == relationship.destination else {
                    untranslatable(
                        expression, context,
                        reason:
                            "'\(name)' maps \(target.source ?? "nothing") → \(target.destination), but \(sourceEntity.name).\(path) leads to \(old.destination) and \(context.property) to \(relationship.destination)"
                    )
                    return nil
                }
            }
            return carry(old, into: relationship, context: context, written: expression.description)
        default:
            untranslatable(
                expression, context,
                reason:
                    "ferry translates the $manager lookups of related objects (destinationInstancesForEntityMappingNamed:, destinationInstancesForSourceRelationshipNamed:) and nil"
            )
            return nil
        }
    }

    /// A key path through several source relationships (`$source.country.continent`,
    /// `$source.countries.@distinctUnionOfSets.moods`): a chain of to-one relationships into a
    /// to-one relationship stored on this side links the object made from the one it reaches;
    /// into a relationship stored on its inverse's side (Continent.moods, whose links are
    /// Mood.continent's), the links are written by the inverse's mapping, which must set it.
    mutating func keyPath(
        _ path: String, expression: ArchivedExpression, named mappingName: String?,
        for relationship: RelationshipDescription, owner: MappingModel.EntityMapping,
        from sourceEntity: EntityDescription, context: Context
    ) -> MappingModel.RelationshipValue? {
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var current = sourceEntity
        var toOne = true
        for component in components where !component.hasPrefix("@") {
            guard let hop = current.relationship(named: component), let next = source.entity(named: hop.destination)
            else {
                fail(
                    "\(context.mapping) gives \(context.property) the value \(expression), but \(current.name) has no relationship '\(component)'\(Suggestions.didYouMean(component, in: current.relationships.map(\.name)))",
                    at: context.location)
                return nil
            }
            if hop.isToMany { toOne = false }
            current = next
        }
        if let mappingName {
            guard
                let target = file.entityMappings.first(where: {
                    Self.coreDataName(source: $0.source, destination: $0.destination) == mappingName
                }),
                target.source == current.name, target.destination == relationship.destination
            else {
                untranslatable(
                    expression, context,
                    reason:
                        "'\(mappingName)' is not a mapping of \(current.name) objects (where the key path leads) into \(relationship.destination)"
                )
                return nil
            }
        }
        guard let destinationEntity = destination.entity(named: owner.destination) else { return nil }
        let storedHere: Bool
        if case .foreignKey = FerryLayout().storage(of: relationship, in: destinationEntity, model: destination) {
            storedHere = true
        } else {
            storedHere = false
        }
        if storedHere {
            guard toOne, !components.contains(where: { $0.hasPrefix("@") }) else {
                untranslatable(
                    expression, context,
                    reason:
                        "\(context.property) links one object, but the key path '\(path)' goes through to-many relationships"
                )
                return nil
            }
            return .keyPath(components)
        }
        guard let inverse = relationship.inverse,
            let inverseRelationship = destination.entity(named: relationship.destination)?.relationship(named: inverse),
            !inverseRelationship.isToMany
        else {
            untranslatable(
                expression, context,
                reason:
                    "the key path '\(path)' leads through several relationships into a many-to-many relationship; ferry carries one source relationship into it"
            )
            return nil
        }
        throughInverse.append((relationship, inverse, expression, context))
        return MappingModel.RelationshipValue.none
    }

    /// The links of a source relationship, carried to the objects an entity mapping made from
    /// the linked objects. The implicit default carries nothing when no entity mapping makes
    /// such objects (as Xcode compiles it to nil); a stored expression that would link nothing
    /// is an error.
    mutating func carry(
        _ old: RelationshipDescription, into relationship: RelationshipDescription, context: Context, written: String,
        implicit: Bool = false
    ) -> MappingModel.RelationshipValue? {
        if file.entityMappings.contains(where: {
            $0.source == old.destination && $0.destination == relationship.destination
        }) {
            return .carry(source: old.name)
        }
        if implicit { return MappingModel.RelationshipValue.none }
        fail(
            "\(context.mapping) gives \(context.property) \(written), but no entity mapping makes \(relationship.destination) objects from \(old.destination) objects",
            at: context.location)
        return nil
    }

    mutating func fromMapping(
        named name: String, expression: ArchivedExpression, relationship: RelationshipDescription,
        owner: MappingModel.EntityMapping, context: Context
    ) -> MappingModel.RelationshipValue? {
        guard
            let target = file.entityMappings.first(where: {
                Self.coreDataName(source: $0.source, destination: $0.destination) == name
            })
        else {
            fail(
                "\(context.mapping) gives \(context.property) the objects of entity mapping '\(name)', which the mapping model does not have",
                at: context.location)
            return nil
        }
        guard target.destination == relationship.destination, target.source == owner.source else {
            untranslatable(
                expression, context,
                reason:
                    "'\(name)' maps \(target.source ?? "nothing") → \(target.destination); linking the objects made from the same source object needs a mapping from \(owner.source ?? "nothing") into \(relationship.destination)"
            )
            return nil
        }
        return .fromMapping(names[name] ?? name)
    }
}
