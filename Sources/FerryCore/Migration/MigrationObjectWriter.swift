/// What a ``MigrationManager`` asks of the step it belongs to: the writes and look-ups policies
/// make. The manager holds its writer; the writer knows nothing of the manager or the runner.
protocol MigrationWriting: AnyObject {
    /// For ``MigrationManager/mappedRow(forSource:mapping:)`` (and the dictionary of
    /// ``MigrationManager/mappedValues(forSource:mapping:)``).
    func mappedRow(forSource source: MigrationObject, mappingName: String) throws -> MigrationRow
    /// For ``MigrationManager/emptyRow(forMappingNamed:)``.
    func destinationColumns(forMapping name: String) throws -> MigrationColumns
    /// For ``MigrationManager/insertDestinationInstance(_:forSource:mapping:)``.
    func insertDestination(
        _ values: [String: Value], forSource source: MigrationObject?, mappingName: String
    ) throws -> MigrationObject
    /// For ``MigrationManager/insertDestinationRow(_:forSource:mapping:)``.
    func insertDestination(
        _ row: MigrationRow, forSource source: MigrationObject?, mappingName: String
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
    /// Objects written per destination entity, to verify the counts: those counted here, and
    /// those policies inserted (counted on each entity's insert, not in a dictionary per object).
    var written: [String: Int] {
        var all = counted
        for (entity, target) in insertStatements where target.inserted > 0 {
            all[entity, default: 0] += target.inserted
        }
        return all
    }
    private var counted: [String: Int] = [:]
    /// Objects inserted through the manager (by policies).
    private(set) var managerInserts = 0
    /// Destination entities some of whose values ferry computed or converted (not only copied
    /// in their stored form, ``EntityPlan/copiesStoredForms``): their value forms are verified.
    private(set) var computedValues: Set<String> = []
    /// Core Data's shared tables: the last key given to a new object per destination table
    /// (``CoreDataMigrationDestination/newKeyFloor(table:identities:sourceLayout:destinationLayout:on:sourceSchema:destinationSchema:)``).
    private var lastNewKeys: [String: Int64] = [:]
    /// The row being migrated by the row path (for ``mappedRow(forSource:mappingName:)``).
    private var currentRow: (mapping: String, source: Int64, row: MigrationRow)?
    /// Per destination entity (by name): the columns its inserts' `?`s take after the key (one
    /// instance per entity: rows of these columns are bound by position).
    private var columns: [String: MigrationColumns] = [:]
    /// Per destination entity (by name): its insert, its columns and the entity (looked up
    /// once: policies insert through here for every object).
    private var insertStatements: [String: InsertTarget] = [:]
    /// Per entity mapping name as policies give it: the mapping and its insert (the last one
    /// used is checked first: a policy inserts for its own mapping, object after object).
    private var mappingTargets: [String: MappingTarget] = [:]
    private var lastMappingTarget: MappingTarget?
    /// Prepared once per step: policies call these for every object.
    /// Associations not yet written: they go to `links.assoc` in bulk, before anything reads it.
    private var pendingAssociations: [(mapping: String, source: Int64, destination: Int64)] = []
    /// Writes ``associationBatch`` pending associations with one statement.
    private var associateStatement: Statement?
    /// Rows per bulk association insert (3 parameters each, well under SQLite's limit).
    static let associationBatch = 256
    /// Per entity mapping name: the associations of objects that kept their source object's key,
    /// as key ranges, for mappings whose associations no SQL of the step reads (nil for the others:
    /// their associations are rows of `links.assoc`).
    private var keptKeys: [String: KeptKeyRanges?] = [:]

    init(connection: Connection, scope: MigrationStepScope) {
        self.connection = connection
        self.scope = scope
        self.destinationCoding = DispatchedValueCoding(scope.destinationLayout.valueCoding)
    }

    private var destination: ObjectModel { scope.destination }

    /// Finalizes the prepared statements (the destination cannot be detached while they live).
    func releaseStatements() {
        counted = written
        insertStatements.removeAll()
        mappingTargets.removeAll()
        lastMappingTarget = nil
        associateStatement = nil
    }

    /// Notes that ferry computed or converted some values of `entity`'s objects.
    func noteComputedValues(of entity: String) {
        computedValues.insert(entity)
    }

    /// Adds objects some mapping wrote set-based (`INSERT … SELECT`) to the counts.
    func count(_ objects: Int, of entity: String) {
        counted[entity, default: 0] += objects
    }

    /// Runs `body` (a policy's `createDestinationInstances`) with the row that
    /// ``mappedRow(forSource:mappingName:)`` hands out.
    func withCurrentRow(mapping: String, source: Int64, row: MigrationRow, _ body: () throws -> Void) rethrows {
        currentRow = (mapping, source, row)
        defer { currentRow = nil }
        try body()
    }

    /// Inserts one destination object from values in the insert statement's column order;
    /// `primaryKey` nil lets SQLite choose a new one.
    ///
    /// - Parameter keyIfFree: with a `primaryKey`, a new key instead when another object of the
    ///   table has that one already (no query first: the insert itself tells).
    func insert(
        _ values: [Value], mapping entityMapping: MappingModel.EntityMapping, primaryKey: Int64?,
        keyIfFree: Bool = false
    ) throws -> Int64 {
        let target = try insertStatement(forEntityNamed: entityMapping.destination)
        return try insert(into: target, mapping: entityMapping, primaryKey: primaryKey, keyIfFree: keyIfFree) {
            statement, coding in
            for (offset, value) in values.enumerated() {
                try coding.bind(value, to: statement, at: offset + 2)
            }
        }
    }

    /// Inserts one destination object whose values `bindValues` binds (from `?` number 2 on:
    /// the first is the key).
    private func insert(
        into target: InsertTarget, mapping entityMapping: MappingModel.EntityMapping, primaryKey: Int64?,
        keyIfFree: Bool, _ bindValues: (Statement, DispatchedValueCoding) throws -> Void
    ) throws -> Int64 {
        let statement = target.statement
        let entity = target.entity
        statement.reset()
        if let primaryKey {
            try statement.bind(primaryKey, at: 1)
        } else {
            try bindNewKey(for: entity, to: statement)
        }
        try bindValues(statement, destinationCoding)
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

    /// The columns (after the key) of the destination entity's inserts, by name, and as stored.
    private func insertColumns(of entity: EntityDescription) -> (names: [String], stored: [String]) {
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
        return (columns, stored)
    }

    /// The positions of the destination entity's values (the columns its inserts take after the
    /// key): one instance per entity, so rows made with them are bound by position.
    func destinationColumns(of entity: EntityDescription) -> MigrationColumns {
        if let cached = columns[entity.name] { return cached }
        let made = MigrationColumns(names: insertColumns(of: entity).names)
        columns[entity.name] = made
        return made
    }

    /// What a policy is told about the entity mapping it runs for, with the positions of its
    /// rows: `sourceColumns` when given (the row path's selected rows), else the source entity's.
    func context(
        for entityMapping: MappingModel.EntityMapping, sourceColumns: MigrationColumns? = nil
    ) throws -> MappingContext {
        guard let destinationEntity = destination.entity(named: entityMapping.destination) else {
            throw FerryError(.migration, "the destination model has no entity '\(entityMapping.destination)'")
        }
        let sourceEntity = entityMapping.source.flatMap { scope.source.entity(named: $0) }
        let sourceNames =
            sourceEntity.map { EntityPlan.sourceColumnNames(of: $0, model: scope.source, layout: scope.sourceLayout) }
            ?? []
        return MappingContext(
            name: entityMapping.name, source: sourceEntity, destination: destinationEntity,
            sourceModel: scope.source, destinationModel: destination,
            sourceColumns: sourceColumns ?? MigrationColumns(names: sourceNames, offset: 1),
            destinationColumns: destinationColumns(of: destinationEntity))
    }

    private func insertStatement(forEntityNamed name: String) throws -> InsertTarget {
        if let cached = insertStatements[name] { return cached }
        guard let entity = destination.entity(named: name) else {
            throw FerryError(.migration, "the destination model has no entity '\(name)'")
        }
        let layout = scope.destinationLayout
        let planned = insertColumns(of: entity)
        let columns = planned.names
        var stored = planned.stored
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
        let target = InsertTarget(statement: statement, columns: destinationColumns(of: entity), entity: entity)
        insertStatements[name] = target
        return target
    }

    func mappedRow(forSource source: MigrationObject, mappingName: String) throws -> MigrationRow {
        guard let current = currentRow, current.mapping == mappingName, current.source == source.primaryKey else {
            throw FerryError(
                .migration,
                "mappedValues(forSource:) and mappedRow(forSource:) work for the source object being migrated by mapping \(mappingName) only"
            )
        }
        return current.row
    }

    /// The entity mapping a policy names and its insert (prepared on first use).
    private func mappingTarget(named name: String) throws -> MappingTarget {
        if let last = lastMappingTarget, last.name == name { return last }
        if let known = mappingTargets[name] {
            lastMappingTarget = known
            return known
        }
        guard let entityMapping = scope.mapping.entity(named: name) else {
            throw FerryError(.migration, "no entity mapping named '\(name)'")
        }
        let made = MappingTarget(
            name: name, mapping: entityMapping, insert: try insertStatement(forEntityNamed: entityMapping.destination),
            keptKeys: keptKeyRanges(of: entityMapping))
        mappingTargets[name] = made
        lastMappingTarget = made
        return made
    }

    func destinationColumns(forMapping name: String) throws -> MigrationColumns {
        try mappingTarget(named: name).insert.columns
    }

    func insertDestination(
        _ values: [String: Value], forSource source: MigrationObject?, mappingName: String
    ) throws -> MigrationObject {
        let target = try mappingTarget(named: mappingName)
        let columns = target.insert.columns
        let key = try insertDestination(for: target, forSource: source) { statement, coding in
            // A dictionary of mappedValues (changed in its values only) binds in its storage order.
            let positioned = try columns.forEachPositioned(in: values) { value, position in
                try coding.bind(value, to: statement, at: position + 2)
            }
            guard !positioned else { return }
            for (position, name) in columns.names.enumerated() {
                try coding.bind(values[name] ?? .null, to: statement, at: position + 2)
            }
        }
        return MigrationObject(entity: target.mapping.destination, primaryKey: key, values: values)
    }

    func insertDestination(
        _ row: MigrationRow, forSource source: MigrationObject?, mappingName: String
    ) throws -> MigrationObject {
        let target = try mappingTarget(named: mappingName)
        let columns = target.insert.columns
        let key = try insertDestination(for: target, forSource: source) { statement, coding in
            if row.columns === columns {
                // Values the policy neither read nor set go in as stored in the source.
                let selected = row.pending != 0 ? row.selected : nil
                for position in 0..<columns.count {
                    if let selected, row.isPending(position),
                        try selected.bindStored(at: columns.offset + position, to: statement, parameter: position + 2)
                    {
                        continue
                    }
                    try coding.bind(row[position], to: statement, at: position + 2)
                }
            } else {
                for (position, name) in columns.names.enumerated() {
                    try coding.bind(row[name], to: statement, at: position + 2)
                }
            }
        }
        return MigrationObject(entity: target.mapping.destination, primaryKey: key, row: row)
    }

    /// Inserts an object a policy made (its values bound by `bindValues`) and counts it; the
    /// first object made from a source object keeps its key (if it is free).
    private func insertDestination(
        for target: MappingTarget, forSource source: MigrationObject?,
        _ bindValues: (Statement, DispatchedValueCoding) throws -> Void
    ) throws -> Int64 {
        let entityMapping = target.mapping
        let key = try insert(
            into: target.insert, mapping: entityMapping, primaryKey: source?.primaryKey, keyIfFree: true, bindValues)
        if let source, !(key == source.primaryKey && target.keptKeys?.append(key) == true) {
            try associate(source: source.primaryKey, destination: key, mapping: entityMapping.name)
        }
        managerInserts += 1
        target.insert.inserted += 1
        if target.insert.inserted == 1 { computedValues.insert(entityMapping.destination) }
        return key
    }

    func associate(source: Int64, destination: Int64, mapping name: String) throws {
        if source == destination, let entityMapping = scope.mapping.entity(named: name),
            keptKeyRanges(of: entityMapping)?.append(source) == true
        {
            return
        }
        pendingAssociations.append((name, source, destination))
        if pendingAssociations.count >= Self.associationBatch { try flushAssociations() }
    }

    /// The kept-key ranges of an entity mapping whose associations no SQL of the step reads
    /// (``MigrationStepScope/sqlReadsAssociations(of:)``), made on first use; nil when SQL reads
    /// them, or for a mapping that keeps every key (its look-ups need no associations).
    private func keptKeyRanges(of entityMapping: MappingModel.EntityMapping) -> KeptKeyRanges? {
        if let known = keptKeys[entityMapping.name] { return known }
        let made =
            scope.isIdentity(entityMapping) || scope.sqlReadsAssociations(of: entityMapping) ? nil : KeptKeyRanges()
        keptKeys[entityMapping.name] = made
        return made
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
        // An object that kept its key is associated with itself, both ways.
        let kept = keptKeys[entityMapping.name] ?? nil
        var keys: [Int64] = []
        let statement = try connection.prepare("SELECT \(other) FROM links.assoc WHERE mapping = ? AND \(side) = ?")
        for key in given {
            if let kept, kept.contains(key) { keys.append(key) }
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
        if let kept = keptKeys[entityMapping.name] ?? nil, !kept.isEmpty {
            keys += kept.keys
            keys.sort()
        }
        for key in keys {
            try body(MigrationObject(entity: entityMapping.destination, primaryKey: key, values: [:]))
        }
        // What the relationship stage associated is written too.
        try flushAssociations()
    }
}

/// One destination entity's prepared insert, the columns its `?`s take after the key, and the
/// entity.
private final class InsertTarget {
    let statement: Statement
    let columns: MigrationColumns
    let entity: EntityDescription
    /// Objects policies inserted through this statement.
    var inserted = 0

    init(statement: Statement, columns: MigrationColumns, entity: EntityDescription) {
        self.statement = statement
        self.columns = columns
        self.entity = entity
    }
}

/// An entity mapping as a policy names it, with the insert of its destination entity.
private final class MappingTarget {
    let name: String
    let mapping: MappingModel.EntityMapping
    let insert: InsertTarget
    /// Where the mapping's kept-key associations go when no SQL reads them (else nil).
    let keptKeys: KeptKeyRanges?

    init(name: String, mapping: MappingModel.EntityMapping, insert: InsertTarget, keptKeys: KeptKeyRanges?) {
        self.name = name
        self.mapping = mapping
        self.insert = insert
        self.keptKeys = keptKeys
    }
}

/// The associations of one entity mapping between a source object and the destination object
/// that kept its key, as ascending, disjoint ranges of keys instead of rows of `links.assoc`
/// (a policy that makes one object per source object keeps every key: a handful of ranges
/// instead of a row and two index entries per object).
final class KeptKeyRanges {
    /// Ascending and disjoint, with a gap between neighbours.
    private(set) var ranges: [ClosedRange<Int64>] = []
    /// At most this many ranges (64 KiB): keys that would need more are written as rows.
    static let limit = 4096

    /// Records `key`; false, recording nothing, when it is not above every key recorded so far
    /// or a new range would pass the limit (the caller writes the association as a row).
    func append(_ key: Int64) -> Bool {
        if let last = ranges.last {
            guard key > last.upperBound else { return false }
            if key == last.upperBound + 1 {
                ranges[ranges.count - 1] = last.lowerBound...key
                return true
            }
        }
        guard ranges.count < Self.limit else { return false }
        ranges.append(key...key)
        return true
    }

    /// True when no key is recorded.
    var isEmpty: Bool { ranges.isEmpty }

    /// True when `key` is recorded.
    func contains(_ key: Int64) -> Bool {
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < key { low = middle + 1 } else { high = middle }
        }
        return low < ranges.count && ranges[low].contains(key)
    }

    /// Every recorded key, ascending.
    var keys: [Int64] { ranges.flatMap { Array($0) } }
}
