import FerryPostgres
import Foundation

/// `ferry copy` when the source or the destination is a PostgreSQL store: SQLite → PostgreSQL,
/// PostgreSQL → SQLite, PostgreSQL → PostgreSQL (same model and version).
///
/// Store-agnostic: every entity's rows are read from the source in key order, values decoded
/// from the source's coding and encoded in the destination's, and written with their keys, to-one
/// keys and join-table rows into a new store beside the destination: through `COPY … FROM STDIN`
/// into a scratch schema on PostgreSQL (identity sequences then moved past the copied keys), with
/// one prepared `INSERT` on SQLite, in one transaction with foreign keys checked at its end. The
/// copy is then verified (per-entity counts, and checksums of every attribute, which compare
/// across backends) and only then put in place: a file rename on SQLite; on PostgreSQL, one
/// transaction that drops the replaced store's schema and renames the scratch schema. A failure
/// leaves the destination as it was and removes the scratch store.
struct CrossStoreCopier {
    let copier: StoreCopier

    /// Where the new store is built before it is put in place.
    private enum Scratch {
        case file(String)
        case schema(url: String, name: String)
    }

    func run() throws -> StoreCopier.Report {
        let started = ContinuousClock.now
        let sourcePath = copier.sourcePath
        let destinationPath = copier.destinationPath
        let toPostgreSQL = PathOrURL(destinationPath).isPostgreSQL
        try PathOrURL.requireStore(sourcePath)
        try PathOrURL.requireStore(destinationPath)
        if !PathOrURL(sourcePath).isPostgreSQL {
            guard FileManager.default.fileExists(atPath: sourcePath) else {
                throw FerryError(.noInput, "the store '\(sourcePath)' does not exist")
            }
            if CoreDataStoreFile.isCoreDataStore(sourcePath) {
                throw FerryError(
                    .usage, "'\(sourcePath)' is a Core Data store; ferry copy into PostgreSQL reads ferry stores",
                    notes: [
                        "copy it into a ferry store file first (ferry copy \(sourcePath) store.sqlite), then copy that"
                    ])
            }
        }
        guard let metadata = try Store.metadata(at: sourcePath), let model = metadata.model else {
            throw FerryError(
                .store,
                "'\(Self.shown(sourcePath))' is not a ferry store (it has no ferry metadata); to read a plain database's tables use ferry import"
            )
        }
        let source = try Store.open(at: sourcePath, model: model, options: .existingReadOnly)
        try FerryLayout().checkRepresentable(source.model)
        if toPostgreSQL, PathOrURL(sourcePath).isPostgreSQL, try Self.sameSchema(sourcePath, destinationPath) {
            throw FerryError(
                .usage, "'\(Self.shown(sourcePath))' and '\(Self.shown(destinationPath))' are the same store")
        }

        // The destination: locked for writing, checked, and a scratch store beside it.
        let scratch: Scratch
        var lock: Any?
        if toPostgreSQL {
            let (session, schema) = try Self.session(destinationPath)
            do {
                try session.connection.acquireAdvisoryLock(
                    Store.postgreSQLLockKey(schema: schema), timeout: copier.busyTimeout)
            } catch {
                throw FerryError(
                    .store,
                    "the store is locked by another process (store '\(Self.shown(destinationPath))': \(error.description))"
                )
            }
            lock = session
            try checkPostgreSQLDestination(session, schema: schema, model: source.model)
            let name = String(
                (schema + StoreFiles.copyScratchMark.replacing(".", with: "_").replacing("-", with: "_")).prefix(63))
            try session.execute("DROP SCHEMA IF EXISTS \(PostgresIdentifier.quote(name)) CASCADE")
            scratch = .schema(url: try Self.url(destinationPath, schema: name), name: name)
        } else {
            lock = try StoreLock.acquire(for: destinationPath, timeout: copier.busyTimeout)
            try copier.checkDestination()
            StoreFiles.removeLeftovers(of: destinationPath, marked: [StoreFiles.copyScratchMark])
            scratch = .file(destinationPath + StoreFiles.copyScratchMark)
        }
        defer { withExtendedLifetime(lock) {} }
        var placed = false
        defer { if !placed { Self.remove(scratch, besides: destinationPath) } }

        let scratchPath: String
        switch scratch {
        case .file(let path): scratchPath = path
        case .schema(let url, _): scratchPath = url
        }
        var entities: [StoreCopier.Report.EntityCount] = []
        var checksummed: [String] = []
        do {
            let copy = try Store.open(at: scratchPath, model: source.model)
            try source.readDatabase { from in
                try copy.writeDatabase { to in
                    try Self.copyRows(model: source.model, from: from, source.layout, to: to, copy.layout)
                }
            }
            // Verified before it is put in place: counts, then every attribute's checksum.
            let sourceCounts = try source.entityCounts()
            let copyCounts = try copy.entityCounts()
            for ((entity, expected), (_, copied)) in zip(sourceCounts, copyCounts) {
                guard expected == copied else {
                    throw FerryError(
                        .verification,
                        "the copy of '\(Self.shown(sourcePath))' has \(copied) \(entity) objects, the source \(expected); '\(Self.shown(destinationPath))' was not changed"
                    )
                }
                entities.append(StoreCopier.Report.EntityCount(entity: entity, source: expected, copied: copied))
            }
            for entity in source.model.entities where !entity.attributes.isEmpty {
                let attributes = entity.attributes.map(\.name)
                let before = try EntityChecksum.compute(store: source, entity: entity.name, attributes: attributes)
                let after = try EntityChecksum.compute(store: copy, entity: entity.name, attributes: attributes)
                guard before.matches(after) else {
                    throw FerryError(
                        .verification,
                        "the copy of \(entity.name) differs from the source (checksum \(after.value), source \(before.value)); '\(Self.shown(destinationPath))' was not changed"
                    )
                }
                checksummed.append(entity.name)
            }
        }
        switch scratch {
        case .file(let path):
            try StoreFiles.replace(destinationPath, with: path)
            try StoreFiles.synchronize(destinationPath)
        case .schema(_, let name):
            guard let session = lock as? PostgresDatabase else {
                throw FerryError(.internal, "no PostgreSQL session for the copy")
            }
            let schema = try Self.session(destinationPath).schema
            try session.writeTransaction {
                try session.execute("DROP SCHEMA IF EXISTS \(PostgresIdentifier.quote(schema)) CASCADE")
                try session.execute(
                    "ALTER SCHEMA \(PostgresIdentifier.quote(name)) RENAME TO \(PostgresIdentifier.quote(schema))")
            }
        }
        placed = true
        return StoreCopier.Report(
            source: Self.shown(sourcePath), destination: Self.shown(destinationPath), model: source.model.name,
            modelVersion: source.model.version,
            entities: entities, checksummed: checksummed, seconds: started.duration(to: .now).seconds)
    }

    // MARK: - Rows

    /// Copies every entity's rows (key, attributes, to-one keys), then every join table, in key order.
    private static func copyRows(
        model: ObjectModel, from source: any DatabaseConnection, _ sourceLayout: any StoreLayout,
        to destination: any DatabaseConnection, _ destinationLayout: any StoreLayout
    ) throws {
        try destination.execute(destinationLayout.dialect.deferForeignKeysStatement)
        let sourceCoding = sourceLayout.valueCoding
        let destinationCoding = destinationLayout.valueCoding
        var links: Set<String> = []
        for entity in model.entities {
            var columns = [
                (source: sourceLayout.keyColumn, destination: destinationLayout.keyColumn, type: AttributeType?.none)
            ]
            for attribute in entity.attributes {
                columns.append(
                    (
                        sourceLayout.column(forAttribute: attribute.name, in: entity),
                        destinationLayout.column(forAttribute: attribute.name, in: entity),
                        attribute.type
                    ))
            }
            for relationship in entity.relationships {
                switch (
                    sourceLayout.storage(of: relationship, in: entity, model: model),
                    destinationLayout.storage(of: relationship, in: entity, model: model)
                ) {
                case (.foreignKey(let from), .foreignKey(let to)):
                    columns.append((from, to, nil))
                case (.joinTable(let table, let sourceColumn, let targetColumn), .joinTable(let destinationTable, _, _))
                where !links.contains(table):
                    links.insert(table)
                    try copyTable(
                        from: source,
                        "SELECT \(sourceLayout.dialect.quote(sourceColumn)), \(sourceLayout.dialect.quote(targetColumn)) FROM \(sourceLayout.dialect.quote(table)) ORDER BY 1, 2",
                        to: destination, table: destinationTable, columns: [sourceColumn, targetColumn],
                        layout: destinationLayout
                    ) { $0 }
                default:
                    continue
                }
            }
            let select =
                "SELECT " + columns.map { sourceLayout.dialect.quote($0.source) }.joined(separator: ", ")
                + " FROM \(sourceLayout.quotedTable(for: entity)) ORDER BY \(sourceLayout.dialect.quote(sourceLayout.keyColumn))"
            let types = columns.map(\.type)
            try copyTable(
                from: source, select, to: destination, table: destinationLayout.table(for: entity),
                columns: columns.map(\.destination), layout: destinationLayout
            ) { row in
                row.indices.map { index in
                    guard let type = types[index] else { return row[index] }
                    return destinationCoding.encode(sourceCoding.decode(row[index], as: type))
                }
            }
            if let postgres = destination as? PostgresDatabase {
                // Keys were given explicitly: new objects must be numbered after them.
                let table = PostgresIdentifier.quote(postgres.schema) + "." + destinationLayout.quotedTable(for: entity)
                let key = destinationLayout.dialect.quote(destinationLayout.keyColumn)
                try postgres.execute(
                    "SELECT setval(pg_get_serial_sequence(?, ?), COALESCE((SELECT max(\(key)) FROM \(table)), 0) + 1, false)",
                    [.text(table), .text(destinationLayout.keyColumn)])
            }
        }
    }

    /// The rows of `select` on the source, converted, written into `table` of the destination:
    /// through `COPY` on PostgreSQL, with one prepared `INSERT` on SQLite.
    private static func copyTable(
        from source: any DatabaseConnection, _ select: String, to destination: any DatabaseConnection, table: String,
        columns: [String],
        layout: any StoreLayout, convert: ([DatabaseValue]) -> [DatabaseValue]
    ) throws {
        if let postgres = destination as? PostgresDatabase {
            do {
                try postgres.connection.copy(into: table, schema: postgres.schema, columns: columns) { writer in
                    try source.forEachRow(select, []) { row in
                        try writer.append(convert(row).map(PostgresDatabase.postgresValue))
                    }
                }
            } catch let error as PostgresError {
                throw FerryError(.store, "copying \(table) into \(postgres.location) failed: \(error.description)")
            }
            return
        }
        guard let connection = destination as? Connection else {
            throw FerryError(.internal, "no copy into \(type(of: destination))")
        }
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let statement = try connection.prepare(
            "INSERT INTO \(layout.dialect.quote(table)) (\(columns.map(layout.dialect.quote).joined(separator: ", "))) VALUES (\(marks))"
        )
        try source.forEachRow(select, []) { row in
            try statement.bind(convert(row))
            _ = try statement.step()
            statement.reset()
        }
    }

    // MARK: - Destinations

    /// A PostgreSQL destination may be a missing or empty schema, or an empty ferry store of the
    /// source's model and version; `--replace` also replaces a ferry store holding objects or at
    /// another version. A schema holding anything but a ferry store is never touched.
    private func checkPostgreSQLDestination(_ session: PostgresDatabase, schema: String, model: ObjectModel) throws {
        let shown = Self.shown(copier.destinationPath)
        let exists =
            try session.scalar("SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = ?", [.text(schema)])?.int64
            == 1
        guard exists else { return }
        let layout = FerryLayout(backend: .postgresql)
        guard let metadata = try StoreMetadata.read(from: session, layout: layout) else {
            let tables =
                try session.scalar(
                    "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ?",
                    [.text(schema)])?.int64 ?? 0
            if tables == 0 { return }
            throw FerryError(
                .usage,
                "'\(shown)' is a PostgreSQL schema but not a ferry store; ferry copy never overwrites it, with --replace neither"
            )
        }
        if copier.replacesExisting { return }
        if metadata.modelName != model.name || metadata.modelVersion != model.version {
            throw FerryError(
                .usage,
                "the store '\(shown)' is at model \(metadata.modelName) version \(metadata.modelVersion), the source at \(model.name) version \(model.version); ferry copy writes only into a new or empty store of the same model (pass --replace to replace it)"
            )
        }
        try StoreCopier.requireEmpty(
            Store.open(at: copier.destinationPath, model: model, options: .existingReadOnly), shown: shown)
    }

    private static func remove(_ scratch: Scratch, besides destination: String) {
        switch scratch {
        case .file(let path):
            StoreFiles.remove(path)
        case .schema(_, let name):
            guard let session = try? session(destination).database else { return }
            _ = try? session.execute("DROP SCHEMA IF EXISTS \(PostgresIdentifier.quote(name)) CASCADE")
        }
    }

    // MARK: - URLs

    /// A session on the database of the store at `text`, and the store's schema.
    private static func session(_ text: String) throws -> (database: PostgresDatabase, schema: String) {
        let url = try Store.postgresURL(text)
        let schema = url.schema ?? Store.defaultPostgreSQLSchema
        return (try PostgresDatabase(url: url, schema: schema), schema)
    }

    private static func sameSchema(_ a: String, _ b: String) throws -> Bool {
        var left = try Store.postgresURL(a)
        var right = try Store.postgresURL(b)
        left.schema = left.schema ?? Store.defaultPostgreSQLSchema
        right.schema = right.schema ?? Store.defaultPostgreSQLSchema
        return left == right
    }

    /// `text` with its `schema=` parameter set to `schema` (everything else, the password too, kept).
    private static func url(_ text: String, schema: String) throws -> String {
        _ = try Store.postgresURL(text)
        let parts = text.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query = parts.count > 1 ? parts[1].split(separator: "&").map(String.init) : []
        query.removeAll { $0.hasPrefix("schema=") }
        query.append("schema=" + (schema.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? schema))
        return parts[0] + "?" + query.joined(separator: "&")
    }

    /// A store for messages: a PostgreSQL URL without its password.
    static func shown(_ text: String) -> String {
        guard PathOrURL(text).isPostgreSQL else { return text }
        return (try? PostgresURL(text).description) ?? text
    }
}
