/// Every difference between two model versions, per entity, attribute and relationship, with
/// the verdict of lightweight (inferred) migration on each: Core Data's
/// `NSMappingModel.inferredMappingModel(forSourceModel:destinationModel:)` with its reasons
/// spelled out. `ferry model diff` prints it.
///
/// ```swift
/// let diff = ModelDiff(from: bundle.versions[0], to: bundle.versions[2], through: [bundle.versions[1]])
/// if diff.isInferable {
///     let mapping = try diff.inferredMapping()
/// } else {
///     for change in diff.refusals { print(change.reason ?? "", change.fix ?? "") }
/// }
/// ```
///
/// **Renames.** `renamed_from` names an entity's or property's name in the *previous* version.
/// Between adjacent versions a destination matches the source its `renamed_from` names, else the
/// same-named one (see docs/migration.md for the exact rules). To compare versions further apart,
/// pass the versions between them as `through:`: the diff resolves each adjacent step and
/// composes them, so a rename declared in v2 still holds when comparing v1 with v3, and an
/// entity removed in v2 and re-added in v3 is a new entity, exactly as migrating step by step.
/// The changes and verdicts then compare the two ends directly.
public struct ModelDiff: Sendable {
    /// The version compared from (under Core Data's rules, each sub-entity with the
    /// properties it inherits, ``ObjectModel/withInheritedProperties``).
    public let source: ObjectModel
    /// The version compared to (as `source`).
    public let destination: ObjectModel
    /// The versions between `source` and `destination`, oldest first.
    public let intermediates: [ObjectModel]
    /// The rules the verdicts follow: Core Data's for Xcode models, ferry's for ferry model files.
    public let rules: MigrationRuleSet
    /// Every change, grouped by entity in destination order (removed entities last).
    public private(set) var changes: [ModelChange] = []
    /// Destination entity name → the source entity it comes from (absent for new entities).
    public private(set) var entitySources: [String: String] = [:]
    /// Destination entity → destination attribute → source attribute (absent for new ones).
    public private(set) var attributeSources: [String: [String: String]] = [:]
    /// Destination entity → destination relationship → source relationship.
    public private(set) var relationshipSources: [String: [String: String]] = [:]

    /// Compares `source` with `destination`, resolving renames through `intermediates` (the
    /// versions between them, oldest first; empty for adjacent versions or two unrelated files).
    public init(from source: ObjectModel, to destination: ObjectModel, through intermediates: [ObjectModel] = []) {
        let rules = MigrationRuleSet(source: source, destination: destination)
        self.rules = rules
        // Core Data compares each entity with the properties it inherits (its mappings list
        // them): a property moved up to a parent stays the sub-entity's, an entity leaving its
        // hierarchy keeps what it inherited.
        func compared(_ model: ObjectModel) -> ObjectModel {
            rules == .coreData ? model.withInheritedProperties : model
        }
        self.source = compared(source)
        self.destination = compared(destination)
        self.intermediates = intermediates.map(compared)
        let mappingFile = Builder.mappingPhrase(rules, file: "mappings/\(source.version)-to-\(destination.version).yml")
        var builder = Builder(
            source: self.source, destination: self.destination, intermediates: self.intermediates,
            mappingFile: mappingFile, rules: rules)
        builder.run()
        changes = builder.changes
        entitySources = builder.entityMap
        attributeSources = builder.attributeMap
        relationshipSources = builder.relationshipMap
    }

    /// True when lightweight migration can do every change.
    public var isInferable: Bool { changes.allSatisfy(\.isInferable) }

    /// The changes inference refuses.
    public var refusals: [ModelChange] { changes.filter { !$0.isInferable } }

    /// True when the two versions are the same as far as migration is concerned.
    public var isEmpty: Bool { changes.isEmpty }

    /// The mapping file that would cover this step: `mappings/1-to-2.yml`.
    public var mappingFile: String { "mappings/\(source.version)-to-\(destination.version).yml" }

    /// The changes of one entity (destination name, or source name for a removed entity).
    public func changes(of entity: String) -> [ModelChange] { changes.filter { $0.entity == entity } }

    /// The inferred mapping, or an error listing every refused change with its reason and fix.
    /// - Throws: `FerryError` (code `.migration`).
    public func inferredMapping() throws -> InferredMapping {
        let refused = refusals
        guard refused.isEmpty else {
            throw FerryError(
                .migration,
                "cannot infer a mapping from \(source.name) version \(source.version) to version \(destination.version): \(refused.count) \(refused.count == 1 ? "change needs" : "changes need") \(rules == .coreData ? Builder.mappingPhrase(rules, file: mappingFile) : "a mapping file (\(mappingFile))")",
                notes: refused.map {
                    "\($0.subject): \($0.reason ?? $0.detail); fix: \($0.fix ?? "write \(mappingFile)")"
                })
        }
        return bestEffortMapping()
    }

    /// The mapping inference gives for everything it can do, without refusing: where a change
    /// was refused (a type change, a new required attribute without a default), the attribute is
    /// mapped as for an unchanged one or left without a source. A mapping file must cover the
    /// refused parts (``MappingModel`` checks that); on its own, use ``inferredMapping()``.
    public func bestEffortMapping() -> InferredMapping {
        var entities: [InferredMapping.EntityMapping] = []
        for entity in destination.entities {
            let sourceName = entitySources[entity.name]
            let sourceEntity = sourceName.flatMap { source.entity(named: $0) }
            let attributes = entity.attributes.map { attribute -> InferredMapping.AttributeMapping in
                guard let from = attributeSources[entity.name]?[attribute.name],
                    let old = sourceEntity?.attribute(named: from)
                else {
                    return InferredMapping.AttributeMapping(
                        destination: attribute.name, source: nil, valueIfNil: attribute.defaultValue ?? .null)
                }
                let fill = attribute.isOptional ? Value.null : (attribute.defaultValue ?? .null)
                return InferredMapping.AttributeMapping(
                    destination: attribute.name, source: from,
                    conversion: TypeConversion(from: old.type, to: attribute.type, rules: rules), valueIfNil: fill)
            }
            let relationships = entity.relationships.map {
                InferredMapping.RelationshipMapping(
                    destination: $0.name, source: relationshipSources[entity.name]?[$0.name])
            }
            var dropped: [String] = []
            if let sourceEntity {
                let keptAttributes = Set(attributeSources[entity.name]?.values.map { $0 } ?? [])
                let keptRelationships = Set(relationshipSources[entity.name]?.values.map { $0 } ?? [])
                dropped =
                    sourceEntity.attributes.map(\.name).filter { !keptAttributes.contains($0) }
                    + sourceEntity.relationships.map(\.name).filter { !keptRelationships.contains($0) }
            }
            entities.append(
                InferredMapping.EntityMapping(
                    destination: entity.name, source: sourceName, attributes: attributes, relationships: relationships,
                    droppedProperties: dropped))
        }
        let kept = Set(entitySources.values)
        return InferredMapping(
            modelName: destination.name, sourceVersion: source.version, destinationVersion: destination.version,
            sourceHash: source.versionHash, destinationHash: destination.versionHash,
            entities: entities, droppedEntities: source.entityNames.filter { !kept.contains($0) })
    }
}

// MARK: - Bundles

extension ModelDiff {
    /// The diff between two versions of a bundle, renames resolved through the versions between.
    /// - Throws: `FerryError` (`.usage`) for an unknown label or when `to` comes before `from`.
    public init(bundle: ModelBundle, from: String, to: String) throws {
        let path = try bundle.path(from: from, to: to)
        self.init(from: path[0], to: path[path.count - 1], through: Array(path.dropFirst().dropLast()))
    }

    /// One diff per adjacent step from `from` to `to`, as `ferry migrate` runs them (empty when
    /// `from` is `to`).
    public static func steps(in bundle: ModelBundle, from: String, to: String) throws -> [ModelDiff] {
        let path = try bundle.path(from: from, to: to)
        return zip(path, path.dropFirst()).map { ModelDiff(from: $0, to: $1) }
    }
}

extension ModelBundle {
    /// The versions from `from` to `to`, both included, oldest first.
    /// - Throws: `FerryError` (`.usage`) for an unknown label or when `to` comes before `from`.
    public func path(from: String, to: String) throws -> [ObjectModel] {
        let labels = versions.map(\.version)
        func index(_ label: String) throws -> Int {
            guard let index = labels.firstIndex(of: label) else {
                throw FerryError(
                    .usage,
                    "model \(name) has no version '\(label)' (versions: \(labels.joined(separator: ", ")))\(Suggestions.didYouMean(label, in: labels))",
                    at: location)
            }
            return index
        }
        let start = try index(from)
        let end = try index(to)
        guard start <= end else {
            throw FerryError(
                .usage,
                "version \(to) comes before version \(from) in model \(name); ferry migrates only to later versions",
                at: location)
        }
        return Array(versions[start...end])
    }
}

// MARK: - Comparison

/// Works out a ``ModelDiff``'s changes (extended in ModelDiff+CoreData.swift).
struct Builder {
    let source: ObjectModel
    let destination: ObjectModel
    let intermediates: [ObjectModel]
    /// The mapping a refused change needs, as fixes name it (``mappingPhrase(_:file:)``).
    let mappingFile: String
    let rules: MigrationRuleSet
    var changes: [ModelChange] = []
    var entityMap: [String: String] = [:]
    var attributeMap: [String: [String: String]] = [:]
    var relationshipMap: [String: [String: String]] = [:]
    /// Subjects (`Entity` or `Entity.property`) with an unresolved rename: not also reported as added.
    var unresolved: Set<String> = []

    init(
        source: ObjectModel, destination: ObjectModel, intermediates: [ObjectModel], mappingFile: String,
        rules: MigrationRuleSet
    ) {
        self.source = source
        self.destination = destination
        self.intermediates = intermediates
        self.mappingFile = mappingFile
        self.rules = rules
    }

    var destinationVersion: String { destination.version }

    mutating func run() {
        composeCorrespondence()
        let entityForward = Dictionary(entityMap.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        for entity in destination.entities {
            if let sourceName = entityMap[entity.name], let old = source.entity(named: sourceName) {
                compare(old, entity, entityForward: entityForward)
            } else if !unresolved.contains(entity.name) {
                added(entity)
            }
        }
        for entity in source.entities where entityForward[entity.name] == nil {
            changes.append(
                ModelChange(kind: .entityRemoved, entity: entity.name, detail: "removed (its records are dropped)"))
        }
        refuseMergedHierarchies()
    }

    /// Resolves each adjacent step and composes them from the destination back to the source.
    mutating func composeCorrespondence() {
        let path = [source] + intermediates + [destination]
        let steps = zip(path, path.dropFirst()).map {
            StepCorrespondence(source: $0, destination: $1, mappingFile: mappingFile)
        }
        for step in steps {
            changes += step.problems
            for problem in step.problems { unresolved.insert(problem.subject) }
        }
        var entities = Dictionary(uniqueKeysWithValues: destination.entities.map { ($0.name, $0.name) })
        var attributes = Dictionary(
            uniqueKeysWithValues: destination.entities.map { entity in
                (entity.name, Dictionary(uniqueKeysWithValues: entity.attributes.map { ($0.name, $0.name) }))
            })
        var relationships = Dictionary(
            uniqueKeysWithValues: destination.entities.map { entity in
                (entity.name, Dictionary(uniqueKeysWithValues: entity.relationships.map { ($0.name, $0.name) }))
            })
        for step in steps.reversed() {
            var nextEntities: [String: String] = [:]
            var nextAttributes: [String: [String: String]] = [:]
            var nextRelationships: [String: [String: String]] = [:]
            for (name, current) in entities {
                guard let previous = step.entities[current] else { continue }
                nextEntities[name] = previous
                nextAttributes[name] = (attributes[name] ?? [:]).compactMapValues { step.attributes[current]?[$0] }
                nextRelationships[name] = (relationships[name] ?? [:]).compactMapValues {
                    step.relationships[current]?[$0]
                }
            }
            entities = nextEntities
            attributes = nextAttributes
            relationships = nextRelationships
        }
        entityMap = entities
        attributeMap = attributes
        relationshipMap = relationships
    }

    // MARK: Entities

    mutating func added(_ entity: EntityDescription) {
        var change = ModelChange(kind: .entityAdded, entity: entity.name, detail: "added (starts empty)")
        let removed = source.entities.filter { old in !entityMap.values.contains(old.name) }
        if let similar = Self.similarEntity(to: entity, among: removed) {
            change.warning =
                "if it is \(similar) renamed, \(renameFix("entity \(entity.name)", from: similar)), or the records of \(similar) are dropped"
        }
        changes.append(change)
    }

    /// A removed entity that shares at least half of the added entity's attribute names.
    static func similarEntity(to entity: EntityDescription, among removed: [EntityDescription]) -> String? {
        let names = Set(entity.attributes.map(\.name))
        guard !names.isEmpty else { return nil }
        let scored = removed.map { old in (old.name, Set(old.attributes.map(\.name)).intersection(names).count) }
        guard let best = scored.max(by: { $0.1 < $1.1 }), best.1 * 2 >= names.count else { return nil }
        return best.0
    }

    mutating func compare(_ old: EntityDescription, _ new: EntityDescription, entityForward: [String: String]) {
        if old.name != new.name {
            changes.append(ModelChange(kind: .entityRenamed, entity: new.name, detail: "renamed from \(old.name)"))
        }
        if old.hashModifier != new.hashModifier {
            changes.append(
                ModelChange(
                    kind: .entityHashModifierChanged, entity: new.name,
                    detail:
                        "hash modifier \(Self.text(old.hashModifier)) → \(Self.text(new.hashModifier)) (changes the version hash only)"
                ))
        }
        compareHierarchy(old, new, entityForward: entityForward)
        let attributes = attributeMap[new.name] ?? [:]
        let relationships = relationshipMap[new.name] ?? [:]
        let keptAttributes = Set(attributes.values)
        let keptRelationships = Set(relationships.values)
        var kindChanged: Set<String> = []
        let removedAttributes = old.attributes.filter { !keptAttributes.contains($0.name) }
        let addedAttributes = new.attributes.filter { attributes[$0.name] == nil }

        for attribute in new.attributes {
            if let from = attributes[attribute.name], let previous = old.attribute(named: from) {
                compare(previous, attribute, in: new)
            } else if unresolved.contains("\(new.name).\(attribute.name)") {
                continue
            } else if old.relationship(named: attribute.name) != nil, !keptRelationships.contains(attribute.name) {
                kindChanged.insert(attribute.name)
                changes.append(kindChange(entity: new.name, name: attribute.name, toRelationship: false))
            } else {
                added(attribute, in: new, removed: removedAttributes, added: addedAttributes)
            }
        }
        // An attribute that a same-named new relationship replaces is reported as a kind change below.
        for attribute in removedAttributes
        where new.relationship(named: attribute.name) == nil || relationships[attribute.name] != nil
            || unresolved.contains("\(new.name).\(attribute.name)")
        {
            changes.append(
                ModelChange(
                    kind: .attributeRemoved, entity: new.name, property: attribute.name,
                    detail: "removed (\(Self.describe(attribute)); its values are dropped)"))
        }
        for relationship in new.relationships {
            if let from = relationships[relationship.name], let previous = old.relationship(named: from) {
                compare(previous, relationship, in: new, entityForward: entityForward)
            } else if unresolved.contains("\(new.name).\(relationship.name)") {
                continue
            } else if old.attribute(named: relationship.name) != nil, !keptAttributes.contains(relationship.name) {
                kindChanged.insert(relationship.name)
                changes.append(kindChange(entity: new.name, name: relationship.name, toRelationship: true))
            } else {
                added(relationship, in: new)
            }
        }
        for relationship in old.relationships
        where !keptRelationships.contains(relationship.name) && !kindChanged.contains(relationship.name) {
            changes.append(
                ModelChange(
                    kind: .relationshipRemoved, entity: new.name, property: relationship.name,
                    detail: "removed (its links are dropped)"))
        }
        compareConstraints(old, new, attributes: attributes, relationships: relationships)
    }

    func kindChange(entity: String, name: String, toRelationship: Bool) -> ModelChange {
        let (from, to) = toRelationship ? ("an attribute", "a relationship") : ("a relationship", "an attribute")
        return ModelChange(
            kind: .propertyKindChanged, entity: entity, property: name, detail: "\(from) → \(to)", verdict: .refused,
            reason: "\(entity).\(name) changes from \(from) to \(to)",
            fix:
                "write \(mappingFile) that fills \(entity).\(name) from the old \(toRelationship ? "attribute" : "relationship")"
        )
    }

    /// Uniqueness constraints and indexes, with source names carried forward through renames.
    mutating func compareConstraints(
        _ old: EntityDescription, _ new: EntityDescription, attributes: [String: String],
        relationships: [String: String]
    ) {
        var forward: [String: String] = [:]
        for (to, from) in attributes { forward[from] = to }
        var relationshipForward: [String: String] = [:]
        for (to, from) in relationships { relationshipForward[from] = to }
        func carried(_ names: [String]) -> [String]? {
            var result: [String] = []
            for name in names {
                if old.attribute(named: name) != nil, let to = forward[name] {
                    result.append(to)
                } else if old.relationship(named: name) != nil, let to = relationshipForward[name] {
                    result.append(to)
                } else {
                    return nil
                }
            }
            return result
        }
        let oldConstraints = old.uniquenessConstraints.map { constraint in carried(constraint).map(Set.init) }
        let newConstraints = new.uniquenessConstraints.map(Set.init)
        for (index, constraint) in old.uniquenessConstraints.enumerated() {
            guard let mapped = oldConstraints[index], newConstraints.contains(mapped) else {
                changes.append(
                    ModelChange(
                        kind: .uniquenessConstraintRemoved, entity: new.name,
                        detail: "uniqueness constraint (\(constraint.joined(separator: ", "))) removed"))
                continue
            }
        }
        for constraint in new.uniquenessConstraints where !oldConstraints.contains(Set(constraint)) {
            let list = constraint.joined(separator: ", ")
            changes.append(
                ModelChange(
                    kind: .uniquenessConstraintAdded, entity: new.name, detail: "uniqueness constraint (\(list)) added",
                    warning:
                        "the migration fails if stored \(new.name) records share a value of (\(list)); remove duplicates first"
                ))
        }
        func key(_ index: IndexDescription, _ names: [String]) -> String {
            "\(index.name ?? "")|\(names.joined(separator: ","))"
        }
        let oldIndexes = old.indexes.map { index in carried(index.attributes).map { key(index, $0) } }
        let newIndexes = new.indexes.map { key($0, $0.attributes) }
        for (offset, index) in old.indexes.enumerated()
        where oldIndexes[offset].map({ !newIndexes.contains($0) }) ?? true {
            changes.append(
                ModelChange(kind: .indexRemoved, entity: new.name, detail: "index \(Self.describe(index)) removed"))
        }
        for (offset, index) in new.indexes.enumerated() where !oldIndexes.contains(newIndexes[offset]) {
            changes.append(
                ModelChange(kind: .indexAdded, entity: new.name, detail: "index \(Self.describe(index)) added"))
        }
    }

    static func describe(_ index: IndexDescription) -> String {
        let list = "(\(index.attributes.joined(separator: ", ")))"
        return index.name.map { "\($0) \(list)" } ?? list
    }

    // MARK: Attributes

    mutating func added(
        _ attribute: AttributeDescription, in entity: EntityDescription, removed: [AttributeDescription],
        added: [AttributeDescription]
    ) {
        let subject = "\(entity.name).\(attribute.name)"
        var facts = [Self.describe(attribute), attribute.isOptional ? "optional" : "non-optional"]
        if let value = attribute.defaultValue { facts.append("default \(Self.literal(value))") }
        var change = ModelChange(
            kind: .attributeAdded, entity: entity.name, property: attribute.name,
            detail: "added (\(facts.joined(separator: ", ")))")
        let similar = Self.similarAttribute(to: attribute, among: removed, added: added)
        if !attribute.isOptional && attribute.defaultValue == nil {
            change.verdict = .refused
            change.reason =
                "new non-optional attribute \(subject) has no default value; stored \(entity.name) records would have none"
            var fix = "\(setDefaultFix(subject)), or make it optional"
            if let similar { fix += ", or \(renameFix(nil, from: similar)) if it is \(similar) renamed" }
            change.fix = fix
        } else if let similar {
            change.warning =
                "if it is \(similar) renamed, \(renameFix(subject, from: similar)), or the values of \(similar) are dropped"
        }
        changes.append(change)
    }

    /// The removed attribute most likely to be this one under another name, among those of the
    /// same (or a widened) type: one whose name contains the other's or is close to it, else the
    /// only candidate when exactly one attribute of that type was removed and one added.
    static func similarAttribute(
        to attribute: AttributeDescription, among removed: [AttributeDescription], added: [AttributeDescription]
    ) -> String? {
        func fits(_ old: AttributeDescription, _ new: AttributeDescription) -> Bool {
            old.type == new.type || TypeConversion.isLosslessWidening(from: old.type, to: new.type)
        }
        let candidates = removed.filter { fits($0, attribute) }
        let name = attribute.name.lowercased()
        let target = Array(name.unicodeScalars)
        func distance(_ other: AttributeDescription) -> Int {
            Suggestions.editDistance(target, Array(other.name.lowercased().unicodeScalars))
        }
        if let contained = candidates.first(where: {
            $0.name.lowercased().contains(name) || name.contains($0.name.lowercased())
        }) {
            return contained.name
        }
        if let close = candidates.min(by: { distance($0) < distance($1) }),
            distance(close) * 2 <= max(name.count, close.name.count)
        {
            return close.name
        }
        if candidates.count == 1, added.filter({ fits(candidates[0], $0) }).count == 1 { return candidates[0].name }
        return nil
    }

    mutating func compare(_ old: AttributeDescription, _ new: AttributeDescription, in entity: EntityDescription) {
        let subject = "\(entity.name).\(new.name)"
        func change(_ kind: ModelChange.Kind, _ detail: String) -> ModelChange {
            ModelChange(kind: kind, entity: entity.name, property: new.name, detail: detail)
        }
        if old.name != new.name {
            changes.append(change(.attributeRenamed, "renamed from \(old.name)"))
        }
        if old.type != new.type {
            var typeChange = change(.attributeTypeChanged, "type \(old.type.rawValue) → \(new.type.rawValue)")
            if TypeConversion.isLosslessWidening(from: old.type, to: new.type) {
                typeChange.detail += " (lossless widening)"
            } else if let checked = checkedNarrowing(from: old.type, to: new.type) {
                typeChange.detail += checked.detail
                typeChange.warning = checked.warning(subject)
            } else {
                typeChange.verdict = .refused
                typeChange.reason =
                    "\(subject) changes type from \(old.type.rawValue) to \(new.type.rawValue); \(typeChangeNote)"
                typeChange.fix =
                    "write \(mappingFile) with an expression that converts \(subject), or keep it \(old.type.rawValue)"
            }
            changes.append(typeChange)
        }
        if old.isOptional != new.isOptional {
            if new.isOptional {
                changes.append(change(.attributeOptionalityChanged, "non-optional → optional"))
            } else if let value = new.defaultValue {
                changes.append(
                    change(
                        .attributeOptionalityChanged,
                        "optional → non-optional (nil values become the default \(Self.literal(value)))"))
            } else {
                var optionality = change(.attributeOptionalityChanged, "optional → non-optional")
                optionality.verdict = .refused
                optionality.reason =
                    "\(subject) becomes non-optional without a default value; stored \(entity.name) records with no \(new.name) could not be migrated"
                optionality.fix = "\(setDefaultFix(subject)), keep it optional, or write \(mappingFile) that fills it"
                changes.append(optionality)
            }
        }
        if !Self.sameDefault(old.defaultValue, new.defaultValue) {
            changes.append(
                change(
                    .attributeDefaultChanged,
                    "default \(old.defaultValue.map(Self.literal) ?? "none") → \(new.defaultValue.map(Self.literal) ?? "none") (stored values are kept)"
                ))
        }
        if old.validation != new.validation {
            let (details, tightened) = Self.compare(old.validation, new.validation)
            var validation = change(.attributeValidationChanged, "validation " + details.joined(separator: ", "))
            if tightened {
                validation.warning = "stricter: the migration fails if a stored \(subject) value breaks the new rule"
            }
            changes.append(validation)
        }
        compareStorage(old, new, in: entity)
        if old.hashModifier != new.hashModifier {
            changes.append(
                change(
                    .attributeHashModifierChanged,
                    "hash modifier \(Self.text(old.hashModifier)) → \(Self.text(new.hashModifier)) (changes the version hash only)"
                ))
        }
    }

    /// Each changed rule as `max_length 200 → 100`, and whether any became stricter.
    static func compare(_ old: ValidationRules, _ new: ValidationRules) -> ([String], Bool) {
        var details: [String] = []
        var tightened = false
        func value(_ name: String, _ a: Value?, _ b: Value?, stricterWhenHigher: Bool) {
            guard a != b else { return }
            details.append("\(name) \(a.map(literal) ?? "none") → \(b.map(literal) ?? "none")")
            guard let b else { return }
            guard let a, let order = AttributeValidator.compare(b, a) else {
                tightened = true
                return
            }
            if stricterWhenHigher ? order > 0 : order < 0 { tightened = true }
        }
        func length(_ name: String, _ a: Int?, _ b: Int?, stricterWhenHigher: Bool) {
            value(
                name, a.map { .integer(Int64($0)) }, b.map { .integer(Int64($0)) },
                stricterWhenHigher: stricterWhenHigher)
        }
        value("min", old.minValue, new.minValue, stricterWhenHigher: true)
        value("max", old.maxValue, new.maxValue, stricterWhenHigher: false)
        length("min_length", old.minLength, new.minLength, stricterWhenHigher: true)
        length("max_length", old.maxLength, new.maxLength, stricterWhenHigher: false)
        if old.pattern != new.pattern {
            details.append(
                "pattern \(old.pattern.map { "'\($0)'" } ?? "none") → \(new.pattern.map { "'\($0)'" } ?? "none")")
            if new.pattern != nil { tightened = true }
        }
        return (details, tightened)
    }

    // MARK: Relationships

    mutating func added(_ relationship: RelationshipDescription, in entity: EntityDescription) {
        let subject = "\(entity.name).\(relationship.name)"
        var change = ModelChange(
            kind: .relationshipAdded, entity: entity.name, property: relationship.name,
            detail:
                "added (\(Self.shape(relationship)), \(carriedInverse(of: relationship).map { "the inverse of \($0), whose links it shows" } ?? "starts empty"))"
        )
        if !relationship.isOptional {
            change.verdict = .refused
            change.reason = "new non-optional relationship \(subject) has no value for stored \(entity.name) records"
            change.fix =
                "make \(subject) optional in version \(destinationVersion), or write \(mappingFile) that sets it"
        }
        changes.append(change)
    }

    /// `Entity.name` of the kept to-one relationship whose inverse the new to-many `relationship`
    /// is: the to-one's key column holds the links, so the new side has them from the start.
    func carriedInverse(of relationship: RelationshipDescription) -> String? {
        guard relationship.isToMany, let inverseName = relationship.inverse,
            let inverse = destination.entity(named: relationship.destination)?.relationship(named: inverseName),
            !inverse.isToMany,
            let oldEntity = entityMap[relationship.destination].flatMap({ source.entity(named: $0) }),
            let oldName = relationshipMap[relationship.destination]?[inverseName],
            oldEntity.relationship(named: oldName)?.isToMany == false
        else { return nil }
        return "\(relationship.destination).\(inverseName)"
    }

    static func shape(_ relationship: RelationshipDescription) -> String {
        "\(relationship.isToMany ? "to-many" : "to-one") \(relationship.destination), \(relationship.isOptional ? "optional" : "non-optional")"
    }

    mutating func compare(
        _ old: RelationshipDescription, _ new: RelationshipDescription, in entity: EntityDescription,
        entityForward: [String: String]
    ) {
        let subject = "\(entity.name).\(new.name)"
        func change(_ kind: ModelChange.Kind, _ detail: String) -> ModelChange {
            ModelChange(kind: kind, entity: entity.name, property: new.name, detail: detail)
        }
        if old.name != new.name {
            changes.append(change(.relationshipRenamed, "renamed from \(old.name)"))
        }
        let carriedDestination = entityForward[old.destination]
        if carriedDestination == nil && unresolved.contains(new.destination) {
            // The destination entity's own rename is refused already; nothing to compare against.
        } else if carriedDestination != new.destination {
            var destination = change(
                .relationshipDestinationChanged, "destination \(old.destination) → \(new.destination)")
            destination.verdict = .refused
            destination.reason =
                "\(subject) now points at \(new.destination) instead of \(old.destination)\(carriedDestination == nil ? " (removed)" : "")"
            destination.fix = "write \(mappingFile) that links \(subject) to \(new.destination)"
            changes.append(destination)
        } else {
            // The inverse, compared under the destination entity's renames.
            let carriedInverse = old.inverse.flatMap { inverse in
                relationshipMap[new.destination]?.first(where: { $0.value == inverse })?.key
            }
            if carriedInverse != new.inverse || (old.inverse != nil && carriedInverse == nil) {
                changes.append(
                    change(
                        .relationshipInverseChanged,
                        "inverse \(old.inverse ?? "none") → \(new.inverse ?? "none") (links are carried over from \(entity.name).\(new.name))"
                    ))
            }
        }
        if old.isToMany != new.isToMany {
            if new.isToMany {
                changes.append(
                    change(.relationshipCardinalityChanged, "to-one → to-many (each link becomes a one-element set)"))
            } else if let inferred = toManyBecomesToOne(
                entity: entity.name, relationship: new.name, destination: new.destination)
            {
                changes.append(inferred)
            } else {
                var cardinality = change(.relationshipCardinalityChanged, "to-many → to-one")
                cardinality.verdict = .refused
                cardinality.reason =
                    "\(subject) becomes to-one; a stored \(entity.name) linked to several \(old.destination) records would have to lose all but one"
                cardinality.fix = "keep it to-many, or write \(mappingFile) that chooses the \(new.destination) to keep"
                changes.append(cardinality)
            }
        }
        if old.isOptional != new.isOptional {
            if new.isOptional {
                changes.append(change(.relationshipOptionalityChanged, "non-optional → optional"))
            } else {
                var optionality = change(.relationshipOptionalityChanged, "optional → non-optional")
                optionality.verdict = .refused
                optionality.reason =
                    "\(subject) becomes non-optional; stored \(entity.name) records without one could not be migrated"
                optionality.fix = "keep it optional, or write \(mappingFile) that sets it"
                changes.append(optionality)
            }
        }
        if old.isOrdered != new.isOrdered {
            changes.append(
                change(
                    .relationshipOrderingChanged,
                    new.isOrdered
                        ? "unordered → ordered (existing links get an arbitrary order)"
                        : "ordered → unordered (the order is dropped)"))
        }
        if old.deleteRule != new.deleteRule {
            changes.append(
                change(
                    .relationshipDeleteRuleChanged,
                    "delete rule \(old.deleteRule.rawValue) → \(new.deleteRule.rawValue)"))
        }
        if old.minCount != new.minCount || old.maxCount != new.maxCount {
            var details: [String] = []
            var tightened = false
            if old.minCount != new.minCount {
                details.append("min_count \(Self.text(old.minCount)) → \(Self.text(new.minCount))")
                if (new.minCount ?? 0) > (old.minCount ?? 0) { tightened = true }
            }
            if old.maxCount != new.maxCount {
                details.append("max_count \(Self.text(old.maxCount)) → \(Self.text(new.maxCount))")
                if let limit = new.maxCount, limit < (old.maxCount ?? Int.max) { tightened = true }
            }
            var count = change(.relationshipCountChanged, details.joined(separator: ", "))
            if tightened {
                count.warning =
                    "stricter: the migration fails if a stored \(entity.name) has a number of \(new.name) outside the new bounds"
            }
            changes.append(count)
        }
        if old.hashModifier != new.hashModifier {
            changes.append(
                change(
                    .relationshipHashModifierChanged,
                    "hash modifier \(Self.text(old.hashModifier)) → \(Self.text(new.hashModifier)) (changes the version hash only)"
                ))
        }
    }

    // MARK: Text

    static func text(_ value: String?) -> String { value ?? "none" }
    static func text(_ value: Int?) -> String { value.map(String.init) ?? "none" }

    /// A value as written in a model file: strings quoted.
    /// True when two defaults are the same value, however they were read: equal numbers of
    /// different kinds (an Xcode model's "0" for a Decimal, a YAML 0, 0.0) are no change.
    static func sameDefault(_ old: Value?, _ new: Value?) -> Bool {
        if old == new { return true }
        guard let old, let new else { return false }
        if let a = number(old), let b = number(new) { return a == b }
        return literal(old) == literal(new)
    }

    private static func number(_ value: Value) -> Double? {
        switch value {
        case .integer(let number): return Double(number)
        case .double(let number): return number
        case .decimal(let text): return Double(text)
        default: return nil
        }
    }

    static func literal(_ value: Value) -> String {
        switch value {
        case .string(let text): return "\"\(text)\""
        default: return value.description
        }
    }
}
