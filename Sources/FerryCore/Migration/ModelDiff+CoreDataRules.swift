/// Where Core Data's lightweight-migration rules (``MigrationRuleSet/coreData``, for Xcode models)
/// differ from ferry's, and how refusals are worded for an Xcode model. Every rule names its
/// source; docs/coredata.md "Lightweight migration of Xcode models" has the full table.
///
/// Sources:
/// - [guide] Apple, Core Data Model Versioning and Data Migration Programming Guide,
///   "Lightweight Migration" (developer.apple.com/library/archive/documentation/Cocoa/Conceptual/
///   CoreDataVersioning/Articles/vmLightweightMigration.html).
/// - [auto] Apple, "Migrating your data model automatically"
///   (developer.apple.com/documentation/coredata/migrating-your-data-model-automatically).
/// - [infer] Apple, `NSMappingModel.inferredMappingModel(forSourceModel:destinationModel:)`.
extension Builder {
    /// The mapping a refused change needs, as the fix names it: for an Xcode model, Core Data's
    /// mapping model or a ferry mapping file.
    static func mappingPhrase(_ rules: MigrationRuleSet, file: String) -> String {
        switch rules {
        case .ferry: return file
        case .coreData: return "a mapping model (.xcmappingmodel) or the ferry mapping file \(file)"
        }
    }

    /// How to give `subject` a default value, in the model's own terms.
    func setDefaultFix(_ subject: String) -> String {
        switch rules {
        case .ferry: return "add `default:` to \(subject) in version \(destinationVersion)"
        case .coreData: return "set a Default Value for \(subject) in version \(destinationVersion) of the Xcode model"
        }
    }

    /// How to declare that `subject` (nil: the one the sentence is about) is `old` renamed, in
    /// the model's own terms.
    func renameFix(_ subject: String?, from old: String) -> String {
        switch rules {
        case .ferry: return "add `renamed_from: \(old)`" + (subject.map { " to \($0)" } ?? "")
        case .coreData: return "set the Renaming ID of \(subject ?? "it") to \(old)"
        }
    }

    /// A to-many relationship that becomes to-one. [guide]: "You can change a relationship from a
    /// to-one to a to-many, or a non-ordered to-many to ordered (and visa-versa)" — Core Data
    /// infers it. The guide does not say which related object survives; ferry keeps the one with
    /// the lowest primary key (ferry's choice, documented in docs/coredata.md), as the migration
    /// engine carries a to-one from the first link in key order.
    func toManyBecomesToOne(entity: String, relationship: String, destination: String) -> ModelChange? {
        guard rules == .coreData else { return nil }
        return ModelChange(
            kind: .relationshipCardinalityChanged, entity: entity, property: relationship,
            detail:
                "to-many → to-one (Core Data infers it; each record keeps the linked \(destination) with the lowest primary key)"
        )
    }

    /// An attribute type change, for the verdict's wording. Apple's lists of inferable changes
    /// ([guide], [auto], [infer]) do not mention attribute type changes at all; for Xcode models
    /// ferry infers the same lossless widenings as for its own models (``TypeConversion``) and
    /// says so — ferry's extension — plus the checked numeric narrowings
    /// (``TypeConversion/checkedNarrowings``), and refuses every other type change.
    var typeChangeNote: String {
        switch rules {
        case .ferry: return "lightweight migration converts only lossless widenings"
        case .coreData:
            return
                "Core Data's documented lightweight migration lists no type changes; ferry infers only lossless widenings and checked numeric narrowings (ferry's extension)"
        }
    }

    /// A numeric narrowing, for Xcode models only: inferred with every value checked (ferry's
    /// extension, see ``typeChangeNote``; Core Data's SQLite migration casts the column).
    func checkedNarrowing(from: AttributeType, to: AttributeType) -> (detail: String, warning: (String) -> String)? {
        guard TypeConversion(from: from, to: to, rules: rules)?.isChecked == true else { return nil }
        return (
            " (checked narrowing, ferry's extension: each value converted only when it fits exactly)",
            { "the migration fails, naming the record, if a stored \($0) value does not fit \(to.rawValue)" }
        )
    }

    /// Core Data cannot merge entity hierarchies. [guide]: "you cannot merge entity hierarchies;
    /// if two existing entities do not share a common parent in the source, they cannot share a
    /// common parent in the destination." For each destination hierarchy, the entities carried
    /// over from the source must all come from one source hierarchy. Adding a parent to one
    /// existing entity, or moving entities out of a hierarchy, stays inferred.
    mutating func refuseMergedHierarchies() {
        guard rules == .coreData else { return }
        var byDestinationRoot: [String: [EntityDescription]] = [:]
        var order: [String] = []
        for entity in destination.entities where entityMap[entity.name] != nil {
            let root = Self.root(of: entity, in: destination)
            if byDestinationRoot[root] == nil { order.append(root) }
            byDestinationRoot[root, default: []].append(entity)
        }
        for root in order {
            let members = byDestinationRoot[root] ?? []
            var sourceRoots: [String: String] = [:]  // source root → a destination entity from it
            for member in members {
                guard let sourceName = entityMap[member.name], let old = source.entity(named: sourceName) else {
                    continue
                }
                let sourceRoot = Self.root(of: old, in: source)
                if sourceRoots[sourceRoot] == nil { sourceRoots[sourceRoot] = member.name }
            }
            guard sourceRoots.count > 1 else { continue }
            let merged = sourceRoots.values.sorted()
            let list = merged.joined(separator: ", ")
            var change = ModelChange(
                kind: .entityParentChanged, entity: root,
                detail: "hierarchy \(root) merges entities that share no parent in version \(source.version): \(list)")
            change.verdict = .refused
            change.reason =
                "Core Data cannot merge entity hierarchies: \(list) have no common parent in version \(source.version) but share \(root) in version \(destinationVersion)"
            change.fix = "keep them in separate hierarchies, or write \(mappingFile) that moves the records"
            changes.append(change)
        }
    }

    /// The topmost ancestor of `entity` in `model` (itself without a parent).
    static func root(of entity: EntityDescription, in model: ObjectModel) -> String {
        model.ancestors(of: entity).last?.name ?? entity.name
    }
}
