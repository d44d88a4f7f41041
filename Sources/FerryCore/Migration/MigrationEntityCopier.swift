/// Carries out the entity mappings of one step: each as one `INSERT … SELECT` when its values
/// are expressible in SQL, else row by row (values computed in Swift, distinct values, custom
/// policies), and reports what each mapping read and wrote.
final class MigrationEntityCopier {
    private let scope: MigrationStepScope
    private let connection: Connection
    private let writer: MigrationObjectWriter
    private let manager: MigrationManager
    private weak var observer: (any MigrationObserver)?
    /// One report per entity mapping, in the order they ran.
    private(set) var reports: [MigrationStepReport.EntityReport] = []

    init(
        scope: MigrationStepScope, connection: Connection, writer: MigrationObjectWriter, manager: MigrationManager,
        observer: (any MigrationObserver)?
    ) {
        self.scope = scope
        self.connection = connection
        self.writer = writer
        self.manager = manager
        self.observer = observer
    }

    private var source: ObjectModel { scope.source }
    private var destination: ObjectModel { scope.destination }

    /// Migrates the objects of one entity mapping.
    func migrate(_ entityMapping: MappingModel.EntityMapping, policy: (any EntityMigrationPolicy)?) throws {
        let started = ContinuousClock.now
        guard let destinationEntity = destination.entity(named: entityMapping.destination) else {
            throw FerryError(
                .migration,
                "mapping \(entityMapping.name): the destination model has no entity '\(entityMapping.destination)'",
                at: entityMapping.location)
        }
        var report = MigrationStepReport.EntityReport(
            mapping: entityMapping.name, destination: destinationEntity.name, source: entityMapping.source)
        // Objects policies insert through the manager are counted for their own entity there.
        let managerInsertsBefore = writer.managerInserts
        let writtenBefore = writer.written[destinationEntity.name, default: 0]
        defer {
            report.seconds = started.duration(to: .now).seconds
            reports.append(report)
        }
        guard let sourceName = entityMapping.source else {
            // A new entity starts empty (a policy may still create objects in its begin hook).
            if let policy {
                let context = try writer.context(for: entityMapping)
                try policy.begin(mapping: context, manager: manager)
                try policy.endInstanceCreation(mapping: context, manager: manager)
                try writer.flushAssociations()
            }
            return
        }
        guard let sourceEntity = source.entity(named: sourceName) else {
            throw FerryError(
                .migration, "mapping \(entityMapping.name): the source model has no entity '\(sourceName)'",
                at: entityMapping.location)
        }
        let plan = try EntityPlan(
            mapping: entityMapping, source: sourceEntity, destination: destinationEntity, step: scope)
        observer?.migrationEntityStarted(entityMapping.name)
        if let sql = plan.setBasedSQL(hasPolicy: policy != nil) {
            if !plan.copiesStoredForms { writer.noteComputedValues(of: destinationEntity.name) }
            try execute(sql, entityMapping: entityMapping)
            let count = connection.changes
            report.read = count
            report.written = count
        } else {
            writer.noteComputedValues(of: destinationEntity.name)
            (report.read, report.written) = try migrateRows(plan, policy: policy)
        }
        writer.count(report.written - (writer.managerInserts - managerInsertsBefore), of: destinationEntity.name)
        report.written = writer.written[destinationEntity.name, default: 0] - writtenBefore
        if scope.writesCoreData {
            try CoreDataMigrationDestination.checkNotAbstract(
                destinationEntity, written: report.written, by: entityMapping)
        }
        observer?.migrationProgress(mapping: entityMapping.name, processed: report.read)
    }

    /// Objects a policy made for another entity (a Post policy's Sections) are reported under
    /// the first mapping into that entity.
    func creditObjectsMadeByOtherMappings() {
        for (entity, count) in writer.written {
            let reported = reports.filter { $0.destination == entity }.reduce(0) { $0 + $1.written }
            guard count > reported, let index = reports.firstIndex(where: { $0.destination == entity }) else {
                continue
            }
            reports[index].written += count - reported
        }
    }

    /// Runs a statement, turning constraint failures into migration errors that name the mapping.
    private func execute(_ sql: EntityPlan.SQLText, entityMapping: MappingModel.EntityMapping) throws {
        do {
            try connection.execute(sql.text, sql.arguments)
        } catch let error as FerryError {
            throw MigrationStepScope.wrap(error, mapping: entityMapping)
        }
    }

    /// The row path: values computed in Swift (expressions SQL cannot express exactly, distinct
    /// values, custom policies). Returns (source objects read, destination objects written).
    private func migrateRows(_ plan: EntityPlan, policy: (any EntityMigrationPolicy)?) throws -> (Int, Int) {
        let entityMapping = plan.mapping
        let context = try writer.context(for: entityMapping, sourceColumns: plan.sourceObjectColumns)
        // Policies get the mapped values at the positions of the context's destination columns.
        let destinationColumns = context.destinationColumns
        guard destinationColumns.names == plan.insertColumns else {
            throw FerryError(
                .migration,
                "mapping \(entityMapping.name): the row path's columns (\(plan.insertColumns.joined(separator: ", "))) are not the inserts' (\(destinationColumns))"
            )
        }
        let destinationCoding = writer.destinationCoding
        manager.startMapping()
        if let policy { try policy.begin(mapping: context, manager: manager) }
        let select = try connection.prepare(plan.selectSQL.text)
        try select.bind(plan.selectSQL.arguments)
        var read = 0
        var distinctLookup: Statement?
        var distinctInsert: Statement?
        if plan.distinct != nil {
            let table = "distinct_\(scope.mapping.entities.firstIndex { $0.name == entityMapping.name } ?? 0)"
            try connection.execute(
                "CREATE TABLE IF NOT EXISTS links.\(table) (key PRIMARY KEY, destination INTEGER NOT NULL)")
            distinctLookup = try connection.prepare("SELECT destination FROM links.\(table) WHERE key = ?")
            distinctInsert = try connection.prepare("INSERT INTO links.\(table) (key, destination) VALUES (?, ?)")
        }
        var createdHere = 0
        let insertsBefore = writer.managerInserts
        // A policy whose rows can be read value by value gets them so (the loop below decodes
        // every row in full).
        var lazyRows =
            policy != nil && plan.distinct == nil
            ? LazyPolicyRows(
                plan: plan, select: select, coding: destinationCoding, destinationColumns: destinationColumns)
            : nil
        let readsLazily = lazyRows != nil
        if let policy, readsLazily {
            while try select.step() {
                read += 1
                try lazyRows?.callPolicy(
                    policy, key: select.int64(at: 0), plan: plan, context: context, writer: writer, manager: manager)
                if read & 4095 == 0 { observer?.migrationProgress(mapping: entityMapping.name, processed: read) }
                try manager.didProcess()
            }
        }
        while !readsLazily, try select.step() {
            read += 1
            let sourceKey = select.int64(at: 0)
            let row = plan.decodeRow(select)
            let values = try plan.destinationRow(row: row, sourceKey: sourceKey)
            if let distinct = plan.distinct, let distinctLookup, let distinctInsert {
                // One destination object per distinct non-nil value; every source object with
                // that value is associated with it.
                let value = try distinct.evaluate(
                    on: SlotContext(row: row, slots: plan.distinctSlots, entity: plan.source.name, key: sourceKey))
                if value.isNull { continue }
                let encoded = destinationCoding.encode(value)
                distinctLookup.reset()
                try distinctLookup.bind(encoded, at: 1)
                if try distinctLookup.step() {
                    try writer.associate(
                        source: sourceKey, destination: distinctLookup.int64(at: 0), mapping: entityMapping.name)
                    continue
                }
                let created = try writer.insert(values, mapping: entityMapping, primaryKey: nil)
                distinctInsert.reset()
                try distinctInsert.bind([encoded, .integer(created)])
                try distinctInsert.step()
                try writer.associate(source: sourceKey, destination: created, mapping: entityMapping.name)
                createdHere += 1
            } else if let policy {
                try writer.withCurrentRow(
                    mapping: entityMapping.name, source: sourceKey,
                    row: MigrationRow(columns: destinationColumns, storage: values)
                ) {
                    try policy.createDestinationInstances(
                        forSource: plan.sourceObject(row: row, key: sourceKey), mapping: context, manager: manager)
                }
            } else {
                _ = try writer.insert(values, mapping: entityMapping, primaryKey: sourceKey)
                createdHere += 1
            }
            if read & 4095 == 0 { observer?.migrationProgress(mapping: entityMapping.name, processed: read) }
            try manager.didProcess()
        }
        if let policy { try policy.endInstanceCreation(mapping: context, manager: manager) }
        // Later mappings' SQL reads the associations.
        try writer.flushAssociations()
        return (read, createdHere + writer.managerInserts - insertsBefore)
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

/// The row path of a policy mapping whose rows can be read value by value
/// (``EntityPlan/lazyRows``): the source object and the mapped destination row read the
/// selected row only where the policy reads them, and the values it leaves alone are bound in
/// their stored form.
private struct LazyPolicyRows {
    private var sourceValues: SelectedRowValues
    private var destinationValues: SelectedRowValues
    private let sourceTemplate: [Value]
    private let destinationTemplate: [Value]
    private let sourcePending: UInt64
    private let destinationPending: UInt64
    private let destinationColumns: MigrationColumns

    init?(plan: EntityPlan, select: Statement, coding: DispatchedValueCoding, destinationColumns: MigrationColumns) {
        guard let slots = plan.lazyRows else { return nil }
        sourceValues = SelectedRowValues(statement: select, coding: coding, slots: slots.source)
        destinationValues = SelectedRowValues(statement: select, coding: coding, slots: slots.destination)
        sourceTemplate = Array(repeating: .null, count: slots.source.count)
        destinationTemplate = slots.constants
        sourcePending = sourceValues.pendingMask
        destinationPending = destinationValues.pendingMask
        self.destinationColumns = destinationColumns
    }

    /// Calls the policy for the object on the query's current row; the rows it kept beyond the
    /// call are decoded before the query moves on.
    mutating func callPolicy(
        _ policy: any EntityMigrationPolicy, key: Int64, plan: EntityPlan, context: MappingContext,
        writer: MigrationObjectWriter, manager: MigrationManager
    ) throws {
        try call(policy, key: key, plan: plan, context: context, writer: writer, manager: manager)
        // Only this struct refers to them now, unless the policy kept a row.
        if !isKnownUniquelyReferenced(&sourceValues) {
            sourceValues.detach()
            sourceValues = sourceValues.renewed()
        }
        if !isKnownUniquelyReferenced(&destinationValues) {
            destinationValues.detach()
            destinationValues = destinationValues.renewed()
        }
    }

    /// The call itself: the rows it makes are gone when it returns.
    private func call(
        _ policy: any EntityMigrationPolicy, key: Int64, plan: EntityPlan, context: MappingContext,
        writer: MigrationObjectWriter, manager: MigrationManager
    ) throws {
        var sourceStorage = sourceTemplate
        sourceStorage[0] = .integer(key)
        let source = MigrationObject(
            entity: plan.source.name, primaryKey: key,
            row: MigrationRow(
                columns: plan.sourceObjectColumns, storage: sourceStorage, pending: sourcePending,
                selected: sourceValues))
        let row = MigrationRow(
            columns: destinationColumns, storage: destinationTemplate, pending: destinationPending,
            selected: destinationValues)
        try writer.withCurrentRow(mapping: plan.mapping.name, source: key, row: row) {
            try policy.createDestinationInstances(forSource: source, mapping: context, manager: manager)
        }
    }
}
