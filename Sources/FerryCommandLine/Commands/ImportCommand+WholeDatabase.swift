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
    /// every table of a database into a new store, through `WholeDatabaseImport`; the command
    /// checks its flags and prints what was inferred and imported.
    func importWholeDatabase(console: Console) throws -> Int32 {
        if entity != nil || !fieldMappings.isEmpty || !unique.isEmpty || alter || format != nil {
            throw FerryError(
                .usage,
                "importing a whole database infers the model from its schema: --entity, --field, --unique, --alter and --format do not apply (read one table with --table NAME to use them; --type takes TABLE.COLUMN=TYPE)"
            )
        }
        var importer = WholeDatabaseImport(source: file, store: store)
        importer.columnTypes = try Self.typeOverrides(types)
        importer.dateFormats = try parsedDateFormats()
        try importer.check()
        try CommandFiles.checkOutputs(
            store: store, inputs: PostgresURL.isPostgresURL(file) ? [] : [(file, "the input")],
            outputs: [(options.report, "--report")])
        if let rejects {
            // One file per table: --rejects names a folder (made when missing), never a file.
            try PathOrURL.requireFile(rejects, role: "--rejects")
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: rejects, isDirectory: &isFolder), !isFolder.boolValue {
                throw FerryError(
                    .usage,
                    "--rejects '\(rejects)' is a file; importing a whole database writes one rejects file per table into a folder (--rejects DIR)"
                )
            }
            if !options.dryRun {
                do {
                    try FileManager.default.createDirectory(atPath: rejects, withIntermediateDirectories: true)
                } catch {
                    throw FerryError(.io, "cannot make the rejects folder '\(rejects)': \(error.localizedDescription)")
                }
            }
            importer.rejectsDirectory = rejects
        }
        importer.maxRejects = try Self.budget(maxRejects, hasRejectsFile: rejects != nil)
        guard let conflict = ConflictPolicy(rawValue: onConflict) else {
            throw FerryError(.usage, "--on-conflict must be one of error, update, keep, replace")
        }
        importer.onConflict = conflict
        importer.validate = !noValidate
        importer.sampleSize = sample
        importer.dryRun = options.dryRun
        let plan = try importer.plan()
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
        var report = RunReport(
            command: "import", job: "ferry import", jobFile: nil, store: store, model: plan.model.name,
            modelVersion: plan.model.version, dryRun: options.dryRun)
        try importer.run(plan, progress: console, into: &report)
        if report.failure != nil { return try finish(&report) }
        if !options.dryRun {
            let objects = report.steps.reduce(0) { $0 + $1.inserted + $1.updated }
            console.line(
                "imported \(plan.steps.count) tables of \(importer.database.label) into \(importer.shownStore): \(objects) objects, every table's count checked"
            )
        }
        return try finish(&report)
    }

    /// The `--date-format` values, parsed; a bad pattern is a usage error.
    func parsedDateFormats() throws(FerryError) -> [DateFormat] {
        try dateFormat.map { text throws(FerryError) -> DateFormat in
            switch DateFormat.parse(text) {
            case .success(let parsed): return parsed
            case .failure(let error): throw FerryError(.usage, "--date-format \(text): \(error.message)")
            }
        }
    }
}
