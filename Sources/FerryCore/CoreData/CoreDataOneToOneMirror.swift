/// Core Data stores a one-to-one relationship on both sides: each table has the other's key
/// column (`ZUSER.ZPET` and `ZPET.ZOWNER`), and a save writes both (COREDATA.md §2.4). When a
/// write sets one side of an object (an import's `relationships:` or a nested object), this
/// writes the other side as Core Data's inverse maintenance does:
///
/// 1. any other object of the written side that held the same target loses it (a target has
///    one owner: Core Data moves it to the new one);
/// 2. a target that still points back to the written object but is no longer its target is
///    cleared;
/// 3. the new target points back to the written object (with the `Z<n>_` entity column when
///    the written side is a hierarchy).
///
/// Each cleared or changed row counts one more change in its `Z_OPT`. The statements are
/// prepared once per inserter and run after each written row, in the row's transaction.
package struct CoreDataOneToOneMirror: OneToOneMirroring {
    private let statements: [Statement]

    /// The mirror of every to-one among `relationships` of `entity` whose inverse is a to-one
    /// that the destination's table stores too (both sides `.foreignKey`); nil when there is none.
    package init?(
        connection: Connection, model: ObjectModel, layout: CoreDataLayout, entity: EntityDescription,
        relationships: [RelationshipDescription]
    ) throws {
        var statements: [Statement] = []
        for relationship in relationships {
            guard let sql = Self.statements(for: relationship, of: entity, model: model, layout: layout) else {
                continue
            }
            statements += try sql.map { try connection.prepare($0) }
        }
        guard !statements.isEmpty else { return nil }
        self.statements = statements
    }

    /// The one-to-one pair of `relationship` of `entity` when both tables hold a key: the
    /// relationship's column, the inverse, its destination and the inverse's column.
    package static func pair(
        of relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel,
        layout: any StoreLayout
    ) -> (column: String, inverse: RelationshipDescription, destination: EntityDescription, inverseColumn: String)? {
        guard !relationship.isToMany,
            case .foreignKey(let column) = layout.storage(of: relationship, in: entity, model: model),
            let inverse = model.inverse(of: relationship, in: entity), !inverse.isToMany,
            let destination = model.entity(named: relationship.destination),
            case .foreignKey(let inverseColumn) = layout.storage(of: inverse, in: destination, model: model)
        else { return nil }
        return (column, inverse, destination, inverseColumn)
    }

    /// The three statements (`?1` = the written object's key) for one relationship, nil when it
    /// is not a one-to-one stored on both sides.
    static func statements(
        for relationship: RelationshipDescription, of entity: EntityDescription, model: ObjectModel,
        layout: CoreDataLayout
    ) -> [String]? {
        guard let pair = pair(of: relationship, in: entity, model: model, layout: layout) else { return nil }
        let quote = layout.dialect.quote
        let pk = quote(layout.keyColumn)
        let version = layout.versionIncrement.map { ", " + $0 } ?? ""
        let table = quote(layout.table(for: entity))
        let column = quote(pair.column)
        let destinationTable = quote(layout.table(for: pair.destination))
        let inverseColumn = quote(pair.inverseColumn)
        let target = "(SELECT \(column) FROM \(table) WHERE \(pk) = ?1)"
        var clearOwn = "\(column) = NULL"
        if let entityColumn = layout.entityColumn(forForeignKeyOf: relationship, in: entity, model: model) {
            clearOwn += ", \(quote(entityColumn)) = NULL"
        }
        var clearInverse = "\(inverseColumn) = NULL"
        var setInverse = "\(inverseColumn) = ?1"
        if let entityColumn = layout.entityColumn(forForeignKeyOf: pair.inverse, in: pair.destination, model: model) {
            clearInverse += ", \(quote(entityColumn)) = NULL"
            setInverse +=
                ", \(quote(entityColumn)) = (SELECT \(quote(CoreDataLayout.entityColumn)) FROM \(table) WHERE \(pk) = ?1)"
        }
        return [
            "UPDATE \(table) SET \(clearOwn)\(version) WHERE \(column) = \(target) AND \(pk) <> ?1",
            "UPDATE \(destinationTable) SET \(clearInverse)\(version) WHERE \(inverseColumn) = ?1 AND \(pk) IS NOT \(target)",
            "UPDATE \(destinationTable) SET \(setInverse)\(version) WHERE \(pk) = \(target) AND \(inverseColumn) IS NOT ?1",
        ]
    }

    /// Writes the other side of each one-to-one of the object whose key is `key`.
    package func mirror(key: Int64) throws {
        for statement in statements {
            statement.reset()
            try statement.bind(key, at: 1)
            _ = try statement.step()
            statement.reset()
        }
    }
}
