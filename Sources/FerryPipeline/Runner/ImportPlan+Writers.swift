import FerryCore
import FerryFormats
import FerryPostgresStore

/// What an import step writes its records with, made by the store's session: each engine's
/// session makes its own writers (SQLite's ``BatchInserter``, PostgreSQL's staged or record
/// inserter), so ``ImportPlan`` never asks which engine the store is in.
struct ImportWriters {
    /// The related objects records nest (`nested:`); nil when off.
    var nested: NestedObjects?
    /// Writes each record (see ``ImportPlan/recordInserter``).
    var recordInserter: (any KeyedRecordInserting)?
    /// Writes records in batches (see ``ImportPlan/stagingInserter``).
    var stagingInserter: (any StagingRecordInserter)?
    /// The inserter the SQLite fast path binds values to directly.
    var sqliteInserter: BatchInserter?
    /// The inserter the PostgreSQL fast path stages encoded rows in.
    var postgresInserter: PostgresStagedInserter?
    /// Each column's validator and default (see ``ImportPlan/columnValidators``).
    var columnValidators: [AttributeValidator?]
    var columnDefaults: [Value?]
}

/// What the writers of an import step are made from.
struct ImportWriterRequest {
    var step: ImportStep
    var entity: EntityDescription
    var reader: any RecordReader
    var model: ObjectModel
    var layout: any StoreLayout
    /// The columns the step writes (its attributes, then its references).
    var columns: [InsertColumn]
    var attributeCount: Int
    var references: [ImportPlan.ReferenceColumn]
    var sync: SyncTracker?
}

/// A session that can make an import step's writers: every engine's session adopts it.
protocol ImportSession: DatabaseConnection {
    /// The writers of the step `request` describes, on this session.
    func importWriters(for request: ImportWriterRequest) throws -> ImportWriters
}

extension Connection: ImportSession {
    func importWriters(for request: ImportWriterRequest) throws -> ImportWriters {
        let (step, entity, model, layout, tracker) = (
            request.step, request.entity, request.model, request.layout, request.sync
        )
        let nested = step.nested.map {
            NestedObjects(
                step: step, options: $0, entity: entity, reader: request.reader,
                store: SQLiteNestedStore(connection: self, model: model, layout: layout), model: model,
                layout: layout, firstColumn: request.columns.count,
                sync: tracker)
        }
        let inserter = try BatchInserter(
            connection: self, model: model, layout: layout, entity: entity.name,
            columns: request.columns + (nested?.insertColumns ?? []),
            policy: step.onConflict, validate: step.validate, sync: tracker)
        // An import that only adds objects leaves the destination's objects as they are, so
        // references resolve from a copy of its keys (taken in the step's transaction).
        if nested == nil && step.mode != .sync && (step.onConflict == .error || step.onConflict == .keep) {
            for reference in request.references { reference.resolver.resolveFromSnapshot() }
        }
        return ImportWriters(
            nested: nested, recordInserter: inserter, stagingInserter: nil, sqliteInserter: inserter,
            postgresInserter: nil,
            columnValidators: inserter.columns.indices.map { inserter.validator(forColumn: $0) },
            columnDefaults: inserter.columns.indices.map { inserter.defaultValue(forColumn: $0) })
    }
}

extension PostgresDatabase: ImportSession {
    func importWriters(for request: ImportWriterRequest) throws -> ImportWriters {
        let (step, entity, model, layout, tracker) = (
            request.step, request.entity, request.model, request.layout, request.sync
        )
        if let options = step.nested {
            // Each record needs the keys of the objects it nests at once: written record by
            // record, under a savepoint each, as on SQLite.
            let nested = NestedObjects(
                step: step, options: options, entity: entity, reader: request.reader,
                store: PostgresNestedStore(database: self, model: model, layout: layout), model: model,
                layout: layout, firstColumn: request.columns.count, sync: tracker)
            let inserter = try PostgresRecordInserter(
                database: self, model: model, layout: layout, entity: entity.name,
                columns: request.columns + nested.insertColumns, policy: step.onConflict, validate: step.validate,
                sync: tracker)
            // The record inserter checks every value itself; the fast path is not taken.
            return ImportWriters(
                nested: nested, recordInserter: inserter, stagingInserter: nil, sqliteInserter: nil,
                postgresInserter: nil,
                columnValidators: Array(repeating: nil, count: request.attributeCount),
                columnDefaults: Array(repeating: nil, count: request.attributeCount))
        }
        // Without references to look up or sync keys to note, nothing but the inserter uses
        // the connection between records: its COPY streams while records are read.
        let inserter = try PostgresStagedInserter(
            database: self, model: model, layout: layout, entity: entity.name, columns: request.columns,
            policy: step.onConflict, validate: step.validate,
            streamsWhileStaging: request.references.isEmpty && tracker == nil, sync: tracker)
        return ImportWriters(
            nested: nil, recordInserter: nil, stagingInserter: inserter, sqliteInserter: nil,
            postgresInserter: inserter, columnValidators: inserter.columnValidators,
            columnDefaults: inserter.columnDefaults)
    }
}
