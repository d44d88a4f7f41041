/// What a ``MigrationManager`` asks of the step it belongs to: the writes and look-ups policies
/// make. The manager holds its writer; the writer knows nothing of the manager or the runner.
protocol MigrationWriting: AnyObject {
    /// For ``MigrationManager/mappedValues(forSource:mapping:)``.
    func mappedValues(forSource source: MigrationObject, mappingName: String) throws -> [String: Value]
    /// For ``MigrationManager/insertDestinationInstance(_:forSource:mapping:)``.
    func insertDestination(
        _ values: [String: Value], forSource source: MigrationObject?, mappingName: String
    ) throws -> MigrationObject
    /// For ``MigrationManager/associate(source:destination:mapping:)``.
    func associate(source: Int64, destination: Int64, mapping name: String) throws
    /// For ``MigrationManager/destinationInstances(forMapping:sourceInstances:)``.
    func destinationKeys(forMapping name: String, sources: [Int64]) throws -> [Int64]
    /// For ``MigrationManager/sourceInstances(forMapping:destinationInstances:)``.
    func sourceKeys(forMapping name: String, destinations: [Int64]) throws -> [Int64]
    /// For ``MigrationManager/setRelationship(_:of:to:)``.
    func setRelationship(_ relationship: String, entity: String, key: Int64, target: Int64?) throws
}

/// Writes destination objects one at a time on the step's connection (the row path and what
/// policies create), records which destination objects came from which source objects in
/// `links.assoc`, and counts the objects written per destination entity.
final class MigrationObjectWriter: MigrationWriting {
    private let connection: Connection
    private let scope: MigrationStepScope
    /// The destination's value coding, fetched once: the row path binds every value with it.
    let destinationCoding: DispatchedValueCoding
    /// Objects written per destination entity, to verify the counts.
    private(set) var written: [String: Int] = [:]
    /// Objects inserted through the manager (by policies).
    private(set) var managerInserts = 0
    /// Destination entities some of whose values ferry computed or converted (not only copied
    /// in their stored form, ``EntityPlan/copiesStoredForms``): their value forms are verified.
    private(set) var computedValues: Set<String> = []
    /// Core Data's shared tables: the last key given to a new object per destination table
    /// (``CoreDataMigrationDestination/newKeyFloor(table:identities:sourceLayout:destinationLayout:on:sourceSchema:destinationSchema:)``).
    private var lastNewKeys: [String: Int64] = [:]
    /// The row being migrated by the row path (for ``mappedValues(forSource:mappingName:)``).
    private var currentRow: (mapping: String, source: Int64, values: [Value], columns: [String])?
    /// Per destination entity (by name): its insert, the columns its `?`s take after the key,
    /// and the entity (looked up once: policies insert through here for every object).
    private var insertStatements: [String: (statement: Statement, columns: [String], entity: EntityDescription)] =
        [:]
    /// Prepared once per step: policies call these for every object.
    /// Associations not yet written: they go to `links.assoc` in bulk, before anything reads it.
    private var pendingAssociations: [(mapping: String, source: Int64, destination: Int64)] = []
    /// Writes ``associationBatch`` pending associations with one statement.
    private var associateStatement: Statement?
    /// Rows per bulk association insert (3 parameters each, well under SQLite's limit).
    static let associationBatch = 256

    init(connection: Connection, scope: MigrationStepScope) {
        self.connection = connection
        self.scope = scope
        self.destinationCoding = DispatchedValueCoding(scope.destinationLayout.valueCoding)
    }

    private var destination: ObjectModel { scope.destination }

    /// Finalizes the prepared statements (the destination cannot be detached while they live).
    func releaseStatements() {
        insertStatements.removeAll()
        associateStatement = nil
    }

    /// Notes that ferry computed or converted some values of `entity`'s objects.
    func noteComputedValues(of entity: String) {
        computedValues.insert(entity)
    }

    /// Adds objects some mapping wrote set-based (`INSERT … SELECT`) to the counts.
    func count(_ objects: Int, of entity: String) {
        written[entity, default: 0] += objects
    }

    /// Runs `body` (a policy's `createDestinationInstances`) with the row whose mapped values
    /// ``mappedValues(forSource:mappingName:)`` hands out.
    func withCurrentRow(
        mapping: String, source: Int64, values: [Value], columns: [String], _ body: () throws -> Void
    ) rethrows {
        currentRow = (mapping, source, values, columns)
        defer { currentRow = nil }
        try body()
    }

    /// Inserts one destination object given by column name (policies); `primaryKey` nil lets
    /// SQLite choose a new one (`keyIfFree`: as for values in column order).
    func insert(
        _ values: [String: Value], mapping entityMapping: MappingModel.EntityMapping, primaryKey: Int64?,
        keyIfFree: Bool = false
    ) throws -> Int64 {
        let columns = try insertStatement(forEntityNamed: entityMapping.destination).columns
        return try insert(
            columns.map { values[$0] ?? .null }, mapping: entityMapping, primaryKey: primaryKey, keyIfFree: keyIfFree)
    }

    /// Inserts one destination object from values in the insert statement's column order.
    ///
    /// - Parameter keyIfFree: with a `primaryKey`, a new key instead when another object of the
    ///   table has that one already (no query first: the insert itself tells).
    func insert(
        _ values: [Value], mapping entityMapping: MappingModel.EntityMapping, primaryKey: Int64?,
        keyIfFree: Bool = false
    ) throws -> Int64 {
        let (statement, _, entity) = try insertStatement(forEntityNamed: entityMapping.destination)
        let coding = destinationCoding
        statement.reset()
        if let primaryKey {
            try statement.bind(primaryKey, at: 1)
        } else {
            try bindNewKey(for: entity, to: statement)
        }
        for (offset, value) in values.enumerated() {
            try coding.bind(value, to: statement, at: offset + 2)
        }
        do {
            try statement.step()
        } catch let error as FerryError {
            guard keyIfFree, primaryKey != nil, let result = error.underlying as? SQLiteResult,
                result.code == Self.primaryKeyConflict
            else { throw MigrationStepScope.wrap(error, mapping: entityMapping) }
            // The key is taken: the same values under a new key (the other bindings stay).
            statement.reset()
            try bindNewKey(for: entity, to: statement)
            do {
                try statement.step()
            } catch let error as FerryError {
                throw MigrationStepScope.wrap(error, mapping: entityMapping)
            }
        }
        return connection.lastInsertRowID
    }

    /// SQLITE_CONSTRAINT_PRIMARYKEY (an extended result code: a C macro Swift cannot import).
    private static let primaryKeyConflict: Int32 = 1555

    /// Binds the key of a new object: SQLite's choice, or Core Data's next key for the table.
    private func bindNewKey(for entity: EntityDescription, to statement: Statement) throws {
        if scope.writesCoreData {
            try statement.bind(try newKey(for: entity), at: 1)
        } else {
            try statement.bindNull(at: 1)
        }
    }

    /// A key for a new object in a Core Data store: above every key the step's one-to-one
    /// mappings keep in the same table, whichever runs first (the table is shared by a hierarchy).
    private func newKey(for entity: EntityDescription) throws -> Int64 {
        let table = scope.destinationLayout.table(for: entity)
        let last =
            try lastNewKeys[table]
            ?? CoreDataMigrationDestination.newKeyFloor(
                table: table, identities: scope.mapping.entities.filter(scope.isIdentity),
                sourceLayout: scope.sourceLayout,
                destinationLayout: scope.destinationLayout, on: connection,
                sourceSchema: MigrationStepScope.sourceSchema,
                destinationSchema: MigrationStepScope.destinationSchema)
        lastNewKeys[table] = last + 1
        return last + 1
    }

    private func insertStatement(
        forEntityNamed name: String
    ) throws -> (statement: Statement, columns: [String], entity: EntityDescription) {
        if let cached = insertStatements[name] { return cached }
        guard let entity = destination.entity(named: name) else {
            throw FerryError(.migration, "the destination model has no entity '\(name)'")
        }
        let layout = scope.destinationLayout
        var columns = entity.attributes.map(\.name)
        var stored =
            [layout.dialect.quote(layout.keyColumn)] + columns.map { layout.quotedColumn(forAttribute: $0, in: entity) }
        for relationship in entity.relationships {
            if case .foreignKey(let column) = layout.storage(of: relationship, in: entity, model: destination) {
                columns.append(column)
                stored.append(layout.dialect.quote(column))
            }
        }
        // Core Data's order columns after the keys, as ``EntityPlan/insertColumns`` has them.
        for relationship in entity.relationships {
            if let order = layout.orderColumn(
                forForeignKeyOf: relationship, in: entity, model: destination)
            {
                columns.append(order)
                stored.append(layout.dialect.quote(order))
            }
        }
        // Core Data's Z_ENT and Z_OPT (a new object's) after the values, so the `?`s keep their numbers.
        let bookkeeping = CoreDataMigrationDestination.rowBookkeeping(of: entity, in: layout)
        stored += bookkeeping.map { layout.dialect.quote($0.column) }
        let marks =
            "VALUES ("
            + (Array(repeating: "?", count: columns.count + 1) + bookkeeping.map(\.value)).joined(separator: ", ") + ")"
        let statement = try connection.prepare(
            layout.dialect.insert(
                into: scope.destinationTable(layout.table(for: entity)), columns: stored, values: marks,
                onConflict: .fail))
        insertStatements[name] = (statement, columns, entity)
        return (statement, columns, entity)
    }

    func mappedValues(forSource source: MigrationObject, mappingName: String) throws -> [String: Value] {
        guard let row = currentRow, row.mapping == mappingName, row.source == source.primaryKey else {
            throw FerryError(
                .migration,
                "mappedValues(forSource:) works for the source object being migrated by mapping \(mappingName) only")
        }
        return Dictionary(uniqueKeysWithValues: zip(row.columns, row.values))
    }

    func insertDestination(
        _ values: [String: Value], forSource source: MigrationObject?, mappingName: String
    ) throws -> MigrationObject {
        guard let entityMapping = scope.mapping.entity(named: mappingName) else {
            throw FerryError(.migration, "no entity mapping named '\(mappingName)'")
        }
        // The first object made from a source object keeps its key (if it is free).
        let key = try insert(values, mapping: entityMapping, primaryKey: source?.primaryKey, keyIfFree: true)
        if let source {
            try associate(source: source.primaryKey, destination: key, mapping: entityMapping.name)
        }
        managerInserts += 1
        computedValues.insert(entityMapping.destination)
        written[entityMapping.destination, default: 0] += 1
        return MigrationObject(entity: entityMapping.destination, primaryKey: key, values: values)
    }

    func associate(source: Int64, destination: Int64, mapping name: String) throws {
        pendingAssociations.append((name, source, destination))
        if pendingAssociations.count >= Self.associationBatch { try flushAssociations() }
    }

    /// Writes the pending associations to `links.assoc`: whole batches with one prepared
    /// statement of many rows, the rest with one statement. Called before anything reads the
    /// table (each mapping's end, the manager's look-ups, the relationship stage).
    func flushAssociations() throws {
        guard !pendingAssociations.isEmpty else { return }
        let batch = Self.associationBatch
        var start = 0
        while start < pendingAssociations.count {
            let count = min(batch, pendingAssociations.count - start)
            let statement: Statement
            if count == batch, let associateStatement {
                statement = associateStatement
            } else {
                let rows = Array(repeating: "(?, ?, ?)", count: count).joined(separator: ", ")
                statement = try connection.prepare(
                    "INSERT INTO links.assoc (mapping, source, destination) VALUES \(rows)")
                if count == batch { associateStatement = statement }
            }
            statement.reset()
            for (offset, association) in pendingAssociations[start..<start + count].enumerated() {
                try statement.bind(association.mapping, at: offset * 3 + 1)
                try statement.bind(association.source, at: offset * 3 + 2)
                try statement.bind(association.destination, at: offset * 3 + 3)
            }
            try statement.step()
            start += count
        }
        pendingAssociations.removeAll(keepingCapacity: true)
    }

    func destinationKeys(forMapping name: String, sources: [Int64]) throws -> [Int64] {
        try associatedKeys(forMapping: name, keys: sources, given: "source", wanted: "destination")
    }

    func sourceKeys(forMapping name: String, destinations: [Int64]) throws -> [Int64] {
        try associatedKeys(forMapping: name, keys: destinations, given: "destination", wanted: "source")
    }

    /// The keys associated with `keys` by the named mapping, from one side of `links.assoc` to
    /// the other (a mapping that keeps its objects' keys associates each key with itself).
    private func associatedKeys(
        forMapping name: String, keys given: [Int64], given side: String, wanted other: String
    ) throws -> [Int64] {
        guard let entityMapping = scope.mapping.entity(named: name) else {
            throw FerryError(.migration, "no entity mapping named '\(name)'")
        }
        if scope.isIdentity(entityMapping) { return given }
        try flushAssociations()
        var keys: [Int64] = []
        let statement = try connection.prepare("SELECT \(other) FROM links.assoc WHERE mapping = ? AND \(side) = ?")
        for key in given {
            statement.reset()
            try statement.bind([.text(entityMapping.name), .integer(key)])
            while try statement.step() { keys.append(statement.int64(at: 0)) }
        }
        return keys
    }

    func setRelationship(_ relationship: String, entity: String, key: Int64, target: Int64?) throws {
        guard let destinationEntity = destination.entity(named: entity),
            let description = destinationEntity.relationship(named: relationship)
        else {
            throw FerryError(.migration, "\(entity) has no relationship '\(relationship)'")
        }
        let destinationLayout = scope.destinationLayout
        let quote = destinationLayout.dialect.quote
        switch destinationLayout.storage(of: description, in: destinationEntity, model: destination) {
        case .foreignKey(let column):
            try connection.execute(
                "UPDATE \(scope.destinationTable(destinationLayout.table(for: destinationEntity))) SET \(quote(column)) = ? WHERE \(scope.destinationKey) = ?",
                [target.map { .integer($0) } ?? .null, .integer(key)])
        case .inverseForeignKey(let table, let column):
            guard let target else { break }
            try connection.execute(
                "UPDATE \(scope.destinationTable(table)) SET \(quote(column)) = ? WHERE \(scope.destinationKey) = ?",
                [.integer(key), .integer(target)])
        case .joinTable(let table, let sourceColumn, let targetColumn):
            guard let target else { break }
            try connection.execute(
                destinationLayout.dialect.insert(
                    into: scope.destinationTable(table), columns: [quote(sourceColumn), quote(targetColumn)],
                    values: "VALUES (?, ?)", onConflict: .ignore),
                [.integer(key), .integer(target)])
        }
    }

    /// Calls `body` with every destination object the mapping made (policies' second stage).
    func forEachDestination(
        of entityMapping: MappingModel.EntityMapping, _ body: (MigrationObject) throws -> Void
    ) throws {
        try flushAssociations()
        let statement = try connection.prepare(
            "SELECT destination FROM links.assoc WHERE mapping = ? ORDER BY destination")
        try statement.bind([.text(entityMapping.name)])
        var keys: [Int64] = []
        while try statement.step() { keys.append(statement.int64(at: 0)) }
        for key in keys {
            try body(MigrationObject(entity: entityMapping.destination, primaryKey: key, values: [:]))
        }
        // What the relationship stage associated is written too.
        try flushAssociations()
    }
}
