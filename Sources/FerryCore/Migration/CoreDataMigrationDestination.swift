/// A Core Data store migrated in place: each version step writes a new Core Data store of the
/// step's destination model (``CoreDataSchemaWriter``: tables per root entity, `Z_ENT`
/// numbering of the new model, join tables, `Z_PRIMARYKEY`, `Z_METADATA`), and the step's rows
/// carry Core Data's bookkeeping (`Z_ENT`, `Z_OPT`; ``rowBookkeeping(of:in:version:)``).
///
/// Metadata of the new version: the entity version hashes computed from its model (COREDATA.md
/// §3.2), their digest and checksum, checked against the compiled model's version of the same
/// name when `--compiled-model` is given (a difference stops the step before anything is
/// written). The store's UUID and the metadata keys ferry does not know (an app's own keys) are
/// kept. `Z_MODELCACHE` holds the new version as Core Data caches it (``CachedModelEncoder``).
package struct CoreDataMigrationDestination {
    /// The original store's metadata.
    let sourceMetadata: CoreDataStoreMetadata
    let compiledModel: CompiledModelVersions?

    /// Creates the store of `model` and writes its metadata.
    func createSchema(for model: ObjectModel, on connection: Connection) throws -> CoreDataLayout {
        let hashes = try compiledModel.map { try $0.hashes(for: model) }
        return try connection.transaction(.immediate) {
            let layout = try CoreDataSchemaWriter.create(for: model, on: connection, compiledHashes: hashes)
            try keepIdentity(on: connection)
            return layout
        }
    }

    /// The original's UUID, and its metadata keys the new metadata does not have.
    private func keepIdentity(on connection: Connection) throws {
        guard case .blob(let written)? = try connection.scalar("SELECT Z_PLIST FROM Z_METADATA"),
            var dictionary = try BinaryPropertyList.decode(written, source: "the new store's metadata").dictionary
        else { throw FerryError(.internal, "the new Core Data store has no metadata dictionary") }
        for key in sourceMetadata.otherKeys.keys where dictionary[key] == nil {
            dictionary[key] = sourceMetadata.otherKeys[key]
        }
        try connection.execute(
            "UPDATE Z_METADATA SET Z_UUID = ?, Z_PLIST = ?",
            [.text(sourceMetadata.uuid), .blob(BinaryPropertyListWriter.encode(.dictionary(dictionary)))])
    }

    /// Columns a new row of `entity` gets besides its values in `layout`, with their SQL
    /// values: Core Data's `Z_ENT` (the entity's number in the new model) and `Z_OPT` (`version`:
    /// the source row's when carried, else 1, a new object's). None in ferry's layout.
    static func rowBookkeeping(
        of entity: EntityDescription, in layout: any StoreLayout, version: String = "1"
    ) -> [(column: String, value: String)] {
        guard let number = layout.entityNumbers[entity.name] else { return [] }
        return [(CoreDataLayout.entityColumn, String(number)), (layout.versionColumn ?? "Z_OPT", version)]
    }

    /// Sets each root entity's `Z_PRIMARYKEY.Z_MAX` to the highest key of its table, or to the
    /// source store's high-water mark when that is higher: Core Data never reuses the key of a
    /// deleted object, so the mark is the one of every source hierarchy the new hierarchy's
    /// entities come from (found by name or renaming identifier, then up through `Z_SUPER` to
    /// the source root that keeps it: an entity that leaves its hierarchy keeps the old
    /// hierarchy's mark, one that joins a hierarchy brings its own). Sub-entities keep 0, as Core
    /// Data keeps them. New objects the app saves get keys after every migrated one.
    /// `sourceSchema` is the source Core Data store's schema on the connection.
    static func recordKeyMaxima(
        on connection: Connection, schema: String, sourceSchema: String, model: ObjectModel, layout: any StoreLayout
    ) throws {
        let dialect = layout.dialect
        let sourceKeys = dialect.qualified("Z_PRIMARYKEY", in: sourceSchema)
        for entity in model.entities where entity.parent == nil {
            guard let number = layout.entityNumbers[entity.name] else { continue }
            let names = Set(
                model.entities.filter { model.isKind($0.name, of: entity.name) }.flatMap { [$0.name, $0.renamedFrom] }
                    .compactMap { $0 })
            let members = names.sorted().map { DatabaseValue.text($0) }
            let marks = Array(repeating: "?", count: members.count).joined(separator: ", ")
            try connection.execute(
                """
                WITH RECURSIVE lineage(ent, super) AS (
                  SELECT Z_ENT, Z_SUPER FROM \(sourceKeys) WHERE Z_NAME IN (\(marks))
                  UNION SELECT k.Z_ENT, k.Z_SUPER FROM \(sourceKeys) AS k JOIN lineage ON k.Z_ENT = lineage.super)
                UPDATE \(dialect.qualified("Z_PRIMARYKEY", in: schema)) SET Z_MAX = max(
                  (SELECT coalesce(max(\(dialect.quote(layout.keyColumn))), 0) FROM \(dialect.qualified(layout.table(for: entity), in: schema))),
                  (SELECT coalesce(max(Z_MAX), 0) FROM \(sourceKeys) WHERE Z_ENT IN (SELECT ent FROM lineage)))
                WHERE Z_ENT = ?
                """,
                members + [.integer(number)])
        }
    }

    /// Writes the other side of every one-to-one stored on both sides (``CoreDataOneToOneMirror``
    /// pairs), once every object and link of the step is in: a step writes one side when a
    /// one-to-one is new (an inverse added in this version starts empty) or re-mapped (a mapping
    /// file gives one side its links), and Core Data stores both.
    ///
    /// One side is taken as written: the one the step's mapping gives links (a relationship
    /// mapping other than `none` on an entity mapping of its entity or a sub-entity); when both
    /// or neither are, the side with more links, then the first in model order. The other side
    /// is then set from it in one statement per pair: each object of the destination entity
    /// (and its sub-entities) points back to the object that links to it, or to none. Runs
    /// before ``recordLinkBookkeeping(on:schema:model:layout:)``, which writes the entity
    /// columns of the keys set here.
    static func mirrorOneToOnes(
        on connection: Connection, schema: String, mapping: MappingModel, layout: any StoreLayout
    ) throws {
        let model = mapping.destination
        let quote = layout.dialect.quote
        let key = quote(layout.keyColumn)
        let entityColumn = quote(CoreDataLayout.entityColumn)
        /// True when the step's mapping gives `relationship` of `entity` (or a sub-entity) links.
        func mapped(_ relationship: RelationshipDescription, of entity: EntityDescription) -> Bool {
            mapping.entities.contains { entityMapping in
                model.isKind(entityMapping.destination, of: entity.name)
                    && entityMapping.relationships.contains { $0.destination == relationship.name && $0.value != .none }
            }
        }
        /// The `Z_ENT` numbers of `entity` and its sub-entities.
        func kinds(of entity: EntityDescription) -> String {
            model.entities.filter { model.isKind($0.name, of: entity.name) }.compactMap {
                layout.entityNumbers[$0.name].map(String.init)
            }.sorted().joined(separator: ", ")
        }
        var done: Set<String> = []
        for entity in model.entities {
            for relationship in entity.relationships {
                guard let pair = CoreDataOneToOneMirror.pair(of: relationship, in: entity, model: model, layout: layout)
                else { continue }
                let side = "\(layout.table(for: entity)).\(pair.column)"
                let otherSide = "\(layout.table(for: pair.destination)).\(pair.inverseColumn)"
                // A relationship that is its own inverse (a spouse) has one column: nothing to mirror.
                guard side != otherSide, done.insert(side).inserted, done.insert(otherSide).inserted else { continue }
                let table = layout.dialect.qualified(layout.table(for: entity), in: schema)
                let destinationTable = layout.dialect.qualified(layout.table(for: pair.destination), in: schema)
                var written = (entity: entity, column: pair.column, table: table)
                var other = (entity: pair.destination, column: pair.inverseColumn, table: destinationTable)
                let thisMapped = mapped(relationship, of: entity)
                let otherMapped = mapped(pair.inverse, of: pair.destination)
                if otherMapped && !thisMapped {
                    swap(&written, &other)
                } else if otherMapped == thisMapped {
                    let links = try connection.scalar("SELECT count(\(quote(pair.column))) FROM \(table)")?.int64 ?? 0
                    let inverseLinks =
                        try connection.scalar("SELECT count(\(quote(pair.inverseColumn))) FROM \(destinationTable)")?
                        .int64 ?? 0
                    if inverseLinks > links { swap(&written, &other) }
                }
                let back =
                    "(SELECT w.\(key) FROM \(written.table) AS w WHERE w.\(quote(written.column)) = o.\(key) AND w.\(entityColumn) IN (\(kinds(of: written.entity))) ORDER BY w.\(key) LIMIT 1)"
                try connection.execute(
                    "UPDATE \(other.table) AS o SET \(quote(other.column)) = \(back) WHERE o.\(entityColumn) IN (\(kinds(of: other.entity))) AND o.\(quote(other.column)) IS NOT \(back)"
                )
            }
        }
    }

    /// Writes what Core Data keeps beside the keys of to-one relationships, once every object
    /// and link of the step is in (whichever path wrote them: `INSERT … SELECT`, rows, policies):
    /// - `Z<n>_<NAME>` = the `Z_ENT` of the linked object, where the destination entity has
    ///   sub-entities (NULL without a link);
    /// - `Z_FOK_<NAME>` where the inverse is an ordered to-many: positions carried from the
    ///   source are kept; linked objects without one follow, in key order; NULL without a link;
    /// - `Z_FOK_<k><NAME>` in the join table of an ordered many-to-many, the same way.
    static func recordLinkBookkeeping(
        on connection: Connection, schema: String, model: ObjectModel, layout: any StoreLayout
    ) throws {
        let quote = layout.dialect.quote
        let key = quote(layout.keyColumn)
        var done: Set<String> = []
        for entity in model.entities {
            let table = layout.table(for: entity)
            let qualified = layout.dialect.qualified(table, in: schema)
            for relationship in entity.relationships {
                guard case .foreignKey(let column) = layout.storage(of: relationship, in: entity, model: model),
                    let target = model.entity(named: relationship.destination),
                    done.insert("\(table).\(column)").inserted
                else { continue }
                let link = quote(column)
                if let entityColumn = layout.entityColumn(forForeignKeyOf: relationship, in: entity, model: model) {
                    let targets = layout.dialect.qualified(layout.table(for: target), in: schema)
                    try connection.execute(
                        "UPDATE \(qualified) AS o SET \(quote(entityColumn)) = (SELECT t.\(quote(CoreDataLayout.entityColumn)) FROM \(targets) AS t WHERE t.\(key) = o.\(link))"
                    )
                }
                if let order = layout.orderColumn(forForeignKeyOf: relationship, in: entity, model: model).map(quote) {
                    try connection.execute(
                        "UPDATE \(qualified) SET \(order) = NULL WHERE \(link) IS NULL AND \(order) IS NOT NULL")
                    try numberPositions(in: qualified, order: order, partition: link, item: key, on: connection)
                }
            }
        }
        // Ordered many-to-many: `Z_FOK_3ASSETS` in the join table orders the objects of
        // `Z_3ASSETS` among those linked to the same object on the other side.
        for entity in model.entities {
            for relationship in entity.relationships {
                guard
                    case .joinTable(let table, let owner, let target) = layout.storage(
                        of: relationship, in: entity, model: model),
                    done.insert(table).inserted
                else { continue }
                let qualified = layout.dialect.qualified(table, in: schema)
                for (order, partition) in layout.joinOrderColumns(of: relationship, in: entity, model: model) {
                    try numberPositions(
                        in: qualified, order: quote(order), partition: quote(partition),
                        item: quote(partition == owner ? target : owner), on: connection)
                }
            }
        }
    }

    /// Numbers the rows of `table` whose `order` is NULL: per value of `partition`, after the
    /// highest position already there (carried positions are kept), in `item` order. A row is
    /// one `(partition, item)` pair.
    private static func numberPositions(
        in table: String, order: String, partition: String, item: String, on connection: Connection
    ) throws {
        try connection.execute("DROP TABLE IF EXISTS temp.ferry_positions")
        try connection.execute(
            """
            CREATE TEMP TABLE ferry_positions AS SELECT o.\(partition) AS part, o.\(item) AS item,
              (SELECT coalesce(max(s.\(order)), 0) FROM \(table) AS s WHERE s.\(partition) = o.\(partition))
                + row_number() OVER (PARTITION BY o.\(partition) ORDER BY o.\(item)) AS position
            FROM \(table) AS o WHERE o.\(partition) IS NOT NULL AND o.\(order) IS NULL
            """)
        try connection.execute("CREATE INDEX temp.ferry_positions_pair ON ferry_positions (part, item)")
        try connection.execute(
            """
            UPDATE \(table) AS o SET \(order) = (SELECT p.position FROM temp.ferry_positions AS p
              WHERE p.part = o.\(partition) AND p.item = o.\(item))
            WHERE o.\(order) IS NULL AND o.\(partition) IS NOT NULL
            """)
        try connection.execute("DROP TABLE temp.ferry_positions")
    }

    /// Opens a migrated Core Data store read-only, in place (a scratch file, or `ferry check`'s
    /// copy), with the model it was written for.
    package static func open(at path: String, model: ObjectModel) throws -> Store {
        let connection = try Connection(path: path, readOnly: true, create: false)
        try Store.configure(connection, busyTimeout: .seconds(30))
        let model = Store.coreDataStoreForm(of: model)
        let layout = try CoreDataLayout.reading(connection, model: model)
        let metadata = StoreMetadata(
            formatVersion: 0, modelName: model.name, modelVersion: model.version, modelHash: "", entityHashes: [:],
            model: model, createdAt: nil)
        return Store(
            path: path, model: model, layout: layout, connection: connection, metadata: metadata, writerLock: nil)
    }

    /// Refuses a step whose objects could not keep their keys in the new store: a mapping that
    /// keeps its objects one to one keeps their `Z_PK`s, which are unique only within the table
    /// they come from, so two such mappings reading different tables cannot write into one table
    /// (entities of separate hierarchies merged into one, which Core Data does not infer either).
    static func checkKeysStayUnique(
        _ identities: [MappingModel.EntityMapping], sourceLayout: any StoreLayout, destinationLayout: any StoreLayout
    ) throws {
        // Destination table → source table → a mapping.
        var readers: [String: [String: MappingModel.EntityMapping]] = [:]
        for entityMapping in identities {
            guard let source = entityMapping.source else { continue }
            let table = destinationLayout.table(forEntityNamed: entityMapping.destination)
            readers[table, default: [:]][sourceLayout.table(forEntityNamed: source)] =
                readers[table]?[sourceLayout.table(forEntityNamed: source)] ?? entityMapping
        }
        for (table, sources) in readers.sorted(by: { $0.key < $1.key }) where sources.count > 1 {
            let described = sources.sorted { $0.key < $1.key }.map {
                "\($0.value.name) (\($0.value.source ?? "") from \($0.key))"
            }.joined(separator: ", ")
            throw FerryError(
                .migration,
                "mappings \(described) all write into table \(table), keeping the keys of objects from different tables, which may collide: entities of separate hierarchies cannot be merged into one by keeping their objects",
                at: sources.values.first?.location,
                notes: [
                    "nothing was changed: the original store is as it was",
                    "keep the entities in separate hierarchies, or give the mappings a policy that makes new objects",
                ])
        }
    }

    /// The highest key of `table` in the new store, or of the source tables whose objects the
    /// step's one-to-one mappings (`identities`) copy into it with their keys, whichever is
    /// higher: new objects get keys above it, so that they never take a key a copied object
    /// needs, whichever mapping runs first (a hierarchy's entities share one table).
    static func newKeyFloor(
        table: String, identities: [MappingModel.EntityMapping], sourceLayout: any StoreLayout,
        destinationLayout: any StoreLayout,
        on connection: Connection, sourceSchema: String, destinationSchema: String
    ) throws -> Int64 {
        let key = destinationLayout.dialect.quote(destinationLayout.keyColumn)
        var floor =
            try connection.scalar(
                "SELECT coalesce(max(\(key)), 0) FROM \(destinationLayout.dialect.qualified(table, in: destinationSchema))"
            )?.int64 ?? 0
        let sources = Set(
            identities.filter { destinationLayout.table(forEntityNamed: $0.destination) == table }.compactMap {
                $0.source.map(sourceLayout.table(forEntityNamed:))
            })
        for source in sources.sorted() {
            let sourceKey = sourceLayout.dialect.quote(sourceLayout.keyColumn)
            let highest =
                try connection.scalar(
                    "SELECT coalesce(max(\(sourceKey)), 0) FROM \(sourceLayout.dialect.qualified(source, in: sourceSchema))"
                )?.int64 ?? 0
            floor = max(floor, highest)
        }
        return floor
    }

    /// Refuses objects written into an abstract entity: Core Data has no objects of an abstract
    /// entity itself, only of its sub-entities.
    static func checkNotAbstract(
        _ entity: EntityDescription, written: Int, by entityMapping: MappingModel.EntityMapping
    ) throws {
        guard entity.isAbstract, written > 0 else { return }
        throw FerryError(
            .migration,
            "mapping \(entityMapping.name) wrote \(written) objects of \(entity.name), which is abstract in the new version: an abstract entity has no objects of its own",
            at: entityMapping.location,
            notes: [
                "nothing was changed: the original store is as it was",
                "make \(entity.name) concrete, or map its objects to one of its sub-entities",
            ])
    }
}
