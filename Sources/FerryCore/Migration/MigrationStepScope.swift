import Foundation

/// What the parts of one version step share, fixed once the new store's schema exists: the
/// mapping, both models' layouts, the options and the step's clock. A value: the entity plans,
/// the object writer and the verification read it, none of them refers back to the runner.
struct MigrationStepScope {
    let mapping: MappingModel
    let options: MigrationOptions
    let now: Int64
    /// How the source store and the new store lay out and code their values (the new store's
    /// layout is the one its schema was created with).
    let sourceLayout: any StoreLayout
    let destinationLayout: any StoreLayout

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

    /// What a policy is told about the entity mapping it runs for.
    func context(for entityMapping: MappingModel.EntityMapping) throws -> MappingContext {
        guard let destinationEntity = destination.entity(named: entityMapping.destination) else {
            throw FerryError(.migration, "the destination model has no entity '\(entityMapping.destination)'")
        }
        return MappingContext(
            name: entityMapping.name, source: entityMapping.source.flatMap { source.entity(named: $0) }, destination: destinationEntity,
            sourceModel: source, destinationModel: destination)
    }

    /// SQL giving the destination key of the object made from the source object whose key is
    /// `expression`, for objects of `sourceEntity` migrated into `entity`.
    func mappedKeySQL(_ expression: String, entity: String, sourceEntity: String) throws -> EntityPlan.SQLText {
        let candidates = mapping.entities.filter { $0.destination == entity && $0.source == sourceEntity }
        guard let target = candidates.first else { return EntityPlan.SQLText(text: "NULL", arguments: []) }
        if isIdentity(target) {
            if target.filter != nil {
                // Objects the filter left out are not there: point at nothing rather than dangle.
                return EntityPlan.SQLText(
                    text: "(SELECT \(destinationKey) FROM \(destinationTable(destinationLayout.table(forEntityNamed: entity))) WHERE \(destinationKey) = \(expression))",
                    arguments: [])
            }
            return EntityPlan.SQLText(text: expression, arguments: [])
        }
        return EntityPlan.SQLText(text: "(SELECT destination FROM links.assoc WHERE mapping = ? AND source = \(expression) LIMIT 1)", arguments: [.text(target.name)])
    }

    /// A constraint or store failure while writing the mapping's objects, as a migration error
    /// that names the mapping.
    static func wrap(_ error: FerryError, mapping: MappingModel.EntityMapping) -> FerryError {
        guard error.code == .constraint || error.code == .store else { return error }
        let detail = error.message.components(separatedBy: ": ").dropFirst().joined(separator: ": ")
        return FerryError(
            .migration, "mapping \(mapping.name) → \(mapping.destination): \(detail.isEmpty ? error.message : detail)", at: mapping.location,
            notes: ["nothing was changed: the original store is as it was"], underlying: error.underlying)
    }
}
