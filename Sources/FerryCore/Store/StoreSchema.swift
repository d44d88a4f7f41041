/// The DDL that creates a store for a model (tables, indexes, ferry's own tables), in a layout.
package enum StoreSchema {
    /// The store format written into the metadata; bumped when ferry's own tables change.
    package static let formatVersion = 1

    /// Statements creating ferry's metadata, entities and runs tables (none when the layout keeps
    /// no bookkeeping tables).
    package static func bookkeepingTables(in layout: any StoreLayout) -> [String] {
        guard let tables = layout.bookkeeping else { return [] }
        let dialect = layout.dialect
        return [
            """
            CREATE TABLE IF NOT EXISTS \(dialect.quote(tables.metadata)) (
                key TEXT PRIMARY KEY NOT NULL,
                value TEXT NOT NULL
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS \(dialect.quote(tables.entities)) (
                name TEXT PRIMARY KEY NOT NULL,
                hash TEXT NOT NULL
            )
            """,
            RunLog.createStatement(table: tables.runs, dialect: dialect),
        ]
    }

    /// Statements creating every entity table, join table and index of `model`.
    package static func statements(for model: ObjectModel, layout: any StoreLayout) -> [String] {
        let (tables, indexes) = tablesAndIndexes(for: model, layout: layout)
        return tables + indexes
    }

    /// The index statements of `model` on their own, qualified with a schema name (`dst`) when
    /// given: migrations build indexes after the data, in bulk, which is much faster than
    /// maintaining them row by row.
    package static func indexStatements(
        for model: ObjectModel, layout: any StoreLayout, schema: String? = nil
    ) -> [String] {
        let indexes = tablesAndIndexes(for: model, layout: layout).indexes
        guard let schema else { return indexes }
        return indexes.map { statement in
            for prefix in ["CREATE UNIQUE INDEX ", "CREATE INDEX "] where statement.hasPrefix(prefix) {
                return prefix + schema + "." + statement.dropFirst(prefix.count)
            }
            return statement
        }
    }

    /// One column of an entity table as the model defines it: what `CREATE TABLE` declares, and
    /// what a table made by `CREATE TABLE … AS SELECT` gets afterwards (`completionStatement`).
    struct EntityColumn {
        /// The quoted column name.
        let name: String
        let type: String
        let notNull: Bool
        /// The `DEFAULT` literal, if any.
        let defaultSQL: String?
    }

    /// The columns of `entity`'s table after its key, in table order: its attributes, then the
    /// foreign keys of its to-one relationships.
    static func entityColumns(
        of entity: EntityDescription, in model: ObjectModel, layout: any StoreLayout
    ) -> [EntityColumn] {
        var columns = entity.attributes.map { attributeColumn($0, of: entity, layout: layout) }
        for relationship in entity.relationships where model.entity(named: relationship.destination) != nil {
            if case .foreignKey(let column) = layout.storage(of: relationship, in: entity, model: model) {
                columns.append(foreignKeyColumn(column, of: relationship, layout: layout))
            }
        }
        return columns
    }

    /// An attribute's column: its type, `NOT NULL` and `DEFAULT` as the model says.
    static func attributeColumn(
        _ attribute: AttributeDescription, of entity: EntityDescription, layout: any StoreLayout
    ) -> EntityColumn {
        let dialect = layout.dialect
        return EntityColumn(
            name: layout.quotedColumn(forAttribute: attribute.name, in: entity),
            type: dialect.columnType(
                for: attribute.type, storedAs: layout.valueCoding.storageClass(for: attribute.type)),
            notNull: !attribute.isOptional,
            defaultSQL: attribute.defaultValue.flatMap {
                $0.isNull ? nil : layout.valueCoding.sqlLiteral($0, in: dialect)
            }
        )
    }

    /// A to-one relationship's key column `column` (its reference is declared apart).
    static func foreignKeyColumn(
        _ column: String, of relationship: RelationshipDescription, layout: any StoreLayout
    ) -> EntityColumn {
        EntityColumn(
            name: layout.dialect.quote(column), type: layout.dialect.keyReferenceType,
            notNull: !relationship.isOptional, defaultSQL: nil)
    }

    /// A column's definition in `CREATE TABLE`: quoted name, type, `NOT NULL` and `DEFAULT`.
    static func definition(of column: EntityColumn) -> String {
        var text = "\(column.name) \(column.type)"
        if column.notNull { text += " NOT NULL" }
        if let value = column.defaultSQL { text += " DEFAULT \(value)" }
        return text
    }

    /// An attribute's column definition (`ALTER TABLE … ADD COLUMN`).
    static func columnDefinition(
        _ attribute: AttributeDescription, of entity: EntityDescription, layout: any StoreLayout
    ) -> String {
        definition(of: attributeColumn(attribute, of: entity, layout: layout))
    }

    /// `entity`'s table in `schema` made from a query, as `CREATE TABLE` makes it once
    /// `completionStatement` has run: `values` are the key's and each column's SQL (quoted name,
    /// value), in table order (`entityColumns`), over the rows `from` (a `FROM …` clause and what
    /// follows it). Each value is cast to its column's exact type, so the table's columns are
    /// those `CREATE TABLE` declares. Nil when `values` name other columns or another order, or
    /// the dialect cannot add the key's identity later.
    package static func createTableAsSelect(
        _ entity: EntityDescription, in model: ObjectModel, layout: any StoreLayout, schema: String,
        values: [(column: String, value: String)], from: String
    ) -> String? {
        let dialect = layout.dialect
        guard dialect.keyIdentity != nil else { return nil }
        let key = EntityColumn(
            name: dialect.quote(layout.keyColumn), type: dialect.keyReferenceType, notNull: true, defaultSQL: nil)
        let columns = [key] + entityColumns(of: entity, in: model, layout: layout)
        guard columns.map(\.name) == values.map(\.column) else { return nil }
        let selected = zip(columns, values).map { column, value in
            "CAST(\(value.value) AS \(column.type)) AS \(column.name)"
        }
        return
            "CREATE TABLE \(dialect.qualified(layout.table(for: entity), in: schema)) AS SELECT \(selected.joined(separator: ", ")) \(from)"
    }

    /// The one `ALTER TABLE` that gives a table made by `createTableAsSelect` (unqualified, in
    /// the search path) what `CREATE TABLE` declares: each column's `NOT NULL` and `DEFAULT`, the
    /// key's identity and its primary key, checked and built in one pass over the rows.
    package static func completionStatement(
        for entity: EntityDescription, in model: ObjectModel, layout: any StoreLayout
    ) -> String? {
        let dialect = layout.dialect
        guard let identity = dialect.keyIdentity else { return nil }
        let key = dialect.quote(layout.keyColumn)
        var actions = ["ALTER COLUMN \(key) SET NOT NULL", "ALTER COLUMN \(key) ADD \(identity)"]
        for column in entityColumns(of: entity, in: model, layout: layout) {
            if column.notNull { actions.append("ALTER COLUMN \(column.name) SET NOT NULL") }
            if let value = column.defaultSQL { actions.append("ALTER COLUMN \(column.name) SET DEFAULT \(value)") }
        }
        actions.append("ADD PRIMARY KEY (\(key))")
        return "ALTER TABLE \(layout.quotedTable(for: entity)) " + actions.joined(separator: ", ")
    }

    /// The table statements of `model` without their indexes.
    package static func tableStatements(for model: ObjectModel, layout: any StoreLayout) -> [String] {
        tablesAndIndexes(for: model, layout: layout).tables
    }

    static func tablesAndIndexes(
        for model: ObjectModel, layout: any StoreLayout
    ) -> (tables: [String], indexes: [String]) {
        let parts = parts(for: model, layout: layout)
        return (parts.tables + parts.joinTables + parts.references, parts.indexes)
    }

    /// A model's DDL in the order it runs: `tables`, then `primaryKeys` (once the rows are in),
    /// `joinTables`, `references` and `indexes`.
    package struct Parts {
        /// The entity tables (SQLite: the join tables too, which may come before what they reference).
        package var tables: [String] = []
        /// `ALTER TABLE … ADD PRIMARY KEY`, one per entity table, when the keys come after the rows.
        package var primaryKeys: [String] = []
        /// The join tables PostgreSQL creates once the tables they reference have their keys.
        package var joinTables: [String] = []
        /// The foreign keys PostgreSQL adds to existing tables (SQLite declares them inline).
        package var references: [String] = []
        /// The indexes: uniqueness constraints, foreign keys' and join tables' lookups, the model's own.
        package var indexes: [String] = []
    }

    /// The DDL of `model` in parts (see `Parts`). A migration in PostgreSQL adds the foreign keys
    /// after the rows, checked in bulk rather than row by row; with `primaryKeysAfterRows`, the
    /// entity tables' primary keys too, built in one sort rather than maintained row by row (a
    /// dialect whose key cannot be added later keeps it inline).
    package static func parts(
        for model: ObjectModel, layout: any StoreLayout, primaryKeysAfterRows: Bool = false
    ) -> Parts {
        let dialect = layout.dialect
        let key = dialect.quote(layout.keyColumn)
        var parts = Parts()
        var tables: [String] = []
        var indexes: [String] = []
        var links: Set<String> = []
        // PostgreSQL needs a referenced table to exist: its join tables and foreign keys come
        // after every entity table (SQLite resolves references later, and keeps them inline).
        let laterReferences = dialect.referencesNeedExistingTables
        var after: [String] = []
        var foreignKeys: [String] = []
        for entity in model.entities {
            let table = layout.quotedTable(for: entity)
            var columns = [dialect.keyColumnDefinition(layout.keyColumn)]
            if primaryKeysAfterRows, let keyColumn = dialect.keyColumnDefinitionWithoutPrimaryKey(layout.keyColumn) {
                columns = [keyColumn]
                parts.primaryKeys.append("ALTER TABLE \(table) ADD PRIMARY KEY (\(key))")
            }
            for attribute in entity.attributes {
                columns.append(columnDefinition(attribute, of: entity, layout: layout))
            }
            for relationship in entity.relationships {
                guard let destination = model.entity(named: relationship.destination) else { continue }
                switch layout.storage(of: relationship, in: entity, model: model) {
                case .foreignKey(let column):
                    var text = definition(of: foreignKeyColumn(column, of: relationship, layout: layout))
                    let references =
                        "REFERENCES \(layout.quotedTable(for: destination))(\(key))\(dialect.foreignKeyOptions)"
                    if laterReferences {
                        foreignKeys.append(
                            "ALTER TABLE \(table) ADD FOREIGN KEY (\(dialect.quote(column))) \(references)")
                    } else {
                        text += " " + references
                    }
                    columns.append(text)
                    indexes.append(
                        "CREATE INDEX \(dialect.quote(layout.foreignKeyIndexName(entity: entity.name, column: column))) ON \(table)(\(dialect.quote(column)))"
                    )
                case .joinTable(let name, let sourceColumn, let targetColumn):
                    // Both sides of a many-to-many name the same table: create it once.
                    guard !links.contains(name) else { continue }
                    links.insert(name)
                    // The columns in name order, whichever side is met first, each referencing
                    // the entity whose keys it holds; the second is indexed for lookups from its side.
                    let ownTable = table
                    let destinationTable = layout.quotedTable(for: destination)
                    let columns = [(sourceColumn, ownTable), (targetColumn, destinationTable)].sorted { $0.0 < $1.0 }
                    let definitions = columns.map { column, referenced in
                        "\(dialect.quote(column)) \(dialect.keyReferenceType) NOT NULL REFERENCES \(referenced)(\(key)) ON DELETE CASCADE\(dialect.foreignKeyOptions)"
                    }
                    let link =
                        """
                        CREATE TABLE \(dialect.quote(name)) (
                            \(definitions.joined(separator: ",\n    ")),
                            PRIMARY KEY (\(columns.map { dialect.quote($0.0) }.joined(separator: ", ")))
                        )\(dialect.joinTableOptions)
                        """
                    if laterReferences { after.append(link) } else { tables.append(link) }
                    indexes.append(
                        "CREATE INDEX \(dialect.quote(layout.joinTargetIndexName(table: name))) ON \(dialect.quote(name))(\(dialect.quote(columns[1].0)))"
                    )
                case .inverseForeignKey:
                    continue
                }
            }
            tables.append("CREATE TABLE \(table) (\n    " + columns.joined(separator: ",\n    ") + "\n)")
            for constraint in entity.uniquenessConstraints {
                let cols = constraint.map { layout.quotedColumn(forAttribute: $0, in: entity) }.joined(separator: ", ")
                indexes.append(
                    "CREATE UNIQUE INDEX \(dialect.quote(layout.uniqueIndexName(entity: entity.name, columns: constraint))) ON \(table)(\(cols))"
                )
            }
            for index in entity.indexes {
                let cols = index.attributes.map { layout.quotedColumn(forAttribute: $0, in: entity) }.joined(
                    separator: ", ")
                indexes.append(
                    "CREATE INDEX \(dialect.quote(layout.indexName(entity: entity.name, index: index))) ON \(table)(\(cols))"
                )
            }
        }
        parts.tables = tables
        parts.joinTables = after
        parts.references = foreignKeys
        parts.indexes = indexes
        return parts
    }
}
