import Foundation

/// Creates a new Core Data store for a model on an empty SQLite database: the seed store an app
/// ships pre-populated, or the destination of a migration (COREDATA.md §2, writer checklist §2.10).
///
/// What it writes, in Core Data's exact forms:
/// - page size 4096, incremental auto-vacuum, WAL journal (when not inside a transaction);
/// - one table per root entity, `Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER`, then
///   the property columns in Core Data's column order (§2.4: integers and to-one keys, dates and
///   doubles, decimals, strings, UUIDs, binary data, transformables; each group walking the
///   hierarchy in `Z_ENT` order, each entity's own properties by name), with `Z<n>_<NAME>` beside
///   a key whose destination has sub-entities and `Z_FOK_<NAME>` beside a key whose inverse is an
///   ordered to-many;
/// - the indexes Core Data makes (§2.7): `<TABLE>_<FK>_INDEX`, `<TABLE>_Z_ENT_INDEX` on shared
///   tables, `<TABLE>_<COL>_INDEX` for an indexed attribute, `<TABLE>_<COL1>_<COL2>` for a legacy
///   compound index, `Z_<Entity>_<name>` for a fetch index and `Z_<Entity>_UNIQUE_<a>_<b>` for a
///   uniqueness constraint;
/// - many-to-many join tables `Z_<n><REL>` named from the side whose entity name sorts first
///   (the reflexive case: the relationship name that sorts first); this naming is **UNVERIFIED**
///   against Core Data (§2.5), readers (ferry's among them) find join tables by their columns;
/// - `Z_PRIMARYKEY` with every entity (`Z_MAX` 0), `Z_METADATA` (Z_VERSION 1, a fresh uppercase
///   UUID, the metadata plist of ``CoreDataNewStoreMetadata``: the entity version hashes computed
///   from the model, their digest and checksum) and `Z_MODELCACHE` holding the model as Core
///   Data caches it (``CachedModelEncoder``), so that the store describes itself.
///
/// Derived attributes are refused: their triggers are not written.
package enum CoreDataSchemaWriter {
    /// Creates the store's schema and metadata on `connection`, an empty database, and returns
    /// the layout of the new store. The metadata's entity version hashes are computed from the
    /// model (``CoreDataVersionHashes``); `compiledHashes`, the compiled model's
    /// (``CompiledModelVersions/hashes(for:)``), must equal them, or nothing is written.
    ///
    /// Runs in its own transaction, or inside the caller's (then the journal mode is left as it is).
    ///
    /// - Throws: `.store` when the database is not empty; `.invalidModel` when the model has a
    ///   derived attribute or the compiled hashes are not those computed from it.
    package static func create(
        for model: ObjectModel, on connection: Connection, compiledHashes: [String: [UInt8]]?
    ) throws -> CoreDataLayout {
        try checkWritable(model)
        let metadata = try CoreDataNewStoreMetadata(model: model, compiledHashes: compiledHashes)
        // A derived attribute's derivation is not archived yet: such a store keeps an empty cache
        // (found by its hashes and tables) rather than one that differs from its model.
        let modelCache =
            model.entities.contains { $0.attributes.contains(where: \.isDerived) }
            ? nil : try CachedModelEncoder.modelCache(for: model)
        let tables = try connection.scalar("SELECT count(*) FROM sqlite_master")?.int64 ?? 0
        guard tables == 0 else {
            throw FerryError(
                .store, "cannot create a Core Data store in '\(connection.path)': the database is not empty")
        }
        try connection.execute("PRAGMA page_size = 4096")
        try connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
        if !connection.isInTransaction { _ = try connection.scalar("PRAGMA journal_mode = WAL") }
        let schema = Schema(model: model)
        let write = {
            for statement in schema.statements { try connection.execute(statement) }
            try connection.execute(
                "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
            try connection.execute(
                "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
            try connection.execute("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
            if let modelCache {
                try connection.execute("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", [.blob(modelCache)])
            }
            for (name, number) in schema.layout.entityNumbers.sorted(by: { $0.value < $1.value }) {
                let parent = model.entity(named: name)?.parent.flatMap { schema.layout.entityNumbers[$0] } ?? 0
                try connection.execute(
                    "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
                    [.integer(number), .text(name), .integer(parent)])
            }
            try connection.execute(
                "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)",
                [.text(UUID().uuidString.uppercased()), .blob(metadata.plist)])
        }
        if connection.isInTransaction { try write() } else { try connection.transaction(.immediate, write) }
        return schema.layout
    }

    /// Refuses what a new store cannot hold faithfully (a migration checks every version it will
    /// write before its first step).
    package static func checkWritable(_ model: ObjectModel) throws {
        for entity in model.entities {
            for attribute in entity.attributes where attribute.isDerived && attribute.isStored {
                throw FerryError(
                    .invalidModel,
                    "\(entity.name).\(attribute.name) is a derived attribute: ferry cannot create the triggers that keep it up to date in a new Core Data store",
                    at: attribute.location)
            }
        }
    }

    /// The statements of the entity and join tables and their indexes, and the layout they make.
    private struct Schema {
        let layout: CoreDataLayout
        var statements: [String] = []

        init(model: ObjectModel) {
            let numbering = CoreDataLayout(model: model)
            let joinTables = Self.joinTables(model: model, layout: numbering)
            layout = CoreDataLayout(model: model, tables: joinTables.mapValues { $0 })
            for root in model.entities.filter({ $0.parent.flatMap(model.entity(named:)) == nil }).sorted(by: {
                $0.name < $1.name
            }) {
                statements += tableStatements(root: root, model: model)
            }
            for (name, columns) in joinTables.sorted(by: { $0.key < $1.key }) {
                let key = columns.prefix(2).joined(separator: ", ")
                let definitions = columns.map { "\($0) INTEGER" }.joined(separator: ", ")
                statements.append("CREATE TABLE \(name) ( \(definitions), PRIMARY KEY (\(key)) )")
            }
        }

        /// Join table name → its columns (the two keys, then any `Z_FOK_` ordering columns).
        private static func joinTables(model: ObjectModel, layout: CoreDataLayout) -> [String: [String]] {
            var tables: [String: [String]] = [:]
            for entity in model.entities {
                // A sub-entity's inherited relationships (a model with inherited properties lists
                // them) are its ancestor's, whose join table they share.
                let inherited = Set(model.ancestors(of: entity).flatMap(\.propertyNames))
                for relationship in entity.relationships
                where relationship.isToMany && !inherited.contains(relationship.name) {
                    let inverse = model.inverse(of: relationship, in: entity)
                    if let inverse {
                        guard inverse.isToMany else { continue }
                        // Named from one side only: the entity name, then the relationship name, sorting first.
                        guard (entity.name, relationship.name) <= (relationship.destination, inverse.name) else {
                            continue
                        }
                    }
                    guard
                        case .joinTable(let table, let source, let target) = layout.storage(
                            of: relationship, in: entity, model: model)
                    else { continue }
                    tables[table] =
                        [source, target]
                        + layout.joinOrderColumns(of: relationship, in: entity, model: model).map(\.order)
                }
            }
            return tables
        }

        /// The root's table (shared with its sub-entities) and its indexes.
        private func tableStatements(root: EntityDescription, model: ObjectModel) -> [String] {
            let table = layout.table(for: root)
            let members = model.entities.filter { model.isKind($0.name, of: root.name) }
                .sorted { (layout.entityNumbers[$0.name] ?? 0) < (layout.entityNumbers[$1.name] ?? 0) }
            var groups = Array(repeating: [String](), count: 7)
            var indexes: [String] = []
            var keyIndexes: [String] = []
            for entity in members {
                let inherited = Set(model.ancestors(of: entity).flatMap(\.propertyNames))
                let attributes = entity.attributes.filter { $0.isStored && !inherited.contains($0.name) }.sorted {
                    $0.name < $1.name
                }
                for attribute in attributes {
                    let group = Self.group(of: attribute)
                    groups[group].append(
                        "\(layout.column(forAttribute: attribute.name, in: entity)) \(Self.declaredType(of: attribute))"
                    )
                }
                // To-one keys follow the entity's integers, in the first group.
                let toOnes = entity.relationships.filter { !$0.isToMany && !inherited.contains($0.name) }.sorted {
                    $0.name < $1.name
                }
                var keyColumns: [String] = []
                for relationship in toOnes {
                    guard case .foreignKey(let column) = layout.storage(of: relationship, in: entity, model: model)
                    else { continue }
                    keyColumns.append("\(column) INTEGER")
                    if let entityColumn = layout.entityColumn(forForeignKeyOf: relationship, in: entity, model: model) {
                        keyColumns.append("\(entityColumn) INTEGER")
                    }
                    if let order = layout.orderColumn(forForeignKeyOf: relationship, in: entity, model: model) {
                        keyColumns.append("\(order) INTEGER")
                    }
                    keyIndexes.append("CREATE INDEX \(table)_\(column)_INDEX ON \(table) (\(column))")
                }
                groups[0].append(contentsOf: keyColumns)
                indexes += entityIndexes(entity, table: table)
            }
            let columns = ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"] + groups.joined()
            var statements = ["CREATE TABLE \(table) ( \(columns.joined(separator: ", ")) )"]
            statements += keyIndexes
            if members.count > 1 { statements.append("CREATE INDEX \(table)_Z_ENT_INDEX ON \(table) (Z_ENT)") }
            return statements + indexes
        }

        /// Indexes and uniqueness constraints `entity` declares itself.
        private func entityIndexes(_ entity: EntityDescription, table: String) -> [String] {
            func column(_ property: String) -> String { layout.column(forAttribute: property, in: entity) }
            var statements: [String] = []
            for index in entity.indexes {
                let columns = index.attributes.map(column)
                if let name = index.name {
                    let elements = index.attributes.map {
                        "\(column($0)) COLLATE BINARY \(index.descending.contains($0) ? "DESC" : "ASC")"
                    }
                    statements.append(
                        "CREATE INDEX Z_\(entity.name)_\(name) ON \(table) (\(elements.joined(separator: ", ")))")
                } else if columns.count == 1 {
                    statements.append("CREATE INDEX \(table)_\(columns[0])_INDEX ON \(table) (\(columns[0]))")
                } else {
                    statements.append(
                        "CREATE INDEX \(table)_\(columns.joined(separator: "_")) ON \(table) (\(columns.joined(separator: ", ")))"
                    )
                }
            }
            for constraint in entity.uniquenessConstraints {
                let elements = constraint.map { "\(column($0)) COLLATE BINARY ASC" }
                statements.append(
                    "CREATE UNIQUE INDEX \(layout.uniqueIndexName(entity: entity.name, columns: constraint)) ON \(table) (\(elements.joined(separator: ", ")))"
                )
            }
            return statements
        }

        /// Core Data's column group (§2.4): 0 integers (and keys), 1 dates and doubles,
        /// 2 decimals, 3 strings, 4 UUIDs, 5 binary data, 6 transformables.
        private static func group(of attribute: AttributeDescription) -> Int {
            if case .transformable = attribute.coreDataKind { return 6 }
            switch attribute.type {
            case .int16, .int32, .int64, .bool: return 0
            case .date, .double, .float: return 1
            case .decimal: return 2
            case .string, .uri, .json: return 3
            case .uuid: return 4
            case .binary: return 5
            }
        }

        /// The declared SQLite type Core Data gives an attribute's column (§1.4).
        private static func declaredType(of attribute: AttributeDescription) -> String {
            if case .transformable = attribute.coreDataKind { return "BLOB" }
            switch attribute.type {
            case .int16, .int32, .int64, .bool: return "INTEGER"
            case .date: return "TIMESTAMP"
            case .double, .float: return "FLOAT"
            case .decimal: return "DECIMAL"
            case .string, .uri, .json: return "VARCHAR"
            case .uuid, .binary: return "BLOB"
            }
        }
    }
}
