import FerryCore
import FerryFormats
import FerryPostgres
import FerryPostgresStore
import Foundation

/// Every table of a database into a new store (`ferry import legacy.db --store new.sqlite`, or a
/// `postgresql://` URL, one schema of it), with the model inferred from the schema
/// (`DatabaseModelInference`), referenced tables first, each table's count checked after.
///
/// The store is written beside its path and renamed into place when every table is in (in
/// PostgreSQL, a work schema renamed to the store's): a failure leaves no store behind. A dry run
/// builds the store in the work file only and removes it.
package struct WholeDatabaseImport {
    /// The database read: a SQLite file or a `postgresql://` URL.
    package let source: String
    /// The store created: a file path or a `postgresql://` URL.
    package let store: String
    /// Each step's `on_conflict`.
    package var onConflict: ConflictPolicy = .error
    /// Each step's `validate`.
    package var validate = true
    /// How many rows of each table its types are inferred from.
    package var sampleSize = 1000
    /// Build the store and throw it away.
    package var dryRun = false
    /// The folder each table's rejected rows are written to (`TABLE.rejects.ndjson`); nil: none.
    package var rejectsDirectory: String?
    /// How many rejected rows each table tolerates.
    package var maxRejects: RejectBudget = .count(0)
    /// The user's types of columns, by `TABLE.COLUMN` (`--type orders.placed_at=string`): the
    /// conversion to each is chosen from the values, as for an inferred type.
    package var columnTypes: [String: AttributeType] = [:]
    /// The formats of day/month text dates whose order the values leave open (`--date-format
    /// MM/dd/yyyy`), tried in order; a column whose values prove the order keeps it.
    package var dateFormats: [DateFormat] = []

    /// The rejects file of `table`.
    package func rejectsPath(of table: String) -> String? {
        rejectsDirectory.map { ($0 as NSString).appendingPathComponent("\(table).rejects.ndjson") }
    }

    /// An import of every table of `source` into the new store `store`.
    package init(source: String, store: String) {
        self.source = source
        self.store = store
    }

    private var readsPostgreSQL: Bool { PostgresURL.isPostgresURL(source) }
    private var writesPostgreSQL: Bool { StoreLocation(store).engine.capabilities.workArea == .workSchema }

    /// The store as messages name it (a URL without its password).
    package var shownStore: String { PathOrURL(store).shown }

    /// The database read, as a step's `database:` names it.
    package var database: DatabaseSource.Database {
        readsPostgreSQL ? .postgresql(url: source) : .sqlite(path: source)
    }

    /// Refuses a source that is a ferry or Core Data store (copied with `ferry copy`), a store
    /// that is not a path or URL ferry can create, and a store that exists.
    package func check() throws {
        if !readsPostgreSQL, (try? Store.metadata(at: source)) != nil {
            throw FerryError(
                .usage,
                "'\(source)' is a ferry store: copy it with ferry copy \(source) \(store) (or read one of its tables with --table)"
            )
        }
        if !readsPostgreSQL, StoreLocation(source).isCoreData {
            throw FerryError(
                .usage,
                "'\(source)' is a Core Data store: copy it into a ferry store with ferry copy \(source) \(store) (or read one entity with --table ENTITY)"
            )
        }
        try PathOrURL.requireStore(store)
        try CoreDataStoreFile.refuseInPlace(store, command: "import")
        let exists =
            writesPostgreSQL ? try Store.postgreSQLStoreExists(store) : FileManager.default.fileExists(atPath: store)
        guard !exists else {
            throw FerryError(
                .usage,
                "importing a whole database creates a new store, and '\(shownStore)' exists; give a new store path (or import the tables one by one with --table)"
            )
        }
    }

    /// The model inferred from the database's schema and one import step per table.
    package func plan() throws -> DatabaseModelInference.Plan {
        let schema = try readsPostgreSQL ? SourceSchema.postgres(url: source) : SourceSchema.sqlite(path: source)
        let modelName =
            readsPostgreSQL
            ? AttributeNaming.identifier((try? PostgresURL(source).database) ?? nil ?? "postgres", fallback: "postgres")
            : AttributeNaming.entityName(fromPath: source)
        return try DatabaseModelInference.plan(
            database: database, schema: schema, modelName: modelName, sampleSize: sampleSize,
            columnTypes: try Self.columnTypes(columnTypes, in: schema), dateFormats: dateFormats)
    }

    /// The user's `TABLE.COLUMN` types by table, then column; a name that is not a column of a
    /// table is a usage error naming the columns it could be.
    static func columnTypes(
        _ types: [String: AttributeType], in schema: SourceSchema
    ) throws -> [String: [String: AttributeType]] {
        var result: [String: [String: AttributeType]] = [:]
        let columns = schema.tables.flatMap { table in table.columns.map { (table.name, $0.name) } }
        for (key, type) in types.sorted(by: { $0.key < $1.key }) {
            guard
                let (table, column) =
                    columns.first(where: { "\($0.0).\($0.1)" == key })
                    ?? columns.first(where: { "\($0.0).\($0.1)".lowercased() == key.lowercased() })
            else {
                throw FerryError(
                    .usage,
                    "--type \(key)=\(type.rawValue) names no column: importing a whole database, --type takes TABLE.COLUMN=TYPE\(Suggestions.didYouMean(key, in: columns.map { "\($0.0).\($0.1)" }))"
                )
            }
            result[table, default: [:]][column] = type
        }
        return result
    }

    /// Runs `plan`'s steps into the new store as a job of import steps, checks every table's count
    /// and (unless a dry run) puts the store in place. The steps' reports are appended to `report`;
    /// a failed step leaves its failure there and no store behind.
    ///
    /// - Throws: `.verification` when a table's count differs from its entity's.
    package func run(
        _ plan: DatabaseModelInference.Plan, progress: (any ProgressObserver)?, into report: inout RunReport
    ) throws {
        // A dry run builds the store in the scratch file only: it needs no lock on the path. On
        // PostgreSQL the store's writer lock is held until the new schema is swapped in.
        let writerLock = dryRun || writesPostgreSQL ? nil : try StoreLock.acquire(for: store, timeout: .seconds(30))
        defer { withExtendedLifetime(writerLock) {} }
        let postgreSQLLock =
            !dryRun && writesPostgreSQL ? try PostgreSQLWriterLock.acquire(for: store, timeout: .seconds(30)) : nil
        defer { withExtendedLifetime(postgreSQLLock) {} }
        let scratch =
            writesPostgreSQL
            ? try Store.postgreSQLWorkURL(
                store, mark: "ferry_rebuild",
                suffix: "\(ProcessInfo.processInfo.processIdentifier)_\(UUID().uuidString.prefix(8).lowercased())")
            : store + StoreFiles.rebuildMark
        if !writesPostgreSQL { StoreFiles.remove(scratch) }
        // Held until the import ends: while it lives no other run drops the work schema.
        let workClaim = writesPostgreSQL ? try Store.claimPostgreSQLWorkSchema(scratch, beside: store) : nil
        defer { withExtendedLifetime(workClaim) {} }
        defer { if writesPostgreSQL { try? Store.dropPostgreSQLSchema(scratch) } else { StoreFiles.remove(scratch) } }
        // The store is closed before it is put in place.
        do {
            var openOptions = Store.Options()
            openOptions.writerLock = .none
            let opened = try Store.open(at: scratch, model: plan.model, options: openOptions)
            // The steps run as a job's would, with `verify: false`: the counts are checked below.
            let steps = zip(plan.tables, plan.steps).map { table, planned -> Step in
                var step = planned
                step.onConflict = onConflict
                step.validate = validate
                step.verify = false
                step.rejectsPath = rejectsPath(of: table)
                step.maxRejects = maxRejects
                step.rejectsAdvice =
                    "the import allows no rejected rows; give --rejects DIR (each table's rows in DIR/TABLE.rejects.ndjson) and --max-rejects N to set them aside and go on"
                return .import(step)
            }
            let firstStep = report.steps.count
            let runner = JobRunner(
                job: Job(
                    name: "ferry import", path: "ferry import", store: StoreReference(path: store), modelPath: nil,
                    steps: steps),
                model: plan.model)
            runner.progress = progress
            runner.run(on: opened, into: &report)
            guard report.failure == nil else { return }
            // Every row of every table is in the store, or was set aside (rejected, or skipped by
            // the conflict policy): the counts must agree.
            for (index, (table, step)) in zip(plan.tables, plan.steps).enumerated() {
                let stepReport =
                    report.steps.indices.contains(firstStep + index) ? report.steps[firstStep + index] : nil
                let setAside = (stepReport?.rejected ?? 0) + (stepReport?.skipped ?? 0)
                let reader = try DatabaseRecordReader.open(
                    DatabaseSource(database: database, selection: .query("SELECT count(*) FROM \(SQL.quote(table))")))
                guard case .typed(.integer(let expected))? = try reader.next()?.fields.first??.value else { continue }
                let count = try opened.entityCount(step.entity)
                guard count + setAside == Int(expected) else {
                    throw FerryError(
                        .verification,
                        "\(step.entity) has \(count) objects and \(setAside) rows were set aside, but table \(table) of \(database.label) has \(expected) rows; '\(shownStore)' was not created"
                    )
                }
            }
        }
        guard !dryRun else { return }
        if writesPostgreSQL {
            try Store.replacePostgreSQLSchema(store, with: scratch)
        } else {
            try StoreFiles.replace(store, with: scratch)
        }
    }
}
