/// Differences in the Core Data concepts of a model (entity hierarchy, transient, derived and
/// transformable attributes), judged by Core Data's lightweight-migration rules (COREDATA.md §5):
/// moving an entity into, out of or within a hierarchy is inferred; transient attributes carry no
/// data, so making one stored is like adding it and the reverse like removing it.
extension Builder {
    mutating func compareHierarchy(_ old: EntityDescription, _ new: EntityDescription, entityForward: [String: String])
    {
        let carriedParent = old.parent.map { entityForward[$0] ?? $0 }
        if carriedParent != new.parent {
            changes.append(
                ModelChange(
                    kind: .entityParentChanged, entity: new.name,
                    detail: "parent entity \(Builder.text(old.parent)) → \(Builder.text(new.parent))"))
        }
        if old.isAbstract != new.isAbstract {
            var change = ModelChange(
                kind: .entityAbstractChanged, entity: new.name,
                detail: new.isAbstract ? "concrete → abstract" : "abstract → concrete")
            if new.isAbstract {
                change.warning =
                    "stored \(new.name) objects that are not of a sub-entity cannot exist in an abstract entity"
            }
            changes.append(change)
        }
    }

    mutating func compareStorage(_ old: AttributeDescription, _ new: AttributeDescription, in entity: EntityDescription)
    {
        var details: [String] = []
        var warning: String?
        if old.isTransient != new.isTransient {
            details.append(
                new.isTransient
                    ? "stored → transient (its values are dropped)"
                    : "transient → stored (starts empty\(new.defaultValue.map { " with the default \(Builder.literal($0))" } ?? ""))"
            )
        }
        if old.derivation != new.derivation {
            details.append("derivation \(Builder.text(old.derivation)) → \(Builder.text(new.derivation))")
        }
        if old.coreDataKind != new.coreDataKind {
            details.append("kind \(Self.describe(old)) → \(Self.describe(new))")
            warning = "the stored bytes are kept as they are; they must suit \(Self.describe(new))"
        }
        guard !details.isEmpty else { return }
        var change = ModelChange(
            kind: .attributeStorageChanged, entity: entity.name, property: new.name,
            detail: details.joined(separator: ", "))
        change.warning = warning
        if old.isTransient, !new.isTransient, !new.isOptional, new.defaultValue == nil {
            change.verdict = .refused
            change.reason =
                "\(entity.name).\(new.name) becomes stored and non-optional without a default value; stored \(entity.name) records have no value for it"
            change.fix =
                "\(setDefaultFix("\(entity.name).\(new.name)")), make it optional, or write \(mappingFile) that fills it"
        }
        changes.append(change)
    }

    static func describe(_ attribute: AttributeDescription) -> String {
        switch attribute.coreDataKind {
        case .transformable(let transformer, _): return "transformable (\(transformer ?? "default transformer"))"
        case let kind?: return kind.typeName
        case nil: return attribute.type.rawValue
        }
    }
}
