import Foundation

/// How a model maps onto SQLite tables: the one place that names tables, columns and join tables,
/// shared by the store, predicates, migration and verification.
///
/// - One table per entity, named as the entity; one column per attribute, named as the attribute.
/// - `ferry_pk INTEGER PRIMARY KEY` in every entity table.
/// - A to-one relationship is a foreign-key column named as the relationship, holding the related
///   row's `ferry_pk`, indexed, when this side owns the key (see ``ownsForeignKey(_:in:model:)``).
/// - A to-many relationship whose inverse is also to-many (or that has no inverse) is a join
///   table `ferry_link_<Entity>_<relationship>` (named from the canonical side) with columns
///   `ferry_source` and `ferry_target`.
/// - A to-many whose inverse is to-one has no storage of its own: it is the inverse's key.
/// - ferry's own tables and columns start with ``reservedPrefix``.
public enum StoreLayout {
    public static let reservedPrefix = "ferry_"
    public static let primaryKey = "ferry_pk"
    public static let metadataTable = "ferry_metadata"
    public static let entitiesTable = "ferry_entities"
    public static let runsTable = "ferry_runs"
    public static let linkSourceColumn = "ferry_source"
    public static let linkTargetColumn = "ferry_target"

    /// The table of an entity.
    public static func table(for entity: EntityDescription) -> String { entity.name }
    public static func table(forEntityNamed name: String) -> String { name }

    /// How a relationship is stored.
    public enum RelationshipStorage: Sendable, Hashable {
        /// A column in the entity's own table holding the destination's primary key.
        case foreignKey(column: String)
        /// The inverse (a to-one on the destination) holds the key: `destination.column` points here.
        case inverseForeignKey(destinationTable: String, column: String)
        /// A join table; `sourceColumn` holds this entity's key, `targetColumn` the destination's.
        case joinTable(table: String, sourceColumn: String, targetColumn: String)
    }

    /// How `relationship` of `entity` is stored in a store of `model`.
    public static func storage(of relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel) -> RelationshipStorage {
        let inverse = inverse(of: relationship, in: entity, model: model)
        if !relationship.isToMany {
            if ownsForeignKey(relationship, in: entity, model: model) {
                return .foreignKey(column: relationship.name)
            }
            // One-to-one where the other side holds the key.
            return .inverseForeignKey(destinationTable: relationship.destination, column: inverse!.name)
        }
        if let inverse, !inverse.isToMany {
            return .inverseForeignKey(destinationTable: relationship.destination, column: inverse.name)
        }
        // Many-to-many (or to-many without inverse): a join table named from the canonical side.
        if let inverse, !isCanonicalSide(entity: entity.name, relationship: relationship.name, otherEntity: relationship.destination, otherRelationship: inverse.name) {
            return .joinTable(table: linkTableName(entity: relationship.destination, relationship: inverse.name), sourceColumn: linkTargetColumn, targetColumn: linkSourceColumn)
        }
        return .joinTable(table: linkTableName(entity: entity.name, relationship: relationship.name), sourceColumn: linkSourceColumn, targetColumn: linkTargetColumn)
    }

    /// True when a to-one relationship is a foreign-key column in the entity's own table: always,
    /// except for one-to-one pairs, where the canonical side (lower `Entity.relationship`) owns it.
    public static func ownsForeignKey(_ relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel) -> Bool {
        guard !relationship.isToMany else { return false }
        guard let inverse = inverse(of: relationship, in: entity, model: model), !inverse.isToMany else { return true }
        return isCanonicalSide(entity: entity.name, relationship: relationship.name, otherEntity: relationship.destination, otherRelationship: inverse.name)
    }

    /// The inverse relationship description, when declared and present.
    public static func inverse(of relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel) -> RelationshipDescription? {
        guard let name = relationship.inverse, let destination = model.entity(named: relationship.destination) else { return nil }
        return destination.relationship(named: name)
    }

    static func isCanonicalSide(entity: String, relationship: String, otherEntity: String, otherRelationship: String) -> Bool {
        (entity, relationship) <= (otherEntity, otherRelationship)
    }

    public static func linkTableName(entity: String, relationship: String) -> String {
        "\(reservedPrefix)link_\(entity)_\(relationship)"
    }

    /// The name of the unique index for a uniqueness constraint.
    public static func uniqueIndexName(entity: String, columns: [String]) -> String {
        "\(reservedPrefix)unique_\(entity)_\(columns.joined(separator: "_"))"
    }

    /// The name of a plain index.
    public static func indexName(entity: String, index: IndexDescription) -> String {
        "\(reservedPrefix)index_\(entity)_\(index.name ?? index.attributes.joined(separator: "_"))"
    }

    /// The name of the index on a foreign-key column.
    public static func foreignKeyIndexName(entity: String, column: String) -> String {
        "\(reservedPrefix)fk_\(entity)_\(column)"
    }
}

/// SQL text helpers shared by every SQL-writing part of ferry.
public enum SQL {
    /// A double-quoted identifier, with embedded quotes doubled.
    public static func quote(_ identifier: String) -> String {
        doubling(UInt8(ascii: "\""), in: identifier)
    }

    /// A SQL string literal of `text`: `'…'` with every `'` doubled. Text with a NUL byte (which
    /// would end the statement's text early) is written as `(CAST(X'…' AS TEXT))` instead (a DDL default needs the parentheses).
    public static func stringLiteral(_ text: String) -> String {
        guard !text.utf8.contains(0) else {
            return "(CAST(X'" + text.utf8.map { String($0, radix: 16).leftPadded(to: 2) }.joined() + "' AS TEXT))"
        }
        return doubling(UInt8(ascii: "'"), in: text)
    }

    /// `text` between two `quote`s with every `quote` inside doubled, decided byte by byte: never
    /// by Swift `Character`s, where a quote followed by a combining or prepending scalar is one
    /// Character that is not a quote, and would go through undoubled.
    private static func doubling(_ quote: UInt8, in text: String) -> String {
        var bytes: [UInt8] = [quote]
        bytes.reserveCapacity(text.utf8.count + 2)
        for byte in text.utf8 {
            bytes.append(byte)
            if byte == quote { bytes.append(quote) }
        }
        bytes.append(quote)
        return String(decoding: bytes, as: UTF8.self)
    }
}
