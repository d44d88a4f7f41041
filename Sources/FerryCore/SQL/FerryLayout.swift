import FerryPostgres

/// ferry's own store layout.
///
/// - One table per entity, named as the entity; one column per attribute, named as the attribute.
/// - `ferry_pk INTEGER PRIMARY KEY` in every entity table.
/// - A to-one relationship is a foreign-key column named as the relationship, holding the related
///   row's `ferry_pk`, indexed, when this side owns the key (always, except for one-to-one pairs,
///   where the canonical side, the lower `Entity.relationship`, owns it).
/// - A to-many relationship whose inverse is also to-many (or that has no inverse) is a join
///   table `ferry_link_<Entity>_<relationship>` (named from the canonical side) with columns
///   `ferry_source` and `ferry_target`.
/// - A to-many whose inverse is to-one has no storage of its own: it is the inverse's key.
/// - ferry's own tables and columns start with ``reservedPrefix``.
/// - Values are stored as ``FerryValueCoding`` says, in SQLite (``SQLiteDialect``); in a
///   PostgreSQL store, in PostgreSQL's types (``PostgresValueCoding``, ``PostgreSQLDialect``).
package struct FerryLayout: StoreLayout {
    /// The engines ferry's layout is laid out in.
    package enum Backend: Sendable, Hashable {
        case sqlite, postgresql
    }
    package static let reservedPrefix = "ferry_"
    package static let primaryKey = "ferry_pk"
    package static let linkSourceColumn = "ferry_source"
    package static let linkTargetColumn = "ferry_target"
    package static let tables = BookkeepingTables(
        metadata: "ferry_metadata", entities: "ferry_entities", runs: "ferry_runs")

    /// The engine the store is in.
    package let backend: Backend

    package init(backend: Backend = .sqlite) { self.backend = backend }

    package var engine: StoreEngine {
        switch backend {
        case .sqlite: .sqlite
        case .postgresql: .postgreSQL
        }
    }

    package var valueCoding: any ValueCoding {
        switch backend {
        case .sqlite: FerryValueCoding()
        case .postgresql: PostgresValueCoding()
        }
    }

    package var dialect: any SQLDialect {
        switch backend {
        case .sqlite: SQLiteDialect()
        case .postgresql: PostgreSQLDialect()
        }
    }
    package var keyColumn: String { Self.primaryKey }
    package var versionColumn: String? { nil }
    package var bookkeeping: BookkeepingTables? { Self.tables }

    package func table(for entity: EntityDescription) -> String { entity.name }
    package func table(forEntityNamed name: String) -> String { name }
    package func entityFilter(for entity: EntityDescription) -> EntityFilter? { nil }
    package func column(forAttribute attribute: String, in entity: EntityDescription) -> String { attribute }

    package func storage(
        of relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
    ) -> RelationshipStorage {
        let inverse = model.inverse(of: relationship, in: entity)
        if !relationship.isToMany {
            if let inverse, !inverse.isToMany,
                !Self.isCanonicalSide(
                    entity: entity.name, relationship: relationship.name, otherEntity: relationship.destination,
                    otherRelationship: inverse.name)
            {
                // One-to-one where the other side holds the key.
                return .inverseForeignKey(destinationTable: relationship.destination, column: inverse.name)
            }
            return .foreignKey(column: relationship.name)
        }
        if let inverse, !inverse.isToMany {
            return .inverseForeignKey(destinationTable: relationship.destination, column: inverse.name)
        }
        // Many-to-many (or to-many without inverse): a join table named from the canonical side.
        if let inverse,
            !Self.isCanonicalSide(
                entity: entity.name, relationship: relationship.name, otherEntity: relationship.destination,
                otherRelationship: inverse.name)
        {
            return .joinTable(
                table: Self.linkTableName(entity: relationship.destination, relationship: inverse.name),
                sourceColumn: Self.linkTargetColumn, targetColumn: Self.linkSourceColumn)
        }
        return .joinTable(
            table: Self.linkTableName(entity: entity.name, relationship: relationship.name),
            sourceColumn: Self.linkSourceColumn, targetColumn: Self.linkTargetColumn)
    }

    static func isCanonicalSide(
        entity: String, relationship: String, otherEntity: String, otherRelationship: String
    ) -> Bool {
        (entity, relationship) <= (otherEntity, otherRelationship)
    }

    package static func linkTableName(entity: String, relationship: String) -> String {
        "\(reservedPrefix)link_\(entity)_\(relationship)"
    }

    package func uniqueIndexName(entity: String, columns: [String]) -> String {
        fitted("\(Self.reservedPrefix)unique_\(entity)_\(columns.joined(separator: "_"))")
    }

    package func indexName(entity: String, index: IndexDescription) -> String {
        fitted("\(Self.reservedPrefix)index_\(entity)_\(index.name ?? index.attributes.joined(separator: "_"))")
    }

    package func foreignKeyIndexName(entity: String, column: String) -> String {
        fitted("\(Self.reservedPrefix)fk_\(entity)_\(column)")
    }

    package func joinTargetIndexName(table: String) -> String { fitted(table + "_target") }

    /// An index name as the engine keeps it whole: on PostgreSQL, a name over 63 bytes becomes
    /// its start and a hash of all of it (`PostgresIdentifier.fitted`), since PostgreSQL would
    /// cut it and two cut names could clash; SQLite keeps any length.
    private func fitted(_ name: String) -> String {
        guard backend == .postgresql, PostgresIdentifier.problem(with: name) != nil else { return name }
        return PostgresIdentifier.fitted(name, suffix: "")
    }
}
