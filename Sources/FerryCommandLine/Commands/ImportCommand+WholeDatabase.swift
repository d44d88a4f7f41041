import FerryCore
import FerryFormats
import FerryPipeline
import FerryPostgres
import Foundation

extension ImportCommand {
    /// True when `path` is a SQLite database file (its header), so `ferry import legacy.db
    /// --store new.sqlite` imports the whole database instead of reading a data file.
    static func isSQLiteDatabase(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        return header == Data("SQLite format 3\u{0}".utf8)
    }

    /// `ferry import legacy.db --store new.sqlite` (or a `postgresql://` URL, one schema of it):
    /// every table of a database into a new
    /// store, with the model inferred from the schema (``DatabaseModelInference``), referenced
    /// tables first, each table's count checked after. The store is written beside its path and
    /// renamed into place when every table is in (in PostgreSQL, a work schema renamed to the
    /// store's): a failure leaves no store behind.
    func importWholeDatabase(console: Console) throws -> Int32 {
        if entity != nil || !fieldMappings.isEmpty || !types.isEmpty || !unique.isEmpty || alter || rejects != nil
            || maxRejects != nil || format != nil
        {
            throw FerryError(
                .usage,
                "importing a whole database infers the model from its schema: --entity, --field, --type, --unique, --alter, --rejects, --max-rejects and --format do not apply (read one table with --table NAME to use them)"
            )
        }
        let isPostgres = PostgresURL.isPostgresURL(file)
        if !isPostgres, (try? Store.metadata(at: file)) != nil {
            throw FerryError(
                .usage,
                "'\(file)' is a ferry store: copy it with ferry copy \(file) \(store) (or read one of its tables with --table)"
            )
        }
        if !isPostgres, CoreDataStoreFile.isCoreDataStore(file) {
            throw FerryError(
                .usage,
                "'\(file)' is a Core Data store: copy it into a ferry store with ferry copy \(file) \(store) (or read one entity with --table ENTITY)"
            )
        }
        try PathOrURL.requireStore(store)
        try CoreDataStoreFile.refuseInPlace(store, command: "import")
        // A PostgreSQL store is built in a work schema and renamed into place, as a file is.
        let intoPostgres = PathOrURL(store).isPostgreSQL
        let shownStore = intoPostgres ? (try? PostgresURL(store).description) ?? store : store
        guard !(intoPostgres ? try Store.postgreSQLStoreExists(store) : FileManager.default.fileExists(atPath: store))
        else {
            throw FerryError(
                .usage,
                "importing a whole database creates a new store, and '\(shownStore)' exists; give a new store path (or import the tables one by one with --table)"
            )
        }
        try CommandFiles.checkOutputs(
            store: store, inputs: isPostgres ? [] : [(file, "the input")], outputs: [(options.report, "--report")])
        guard let conflict = ConflictPolicy(rawValue: onConflict) else {
            throw FerryError(.usage, "--on-conflict must be one of error, update, keep, replace")
        }
        let database: DatabaseSource.Database = isPostgres ? .postgresql(url: file) : .sqlite(path: file)
        let schema = try isPostgres ? SourceSchema.postgres(url: file) : SourceSchema.sqlite(path: file)
        let modelName =
            isPostgres
            ? AttributeNaming.identifier((try? PostgresURL(file).database) ?? nil ?? "postgres", fallback: "postgres")
            : AttributeNaming.entityName(fromPath: file)
        let plan = try DatabaseModelInference.plan(
            database: database, schema: schema, modelName: modelName, sampleSize: sample)
        if !options.quiet {
            for entity in plan.model.entities {
                let relationships = entity.relationships.map {
                    "\($0.name) → \($0.isToMany ? "[\($0.destination)]" : $0.destination)"
                }
                console.line(
                    "inferred \(entity.name): "
                        + (entity.attributes.map { "\($0.name) \($0.type.rawValue)" } + relationships).joined(
                            separator: ", "))
            }
            for note in plan.notes { console.line("note: \(note)") }
        }
        if options.dryRun { console.line(try ModelYAMLWriter.text(of: plan.model)) }

        // A dry run builds the store in the scratch file only: it needs no lock on the path.
        let writerLock = options.dryRun || intoPostgres ? nil : try StoreLock.acquire(for: store, timeout: .seconds(30))
        defer { withExtendedLifetime(writerLock) {} }
        let scratch =
            intoPostgres
            ? try Store.postgreSQLWorkURL(
                store, mark: "ferry_rebuild",
                suffix: "\(ProcessInfo.processInfo.processIdentifier)_\(UUID().uuidString.prefix(8).lowercased())")
            : store + StoreFiles.rebuildMark
        if !intoPostgres { StoreFiles.remove(scratch) }
        defer { if intoPostgres { try? Store.dropPostgreSQLSchema(scratch) } else { StoreFiles.remove(scratch) } }
        var report = RunReport(
            command: "import", job: "ferry import", jobFile: nil, store: store, model: plan.model.name,
            modelVersion: plan.model.version, dryRun: options.dryRun)
        do {
            var openOptions = Store.Options()
            openOptions.writerLock = .none
            let opened = try Store.open(at: scratch, model: plan.model, options: openOptions)
            for (index, var step) in plan.steps.enumerated() {
                step.onConflict = conflict
                step.validate = !noValidate
                let runner = ImportStepRunner(step: step, store: opened, index: index + 1, jobName: "ferry import")
                runner.progress = console
                console.stepStarted(
                    index: index + 1, of: plan.steps.count, title: "import \(step.entity) from \(step.source)")
                do {
                    report.steps.append(try runner.run())
                } catch let failure as ImportStepFailure {
                    report.steps.append(failure.report)
                    report.finish(exitCode: ExitStatus.code(for: failure))
                    if let path = options.report { try writeJSON(report, to: path) }
                    throw failure
                }
            }
            // Every row of every table is in the store: the counts must agree.
            for (table, step) in zip(plan.tables, plan.steps) {
                let reader = try DatabaseRecordReader.open(
                    DatabaseSource(database: database, selection: .query("SELECT count(*) FROM \(SQL.quote(table))")))
                guard case .typed(.integer(let expected))? = try reader.next()?.fields.first??.value else { continue }
                let count = try opened.entityCount(step.entity)
                guard count == Int(expected) else {
                    throw FerryError(
                        .verification,
                        "\(step.entity) has \(count) objects but table \(table) of \(database.label) has \(expected) rows; '\(shownStore)' was not created"
                    )
                }
            }
        }
        if !options.dryRun {
            if intoPostgres {
                try Store.replacePostgreSQLSchema(store, with: scratch)
            } else {
                try StoreFiles.replace(store, with: scratch)
            }
            let objects = report.steps.reduce(0) { $0 + $1.inserted + $1.updated }
            console.line(
                "imported \(plan.steps.count) tables of \(database.label) into \(shownStore): \(objects) objects, every table's count checked"
            )
        }
        report.finish(exitCode: 0)
        if let path = options.report { try writeJSON(report, to: path) }
        return 0
    }
}
