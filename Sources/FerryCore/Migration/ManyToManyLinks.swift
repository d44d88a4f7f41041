/// The destination's join tables: links carried from the source relationship, between the
/// objects made from the linked source objects, written set-based once every mapping made its
/// objects.
struct ManyToManyLinks {
    let scope: MigrationStepScope
    let connection: Connection

    /// Writes the links of every carried many-to-many relationship (each join table once).
    func write() throws {
        let mapping = scope.mapping
        let source = scope.source
        let destination = scope.destination
        let destinationLayout = scope.destinationLayout
        var done: Set<String> = []
        for entityMapping in mapping.entities {
            guard let sourceName = entityMapping.source, let sourceEntity = source.entity(named: sourceName),
                let destinationEntity = destination.entity(named: entityMapping.destination)
            else { continue }
            for relationshipMapping in entityMapping.relationships {
                guard case .carry(let sourceRelationshipName) = relationshipMapping.value,
                    let relationship = destinationEntity.relationship(named: relationshipMapping.destination),
                    case .joinTable(let table, let sourceColumn, let targetColumn) = destinationLayout.storage(
                        of: relationship, in: destinationEntity, model: destination),
                    !done.contains(table),
                    let sourceRelationship = sourceEntity.relationship(named: sourceRelationshipName)
                else { continue }
                done.insert(table)
                // The join table holds the links of every entity of the hierarchy that has the
                // relationship: owners are objects of the entity that declares it.
                let sourceOwner = Self.declaring(sourceRelationshipName, of: sourceEntity, in: source)
                let destinationOwner = Self.declaring(relationship.name, of: destinationEntity, in: destination)
                let pairs = EntityPlan.pairsSQL(
                    of: sourceRelationship, in: sourceOwner, model: source, layout: scope.sourceLayout)
                let owner = try scope.mappedKeySQL(
                    "p.owner", entity: destinationOwner.name, sourceEntity: sourceOwner.name)
                let target = try scope.mappedKeySQL(
                    "p.target", entity: relationship.destination, sourceEntity: sourceRelationship.destination)
                let quote = destinationLayout.dialect.quote
                try connection.execute(
                    destinationLayout.dialect.insert(
                        into: scope.destinationTable(table), columns: [quote(sourceColumn), quote(targetColumn)],
                        values:
                            "SELECT \(owner.text), \(target.text) FROM (\(pairs)) AS p WHERE \(owner.text) IS NOT NULL AND \(target.text) IS NOT NULL",
                        onConflict: .ignore),
                    owner.arguments + target.arguments + owner.arguments + target.arguments)
            }
        }
    }

    /// The topmost of `entity` and its ancestors that has the relationship named `name` (the
    /// one declaring it; sub-entities list it too, with their inherited properties).
    static func declaring(_ name: String, of entity: EntityDescription, in model: ObjectModel) -> EntityDescription {
        model.ancestors(of: entity).last { $0.relationship(named: name) != nil } ?? entity
    }
}
