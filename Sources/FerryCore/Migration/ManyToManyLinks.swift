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
                var pairs = EntityPlan.pairsSQL(
                    of: sourceRelationship, in: sourceOwner, model: source, layout: scope.sourceLayout)
                let owner = try scope.mappedKeySQL(
                    "p.owner", entity: destinationOwner.name, sourceEntity: sourceOwner.name)
                let target = try scope.mappedKeySQL(
                    "p.target", entity: relationship.destination, sourceEntity: sourceRelationship.destination)
                let quote = destinationLayout.dialect.quote
                var columns = [quote(sourceColumn), quote(targetColumn)]
                var values = [owner.text, target.text]
                if let positions = try orderPositions(
                    of: sourceRelationship, in: sourceOwner, becoming: relationship, in: destinationEntity,
                    destinationColumns: (sourceColumn, targetColumn))
                {
                    pairs = positions.pairs
                    columns += positions.columns.map(quote)
                    values += positions.values
                }
                try connection.execute(
                    destinationLayout.dialect.insert(
                        into: scope.destinationTable(table), columns: columns,
                        values:
                            "SELECT \(values.joined(separator: ", ")) FROM (\(pairs)) AS p WHERE \(owner.text) IS NOT NULL AND \(target.text) IS NOT NULL",
                        onConflict: .ignore),
                    owner.arguments + target.arguments + owner.arguments + target.arguments)
            }
        }
    }

    /// Core Data's ordered many-to-many: the `Z_FOK_` order columns of the destination join table
    /// (`Z_FOK_3ASSETS` orders the objects of `Z_3ASSETS` among those linked to the other side)
    /// and the source join table's positions that carry over to them: the pairs with their
    /// positions, the destination columns and what each takes (`NULL` where the source has no
    /// position: ``CoreDataMigrationDestination/recordLinkBookkeeping(on:schema:model:layout:)``
    /// numbers those after the carried ones). Nil when the destination join table has no order
    /// column (the layout keeps no order in join tables, or neither side is ordered), or when
    /// the source layout keeps none.
    private func orderPositions(
        of sourceRelationship: RelationshipDescription, in sourceOwner: EntityDescription,
        becoming relationship: RelationshipDescription, in destinationEntity: EntityDescription,
        destinationColumns: (owner: String, target: String)
    ) throws -> (pairs: String, columns: [String], values: [String])? {
        let layout = scope.destinationLayout
        let orderColumns = layout.joinOrderColumns(of: relationship, in: destinationEntity, model: scope.destination)
            .map(\.order)
        guard !orderColumns.isEmpty else { return nil }
        let quote = scope.sourceLayout.dialect.quote
        var sourcePositions: [String: String] = [:]
        if case .joinTable(let sourceTable, let owner, let target) = scope.sourceLayout.storage(
            of: sourceRelationship, in: sourceOwner, model: scope.source),
            scope.sourceLayout.joinOrderColumn(forKeyColumn: target) != nil
        {
            let sourceColumns = try Self.columns(of: sourceTable, in: MigrationStepScope.sourceSchema, on: connection)
            // The target side's position orders the relationship's objects; the owner side's its inverse's.
            for (destination, source) in [(destinationColumns.target, target), (destinationColumns.owner, owner)] {
                guard let destinationOrder = layout.joinOrderColumn(forKeyColumn: destination),
                    let sourceOrder = scope.sourceLayout.joinOrderColumn(forKeyColumn: source),
                    sourceColumns.contains(sourceOrder)
                else { continue }
                sourcePositions[destinationOrder] = quote(sourceOrder)
            }
            let selected = orderColumns.enumerated().map { index, column in
                "\(sourcePositions[column] ?? "NULL") AS position\(index)"
            }
            let pairs =
                "SELECT \(quote(owner)) AS owner, \(quote(target)) AS target, \(selected.joined(separator: ", ")) FROM \(quote(sourceTable))"
            return (pairs, orderColumns, orderColumns.indices.map { "p.position\($0)" })
        }
        return nil
    }

    /// The columns of `table` in `schema` (SQLite), upper-cased as Core Data names them (a real
    /// store's join table has a `Z_FOK_` column only where Core Data wrote one).
    private static func columns(of table: String, in schema: String, on connection: Connection) throws -> Set<String> {
        Set(
            try connection.rows("SELECT name FROM pragma_table_info(?, ?)", [.text(table), .text(schema)]).compactMap {
                $0.first?.text?.uppercased()
            })
    }

    /// The topmost of `entity` and its ancestors that has the relationship named `name` (the
    /// one declaring it; sub-entities list it too, with their inherited properties).
    static func declaring(_ name: String, of entity: EntityDescription, in model: ObjectModel) -> EntityDescription {
        model.declaringEntity(ofProperty: name, in: entity)
    }
}
