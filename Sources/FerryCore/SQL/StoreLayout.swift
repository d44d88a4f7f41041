/// How a model maps onto a store's tables: the one place that names tables, columns, keys and
/// join tables, and says how each attribute type is stored (``valueCoding``) and in which SQL
/// (``dialect``). Every SQL generator (schema, inserts, fetches, predicates, batch updates and
/// deletes, migration, verification) receives the layout of the store it works on from the
/// ``Store`` (or, in a migration, the layouts of the source and of the destination).
///
/// ``FerryLayout`` is ferry's own layout. A layout is a value, so one built for a particular
/// model (Core Data's, which numbers entities) carries what it worked out from that model.
package protocol StoreLayout: Sendable {
    /// How typed values are stored in this layout's columns.
    var valueCoding: any ValueCoding { get }
    /// The SQL the store speaks.
    var dialect: any SQLDialect { get }
    /// The integer primary-key column of every entity table.
    var keyColumn: String { get }
    /// The column counting an object's saves (Core Data's `Z_OPT`), nil when the layout has none.
    var versionColumn: String? { get }
    /// ferry's bookkeeping tables (metadata, entity hashes, the run log), nil when this layout
    /// has none (a store another tool made).
    var bookkeeping: BookkeepingTables? { get }

    /// The table holding the objects of `entity`: its own, or for a sub-entity the table shared
    /// with its root entity (then ``entityFilter(for:)`` picks its rows).
    func table(for entity: EntityDescription) -> String
    /// The table of the entity named `name` (which the model may not hold any more, in a migration).
    func table(forEntityNamed name: String) -> String
    /// For an entity sharing its table with others: the column telling the entities apart and
    /// the values that mean `entity` or one of its sub-entities, the entity's own value first.
    /// Nil when the table is its own.
    func entityFilter(for entity: EntityDescription) -> EntityFilter?
    /// The column of the attribute named `attribute` of `entity`.
    func column(forAttribute attribute: String, in entity: EntityDescription) -> String
    /// How `relationship` of `entity` is stored in a store of `model`.
    func storage(
        of relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
    ) -> RelationshipStorage

    /// The name of the unique index for a uniqueness constraint over `columns`.
    func uniqueIndexName(entity: String, columns: [String]) -> String
    /// The name of a plain index.
    func indexName(entity: String, index: IndexDescription) -> String
    /// The name of the index on a foreign-key column.
    func foreignKeyIndexName(entity: String, column: String) -> String
    /// The name of the index on a join table's target column.
    func joinTargetIndexName(table: String) -> String
    /// Throws when `model` holds something this layout cannot store faithfully.
    func checkRepresentable(_ model: ObjectModel) throws
    /// The engine a store in this layout is in (what it can do).
    var engine: StoreEngine { get }
    /// The order columns of a many-to-many `relationship`'s join table, each with the key column
    /// that partitions it; empty when the layout keeps no order there.
    func joinOrderColumns(
        of relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
    ) -> [(order: String, partition: String)]
    /// The column beside the key of a to-one `relationship` that keeps the object's position
    /// among its owner's objects (its inverse is an ordered to-many); nil when there is none.
    func orderColumn(
        forForeignKeyOf relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
    ) -> String?
    /// The column beside the foreign-key column `column` that keeps an object's position among
    /// its owner's objects when the relationship's inverse is an ordered to-many; nil when the
    /// layout keeps none.
    func orderColumn(besideForeignKey column: String) -> String?
    /// The column beside the key of a to-one `relationship` into an entity hierarchy that names
    /// the target's entity; nil when the layout keeps none.
    func entityColumn(
        forForeignKeyOf relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
    ) -> String?
    /// Each entity's number in a layout that numbers its entities (Core Data's `Z_ENT`), by
    /// entity name; empty when the layout numbers none.
    var entityNumbers: [String: Int64] { get }
    /// The column of a many-to-many join table that keeps the position of the objects of its
    /// key column `column`; nil when the layout keeps no order in join tables.
    func joinOrderColumn(forKeyColumn column: String) -> String?
    /// What each insert of a row of `entity` writes besides the record's values (Core Data's
    /// `Z_PK`, `Z_ENT` and `Z_OPT`, the columns beside keys and the key generator), prepared on
    /// `connection`; nil when the layout writes nothing else. `keyColumns` are the record's
    /// to-one relationships with their 1-based parameter indexes, `suppliedAttributes` the
    /// attributes the record gives.
    func insertBookkeeping(
        on connection: Connection, model: ObjectModel, entity: EntityDescription,
        keyColumns: [(parameter: Int, relationship: RelationshipDescription)], suppliedAttributes: Set<String>
    ) throws -> (any InsertBookkeeping)?
    /// The writer of the other side of each one-to-one among `relationships` of `entity` that
    /// the layout stores on both sides, prepared on `connection`; nil when there is none.
    func oneToOneMirror(
        on connection: Connection, model: ObjectModel, entity: EntityDescription,
        relationships: [RelationshipDescription]
    ) throws -> (any OneToOneMirroring)?
}

/// What an insert writes besides a record's values, in a layout that keeps bookkeeping in its
/// entity tables (``StoreLayout/insertBookkeeping(on:model:entity:keyColumns:suppliedAttributes:)``).
package protocol InsertBookkeeping {
    /// Column names the insert adds after the record's columns.
    var columns: [String] { get }
    /// Their SQL values; `?N` refers to the record's N-th (1-based) value.
    var values: [String] { get }
    /// Records the row just inserted (the layout's key generator); called after each row written.
    func recordInsert() throws
}

/// Writes the other side of each one-to-one of a written object, in a layout that stores both
/// sides (``StoreLayout/oneToOneMirror(on:model:entity:relationships:)``).
package protocol OneToOneMirroring {
    /// Writes the other side of each one-to-one of the object whose key is `key`.
    func mirror(key: Int64) throws
}

extension StoreLayout {
    /// A layout without an engine of its own is ferry's SQLite one.
    package var engine: StoreEngine { .sqlite }

    /// No join table keeps an order.
    package func joinOrderColumns(
        of relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
    ) -> [(order: String, partition: String)] { [] }

    /// No foreign key has an order column beside it.
    package func orderColumn(
        forForeignKeyOf relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
    ) -> String? { nil }

    /// No foreign key has an order column beside it.
    package func orderColumn(besideForeignKey column: String) -> String? { nil }

    /// No foreign key names its target's entity.
    package func entityColumn(
        forForeignKeyOf relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
    ) -> String? { nil }

    /// No entity has a number.
    package var entityNumbers: [String: Int64] { [:] }

    /// No join table keeps an order.
    package func joinOrderColumn(forKeyColumn column: String) -> String? { nil }

    /// An insert writes the record's values alone.
    package func insertBookkeeping(
        on connection: Connection, model: ObjectModel, entity: EntityDescription,
        keyColumns: [(parameter: Int, relationship: RelationshipDescription)], suppliedAttributes: Set<String>
    ) throws -> (any InsertBookkeeping)? { nil }

    /// Each relationship is stored on one side.
    package func oneToOneMirror(
        on connection: Connection, model: ObjectModel, entity: EntityDescription,
        relationships: [RelationshipDescription]
    ) throws -> (any OneToOneMirroring)? { nil }

    /// True when a to-one relationship is a foreign-key column in the entity's own table.
    package func ownsForeignKey(
        _ relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
    ) -> Bool {
        guard !relationship.isToMany else { return false }
        if case .foreignKey = storage(of: relationship, in: entity, model: model) { return true }
        return false
    }

    /// The assignment counting one more change of a row (`Z_OPT = coalesce(Z_OPT, 0) + 1`),
    /// nil when the layout keeps no version column. Every UPDATE of objects appends it.
    package var versionIncrement: String? {
        versionColumn.map { "\(dialect.quote($0)) = coalesce(\(dialect.quote($0)), 0) + 1" }
    }

    /// The quoted table of `entity`.
    package func quotedTable(for entity: EntityDescription) -> String { dialect.quote(table(for: entity)) }

    /// The one condition that picks the rows of `entity` and its sub-entities out of a table
    /// shared with other entities (`t0."Z_ENT" IN (2, 3)`, on `alias` when given), nil when the
    /// table is the entity's own. Every selection of an entity's rows is built on it: reads
    /// through ``quotedSource(for:)`` and ``objectCountQuery(for:ownObjectsOnly:)``, and every
    /// request's `WHERE` (fetches, updates, deletes, syncs, checks) through
    /// ``selection(of:alias:where:arguments:)``.
    package func entityCondition(for entity: EntityDescription, alias: String?) -> String? {
        guard let filter = entityFilter(for: entity) else { return nil }
        let column = (alias.map { $0 + "." } ?? "") + dialect.quote(filter.column)
        return "\(column) IN (\(filter.values.map(String.init).joined(separator: ", ")))"
    }

    /// ` WHERE ` and ``entityCondition(for:alias:)`` when `entity` shares its table with other
    /// entities, an empty string when the table is its own.
    package func entityFilterClause(for entity: EntityDescription, alias: String?) -> String {
        entityCondition(for: entity, alias: alias).map { " WHERE " + $0 } ?? ""
    }

    /// The objects of `entity` (and its sub-entities) on which `condition` (SQL over the
    /// entity's table aliased `alias`) holds: the selection every request writes or reads by.
    /// Its `sql` carries the entity's condition, so that `UPDATE <table> AS t0 … WHERE sql` and
    /// `DELETE FROM <table> AS t0 WHERE sql` touch only the entity's rows of a shared table;
    /// its `from` is ``quotedSource(for:)``, so that a read (`SELECT … FROM from WHERE sql`)
    /// or a count of `from` sees only them too.
    package func selection(
        of entity: EntityDescription, alias: String, where condition: String, arguments: [DatabaseValue] = []
    ) -> PredicateSQL {
        let sql = entityCondition(for: entity, alias: alias).map { "(\($0) AND (\(condition)))" } ?? condition
        return PredicateSQL(sql: sql, arguments: arguments, from: "\(quotedSource(for: entity)) AS \(alias)")
    }

    /// The query counting the objects of `entity` and its sub-entities (in a shared table), or
    /// with `ownObjectsOnly` those of `entity` alone (as each entity mapping of a migration reads
    /// them): the one way ferry counts an entity's objects.
    package func objectCountQuery(for entity: EntityDescription, ownObjectsOnly: Bool = false) -> String {
        if ownObjectsOnly { return "SELECT count(*) FROM \(quotedOwnRows(for: entity))" }
        return "SELECT count(*) FROM \(quotedTable(for: entity))\(entityFilterClause(for: entity, alias: nil))"
    }

    /// What a read selects the objects of `entity` from, in a `FROM` or `JOIN`: its quoted
    /// table, or, when the table is shared with other entities, the subquery of the rows of
    /// `entity` and its sub-entities (as Core Data fetches with `includesSubentities`), so
    /// that a sibling's rows never leak in. Writes use ``quotedTable(for:)``.
    package func quotedSource(for entity: EntityDescription) -> String {
        let clause = entityFilterClause(for: entity, alias: nil)
        if clause.isEmpty { return quotedTable(for: entity) }
        return "(SELECT * FROM \(quotedTable(for: entity))\(clause))"
    }

    /// What a migration's entity mapping reads the objects of `entity` from: only its own rows,
    /// not those of its sub-entities (each sub-entity has its own mapping, as Core Data's
    /// migration fetches each entity mapping's source instances without sub-entities). The
    /// quoted table when it is the entity's own, otherwise the subquery of the rows whose entity
    /// column holds the entity's own number.
    package func quotedOwnRows(for entity: EntityDescription) -> String {
        guard let filter = entityFilter(for: entity), let own = filter.values.first else {
            return quotedTable(for: entity)
        }
        return "(SELECT * FROM \(quotedTable(for: entity)) WHERE \(dialect.quote(filter.column)) = \(own))"
    }

    /// The quoted column of the attribute named `attribute` of `entity`.
    package func quotedColumn(forAttribute attribute: String, in entity: EntityDescription) -> String {
        dialect.quote(column(forAttribute: attribute, in: entity))
    }
}

/// How a relationship is stored.
package enum RelationshipStorage: Sendable, Hashable {
    /// A column in the entity's own table holding the destination's primary key.
    case foreignKey(column: String)
    /// The inverse (a to-one on the destination) holds the key: `destination.column` points here.
    case inverseForeignKey(destinationTable: String, column: String)
    /// A join table; `sourceColumn` holds this entity's key, `targetColumn` the destination's.
    case joinTable(table: String, sourceColumn: String, targetColumn: String)
}

/// The rows of a table shared by several entities that belong to one of them: `column IN values`.
package struct EntityFilter: Sendable, Hashable {
    package var column: String
    package var values: [Int64]

    package init(column: String, values: [Int64]) {
        self.column = column
        self.values = values
    }
}

/// The names of ferry's own bookkeeping tables in a store.
package struct BookkeepingTables: Sendable, Hashable {
    /// key/value pairs: model name, version, hash, the model itself, format version.
    package var metadata: String
    /// Entity name → version hash.
    package var entities: String
    /// The run log (``RunLog``).
    package var runs: String

    package init(metadata: String, entities: String, runs: String) {
        self.metadata = metadata
        self.entities = entities
        self.runs = runs
    }
}

extension ObjectModel {
    /// The inverse of `relationship` of `entity`, when declared and present.
    package func inverse(
        of relationship: RelationshipDescription, in entity: EntityDescription
    ) -> RelationshipDescription? {
        guard let name = relationship.inverse, let destination = self.entity(named: relationship.destination) else {
            return nil
        }
        return destination.relationship(named: name)
    }
}
