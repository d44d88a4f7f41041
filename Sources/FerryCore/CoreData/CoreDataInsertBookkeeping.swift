/// What an insert into a Core Data store writes besides the record's values, as Core Data does
/// on a save (COREDATA.md §2.2–2.5):
/// - `Z_PK` = the root entity's `Z_PRIMARYKEY.Z_MAX` + 1, and `Z_MAX` raised to it in the same
///   transaction (``recordInsert()``);
/// - `Z_ENT` = the concrete entity's number, `Z_OPT` = 1;
/// - beside a to-one key whose destination has sub-entities, `Z<n>_<NAME>` = the target row's
///   `Z_ENT`; beside a to-one key whose inverse is an ordered to-many, `Z_FOK_<NAME>` = one
///   past the highest order among the target's objects (appended last; the spacing Core Data
///   uses is not known, only that the order is ascending).
///
/// Core Data's tables declare no defaults and no NOT NULL: an attribute the record does not
/// give gets its model default here, and a required attribute without a default that the
/// import gives no value is refused before any row is written.
///
/// Abstract entities have no rows of their own: inserting one is refused.
package struct CoreDataInsertBookkeeping: InsertBookkeeping {
    /// Column names the insert adds after the record's columns.
    package let columns: [String]
    /// Their SQL values; `?N` refers to the record's N-th (1-based) value.
    package let values: [String]
    private let raiseMax: Statement

    /// - Parameters:
    ///   - keyColumns: for each to-one relationship among the record's columns, its 1-based
    ///     parameter index, with the relationship.
    package init(
        connection: Connection, model: ObjectModel, layout: CoreDataLayout, entity: EntityDescription,
        keyColumns: [(parameter: Int, relationship: RelationshipDescription)], suppliedAttributes: Set<String>
    ) throws {
        if entity.isAbstract {
            let concrete = model.entities.filter {
                !$0.isAbstract && model.isKind($0.name, of: entity.name) && $0.name != entity.name
            }.map(\.name)
            throw FerryError(
                .usage,
                "\(entity.name) is an abstract entity: it has no objects of its own, so none can be inserted"
                    + (concrete.isEmpty ? "" : " (insert one of its sub-entities: \(concrete.joined(separator: ", ")))")
            )
        }
        guard let number = layout.entityNumbers[entity.name] else {
            throw FerryError(.usage, "the store has no entity number for \(entity.name)")
        }
        let root = model.ancestors(of: entity).last ?? entity
        let rootNumber = layout.entityNumbers[root.name] ?? number
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
        var values = [
            "(SELECT coalesce(Z_MAX, 0) + 1 FROM Z_PRIMARYKEY WHERE Z_ENT = \(rootNumber))", String(number), "1",
        ]
        let table = layout.table(for: entity)
        for attribute in entity.attributes
        where attribute.isStored && !attribute.isDerived && !suppliedAttributes.contains(attribute.name) {
            if let value = attribute.defaultValue, !value.isNull {
                columns.append(layout.column(forAttribute: attribute.name, in: entity))
                values.append(layout.valueCoding.sqlLiteral(value, in: layout.dialect))
            } else if !attribute.isOptional {
                throw FerryError(
                    .usage,
                    "\(entity.name).\(attribute.name) is required and has no default, but the import gives it no value (map a field to it)",
                    at: attribute.location)
            }
        }
        for (parameter, relationship) in keyColumns {
            guard case .foreignKey(let key) = layout.storage(of: relationship, in: entity, model: model),
                let destination = model.entity(named: relationship.destination)
            else { continue }
            if let entityColumn = layout.entityColumn(forForeignKeyOf: relationship, in: entity, model: model) {
                columns.append(entityColumn)
                values.append("(SELECT Z_ENT FROM \(layout.table(for: destination)) WHERE Z_PK = ?\(parameter))")
            }
            if let order = layout.orderColumn(forForeignKeyOf: relationship, in: entity, model: model) {
                columns.append(order)
                values.append(
                    "CASE WHEN ?\(parameter) IS NULL THEN NULL ELSE (SELECT coalesce(max(\(order)), 0) + 1 FROM \(table) WHERE \(key) = ?\(parameter)) END"
                )
            }
        }
        self.columns = columns
        self.values = values
        raiseMax = try connection.prepare(
            "UPDATE Z_PRIMARYKEY SET Z_MAX = max(coalesce(Z_MAX, 0), last_insert_rowid()) WHERE Z_ENT = \(rootNumber)")
    }

    /// Raises the root's `Z_MAX` to the key just inserted; call after each row written.
    package func recordInsert() throws {
        raiseMax.reset()
        _ = try raiseMax.step()
    }
}
