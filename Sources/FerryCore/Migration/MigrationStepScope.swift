import Foundation

/// What the parts of one version step share, fixed once the new store's schema exists: the
/// mapping, both models' layouts, the options and the step's clock. A value: the entity plans,
/// the object writer and the verification read it, none of them refers back to the runner.
package struct MigrationStepScope {
    let mapping: MappingModel
    let options: MigrationOptions
    let now: Int64
    /// How the source store and the new store lay out and code their values (the new store's
    /// layout is the one its schema was created with).
    let sourceLayout: any StoreLayout
    let destinationLayout: any StoreLayout
    /// The kind of store the step writes.
    let destinationKind: MigrationDestination

    /// True when the step writes a Core Data store.
    var writesCoreData: Bool {
        if case .coreData = destinationKind { return true }
        return false
    }

    /// The schema the new store is reached through on the step's connection (attached in SQLite).
    static let destinationSchema = "dst"
    /// The schema of the source store on the step's connection.
    static let sourceSchema = "main"

    var source: ObjectModel { mapping.source }
    var destination: ObjectModel { mapping.destination }

    /// `name` (a table of the new store) qualified with the destination schema.
    func destinationTable(_ name: String) -> String {
        destinationLayout.dialect.qualified(name, in: Self.destinationSchema)
    }

    /// The destination key column, quoted.
    var destinationKey: String { destinationLayout.dialect.quote(destinationLayout.keyColumn) }

    /// True when the mapping keeps every object's primary key (one object per source object).
    func isIdentity(_ entityMapping: MappingModel.EntityMapping) -> Bool {
        entityMapping.source != nil && entityMapping.distinct == nil && entityMapping.policy == nil
    }

    /// True when some SQL of the step may read the rows of `links.assoc` that the entity mapping
    /// writes: another mapping's relationship names it (``MappingModel/RelationshipValue/fromMapping(_:)``),
    /// or its destination entity (or an entity it inherits from) is an end of a relationship of
    /// the destination model, whose keys ``mappedKeySQL(_:entity:sourceEntity:)`` (carried and
    /// key-path relationships, many-to-many links) looks up among the associations of the
    /// mappings into that entity. When neither holds, only the object writer reads the mapping's
    /// associations (the manager's look-ups, the policies' second stage).
    func sqlReadsAssociations(of entityMapping: MappingModel.EntityMapping) -> Bool {
        let named = mapping.entities.contains { other in
            other.relationships.contains { $0.value == .fromMapping(entityMapping.name) }
        }
        if named { return true }
        let made = entityMapping.destination
        return destination.entities.contains { entity in
            entity.relationships.contains { relationship in
                destination.isKind(made, of: entity.name) || destination.isKind(made, of: relationship.destination)
            }
        }
    }

    /// SQL giving the destination key of the object made from the source object whose key is
    /// `expression`, for objects of `sourceEntity` migrated into `entity`. In a hierarchy the
    /// linked object may be of a sub-entity: every mapping from `sourceEntity` or one of its
    /// sub-entities into `entity` or one of its sub-entities may have made it.
    func mappedKeySQL(_ expression: String, entity: String, sourceEntity: String) throws -> EntityPlan.SQLText {
        let candidates = mapping.entities.filter { candidate in
            guard let from = candidate.source else { return false }
            return destination.isKind(candidate.destination, of: entity) && source.isKind(from, of: sourceEntity)
        }
        guard !candidates.isEmpty else { return EntityPlan.SQLText(text: "NULL", arguments: []) }
        let identities = candidates.filter(isIdentity)
        let kept: String?
        let copied = Set(identities.compactMap(\.source))
        let everyKindCopied = source.entities.allSatisfy {
            !source.isKind($0.name, of: sourceEntity) || copied.contains($0.name)
        }
        // Objects kept one to one keep their keys. A filter may have left some out, which then
        // are not there: point at nothing rather than dangle.
        let present =
            "(SELECT \(destinationKey) FROM \(destinationTable(destinationLayout.table(forEntityNamed: entity))) WHERE \(destinationKey) = \(expression))"
        if identities.isEmpty {
            kept = nil
        } else if identities.contains(where: { $0.filter != nil }) {
            kept = present
        } else if everyKindCopied {
            // The entity and each of its sub-entities are copied one to one: every key is kept.
            kept = expression
        } else {
            // Other entities of the source hierarchy are made anew or leave the hierarchy: the
            // key is kept for source objects of the entities copied one to one, told apart by
            // their entity numbers (whichever mapping runs first).
            let filters = identities.compactMap {
                $0.source.flatMap(source.entity(named:)).flatMap { sourceLayout.entityFilter(for: $0) }
            }
            if filters.count == identities.count, let column = filters.first?.column {
                let quote = sourceLayout.dialect.quote
                let sourceKey = quote(sourceLayout.keyColumn)
                let table = sourceLayout.dialect.qualified(
                    sourceLayout.table(forEntityNamed: sourceEntity), in: Self.sourceSchema)
                let own = filters.compactMap(\.values.first).map(String.init).joined(separator: ", ")
                kept =
                    "(SELECT s.\(sourceKey) FROM \(table) AS s WHERE s.\(sourceKey) = \(expression) AND s.\(quote(column)) IN (\(own)))"
            } else {
                kept = present
            }
        }
        let made = candidates.filter { !isIdentity($0) }
        guard !made.isEmpty else { return EntityPlan.SQLText(text: kept ?? "NULL", arguments: []) }
        let marks = Array(repeating: "?", count: made.count).joined(separator: ", ")
        let associated =
            "(SELECT destination FROM links.assoc WHERE mapping IN (\(marks)) AND source = \(expression) LIMIT 1)"
        return EntityPlan.SQLText(
            text: kept.map { "COALESCE(\(associated), \($0))" } ?? associated, arguments: made.map { .text($0.name) })
    }

    /// A constraint or store failure while writing the mapping's objects, as a migration error
    /// that names the mapping.
    package static func wrap(_ error: FerryError, mapping: MappingModel.EntityMapping) -> FerryError {
        guard error.code == .constraint || error.code == .store else { return error }
        let detail = error.message.components(separatedBy: ": ").dropFirst().joined(separator: ": ")
        return FerryError(
            .migration, "mapping \(mapping.name) → \(mapping.destination): \(detail.isEmpty ? error.message : detail)",
            at: mapping.location,
            notes: ["nothing was changed: the original store is as it was"], underlying: error.underlying)
    }
}
