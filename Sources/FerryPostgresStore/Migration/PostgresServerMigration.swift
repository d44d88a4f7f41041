import FerryCore
import FerryPostgres
import Foundation

/// Builds the next version of a PostgreSQL store inside the server, from the store's schema `S`
/// into a new schema, when every version step can run there (`PostgresServerStep`): per step
/// the new model's tables without foreign keys or indexes, the rows through `INSERT … SELECT`
/// from schema to schema, the join tables, the run log carried and the migration recorded, the
/// identity sequences moved past the largest keys, then the indexes and foreign keys, checked
/// in bulk. A step between two versions builds a schema of its own (`S_next_1`, …), dropped once
/// the next step has read it.
///
/// Before anything may be swapped in, each step is verified in the server: per table the rows
/// the mappings wrote; per entity mapping that keeps its objects one to one, the source's
/// object count and an order-independent hash of every row's key, unchanged attributes and
/// to-one keys (the sum of `hash_record_extended` over the rows), computed on both schemas; per
/// join table the links. Everything runs in one
/// transaction on one session: a failure or a killed process leaves no new schema behind.
struct PostgresServerMigration {
    let steps: [PostgresServerStep]
    /// The store's URL as given (its password too: the checks open the new schema as a store).
    let storeURL: String
    let url: PostgresURL
    /// The store's schema.
    let schema: String
    let options: MigrationOptions
    weak var observer: (any MigrationObserver)?

    private var layout: FerryLayout { FerryLayout.postgreSQL }

    /// The sort memory of the migration's key and index builds (the server's default is 64 MB,
    /// shared by a parallel build's workers); `SET LOCAL`, so it ends with the transaction.
    private static let indexBuildMemory = "256MB"

    /// The intermediate schemas' names for the new version's schema `next`: one per step but the last.
    static func intermediateSchemas(for next: String, steps: Int) -> [String] {
        steps < 2 ? [] : (1..<steps).map { PostgresIdentifier.fitted(next, suffix: "_\($0)") }
    }

    /// Builds the schema `next` (which must not exist) and returns one report per step.
    func build(into next: String, now: Int64) throws -> [MigrationStepReport] {
        let session = try PostgresDatabase(url: url, schema: schema)
        let schemas = [schema] + Self.intermediateSchemas(for: next, steps: steps.count) + [next]
        var reports: [MigrationStepReport] = []
        try session.writeTransaction {
            for (index, step) in steps.enumerated() {
                observer?.migrationStepStarted(
                    index + 1, of: steps.count, from: step.source.version, to: step.destination.version)
                let report = try run(
                    step, from: schemas[index], into: schemas[index + 1], on: session, now: now)
                reports.append(report)
                if index > 0 { try session.execute("DROP SCHEMA \(quote(schemas[index])) CASCADE") }
            }
        }
        if let last = steps.last, let report = reports.last {
            do {
                try checkRules(of: last, in: next, report: report)
            } catch {
                try? session.execute("DROP SCHEMA IF EXISTS \(quote(next)) CASCADE")
                throw error
            }
        }
        return reports
    }

    /// The SQLite engine's checks of a step's new store (`MigrationStepVerifier`) on the
    /// schema `next`, once it is committed, when the step may break a validation rule: the rows
    /// whose values the rules no longer accept are listed as on SQLite.
    private func checkRules(of step: PostgresServerStep, in next: String, report: MigrationStepReport) throws {
        let mapping = step.mapping
        guard mapping.destination.entities.contains(where: { mapping.mayBreakValidationRules(of: $0) }) else {
            return
        }
        let copy = PostgresSchemaMigration.url(storeURL, schema: next)
        let store = try Store.open(at: copy, model: mapping.destination, options: .existingReadOnly)
        var written: [String: Int] = [:]
        for entity in report.entities { written[entity.destination, default: 0] += entity.written }
        do {
            try MigrationStepVerifier.verify(
                store, mapping: mapping, destinationKind: .ferry, written: written, computedValues: [])
        } catch var error as FerryError {
            let shown = "'\(store.path)'"
            let named = "the version \(mapping.destination.version) copy of '\(url.description)'"
            error.message = error.message.replacingOccurrences(of: shown, with: named)
            error.notes = error.notes.map { $0.replacingOccurrences(of: shown, with: named) }
            throw error
        }
    }

    private func quote(_ name: String) -> String { PostgresIdentifier.quote(name) }

    /// The step from the store in schema `source` to a new one in schema `destination`.
    private func run(
        _ step: PostgresServerStep, from source: String, into destination: String, on session: PostgresDatabase,
        now: Int64
    ) throws -> MigrationStepReport {
        let started = ContinuousClock.now
        let model = step.destination.storedForm
        let parts = StoreSchema.parts(for: model, layout: layout, primaryKeysAfterRows: true)
        let madeFromRows = tablesMadeFromRows(step, into: destination, model: model)
        // The new schema's other tables, created unqualified where the search path points; their
        // primary keys and join tables come once the rows are in.
        try session.execute("CREATE SCHEMA \(quote(destination))")
        try session.execute("SET LOCAL search_path TO \(quote(destination))")
        for statement in StoreSchema.bookkeepingTables(in: layout) { try session.execute(statement) }
        for (statement, entity) in zip(parts.tables, model.entities) where madeFromRows[entity.name] == nil {
            try session.execute(statement)
        }
        try StoreMetadata.write(for: model, to: session, layout: layout, createdAt: DateCoding.nowText())

        // The rows: read where the source's unqualified names resolve (filters and key paths).
        try session.execute("SET LOCAL search_path TO \(quote(source))")
        var entityReports: [MigrationStepReport.EntityReport] = []
        for copy in step.entities {
            let mappingStarted = ContinuousClock.now
            observer?.migrationEntityStarted(copy.mapping.name)
            var report = MigrationStepReport.EntityReport(
                mapping: copy.mapping.name, destination: copy.destination.name, source: copy.source?.name)
            if let insert = madeFromRows[copy.destination.name] ?? copy.insertSQL(into: destination, layout: layout) {
                do {
                    try session.execute(insert.text, insert.arguments)
                } catch let error as FerryError {
                    throw MigrationStepScope.wrap(error, mapping: copy.mapping)
                }
                report.read = session.changes
                report.written = session.changes
                observer?.migrationProgress(mapping: copy.mapping.name, processed: report.read)
            }
            report.seconds = mappingStarted.duration(to: .now).seconds
            entityReports.append(report)
        }
        // The keys, each built in one sort (the join tables reference them).
        try session.execute("SET LOCAL search_path TO \(quote(destination))")
        try session.execute("SET LOCAL maintenance_work_mem TO '\(Self.indexBuildMemory)'")
        for (statement, entity) in zip(parts.primaryKeys, model.entities) {
            let completion =
                madeFromRows[entity.name] == nil
                ? nil : StoreSchema.completionStatement(for: entity, in: model, layout: layout)
            try buildPrimaryKey(completion ?? statement, of: entity, step: step, on: session)
        }
        for statement in parts.joinTables { try session.execute(statement) }
        try session.execute("SET LOCAL search_path TO \(quote(source))")
        for link in step.links {
            let columns = link.columns.map(quote).joined(separator: ", ")
            try session.execute(
                "INSERT INTO \(quote(destination)).\(quote(link.table)) (\(columns)) \(link.pairs) ON CONFLICT DO NOTHING"
            )
        }
        if let sourceLog = RunLog(on: session, layout: layout, schema: source),
            let log = RunLog(on: session, layout: layout, schema: destination)
        {
            try log.copy(from: sourceLog)
            try log.record(
                RunRecord(
                    job: "ferry migrate", step: "migrate", source: url.description,
                    startedAt: DateCoding.format(now), endedAt: DateCoding.nowText(), outcome: "succeeded",
                    read: entityReports.reduce(0) { $0 + $1.read },
                    inserted: entityReports.reduce(0) { $0 + $1.written },
                    message: "\(step.source.name) version \(step.source.version) → \(step.destination.version)"))
        }

        // Keys, indexes and foreign keys, once the rows are in.
        try session.execute("SET LOCAL search_path TO \(quote(destination))")
        try moveSequences(of: model, in: destination, on: session)
        for statement in parts.indexes { try buildIndex(statement, of: model, on: session) }
        // Links were carried between objects that keep their keys: each is checked here all the same.
        for statement in parts.references { try session.execute(statement) }

        try session.execute("SET LOCAL search_path TO \(quote(source))")
        try verify(step, from: source, into: destination, reports: entityReports, on: session)
        if options.checksums { record(step, in: &entityReports) }
        return MigrationStepReport(
            from: step.source.version, to: step.destination.version, mappingFile: step.mapping.location?.file,
            entities: entityReports, seconds: started.duration(to: .now).seconds)
    }

    /// The entity tables of `model` made from their rows (`CREATE TABLE … AS SELECT`, by entity
    /// name), completed with their keys (`StoreSchema.completionStatement`): those one mapping
    /// fills from a source entity, which saves writing every row twice (into the table, then
    /// into its WAL-logged heap again through `INSERT`). Tables two mappings fill, or none, are
    /// created and filled as before.
    private func tablesMadeFromRows(
        _ step: PostgresServerStep, into destination: String, model: ObjectModel
    ) -> [String: EntityPlan.SQLText] {
        var made: [String: EntityPlan.SQLText] = [:]
        for copy in step.entities
        where step.entities.filter({ $0.destination.name == copy.destination.name }).count == 1 {
            made[copy.destination.name] = copy.createTableSQL(into: destination, model: model, layout: layout)
        }
        return made
    }

    /// Moves each identity column's sequence (entity keys, the run log's `id`) past its largest
    /// value, so that objects created later get new keys.
    private func moveSequences(of model: ObjectModel, in schema: String, on session: PostgresDatabase) throws {
        var identities = model.entities.map { (layout.table(for: $0), layout.keyColumn) }
        if let runs = layout.bookkeeping?.runs { identities.append((runs, "id")) }
        for (table, column) in identities {
            let qualified = quote(schema) + "." + quote(table)
            try session.execute(
                "SELECT setval(pg_get_serial_sequence(?, ?), coalesce(max(\(quote(column))), 0) + 1, false) FROM \(qualified)",
                [.text(qualified), .text(column)])
        }
    }

    /// Adds an entity table's primary key once its rows are in. Two objects with the same key
    /// (two mappings writing into one entity) are the error of the last of them, at its place in
    /// the mapping file, as on SQLite, where its rows are the ones refused.
    private func buildPrimaryKey(
        _ statement: String, of entity: EntityDescription, step: PostgresServerStep, on session: PostgresDatabase
    ) throws {
        do {
            try session.execute(statement)
        } catch let error as FerryError where error.code == .constraint {
            let mappings = step.entities.filter { $0.destination.name == entity.name }.map(\.mapping)
            guard let last = mappings.last else { throw error }
            // A table made from its rows gets its NOT NULLs here: a nil the mapping wrote into a
            // required attribute is its error, as the INSERT's would be.
            if (error.underlying as? PostgresStatementFailure)?.sqlState == "23502" {
                throw MigrationStepScope.wrap(error, mapping: last)
            }
            var detail = "two or more objects have the same key (\(entity.name).\(layout.keyColumn))"
            let others = mappings.dropLast().map(\.name)
            if !others.isEmpty { detail += " as objects of mapping \(others.joined(separator: ", "))" }
            throw FerryError(
                .migration, "mapping \(last.name) → \(entity.name): \(detail)", at: last.location,
                notes: ["nothing was changed: the original store is as it was"], underlying: error.underlying)
        }
    }

    /// Builds an index of `model`; objects breaking a uniqueness constraint are a migration
    /// error naming the constraint's attributes, as on SQLite.
    private func buildIndex(_ statement: String, of model: ObjectModel, on session: PostgresDatabase) throws {
        do {
            try session.execute(statement)
        } catch let error as FerryError where error.code == .constraint {
            var detail = "a uniqueness constraint of \(model.name) version \(model.version)"
            for entity in model.entities {
                for constraint in entity.uniquenessConstraints
                where error.message.contains("\"\(layout.uniqueIndexName(entity: entity.name, columns: constraint))\"")
                {
                    detail = constraint.map { "\(entity.name).\($0)" }.joined(separator: ", ")
                }
            }
            throw FerryError(
                .migration, "the migrated objects break a uniqueness constraint: two or more have the same \(detail)",
                notes: ["nothing was changed: the original store is as it was"], underlying: error.underlying)
        }
    }

    // MARK: - Verification

    /// Throws unless the step's new schema holds what its mappings wrote and the values they
    /// carried unchanged (see the type's description); runs with the search path on `source`.
    private func verify(
        _ step: PostgresServerStep, from source: String, into destination: String,
        reports: [MigrationStepReport.EntityReport], on session: PostgresDatabase
    ) throws {
        let key = layout.dialect.quote(layout.keyColumn)
        // Tables whose every row a hash below covers (its count too) need no count of their own.
        var hashed: Set<String> = []
        for copy in step.entities {
            guard let sourceEntity = copy.source, copy.filter == nil else { continue }
            let written = reports.first { $0.mapping == copy.mapping.name }?.written ?? 0
            let sourceColumns =
                [key]
                + copy.unchanged.map { layout.quotedColumn(forAttribute: $0.source, in: sourceEntity) }
                + copy.keptForeignKeys.map { layout.dialect.quote($0.source) }
            let destinationColumns =
                [key]
                + copy.unchanged.map { layout.quotedColumn(forAttribute: $0.destination, in: copy.destination) }
                + copy.keptForeignKeys.map { layout.dialect.quote($0.destination) }
            let before = try rowHash(of: sourceColumns, in: layout.quotedOwnRows(for: sourceEntity), on: session)
            guard before.rows == written else {
                throw failure(step, "mapping \(copy.mapping.name) wrote \(written) objects of \(before.rows)")
            }
            let after = try rowHash(
                of: destinationColumns,
                in: "\(quote(destination)).\(layout.quotedTable(for: copy.destination))", on: session)
            guard before == after else {
                let names = copy.unchanged.map(\.destination) + copy.keptForeignKeys.map(\.destination)
                throw failure(
                    step,
                    "mapping \(copy.mapping.name): the keys and values of \(names.joined(separator: ", ")) changed (\(before.rows) objects hashed \(before.sum) before, \(after.rows) hashed \(after.sum) after)"
                )
            }
            if step.entities.filter({ $0.destination.name == copy.destination.name }).count == 1 {
                hashed.insert(copy.destination.name)
            }
        }
        for entity in step.destination.entities where !hashed.contains(entity.name) {
            let written = reports.filter { $0.destination == entity.name }.reduce(0) { $0 + $1.written }
            let found = try count("\(quote(destination)).\(layout.quotedTable(for: entity))", on: session)
            guard found == written else {
                throw failure(step, "\(entity.name) has \(found) objects, the mappings wrote \(written)")
            }
        }
        for link in step.links {
            let expected = try count("(\(link.pairs)) AS l", on: session)
            let found = try count("\(quote(destination)).\(quote(link.table))", on: session)
            guard expected == found else {
                throw failure(step, "join table \(link.table) has \(found) links, the source \(expected)")
            }
        }
    }

    private func count(_ from: String, on session: PostgresDatabase) throws -> Int64 {
        try session.scalar("SELECT count(*) FROM \(from)", [])?.int64 ?? 0
    }

    /// The number of rows and the sum of a 64-bit hash of each row's `columns` (hashed as the
    /// typed values they are: the same values of the same types hash alike on both schemas).
    private func rowHash(
        of columns: [String], in from: String, on session: PostgresDatabase
    ) throws -> (rows: Int, sum: String) {
        let row = "ROW(\(columns.map { "t.\($0)" }.joined(separator: ", ")))"
        let result = try session.rows(
            "SELECT count(*), coalesce(sum(hash_record_extended(\(row), 0)), 0)::text FROM \(from) AS t", [])
        let values = result.first ?? []
        return (Int(values.first?.int64 ?? -1), values.last?.text ?? "")
    }

    private func failure(_ step: PostgresServerStep, _ detail: String) -> FerryError {
        FerryError(
            .verification,
            "the migration \(step.source.version) → \(step.destination.version) in PostgreSQL does not match its source: \(detail)",
            notes: ["nothing was changed: the original schema '\(schema)' is as it was"])
    }

    /// The checksums' part of the reports (with `checksums`): what was compared and what cannot be.
    private func record(_ step: PostgresServerStep, in reports: inout [MigrationStepReport.EntityReport]) {
        for (index, report) in reports.enumerated() {
            guard let copy = step.entities.first(where: { $0.mapping.name == report.mapping }), copy.source != nil
            else { continue }
            if copy.filter != nil {
                reports[index].notComparable = copy.mapping.attributes.map(\.destination)
                reports[index].unchanged = []
            } else {
                reports[index].unchanged = copy.unchanged.map(\.destination)
                reports[index].notComparable = copy.notComparable
            }
        }
    }
}
