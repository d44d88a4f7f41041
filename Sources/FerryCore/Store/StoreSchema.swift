/// The DDL that creates a store for a model (tables, indexes, ferry's own tables).
public enum StoreSchema {
    /// The store format written into the metadata; bumped when ferry's own tables change.
    public static let formatVersion = 1

    /// Statements creating ferry's metadata, entities and runs tables.
    public static let ferryTables: [String] = [
        """
        CREATE TABLE IF NOT EXISTS \(StoreLayout.metadataTable) (
            key TEXT PRIMARY KEY NOT NULL,
            value TEXT NOT NULL
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS \(StoreLayout.entitiesTable) (
            name TEXT PRIMARY KEY NOT NULL,
            hash TEXT NOT NULL
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS \(StoreLayout.runsTable) (
            id INTEGER PRIMARY KEY,
            job TEXT NOT NULL,
            step_index INTEGER,
            step TEXT NOT NULL,
            entity TEXT,
            source TEXT,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            outcome TEXT NOT NULL,
            read INTEGER NOT NULL DEFAULT 0,
            inserted INTEGER NOT NULL DEFAULT 0,
            updated INTEGER NOT NULL DEFAULT 0,
            skipped INTEGER NOT NULL DEFAULT 0,
            rejected INTEGER NOT NULL DEFAULT 0,
            message TEXT
        )
        """,
    ]

    /// Statements creating every entity table, join table and index of `model`.
    public static func statements(for model: ObjectModel) -> [String] {
        let (tables, indexes) = tablesAndIndexes(for: model)
        return tables + indexes
    }

    /// The index statements of `model` on their own, qualified with a schema name (`dst`) when
    /// given: migrations build indexes after the data, in bulk, which is much faster than
    /// maintaining them row by row.
    public static func indexStatements(for model: ObjectModel, schema: String? = nil) -> [String] {
        let indexes = tablesAndIndexes(for: model).indexes
        guard let schema else { return indexes }
        return indexes.map { statement in
            for prefix in ["CREATE UNIQUE INDEX ", "CREATE INDEX "] where statement.hasPrefix(prefix) {
                return prefix + schema + "." + statement.dropFirst(prefix.count)
            }
            return statement
        }
    }

    /// An attribute's column: quoted name, type, `NOT NULL` and `DEFAULT` as the model says.
    static func columnDefinition(_ attribute: AttributeDescription) -> String {
        var column = "\(SQL.quote(attribute.name)) \(attribute.type.sqliteColumnType)"
        if !attribute.isOptional { column += " NOT NULL" }
        if let value = attribute.defaultValue, !value.isNull {
            column += " DEFAULT \(StorageCoding.sqlLiteral(value))"
        }
        return column
    }

    /// The table statements of `model` without their indexes.
    public static func tableStatements(for model: ObjectModel) -> [String] {
        tablesAndIndexes(for: model).tables
    }

    static func tablesAndIndexes(for model: ObjectModel) -> (tables: [String], indexes: [String]) {
        var tables: [String] = []
        var indexes: [String] = []
        var links: Set<String> = []
        for entity in model.entities {
            let table = SQL.quote(StoreLayout.table(for: entity))
            var columns = ["\(SQL.quote(StoreLayout.primaryKey)) INTEGER PRIMARY KEY"]
            for attribute in entity.attributes {
                columns.append(columnDefinition(attribute))
            }
            for relationship in entity.relationships {
                switch StoreLayout.storage(of: relationship, in: entity, model: model) {
                case .foreignKey(let column):
                    var text = "\(SQL.quote(column)) INTEGER"
                    if !relationship.isOptional { text += " NOT NULL" }
                    text += " REFERENCES \(SQL.quote(relationship.destination))(\(SQL.quote(StoreLayout.primaryKey)))"
                    columns.append(text)
                    indexes.append(
                        "CREATE INDEX \(SQL.quote(StoreLayout.foreignKeyIndexName(entity: entity.name, column: column))) ON \(table)(\(SQL.quote(column)))"
                    )
                case .joinTable(let name, let sourceColumn, let targetColumn):
                    guard !links.contains(name) else { continue }
                    links.insert(name)
                    // Columns are named from the canonical side; work out which entity each holds.
                    let sourceEntity = sourceColumn == StoreLayout.linkSourceColumn ? entity.name : relationship.destination
                    let targetEntity = sourceColumn == StoreLayout.linkSourceColumn ? relationship.destination : entity.name
                    _ = targetColumn
                    tables.append(
                        """
                        CREATE TABLE \(SQL.quote(name)) (
                            \(StoreLayout.linkSourceColumn) INTEGER NOT NULL REFERENCES \(SQL.quote(sourceEntity))(\(StoreLayout.primaryKey)) ON DELETE CASCADE,
                            \(StoreLayout.linkTargetColumn) INTEGER NOT NULL REFERENCES \(SQL.quote(targetEntity))(\(StoreLayout.primaryKey)) ON DELETE CASCADE,
                            PRIMARY KEY (\(StoreLayout.linkSourceColumn), \(StoreLayout.linkTargetColumn))
                        ) WITHOUT ROWID
                        """
                    )
                    indexes.append("CREATE INDEX \(SQL.quote(name + "_target")) ON \(SQL.quote(name))(\(StoreLayout.linkTargetColumn))")
                case .inverseForeignKey:
                    continue
                }
            }
            tables.append("CREATE TABLE \(table) (\n    " + columns.joined(separator: ",\n    ") + "\n)")
            for constraint in entity.uniquenessConstraints {
                let cols = constraint.map(SQL.quote).joined(separator: ", ")
                indexes.append("CREATE UNIQUE INDEX \(SQL.quote(StoreLayout.uniqueIndexName(entity: entity.name, columns: constraint))) ON \(table)(\(cols))")
            }
            for index in entity.indexes {
                let cols = index.attributes.map(SQL.quote).joined(separator: ", ")
                indexes.append("CREATE INDEX \(SQL.quote(StoreLayout.indexName(entity: entity.name, index: index))) ON \(table)(\(cols))")
            }
        }
        return (tables, indexes)
    }
}
