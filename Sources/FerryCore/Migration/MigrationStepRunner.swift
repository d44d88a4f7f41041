import Foundation

/// Migrates one version step: reads the source store (only reads it) and writes a new store file
/// for the destination model, then verifies it. The engine behind ``Migrator``.
///
/// The source is the connection's `main` database (opened read-only), so predicates and key
/// paths compiled for the source model resolve there; the destination is attached as `dst`.
///
/// Identity: an entity mapping with one destination object per source object (no `distinct`, no
/// policy) keeps each object's primary key, so to-one relationships carry over as plain column
/// copies and the mapping runs as one `INSERT … SELECT` when all its values are expressible in SQL.
/// Mappings that make objects differently (`distinct`, custom policies) record which destination
/// objects came from which source objects in a temporary on-disk table (`links.assoc`), so memory
/// stays flat however large the store is.
final class MigrationStepRunner {
    let mapping: MappingModel
    let sourcePath: String
    let destinationPath: String
    let options: MigrationOptions
    weak var observer: (any MigrationObserver)?
    let now: Int64
    /// How the source store and the new store lay out and code their values (the new store's
    /// layout is the one its schema was created with, see ``run()``).
    let sourceLayout: any StoreLayout
    private(set) var destinationLayout: any StoreLayout
    /// The kind of store the step writes.
    let destinationKind: MigrationDestination
    /// The destination's value coding, fetched once: the row path binds every value with it.
    private let destinationCoding: DispatchedValueCoding
    /// The schema the new store is reached through on the step's connection (attached in SQLite).
    static let destinationSchema = "dst"
    /// The schema of the source store on the step's connection.
    static let sourceSchema = "main"

    private var connection: Connection!
    private var manager: MigrationManager!
    /// Objects written per destination entity, to verify the counts.
    private var written: [String: Int] = [:]
    private var reports: [MigrationStepReport.EntityReport] = []
    /// The row being migrated by the row path (for ``mappedValues(forSource:mappingName:)``).
    private var currentRow: (mapping: String, source: Int64, values: [Value], columns: [String])?
    private var insertStatements: [String: (Statement, [String])] = [:]
    /// Prepared once per step: policies call these for every object.
    private var keyTakenStatements: [String: Statement] = [:]
    private var associateStatement: Statement?
    /// Objects inserted through the manager (by policies).
    private var managerInserts = 0
    /// Destination entities some of whose values ferry computed or converted (not only copied
    /// in their stored form, ``EntityPlan/copiesStoredForms``): their value forms are verified.
    private var computedValues: Set<String> = []
    /// Core Data's shared tables: the last key given to a new object per destination table
    /// (``CoreDataMigrationDestination/newKeyFloor(table:identities:sourceLayout:destinationLayout:on:sourceSchema:destinationSchema:)``).
    private var lastNewKeys: [String: Int64] = [:]

    init(
        mapping: MappingModel, sourcePath: String, destinationPath: String, options: MigrationOptions, now: Int64,
        sourceLayout: any StoreLayout, destination: MigrationDestination
    ) {
        self.mapping = mapping
        self.sourceLayout = sourceLayout
        self.destinationKind = destination
        self.destinationLayout = destination.layout(for: mapping.destination)
        self.destinationCoding = DispatchedValueCoding(destinationLayout.valueCoding)
        self.sourcePath = sourcePath
        self.destinationPath = destinationPath
        self.options = options
        self.now = now
    }

    var source: ObjectModel { mapping.source }
    var destination: ObjectModel { mapping.destination }

    /// `name` (a table of the new store) qualified with the destination schema.
    private func destinationTable(_ name: String) -> String {
        destinationLayout.dialect.qualified(name, in: Self.destinationSchema)
    }

    /// The destination key column, quoted.
    private var destinationKey: String { destinationLayout.dialect.quote(destinationLayout.keyColumn) }

    // MARK: - The step

    func run() throws -> MigrationStepReport {
        let started = ContinuousClock.now
        StoreFiles.remove(destinationPath)
        // The new store's schema, written by a connection of its own (its names unqualified).
        do {
            let create = try Connection(path: destinationPath)
            try create.execute("PRAGMA journal_mode = OFF")
            try create.execute("PRAGMA synchronous = OFF")
            // ferry's indexes come after the data (built in bulk), see `buildIndexes`.
            destinationLayout = try destinationKind.createSchema(for: destination, on: create)
        }
        if case .coreData = destinationKind {
            try CoreDataMigrationDestination.checkKeysStayUnique(
                mapping.entities.filter(isIdentity), sourceLayout: sourceLayout, destinationLayout: destinationLayout)
        }
        // Read-write flags with `mode=ro` in the URI: the source stays read-only, while the
        // attached destination may be written (a read-only connection could not attach it so).
        connection = try Connection(path: Self.readOnlyURI(sourcePath), readOnly: false, create: true)
        connection.setBusyTimeout(milliseconds: 30_000)
        try PredicateSupport.register(on: connection)
        try connection.execute("PRAGMA cache_size = -16384")
        // Attached databases take the main connection's read-only flag unless a URI says otherwise.
        try connection.execute("ATTACH DATABASE ? AS dst", [.text(Self.uri(destinationPath, mode: "rw"))])
        try connection.execute("PRAGMA dst.journal_mode = OFF")
        try connection.execute("PRAGMA dst.synchronous = OFF")
        try connection.execute("PRAGMA dst.cache_size = -16384")
        let linksPath = destinationPath + "-links"
        StoreFiles.remove(linksPath)
        defer { StoreFiles.remove(linksPath) }
        try connection.execute("ATTACH DATABASE ? AS links", [.text(Self.uri(linksPath, mode: "rwc"))])
        try connection.execute("PRAGMA links.journal_mode = OFF")
        try connection.execute("PRAGMA links.synchronous = OFF")
        try connection.executeScript(
            """
            CREATE TABLE links.assoc (mapping TEXT NOT NULL, source INTEGER, destination INTEGER NOT NULL);
            CREATE INDEX links.assoc_source ON assoc (mapping, source);
            CREATE INDEX links.assoc_destination ON assoc (mapping, destination);
            """)
        manager = MigrationManager(connection: connection, sourceModel: source, destinationModel: destination, engine: self)
        defer {
            insertStatements.removeAll()
            keyTakenStatements.removeAll()
            associateStatement = nil
            manager = nil
            connection = nil
        }
        let hooks = options.registry.stageHooks(from: source.version, to: destination.version)
        try hooks?.willMigrate?(MigrationStageContext(fromVersion: source.version, toVersion: destination.version, connection: connection, schema: Self.sourceSchema))

        var policies: [String: any EntityMigrationPolicy] = [:]
        for entityMapping in mapping.entities {
            if let name = entityMapping.policy {
                guard let policy = options.registry.makePolicy(named: name) else {
                    let known = options.registry.policyNames
                    throw FerryError(
                        .migration, "no migration policy named '\(name)' is registered (mapping \(entityMapping.name))",
                        at: entityMapping.policyLocation ?? entityMapping.location,
                        notes: [known.isEmpty ? "this ferry binary has no policies; build your own with the policies registered (samples/custom-policy)" : "registered: \(known.joined(separator: ", "))"])
                }
                policies[entityMapping.name] = policy
            }
        }

        try connection.transaction(.immediate) {
            for entityMapping in mapping.entities {
                try migrate(entityMapping, policy: policies[entityMapping.name])
            }
            try writeLinksOfManyToMany()
            // Core Data's second and third stages, once every mapping made its objects.
            for entityMapping in mapping.entities {
                guard let policy = policies[entityMapping.name] else { continue }
                let context = try self.context(for: entityMapping)
                try forEachDestination(of: entityMapping) { object in
                    try policy.createRelationships(forDestination: object, mapping: context, manager: manager)
                }
                try policy.endRelationshipCreation(mapping: context, manager: manager)
            }
            if destinationKind.buildsIndexesAfterData { try buildIndexes() }
            try destinationKind.finish(
                on: connection, schema: Self.destinationSchema, sourceSchema: Self.sourceSchema, model: destination, layout: destinationLayout)
            try hooks?.didMigrate?(MigrationStageContext(fromVersion: source.version, toVersion: destination.version, connection: connection, schema: Self.destinationSchema))
            for entityMapping in mapping.entities {
                guard let policy = policies[entityMapping.name] else { continue }
                let context = try self.context(for: entityMapping)
                try policy.performCustomValidation(mapping: context, manager: manager)
                try policy.end(mapping: context, manager: manager)
            }
            try carryRunHistory(started: started)
        }
        insertStatements.removeAll()
        keyTakenStatements.removeAll()
        associateStatement = nil
        try connection.execute("DETACH DATABASE links")
        try connection.execute("DETACH DATABASE dst")
        connection = nil
        try verifyDestination()
        if options.checksums { try compareChecksums() }
        try keepJournalMode()
        try StoreFiles.synchronize(destinationPath)
        creditObjectsMadeByOtherMappings()
        return MigrationStepReport(
            from: source.version, to: destination.version, mappingFile: mapping.location?.file, entities: reports,
            seconds: started.duration(to: .now).seconds)
    }

    /// Objects a policy made for another entity (a Post policy's Sections) are reported under
    /// the first mapping into that entity.
    private func creditObjectsMadeByOtherMappings() {
        for (entity, count) in written {
            let reported = reports.filter { $0.destination == entity }.reduce(0) { $0 + $1.written }
            guard count > reported, let index = reports.firstIndex(where: { $0.destination == entity }) else { continue }
            reports[index].written += count - reported
        }
    }

    // MARK: - One entity mapping

    private func migrate(_ entityMapping: MappingModel.EntityMapping, policy: (any EntityMigrationPolicy)?) throws {
        let started = ContinuousClock.now
        guard let destinationEntity = destination.entity(named: entityMapping.destination) else {
            throw FerryError(.migration, "mapping \(entityMapping.name): the destination model has no entity '\(entityMapping.destination)'", at: entityMapping.location)
        }
        var report = MigrationStepReport.EntityReport(mapping: entityMapping.name, destination: destinationEntity.name, source: entityMapping.source)
        // Objects policies insert through the manager are counted for their own entity there.
        let managerInsertsBefore = managerInserts
        let writtenBefore = written[destinationEntity.name, default: 0]
        defer {
            report.seconds = started.duration(to: .now).seconds
            reports.append(report)
        }
        guard let sourceName = entityMapping.source else {
            // A new entity starts empty (a policy may still create objects in its begin hook).
            if let policy {
                let context = try self.context(for: entityMapping)
                try policy.begin(mapping: context, manager: manager)
                try policy.endInstanceCreation(mapping: context, manager: manager)
            }
            return
        }
        guard let sourceEntity = source.entity(named: sourceName) else {
            throw FerryError(.migration, "mapping \(entityMapping.name): the source model has no entity '\(sourceName)'", at: entityMapping.location)
        }
        let plan = try EntityPlan(mapping: entityMapping, source: sourceEntity, destination: destinationEntity, step: self)
        observer?.migrationEntityStarted(entityMapping.name)
        if policy == nil && entityMapping.distinct == nil, let sql = plan.insertSelectSQL(into: Self.destinationSchema) {
            if !plan.copiesStoredForms { computedValues.insert(destinationEntity.name) }
            try execute(sql, entityMapping: entityMapping)
            let count = connection.changes
            report.read = count
            report.written = count
        } else {
            computedValues.insert(destinationEntity.name)
            (report.read, report.written) = try migrateRows(plan, policy: policy)
        }
        written[destinationEntity.name, default: 0] += report.written - (managerInserts - managerInsertsBefore)
        report.written = written[destinationEntity.name, default: 0] - writtenBefore
        if case .coreData = destinationKind { try CoreDataMigrationDestination.checkNotAbstract(destinationEntity, written: report.written, by: entityMapping) }
        observer?.migrationProgress(mapping: entityMapping.name, processed: report.read)
    }

    /// Runs a statement, turning constraint failures into migration errors that name the mapping.
    private func execute(_ sql: EntityPlan.SQLText, entityMapping: MappingModel.EntityMapping) throws {
        do {
            try connection.execute(sql.text, sql.arguments)
        } catch let error as FerryError {
            throw Self.wrap(error, mapping: entityMapping)
        }
    }

    static func wrap(_ error: FerryError, mapping: MappingModel.EntityMapping) -> FerryError {
        guard error.code == .constraint || error.code == .store else { return error }
        let detail = error.message.components(separatedBy: ": ").dropFirst().joined(separator: ": ")
        return FerryError(
            .migration, "mapping \(mapping.name) → \(mapping.destination): \(detail.isEmpty ? error.message : detail)", at: mapping.location,
            notes: ["nothing was changed: the original store is as it was"], underlying: error.underlying)
    }

    /// The row path: values computed in Swift (expressions SQL cannot express exactly, distinct
    /// values, custom policies). Returns (source objects read, destination objects written).
    private func migrateRows(_ plan: EntityPlan, policy: (any EntityMigrationPolicy)?) throws -> (Int, Int) {
        let entityMapping = plan.mapping
        let context = try self.context(for: entityMapping)
        manager.startMapping()
        if let policy { try policy.begin(mapping: context, manager: manager) }
        let select = try connection.prepare(plan.selectSQL.text)
        try select.bind(plan.selectSQL.arguments)
        var read = 0
        var distinctLookup: Statement?
        var distinctInsert: Statement?
        if plan.distinct != nil {
            let table = "distinct_\(mapping.entities.firstIndex { $0.name == entityMapping.name } ?? 0)"
            try connection.execute("CREATE TABLE IF NOT EXISTS links.\(table) (key PRIMARY KEY, destination INTEGER NOT NULL)")
            distinctLookup = try connection.prepare("SELECT destination FROM links.\(table) WHERE key = ?")
            distinctInsert = try connection.prepare("INSERT INTO links.\(table) (key, destination) VALUES (?, ?)")
        }
        var createdHere = 0
        let insertsBefore = managerInserts
        while try select.step() {
            read += 1
            let sourceKey = select.int64(at: 0)
            let row = plan.decodeRow(select)
            let values = try plan.destinationRow(row: row, sourceKey: sourceKey)
            if let distinct = plan.distinct, let distinctLookup, let distinctInsert {
                // One destination object per distinct non-nil value; every source object with
                // that value is associated with it.
                let value = try distinct.evaluate(on: SlotContext(row: row, slots: plan.distinctSlots, entity: plan.source.name, key: sourceKey))
                if value.isNull { continue }
                let encoded = destinationCoding.encode(value)
                distinctLookup.reset()
                try distinctLookup.bind(encoded, at: 1)
                if try distinctLookup.step() {
                    try associate(source: sourceKey, destination: distinctLookup.int64(at: 0), mapping: entityMapping.name)
                    continue
                }
                let created = try insert(values, mapping: entityMapping, primaryKey: nil)
                distinctInsert.reset()
                try distinctInsert.bind([encoded, .integer(created)])
                try distinctInsert.step()
                try associate(source: sourceKey, destination: created, mapping: entityMapping.name)
                createdHere += 1
            } else if let policy {
                currentRow = (entityMapping.name, sourceKey, values, plan.insertColumns)
                defer { currentRow = nil }
                try policy.createDestinationInstances(forSource: plan.sourceObject(row: row, key: sourceKey), mapping: context, manager: manager)
            } else {
                _ = try insert(values, mapping: entityMapping, primaryKey: sourceKey)
                createdHere += 1
            }
            if read & 4095 == 0 { observer?.migrationProgress(mapping: entityMapping.name, processed: read) }
            try manager.didProcess()
        }
        if let policy { try policy.endInstanceCreation(mapping: context, manager: manager) }
        return (read, createdHere + managerInserts - insertsBefore)
    }

    // MARK: - Writing objects

    /// Inserts one destination object given by column name (policies); `primaryKey` nil lets
    /// SQLite choose a new one.
    private func insert(_ values: [String: Value], mapping entityMapping: MappingModel.EntityMapping, primaryKey: Int64?) throws -> Int64 {
        guard let entity = destination.entity(named: entityMapping.destination) else {
            throw FerryError(.migration, "the destination model has no entity '\(entityMapping.destination)'")
        }
        let (_, columns) = try insertStatement(for: entity)
        return try insert(columns.map { values[$0] ?? .null }, mapping: entityMapping, primaryKey: primaryKey)
    }

    /// Inserts one destination object from values in the insert statement's column order.
    private func insert(_ values: [Value], mapping entityMapping: MappingModel.EntityMapping, primaryKey: Int64?) throws -> Int64 {
        guard let entity = destination.entity(named: entityMapping.destination) else {
            throw FerryError(.migration, "the destination model has no entity '\(entityMapping.destination)'")
        }
        let (statement, _) = try insertStatement(for: entity)
        let coding = destinationCoding
        statement.reset()
        if let primaryKey {
            try statement.bind(primaryKey, at: 1)
        } else if case .coreData = destinationKind {
            try statement.bind(try newKey(for: entity), at: 1)
        } else {
            try statement.bindNull(at: 1)
        }
        for (offset, value) in values.enumerated() {
            try coding.bind(value, to: statement, at: offset + 2)
        }
        do {
            try statement.step()
        } catch let error as FerryError {
            throw Self.wrap(error, mapping: entityMapping)
        }
        return connection.lastInsertRowID
    }

    /// A key for a new object in a Core Data store: above every key the step's one-to-one
    /// mappings keep in the same table, whichever runs first (the table is shared by a hierarchy).
    private func newKey(for entity: EntityDescription) throws -> Int64 {
        let table = destinationLayout.table(for: entity)
        let last = try lastNewKeys[table]
            ?? CoreDataMigrationDestination.newKeyFloor(
                table: table, identities: mapping.entities.filter(isIdentity), sourceLayout: sourceLayout, destinationLayout: destinationLayout,
                on: connection, sourceSchema: Self.sourceSchema, destinationSchema: Self.destinationSchema)
        lastNewKeys[table] = last + 1
        return last + 1
    }

    private func insertStatement(for entity: EntityDescription) throws -> (Statement, [String]) {
        if let cached = insertStatements[entity.name] { return cached }
        let layout = destinationLayout
        var columns = entity.attributes.map(\.name)
        var stored = [layout.dialect.quote(layout.keyColumn)] + columns.map { layout.quotedColumn(forAttribute: $0, in: entity) }
        for relationship in entity.relationships {
            if case .foreignKey(let column) = layout.storage(of: relationship, in: entity, model: destination) {
                columns.append(column)
                stored.append(layout.dialect.quote(column))
            }
        }
        // Core Data's order columns after the keys, as ``EntityPlan/insertColumns`` has them.
        for relationship in entity.relationships {
            if let order = (layout as? CoreDataLayout)?.orderColumn(forForeignKeyOf: relationship, in: entity, model: destination) {
                columns.append(order)
                stored.append(layout.dialect.quote(order))
            }
        }
        // Core Data's Z_ENT and Z_OPT (a new object's) after the values, so the `?`s keep their numbers.
        let bookkeeping = CoreDataMigrationDestination.rowBookkeeping(of: entity, in: layout)
        stored += bookkeeping.map { layout.dialect.quote($0.column) }
        let marks = "VALUES (" + (Array(repeating: "?", count: columns.count + 1) + bookkeeping.map(\.value)).joined(separator: ", ") + ")"
        let statement = try connection.prepare(
            layout.dialect.insert(into: destinationTable(layout.table(for: entity)), columns: stored, values: marks, onConflict: .fail))
        insertStatements[entity.name] = (statement, columns)
        return (statement, columns)
    }

    /// For ``MigrationManager/mappedValues(forSource:mapping:)``.
    func mappedValues(forSource source: MigrationObject, mappingName: String) throws -> [String: Value] {
        guard let row = currentRow, row.mapping == mappingName, row.source == source.primaryKey else {
            throw FerryError(.migration, "mappedValues(forSource:) works for the source object being migrated by mapping \(mappingName) only")
        }
        return Dictionary(uniqueKeysWithValues: zip(row.columns, row.values))
    }

    /// For ``MigrationManager/insertDestinationInstance(_:forSource:mapping:)``.
    func insertDestination(_ values: [String: Value], forSource source: MigrationObject?, mappingName: String) throws -> MigrationObject {
        guard let entityMapping = mapping.entity(named: mappingName) else {
            throw FerryError(.migration, "no entity mapping named '\(mappingName)'")
        }
        var primaryKey: Int64? = nil
        if let source {
            // The first object made from a source object keeps its key (if it is free).
            let statement: Statement
            if let cached = keyTakenStatements[entityMapping.destination] {
                statement = cached
            } else {
                statement = try connection.prepare(
                    "SELECT 1 FROM \(destinationTable(destinationLayout.table(forEntityNamed: entityMapping.destination))) WHERE \(destinationKey) = ?")
                keyTakenStatements[entityMapping.destination] = statement
            }
            statement.reset()
            try statement.bind(source.primaryKey, at: 1)
            if try !statement.step() { primaryKey = source.primaryKey }
        }
        let key = try insert(values, mapping: entityMapping, primaryKey: primaryKey)
        if let source {
            try associate(source: source.primaryKey, destination: key, mapping: entityMapping.name)
        }
        managerInserts += 1
        computedValues.insert(entityMapping.destination)
        written[entityMapping.destination, default: 0] += 1
        return MigrationObject(entity: entityMapping.destination, primaryKey: key, values: values)
    }

    func associate(source: Int64, destination: Int64, mapping name: String) throws {
        let statement: Statement
        if let associateStatement {
            statement = associateStatement
        } else {
            statement = try connection.prepare("INSERT INTO links.assoc (mapping, source, destination) VALUES (?, ?, ?)")
            associateStatement = statement
        }
        statement.reset()
        try statement.bind([.text(name), .integer(source), .integer(destination)])
        try statement.step()
    }

    func destinationKeys(forMapping name: String, sources: [Int64]) throws -> [Int64] {
        guard let entityMapping = mapping.entity(named: name) else { throw FerryError(.migration, "no entity mapping named '\(name)'") }
        if isIdentity(entityMapping) { return sources }
        var keys: [Int64] = []
        let statement = try connection.prepare("SELECT destination FROM links.assoc WHERE mapping = ? AND source = ?")
        for source in sources {
            statement.reset()
            try statement.bind([.text(entityMapping.name), .integer(source)])
            while try statement.step() { keys.append(statement.int64(at: 0)) }
        }
        return keys
    }

    func sourceKeys(forMapping name: String, destinations: [Int64]) throws -> [Int64] {
        guard let entityMapping = mapping.entity(named: name) else { throw FerryError(.migration, "no entity mapping named '\(name)'") }
        if isIdentity(entityMapping) { return destinations }
        var keys: [Int64] = []
        let statement = try connection.prepare("SELECT source FROM links.assoc WHERE mapping = ? AND destination = ?")
        for destination in destinations {
            statement.reset()
            try statement.bind([.text(entityMapping.name), .integer(destination)])
            while try statement.step() { keys.append(statement.int64(at: 0)) }
        }
        return keys
    }

    func setRelationship(_ relationship: String, entity: String, key: Int64, target: Int64?) throws {
        guard let destinationEntity = destination.entity(named: entity), let description = destinationEntity.relationship(named: relationship) else {
            throw FerryError(.migration, "\(entity) has no relationship '\(relationship)'")
        }
        let quote = destinationLayout.dialect.quote
        switch destinationLayout.storage(of: description, in: destinationEntity, model: destination) {
        case .foreignKey(let column):
            try connection.execute(
                "UPDATE \(destinationTable(destinationLayout.table(for: destinationEntity))) SET \(quote(column)) = ? WHERE \(destinationKey) = ?",
                [target.map { .integer($0) } ?? .null, .integer(key)])
        case .inverseForeignKey(let table, let column):
            guard let target else { break }
            try connection.execute(
                "UPDATE \(destinationTable(table)) SET \(quote(column)) = ? WHERE \(destinationKey) = ?", [.integer(key), .integer(target)])
        case .joinTable(let table, let sourceColumn, let targetColumn):
            guard let target else { break }
            try connection.execute(
                destinationLayout.dialect.insert(
                    into: destinationTable(table), columns: [quote(sourceColumn), quote(targetColumn)], values: "VALUES (?, ?)", onConflict: .ignore),
                [.integer(key), .integer(target)])
        }
    }

    /// True when the mapping keeps every object's primary key (one object per source object).
    func isIdentity(_ entityMapping: MappingModel.EntityMapping) -> Bool {
        entityMapping.source != nil && entityMapping.distinct == nil && entityMapping.policy == nil
    }

    private func forEachDestination(of entityMapping: MappingModel.EntityMapping, _ body: (MigrationObject) throws -> Void) throws {
        let statement = try connection.prepare("SELECT destination FROM links.assoc WHERE mapping = ? ORDER BY destination")
        try statement.bind([.text(entityMapping.name)])
        var keys: [Int64] = []
        while try statement.step() { keys.append(statement.int64(at: 0)) }
        for key in keys {
            try body(MigrationObject(entity: entityMapping.destination, primaryKey: key, values: [:]))
        }
    }

    func context(for entityMapping: MappingModel.EntityMapping) throws -> MappingContext {
        guard let destinationEntity = destination.entity(named: entityMapping.destination) else {
            throw FerryError(.migration, "the destination model has no entity '\(entityMapping.destination)'")
        }
        return MappingContext(
            name: entityMapping.name, source: entityMapping.source.flatMap { source.entity(named: $0) }, destination: destinationEntity,
            sourceModel: source, destinationModel: destination)
    }

    /// Builds the destination's indexes once its data is in: a sort per index instead of a
    /// b-tree update per row. A uniqueness constraint the migrated objects break fails here.
    private func buildIndexes() throws {
        for statement in StoreSchema.indexStatements(for: destination, layout: destinationLayout, schema: Self.destinationSchema) {
            do {
                try connection.execute(statement)
            } catch let error as FerryError {
                guard let result = error.underlying as? SQLiteResult, result.isConstraint else { throw error }
                let detail = error.message.components(separatedBy: "constraint failed: ").last ?? error.message
                throw FerryError(
                    .migration, "the migrated objects break a uniqueness constraint: two or more have the same \(detail)",
                    notes: ["nothing was changed: the original store is as it was"], underlying: error.underlying)
            }
        }
    }

    // MARK: - Many-to-many links

    /// Join tables of the destination: links carried from the source relationship, between the
    /// objects made from the linked source objects.
    private func writeLinksOfManyToMany() throws {
        var done: Set<String> = []
        for entityMapping in mapping.entities {
            guard let sourceName = entityMapping.source, let sourceEntity = source.entity(named: sourceName),
                let destinationEntity = destination.entity(named: entityMapping.destination)
            else { continue }
            for relationshipMapping in entityMapping.relationships {
                guard case .carry(let sourceRelationshipName) = relationshipMapping.value,
                    let relationship = destinationEntity.relationship(named: relationshipMapping.destination),
                    case .joinTable(let table, let sourceColumn, let targetColumn) = destinationLayout.storage(of: relationship, in: destinationEntity, model: destination),
                    !done.contains(table),
                    let sourceRelationship = sourceEntity.relationship(named: sourceRelationshipName)
                else { continue }
                done.insert(table)
                // The join table holds the links of every entity of the hierarchy that has the
                // relationship: owners are objects of the entity that declares it.
                let sourceOwner = Self.declaring(sourceRelationshipName, of: sourceEntity, in: source)
                let destinationOwner = Self.declaring(relationship.name, of: destinationEntity, in: destination)
                let pairs = EntityPlan.pairsSQL(of: sourceRelationship, in: sourceOwner, model: source, layout: sourceLayout)
                let owner = try mappedKeySQL("p.owner", entity: destinationOwner.name, sourceEntity: sourceOwner.name)
                let target = try mappedKeySQL("p.target", entity: relationship.destination, sourceEntity: sourceRelationship.destination)
                let quote = destinationLayout.dialect.quote
                try connection.execute(
                    destinationLayout.dialect.insert(
                        into: destinationTable(table), columns: [quote(sourceColumn), quote(targetColumn)],
                        values: "SELECT \(owner.text), \(target.text) FROM (\(pairs)) AS p WHERE \(owner.text) IS NOT NULL AND \(target.text) IS NOT NULL",
                        onConflict: .ignore),
                    owner.arguments + target.arguments + owner.arguments + target.arguments)
            }
        }
    }

    /// The topmost of `entity` and its ancestors that has the relationship named `name` (the
    /// one declaring it; sub-entities list it too, with their inherited properties).
    static func declaring(_ name: String, of entity: EntityDescription, in model: ObjectModel) -> EntityDescription {
        model.ancestors(of: entity).last { $0.relationship(named: name) != nil } ?? entity
    }

    /// SQL giving the destination key of the object made from the source object whose key is
    /// `expression`, for objects of `sourceEntity` migrated into `entity`. In a hierarchy the
    /// linked object may be of a sub-entity: every mapping from `sourceEntity` or one of its
    /// sub-entities into `entity` or one of its sub-entities may have made it.
    func mappedKeySQL(_ expression: String, entity: String, sourceEntity: String) throws -> EntityPlan.SQLText {
        let candidates = mapping.entities.filter { candidate in
            guard let from = candidate.source else { return false }
            return destination.isKind(candidate.destination, of: entity) && source.isKind(from, of: sourceEntity)
        }
        guard !candidates.isEmpty else { return EntityPlan.SQLText(text: "NULL", arguments: []) }
        let identities = candidates.filter(isIdentity)
        let kept: String?
        let copied = Set(identities.compactMap(\.source))
        let everyKindCopied = source.entities.allSatisfy { !source.isKind($0.name, of: sourceEntity) || copied.contains($0.name) }
        // Objects kept one to one keep their keys. A filter may have left some out, which then
        // are not there: point at nothing rather than dangle.
        let present = "(SELECT \(destinationKey) FROM \(destinationTable(destinationLayout.table(forEntityNamed: entity))) WHERE \(destinationKey) = \(expression))"
        if identities.isEmpty {
            kept = nil
        } else if identities.contains(where: { $0.filter != nil }) {
            kept = present
        } else if everyKindCopied {
            // The entity and each of its sub-entities are copied one to one: every key is kept.
            kept = expression
        } else {
            // Other entities of the source hierarchy are made anew or leave the hierarchy: the
            // key is kept for source objects of the entities copied one to one, told apart by
            // their entity numbers (whichever mapping runs first).
            let filters = identities.compactMap { $0.source.flatMap(source.entity(named:)).flatMap { sourceLayout.entityFilter(for: $0) } }
            if filters.count == identities.count, let column = filters.first?.column {
                let quote = sourceLayout.dialect.quote
                let sourceKey = quote(sourceLayout.keyColumn)
                let table = sourceLayout.dialect.qualified(sourceLayout.table(forEntityNamed: sourceEntity), in: Self.sourceSchema)
                let own = filters.compactMap(\.values.first).map(String.init).joined(separator: ", ")
                kept = "(SELECT s.\(sourceKey) FROM \(table) AS s WHERE s.\(sourceKey) = \(expression) AND s.\(quote(column)) IN (\(own)))"
            } else {
                kept = present
            }
        }
        let made = candidates.filter { !isIdentity($0) }
        guard !made.isEmpty else { return EntityPlan.SQLText(text: kept ?? "NULL", arguments: []) }
        let marks = Array(repeating: "?", count: made.count).joined(separator: ", ")
        let associated = "(SELECT destination FROM links.assoc WHERE mapping IN (\(marks)) AND source = \(expression) LIMIT 1)"
        return EntityPlan.SQLText(text: kept.map { "COALESCE(\(associated), \($0))" } ?? associated, arguments: made.map { .text($0.name) })
    }

    // MARK: - History and verification

    /// Carries the source's run log into the new store and records the migration in it.
    private func carryRunHistory(started: ContinuousClock.Instant) throws {
        guard let log = RunLog(on: connection, layout: destinationLayout, schema: Self.destinationSchema) else { return }
        if let sourceLog = RunLog(on: connection, layout: sourceLayout, schema: Self.sourceSchema) {
            try log.copy(from: sourceLog)
        }
        try log.record(RunRecord(
            job: "ferry migrate", step: "migrate", source: sourcePath, startedAt: DateCoding.format(now), endedAt: DateCoding.nowText(),
            outcome: "succeeded", read: reports.reduce(0) { $0 + $1.read }, inserted: reports.reduce(0) { $0 + $1.written },
            message: "\(source.name) version \(source.version) → \(destination.version)"))
    }

    /// Checks the new store before it may replace anything: objects per entity, integrity,
    /// foreign keys, uniqueness, and validation rules that may no longer hold. In ferry's layout
    /// required values and links need no scan: the new file's own NOT NULL columns and foreign
    /// keys refused a nil or a dangling key while it was written. Core Data's tables declare
    /// neither, so a Core Data store's required values, links and value forms are checked here.
    private func verifyDestination() throws {
        let store = try destinationKind.open(at: destinationPath, model: destination)
        var checks: [Check] = [.integrity(quick: false), .foreignKeys(entity: nil)]
        let undeclaredConstraints: Bool
        if case .coreData = destinationKind { undeclaredConstraints = true } else { undeclaredConstraints = false }
        for entity in destination.entities {
            // An entity's objects include its sub-entities' (as Core Data counts them).
            let expected = destination.entities.filter { destination.isKind($0.name, of: entity.name) }.reduce(0) { $0 + written[$1.name, default: 0] }
            checks.append(.count(entity: entity.name, expectation: .exactly(expected), basis: "objects the mappings wrote"))
            checks.append(.uniqueness(entity: entity.name))
            if undeclaredConstraints {
                checks.append(.required(entity: entity.name))
                // Values copied in their stored form are as well-typed as in the source: only
                // rows with computed values (of the entity or a sub-entity) are scanned.
                if destination.entities.contains(where: { computedValues.contains($0.name) && destination.isKind($0.name, of: entity.name) }) {
                    checks.append(.types(entity: entity.name))
                }
                checks.append(.relationships(entity: entity.name))
            }
            if mayBreakValidationRules(entity) { checks.append(.validationRules(entity: entity.name)) }
        }
        let report = Verifier(model: destination).run(checks, on: store, name: "migration \(source.version) → \(destination.version)")
        if let failure = report.failure {
            var notes = failure.notes
            for result in report.failedResults {
                for record in result.offending.prefix(5) {
                    notes.append("\(result.name): \(record.summaryLine)")
                }
            }
            throw FerryError(
                .migration, "the migrated store failed verification: \(failure.message)", notes: notes + ["nothing was changed: the original store is as it was"])
        }
    }

    /// True when some value of the entity may break its validation rules: a rule that is new or
    /// tightened for a copied attribute, or a rule on a value the mapping or a policy computes.
    /// Values copied under the same rules were checked when they were stored, so they are not
    /// scanned again.
    private func mayBreakValidationRules(_ entity: EntityDescription) -> Bool {
        let mappings = mapping.entities.filter { $0.destination == entity.name }
        for attribute in entity.attributes where attribute.validation != ValidationRules() {
            for entityMapping in mappings {
                guard entityMapping.policy == nil, case .copy(let sourceName, nil, _)? = entityMapping.attribute(named: attribute.name)?.value,
                    let sourceEntity = entityMapping.source.flatMap({ source.entity(named: $0) }),
                    sourceEntity.attribute(named: sourceName)?.validation == attribute.validation
                else { return true }
            }
        }
        return false
    }

    /// For each entity mapping that keeps its objects one to one, the attributes copied as they
    /// are must have the same order-independent checksum before and after; the others are listed
    /// as not comparable.
    private func compareChecksums() throws {
        let sourceConnection = try Connection(path: Self.readOnlyURI(sourcePath), readOnly: false, create: true)
        let destinationConnection = try Connection(path: destinationPath, create: false)
        for (index, report) in reports.enumerated() {
            guard let entityMapping = mapping.entity(named: report.mapping), let sourceName = entityMapping.source else { continue }
            var sourceAttributes: [String] = []
            var destinationAttributes: [String] = []
            var notComparable: [String] = []
            let sourceEntity = source.entity(named: sourceName)
            for attribute in entityMapping.attributes {
                // A default for nil changes nothing when the source attribute can never be nil.
                if case .copy(let from, let conversion, let valueIfNil) = attribute.value, conversion == nil,
                    valueIfNil.isNull || sourceEntity?.attribute(named: from)?.isOptional == false
                {
                    sourceAttributes.append(from)
                    destinationAttributes.append(attribute.destination)
                } else {
                    notComparable.append(attribute.destination)
                }
            }
            guard isIdentity(entityMapping), entityMapping.filter == nil else {
                reports[index].notComparable = entityMapping.attributes.map(\.destination)
                reports[index].unchanged = []
                continue
            }
            let before = try EntityChecksum.compute(
                connection: sourceConnection, model: source, layout: sourceLayout, entity: sourceName, attributes: sourceAttributes, ownObjectsOnly: true)
            let after = try EntityChecksum.compute(
                connection: destinationConnection, model: destination, layout: destinationLayout, entity: entityMapping.destination, attributes: destinationAttributes,
                ownObjectsOnly: true)
            guard before.matches(after) else {
                throw FerryError(
                    .migration,
                    "mapping \(entityMapping.name): the values of \(destinationAttributes.joined(separator: ", ")) changed during the migration (checksum \(before.value) over \(before.rows) objects before, \(after.value) over \(after.rows) after)",
                    at: entityMapping.location, notes: ["nothing was changed: the original store is as it was"])
            }
            reports[index].unchanged = destinationAttributes
            reports[index].notComparable = notComparable
        }
    }

    /// A store in WAL mode stays in WAL mode (the mode is recorded in the file's header).
    private func keepJournalMode() throws {
        let mode = try Connection(path: Self.readOnlyURI(sourcePath), readOnly: false, create: true).scalar("PRAGMA journal_mode")
        guard mode?.text?.lowercased() == "wal" else { return }
        let destination = try Connection(path: destinationPath, create: false)
        _ = try destination.scalar("PRAGMA journal_mode = WAL")
    }

    /// A read-only URI for `path`; a `file:` URI (a plan's in-place read) as it is.
    static func readOnlyURI(_ path: String) -> String { path.hasPrefix("file:") ? path : uri(path, mode: "ro") }

    /// A `file:` URI for a path (escaped), opening it in `mode` (`ro`, `rw`, `rwc`).
    static func uri(_ path: String, mode: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute) + "?mode=\(mode)"
    }
}

/// Hands an expression the values of its key paths from a selected row.
struct SlotContext: ExpressionContext {
    let row: [Value]
    let slots: [Int]
    let entity: String
    let key: Int64

    func value(atSlot slot: Int) -> Value { row[slots[slot]] }
    /// Built only when an error needs it (not once per row).
    var objectDescription: String? { "\(entity) \(key)" }
}

