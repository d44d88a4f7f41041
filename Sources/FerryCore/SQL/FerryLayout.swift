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
/// - Values are stored as the backend's coding says: in SQLite, as ``FerryValueCoding`` says
///   (``SQLiteDialect``); in another engine, as its ``FerryLayoutBackend`` says (a PostgreSQL
///   store: PostgreSQL's own types).
package struct FerryLayout: StoreLayout {
    package static let reservedPrefix = "ferry_"
    package static let primaryKey = "ferry_pk"
    package static let linkSourceColumn = "ferry_source"
    package static let linkTargetColumn = "ferry_target"
    package static let tables = BookkeepingTables(
        metadata: "ferry_metadata", entities: "ferry_entities", runs: "ferry_runs")

    /// The engine the store is in, as the layout needs it.
    package let backend: any FerryLayoutBackend

    /// ferry's layout in `backend` (SQLite by default).
    package init(backend: any FerryLayoutBackend = SQLiteLayoutBackend()) { self.backend = backend }

    package var engine: StoreEngine { backend.engine }

    package var valueCoding: any ValueCoding { backend.valueCoding }

    package var dialect: any SQLDialect { backend.dialect }
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

    /// An index name as the engine keeps it whole (``FerryLayoutBackend/fitted(_:)``).
    private func fitted(_ name: String) -> String { backend.fitted(name) }
}

/// What ferry's layout takes from the engine it is laid out in: the engine, its value coding and
/// dialect, and its rules for names. SQLite's is ``SQLiteLayoutBackend``; another engine brings
/// its own, and ferry's layout code stays the same.
package protocol FerryLayoutBackend: Sendable {
    /// The engine.
    var engine: StoreEngine { get }
    /// How values are stored.
    var valueCoding: any ValueCoding { get }
    /// The SQL the engine speaks.
    var dialect: any SQLDialect { get }
    /// An index name as the engine keeps it whole: unchanged where any length is kept; where
    /// names are cut, a shorter name that two different long names never share.
    func fitted(_ name: String) -> String
    /// The tables and columns of `model` in `layout` that the engine cannot name as the model
    /// does, each an error naming the entity, attribute or relationship; empty when every name fits.
    func nameProblems(in model: ObjectModel, layout: FerryLayout) -> [FerryError]
}

/// ferry's layout in a SQLite file: ``FerryValueCoding``, ``SQLiteDialect``, names of any length.
package struct SQLiteLayoutBackend: FerryLayoutBackend {
    /// The backend.
    package init() {}
    package var engine: StoreEngine { .sqlite }
    package var valueCoding: any ValueCoding { FerryValueCoding() }
    package var dialect: any SQLDialect { SQLiteDialect() }
    package func fitted(_ name: String) -> String { name }
    package func nameProblems(in model: ObjectModel, layout: FerryLayout) -> [FerryError] { [] }
}
