import ArgumentParser
import FerryCore
import FerryFormats
import FerryPipeline
import FerryPostgres
import Foundation

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "Import CSV, TSV, JSON or NDJSON files (optionally .gz, .zst, .bz2, .xz) into a store, without a job file.",
        discussion: """
            Without --model, ferry infers a one-entity model from the data the way sqlite-utils \
            does (attribute names from the header or keys, types from the first records) and records it \
            in the store; a later import of another file into the same store adds a table. Inference \
            never loses information: 02134, +7095 and JSON strings such as "14.90" stay strings. \
            Headers that are not identifiers are renamed by one rule (First Name → first_name, shown \
            on the inferred line); unquoted NA, N/A, n/a, NULL, null, #N/A and empty fields are null \
            unless --null says otherwise. A CSV file's delimiter is detected (, tab ; |) unless given; \
            compressed files and UTF-16/32 with a byte order mark are read as they are. \
            Several files (or a quoted glob that ferry expands, in natural order) are read one \
            after the other into one entity; CSV files must share the first one's header row, and \
            rejects and the report name each record's file. \
            Example: ferry import sales.csv.gz --store s.sqlite --skip-lines 1 --decimal-comma --type "Zip Code=string"; \
            ferry import 'nightly/*.csv.gz' --store s.sqlite --entity orders; \
            fixed-width text: ferry import bank.txt --format fixed --columns id:1:5,name:6:20,amount:26:10 --store s.sqlite; \
            JSON keyed by id: ferry import users.json --json-pointer /users --json-shape object --key-field id --store s.sqlite
            """)

    @Argument(
        help: ArgumentHelp(
            "The data files or quoted glob patterns, read in order as one source (- for standard input).",
            valueName: "file"))
    var files: [String]

    /// The first source: it decides the format, the default entity name and the CSV dialect.
    var file: String { files[0] }

    @Option(
        help: ArgumentHelp(
            "Read this table (or view) of the SQLite database or postgresql:// URL given instead of a data file, or this entity of a Core Data store, e.g. ferry import legacy.db --table customers --store new.sqlite.",
            valueName: "name"))
    var table: String?

    @Option(
        help: ArgumentHelp(
            "Read the rows of this read-only SQL query on the SQLite database or postgresql:// URL given, e.g. --query \"SELECT id, name FROM customers WHERE active\" --entity Customer.",
            valueName: "sql"))
    var query: String?

    @Option(help: "The store to import into (created when missing).")
    var store: String

    @Option(help: "The destination entity (default: the file's base name).")
    var entity: String?

    @Option(help: "A model bundle or model file; without it the model is inferred or taken from the store.")
    var model: String?

    @Option(
        help: ArgumentHelp(
            "The layout of a store the import creates: ferry (the default) or coredata, a Core Data store for the --model (an existing store's layout is detected).",
            valueName: "layout"))
    var layout: String?

    @Option(
        help: ArgumentHelp(
            "With --layout coredata: the compiled model (App.momd or its VersionInfo.plist), whose version hashes must equal those computed from the model and recorded in the new store's metadata.",
            valueName: "path"))
    var compiledModel: String?

    @Option(
        help:
            "csv, tsv, json, ndjson, fixed or pgcopy (default: from the extension; .tsv and tsv read tab-separated CSV; fixed needs --columns name:start:width,…; pgcopy is PostgreSQL's COPY text format)."
    )
    var format: String?

    @Option(help: "error, update, keep or replace.")
    var onConflict: String = "error"

    @Option(
        help: ArgumentHelp(
            "append (the default) or sync: make the entity hold exactly the file's records, deleting the rows whose key the file no longer has (see --key).",
            valueName: "mode"))
    var mode: String = "append"

    @Option(
        help: ArgumentHelp(
            "With --mode sync: the attributes that identify a record, e.g. --key id or --key region,code (default: the entity's first uniqueness constraint).",
            valueName: "a[,b]"))
    var key: String?

    @Option(
        help: ArgumentHelp(
            "How attributes not named by --field find their source fields: as_is (the default) or snake_case (firstName reads first_name, remoteID reads id, a model's sync.remoteKey user info wins), as JSON APIs synced into Core Data models are written.",
            valueName: "style"))
    var keyStyle: String = "as_is"

    @Flag(
        help:
            "With --model and a JSON or NDJSON file: nested objects and arrays create, update and link related objects, keys (company_id, tags_ids) link existing ones (see 'Nested related objects' in docs/files.md)."
    )
    var nested = false

    @Option(help: ArgumentHelp("--nested, with related objects at most N levels deep (default 8).", valueName: "N"))
    var nestedDepth: Int?

    @Flag(
        help:
            "With --mode sync: let an empty source delete every row of the entity (refused by default, as a guard against a truncated file)."
    )
    var allowEmptySync = false

    @Option(
        help: ArgumentHelp(
            "With --mode sync: how many rows the sync may delete, a count (500), a share (0.25 or 25%) or none; over it the import is rolled back (default 10%, at least 1 row).",
            valueName: "n"))
    var maxDelete: String?

    @Option(help: ArgumentHelp("Write rejected records here (NDJSON).", valueName: "file"))
    var rejects: String?

    @Option(help: ArgumentHelp("How many rejected records are tolerated (a count or N%).", valueName: "n"))
    var maxRejects: String?

    @Option(help: ArgumentHelp("A JSON pointer to the records array.", valueName: "pointer"))
    var jsonPointer: String = ""

    @Option(
        help: ArgumentHelp(
            "How JSON records are laid out: records (objects, the default), object (one object whose members are the records; see --key-field) or rows (arrays of values, the first naming the columns unless --columns does).",
            valueName: "shape"))
    var jsonShape: String?

    @Option(
        help: ArgumentHelp(
            "With --json-shape object: the field each member's name goes to, e.g. --key-field id (default: key).",
            valueName: "name"))
    var keyField: String?

    @Option(
        help: ArgumentHelp(
            "The CSV delimiter, e.g. --delimiter ';' or --delimiter '||' (up to 8 characters; \\t or tab for a tab; default: detected from , tab ; |).",
            valueName: "text"))
    var delimiter: String?

    @Option(
        help: ArgumentHelp(
            "What ends a CSV record instead of a line break, e.g. --record-terminator '~' or --record-terminator '\\r' (\\r, \\n and \\t name those characters; line breaks are then ordinary characters of a field).",
            valueName: "text"))
    var recordTerminator: String?

    @Flag(help: "With --format pgcopy: the first line names the columns, as COPY … WITH (HEADER) writes it.")
    var header = false

    @Option(help: ArgumentHelp("The CSV quote character, e.g. --quote \"'\" (default: \").", valueName: "char"))
    var quote: String?

    @Option(
        help: ArgumentHelp(
            "The CSV escape character of MySQL/PostgreSQL text exports, e.g. --escape '\\': it makes the next character literal (\\\", \\, and escaped line breaks), and an unquoted \\N is null.",
            valueName: "char"))
    var escape: String?

    @Flag(help: "The CSV file has no header row; name the columns with --columns.")
    var noHeader = false

    @Option(
        help: ArgumentHelp(
            "Name the CSV columns, e.g. --columns id,name,city (with --no-header, or to replace the header's names); for --format fixed, name:start:width with 1-based starts, e.g. --columns id:1:5,name:6:20.",
            valueName: "a,b,c"))
    var columns: String?

    @Option(
        help: ArgumentHelp(
            "Skip this many lines before the CSV header, e.g. --skip-lines 2 for a title and a blank line.",
            valueName: "n"))
    var skipLines: Int = 0

    @Option(
        help: ArgumentHelp(
            "With --format fixed: what a line shorter than the layout is, reject (the default: a located rejected record) or pad (read as if padded with blanks, as csvkit and pgloader do).",
            valueName: "reject|pad"))
    var shortLines: String?

    @Option(help: ArgumentHelp("Skip CSV lines that start with this character, e.g. --comment '#'.", valueName: "char"))
    var comment: String?

    @Flag(help: "Skip blanks at the start of CSV fields, so that a, \"b\" reads b as a quoted field.")
    var skipInitialSpace = false

    @Option(
        name: .customLong("null"),
        help: ArgumentHelp(
            "A word that means null in an unquoted CSV field, e.g. --null NA --null - (repeatable; replaces the default list; --null '' for empty fields only).",
            valueName: "word"))
    var nullWords: [String] = []

    @Option(
        help: ArgumentHelp(
            "What a quoted empty CSV field (\"\") reads as: string (the default: the empty string) or null.",
            valueName: "string|null"))
    var quotedEmpty: String?

    @Flag(help: "Trim white space around unquoted values before reading them.")
    var trim = false

    @Option(
        help: ArgumentHelp(
            "The input's text encoding, e.g. --encoding windows-1252 (utf-8 default; utf-16le, utf-16be, latin-1 or any iconv name; a UTF-16/32 byte order mark is detected).",
            valueName: "name"))
    var encoding: String?

    @Flag(help: "Numbers are written with a decimal comma and . or blanks between thousands, e.g. 1.234,56.")
    var decimalComma = false

    @Option(
        help: ArgumentHelp(
            "How dates are written, e.g. --date-format dd.MM.yyyy (iso8601, unix, unix_ms, excel or a pattern; repeat it to try several in order).",
            valueName: "format"))
    var dateFormat: [String] = []

    @Option(
        help: ArgumentHelp(
            "The time zone of dates written without one, e.g. --timezone Europe/Berlin or --timezone +02:00 (default UTC; dates with their own zone and Unix times keep theirs).",
            valueName: "zone"))
    var timezone: String?

    @Option(
        name: .customLong("field"),
        help: ArgumentHelp(
            "Map an attribute to a source field, e.g. --field city=address.city (a path into nested JSON objects) or --field id=\"Customer No\" (repeatable).",
            valueName: "attribute=field"))
    var fieldMappings: [String] = []

    @Option(
        name: .customLong("type"),
        help: ArgumentHelp(
            "Set the type of a column of an inferred model, by header or attribute name, e.g. --type \"Zip Code=string\"; importing a whole database, TABLE.COLUMN=TYPE, e.g. --type orders.placed_at=string (repeatable).",
            valueName: "column=TYPE"))
    var types: [String] = []

    @Option(
        name: .customLong("unique"),
        help: ArgumentHelp(
            "Add a uniqueness constraint to an inferred model, e.g. --unique sku or --unique region,code.",
            valueName: "column[,column]"))
    var unique: [String] = []

    @Flag(
        help:
            "Add the input's new columns to an inferred entity the store already has (as sqlite-utils --alter does), with inferred types: the same as --on-new-field add."
    )
    var alter = false

    @Option(
        help: ArgumentHelp(
            "What a source field that no attribute reads does: error (the default: the import fails, naming the field, its file and line), ignore (import without it; the report names it) or add (add it to an inferred entity as a new optional attribute, recorded in the store as a new model version).",
            valueName: "error|ignore|add"))
    var onNewField: String?

    @Option(
        help: ArgumentHelp(
            "What a field the import reads that the source lacks does: error (the default for fields --field names; with this flag, for every attribute read by its name) or null (read it as null).",
            valueName: "error|null"))
    var onMissingField: String?

    @Option(help: "How many records to sample when inferring types.")
    var sample: Int = 1000

    @Flag(help: "Skip validation rules (types are still checked).")
    var noValidate = false

    @Option(
        help: ArgumentHelp(
            "true (default): the import is one transaction; false: each batch commits on its own, with the progress that --resume continues from.",
            valueName: "true|false"))
    var atomic: Bool = true

    @Option(help: ArgumentHelp("Records per batch (with --atomic false, per commit).", valueName: "n"))
    var batchSize: Int = 10_000

    @Flag(
        help:
            "Continue an interrupted --atomic false import of the same files into the same entity after its last committed batch."
    )
    var resume = false

    @OptionGroup var options: GlobalOptions

    func run() throws {
        try runReportingErrors {
            guard let conflict = ConflictPolicy(rawValue: onConflict) else {
                throw FerryError(.usage, "--on-conflict must be one of error, update, keep, replace")
            }
            guard let importMode = ImportMode(rawValue: mode) else {
                throw FerryError(.usage, "--mode must be append or sync, not '\(mode)'")
            }
            if importMode != .sync, key != nil || allowEmptySync || maxDelete != nil {
                throw FerryError(.usage, "--key, --allow-empty-sync and --max-delete apply only to --mode sync")
            }
            let deletionLimit = try maxDelete.map { text in
                guard let limit = DeletionLimit(parsing: text) else {
                    throw FerryError(
                        .usage, "--max-delete takes a count (500), a share (0.25 or 25%) or none, not '\(text)'")
                }
                return limit
            }
            guard !files.isEmpty else {
                throw FerryError(.usage, "ferry import needs a file to read (or - for standard input)")
            }
            try SourceFiles.checkStandardInput(files)
            let database = try databaseSource()
            if database == nil, model == nil, files.count == 1,
                PostgresURL.isPostgresURL(file) || Self.isSQLiteDatabase(file)
            {
                return try importWholeDatabase(console: Console(quiet: options.quiet))
            }
            // The first file's extension gives the format (a pattern's first match: `nightly/*`).
            let formatFiles = database != nil ? [] : DataFormat.filesNamingFormat(of: files)
            let formatFile = formatFiles.first ?? file
            let formatName = database != nil ? "csv" : format ?? DataFormat.dataExtension(of: formatFile)
            guard let dataFormat = DataFormat(name: formatName) ?? DataFormat(pathExtension: formatName) else {
                throw FerryError(.usage, "cannot tell the format of '\(formatFile)'; pass --format csv|tsv|json|ndjson")
            }
            // One import reads one format: without --format, every file's extension must agree.
            if format == nil, database == nil,
                let other = formatFiles.dropFirst().first(where: { DataFormat.dataExtension(of: $0) != formatName })
            {
                throw FerryError(
                    .usage,
                    "'\(other)' is not a .\(formatName) file like '\(formatFile)'; one import reads one format (pass --format to read them all alike)"
                )
            }
            try PathOrURL.requireStore(store)
            let isCoreDataStore = try checkLayout()
            let paths = try database.map { $0.file.map { [$0] } ?? [] } ?? SourceFiles.expand(files)
            try CommandFiles.checkOutputs(
                store: store, inputs: paths.map { ($0, "the input") } + [(model, "the model")],
                outputs: [(rejects, "--rejects"), (options.report, "--report")])
            let entityName = entity ?? database?.defaultEntityName ?? AttributeNaming.entityName(fromPath: file)
            var step = ImportStep(source: file, format: dataFormat, entity: entityName)
            step.sources = files
            step.database = database
            step.onConflict = conflict
            if importMode == .sync {
                step.mode = .sync
                step.key = key.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
                if let deletionLimit { step.sync.maxDelete = deletionLimit }
                // An explicit --on-conflict is checked like a job's on_conflict.
                if onConflict != "error" { step.onConflictLocation = InputLocation(file: "--on-conflict") }
            }
            step.validate = !noValidate
            try configureDrift(&step)
            step.atomic = atomic
            guard batchSize > 0 else { throw FerryError(.usage, "--batch-size must be at least 1") }
            step.batchSize = batchSize
            guard let style = SourceKeyStyle(rawValue: keyStyle) else {
                throw FerryError(.usage, "--key-style must be as_is or snake_case, not '\(keyStyle)'")
            }
            // An inferred model names its attributes after the source's keys already.
            if style != .asIs, model == nil {
                throw FerryError(.usage, "--key-style applies to a model's attributes: pass --model")
            }
            step.keyStyle = style
            if nested || nestedDepth != nil {
                let nestedDepth = nestedDepth ?? NestedOptions().maxDepth
                guard (1...NestedOptions.depthLimit).contains(nestedDepth) else {
                    throw FerryError(
                        .usage, "--nested-depth must be between 1 and \(NestedOptions.depthLimit), not \(nestedDepth)")
                }
                if model == nil {
                    throw FerryError(.usage, "--nested links the related objects of a model's entity: pass --model")
                }
                if let problem = NestedOptions.problem(with: dataFormat, named: step.formatName) {
                    throw FerryError(.usage, problem)
                }
                step.nested = NestedOptions(maxDepth: nestedDepth)
            }
            if !jsonPointer.isEmpty && dataFormat != .json {
                throw FerryError(
                    .usage, "--json-pointer applies to JSON documents, not to \(dataFormat.rawValue) input '\(file)'")
            }
            step.jsonPointer = jsonPointer
            try configureJSONShape(&step)
            step.rejectsPath = rejects
            step.maxRejects = try Self.budget(maxRejects, hasRejectsFile: rejects != nil)
            step.encoding = try encoding.map { name throws(FerryError) in try TextEncoding(named: name) }
            let console = Console(quiet: options.quiet)
            if database == nil {
                try configureCSV(&step, formatName: formatName, firstFile: paths[0], console: console)
            } else if delimiter != nil || quote != nil || escape != nil || noHeader || columns != nil
                || skipInitialSpace || skipLines != 0 || comment != nil || shortLines != nil || quotedEmpty != nil
                || recordTerminator != nil || header
            {
                throw FerryError(.usage, "the CSV flags apply to data files, not to a database")
            } else if !nullWords.isEmpty {
                step.coercion.nullTokens = Set(nullWords)
            }
            step.coercion.trim = trim
            step.coercion.decimalComma = decimalComma
            let formats = try parsedDateFormats()
            if let timezone {
                guard let zone = CoercionOptions.timeZone(named: timezone) else {
                    throw FerryError(.usage, "--timezone: " + CoercionOptions.timeZoneProblem(timezone))
                }
                step.coercion.timeZone = zone
            }
            if formats.count == 1 {
                step.coercion.dateFormat = formats[0]
            } else if formats.count > 1 {
                step.coercion.dateFormat = .firstOf(formats)
            }
            // Checked before any file is opened: a usage error is reported as one (exit 64).
            let overrides = try Self.typeOverrides(types)
            let explicitFields = try Self.fieldMappings(fieldMappings)
            for mapping in explicitFields where !dataFormat.readsTextColumns {
                if case .field(let name) = mapping.source, case .failure(let problem) = JSONFieldPath.parse(name) {
                    throw FerryError(.usage, "--field \(mapping.attribute)=\(name): \(problem.description)")
                }
            }

            // Where the import goes: the store, or for a dry run that would create the store or add
            // a table to it, a scratch store (or copy) removed at the end: a dry run changes nothing.
            let target = ImportTarget(store: store, dryRun: options.dryRun)
            defer { target.close() }
            // An import that creates the store and fails leaves no store behind: nothing it
            // inferred or recorded (its model above all) shapes a corrected retry. With
            // `--atomic false` the store stays, with its committed batches, for `--resume`.
            let createsStoreFile =
                !options.dryRun && StoreLocation(store).existsOnDisk == false
            // A dry run writes into a copy of the Core Data store and its -wal.
            if isCoreDataStore { try target.copyForDryRun() }
            let writerLock = try target.lock()
            defer { withExtendedLifetime(writerLock) {} }
            var reader: (any RecordReader)? = nil
            let storeModel: ObjectModel
            var openOptions = Store.Options()
            openOptions.writerLock = target.lockPolicy
            let bundle = try model.map { try ModelLoader().load(path: $0) }
            var coreDataStore = try Store.openCoreDataTarget(
                at: target.path, bundle: bundle, creating: layout == "coredata" ? bundle?.current : nil,
                compiledModel: compiledModel, options: openOptions)
            if let coreDataStore {
                storeModel = coreDataStore.model
                guard storeModel.entity(named: entityName) != nil else {
                    throw FerryError(
                        .usage,
                        "the Core Data store's model \(storeModel.name) has no entity '\(entityName)'; pass --entity (entities: \(storeModel.entityNames.joined(separator: ", ")))"
                    )
                }
            } else if let model {
                storeModel = try ModelLoader().load(path: model).current
                guard storeModel.entity(named: entityName) != nil else {
                    throw FerryError(
                        .usage,
                        "model \(storeModel.name) has no entity '\(entityName)'; pass --entity (entities: \(storeModel.entityNames.joined(separator: ", ")))"
                    )
                }
            } else {
                var inference = ImportInference()
                inference.typeOverrides = overrides
                inference.unique = unique.map {
                    $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
                }
                inference.alter = step.drift.onNewField == .add
                inference.sampleSize = sample
                inference.explicitFields = explicitFields
                let inferred = try inference.resolve(&step, target: target)
                storeModel = inferred.model
                reader = inferred.reader
                if !options.quiet { inferred.notes.forEach(console.line) }
            }
            // --field mappings win over the ones derived from names.
            step.fields =
                step.fields.filter { field in !explicitFields.contains { $0.attribute == field.attribute } }
                + explicitFields
            // Checked against the entity as the model declares it (a store's model has no transient
            // attributes): a --field into an unknown or transient attribute is refused, as `ferry run`
            // refuses it in a job.
            let declared =
                bundle?.version(storeModel.version).map { coreDataStore == nil ? $0 : $0.withInheritedProperties }
                ?? storeModel
            if let entity = declared.entity(named: entityName) {
                let command = Job(
                    name: "ferry import", path: "ferry import", store: StoreReference(path: store), modelPath: model,
                    steps: [])
                let problems = JobValidator().fieldProblems(of: step, entity: entity, job: command)
                if !problems.isEmpty { throw FerryErrors(problems) }
            }
            if step.mode == .sync, let destination = storeModel.entity(named: entityName) {
                // Refused before the store is opened: nothing is touched.
                do {
                    _ = try SyncKey.attributes(of: step, entity: destination)
                } catch let error as FerryError {
                    // The job's wording names step keys; the command line has --key instead.
                    throw FerryError(
                        .usage, error.message.replacingOccurrences(of: "'key: [attribute]' to the step", with: "--key"),
                        notes: error.notes)
                }
            }
            var opened: Store? =
                try coreDataStore ?? Store.open(at: target.path, model: storeModel, options: openOptions)
            // The import runs as the same step in a job would, with `verify: false`: ferry import
            // runs no checks after the import (ferry verify does).
            step.verify = false
            let job = Job(
                name: "ferry import", path: "ferry import", store: StoreReference(path: store), modelPath: model,
                steps: [.import(step)])
            let runner = JobRunner(job: job, model: storeModel)
            runner.dryRun = options.dryRun
            runner.resume = resume
            runner.resumeCommand = ResumeCommandLine.text()
            runner.allowsEmptySync = allowEmptySync
            runner.progress = console
            if let reader { runner.readers = [1: reader] }
            var report = RunReport(
                command: "import", job: job.name, jobFile: nil, store: store, model: storeModel.name,
                modelVersion: storeModel.version, dryRun: options.dryRun)
            if let openStore = opened { runner.run(on: openStore, into: &report) }
            if report.failure != nil && createsStoreFile && step.atomic {
                // Both references dropped: the store is closed before its files are removed.
                (opened, coreDataStore) = (nil, nil)
                StoreFiles.remove(store)
            }
            return try finish(&report)
        }
    }

    /// Ends the run's report with its exit status, writes it (`--report`) and prints the error of
    /// a failed step; returns the exit status.
    func finish(_ report: inout RunReport) throws -> Int32 {
        let code = ExitStatus.code(for: report.failure)
        report.finish(exitCode: code)
        if let path = options.report { try writeReport(report, to: path) }
        if let failed = report.steps.last(where: { $0.outcome == .failed }), let error = failed.error {
            Console.printError(error)
        }
        return code
    }

    /// `--on-new-field`, `--on-missing-field` and `--alter` (which is `--on-new-field add`).
    func configureDrift(_ step: inout ImportStep) throws {
        if let onNewField {
            guard let policy = SchemaDriftPolicy.NewField(rawValue: onNewField) else {
                throw FerryError(.usage, "--on-new-field must be error, ignore or add, not '\(onNewField)'")
            }
            if alter && policy != .add {
                throw FerryError(.usage, "--alter is --on-new-field add; it does not go with --on-new-field \(policy)")
            }
            step.drift.newField = policy
            step.drift.newFieldLocation = InputLocation(file: "--on-new-field")
        } else if alter {
            step.drift.newField = .add
            step.drift.newFieldLocation = InputLocation(file: "--alter")
        }
        if let onMissingField {
            guard let policy = SchemaDriftPolicy.MissingField(rawValue: onMissingField) else {
                throw FerryError(.usage, "--on-missing-field must be error or null, not '\(onMissingField)'")
            }
            step.drift.missingField = policy
            step.drift.missingFieldLocation = InputLocation(file: "--on-missing-field")
        }
        if step.drift.onNewField == .add, model != nil {
            throw FerryError(
                .usage,
                "--on-new-field add (--alter) adds columns to an inferred model; with --model, add the attribute in a new version of the model and migrate the store"
            )
        }
    }

    /// Checks `--layout` and `--compiled-model` against the store; true when the store is an
    /// existing Core Data store (whose layout is detected).
    func checkLayout() throws -> Bool {
        let location = StoreLocation(store)
        let isCoreDataStore = location.isCoreData
        let exists = location.existsOnDisk == true
        switch layout {
        case nil: break
        case "coredata":
            if exists && !isCoreDataStore {
                throw FerryError(
                    .usage,
                    "--layout coredata creates a new Core Data store, but '\(store)' exists and is not one (an existing store's layout is detected, never given)"
                )
            }
            if !exists && model == nil {
                throw FerryError(
                    .usage,
                    "--layout coredata needs --model App.xcdatamodeld: the new Core Data store is laid out for the model"
                )
            }
        case "ferry":
            if isCoreDataStore {
                throw FerryError(
                    .usage, "'\(store)' is a Core Data store: its layout is detected, --layout ferry does not apply")
            }
        case let other?:
            throw FerryError(.usage, "--layout must be ferry or coredata, not '\(other)'")
        }
        // Before ferry's lock file is made beside it: a store that cannot be written gets nothing.
        if exists && !options.dryRun { try Store.checkWritable(store) }
        if compiledModel != nil && (layout != "coredata" || exists) {
            throw FerryError(
                .usage,
                "--compiled-model applies when --layout coredata creates a new Core Data store (an existing store keeps its metadata)"
            )
        }
        return isCoreDataStore
    }

    /// Applies the CSV options: the delimiter (given, implied by tsv, or detected), the quote,
    /// header and column names, null words and initial blanks.
    func configureCSV(_ step: inout ImportStep, formatName: String, firstFile file: String, console: Console) throws {
        let csvFlagsGiven =
            delimiter != nil || quote != nil || escape != nil || noHeader || columns != nil || skipInitialSpace
            || !nullWords.isEmpty || skipLines != 0 || comment != nil || quotedEmpty != nil || recordTerminator != nil
            || header
        if step.format == .fixed {
            try configureFixedWidth(&step)
            return
        }
        if shortLines != nil {
            let shown = DataFormat.isCopyText(formatName) ? "pgcopy" : step.formatName
            throw FerryError(.usage, "--short-lines applies to fixed-width text (--format fixed), not \(shown)")
        }
        guard step.format == .csv else {
            let rowColumns: Bool
            if case .rows = step.jsonShape { rowColumns = true } else { rowColumns = false }
            if csvFlagsGiven
                && !(rowColumns && columns != nil && delimiter == nil && quote == nil && escape == nil && !noHeader
                    && !skipInitialSpace && nullWords.isEmpty && skipLines == 0 && comment == nil && quotedEmpty == nil
                    && recordTerminator == nil && !header)
            {
                throw FerryError(
                    .usage,
                    "--delimiter, --record-terminator, --quote, --escape, --no-header, --header, --columns, --skip-lines, --comment, --skip-initial-space, --quoted-empty and --null apply to CSV, not \(step.formatName)"
                )
            }
            return
        }
        if DataFormat.isCopyText(formatName) {
            try configureCopyText(&step)
            return
        }
        if header {
            throw FerryError(
                .usage, "--header applies to --format pgcopy (a CSV file has a header row unless --no-header)")
        }
        if let recordTerminator {
            step.csv.recordTerminator = try Self.separator(recordTerminator, flag: "--record-terminator")
        }
        if let quote { step.csv.quote = try Self.oneByte(quote, flag: "--quote") }
        guard skipLines >= 0 else { throw FerryError(.usage, "--skip-lines must be 0 or more, not \(skipLines)") }
        step.csv.skipLines = skipLines
        if let comment { step.csv.comment = try Self.oneByte(comment, flag: "--comment") }
        if let escape { step.csv.escape = try Self.oneByte(escape, flag: "--escape") }
        let sample = file == "-" ? nil : CSVDialectSniffer.sample(path: file, encoding: step.encoding)
        if quote == nil, let sample {
            let detected = CSVDialectSniffer.sniffQuote(
                sample.bytes, isComplete: sample.isComplete, skipLines: step.csv.skipLines, comment: step.csv.comment)
            // A quote may not take a role the flags gave another character.
            if detected != UInt8(ascii: "\""), detected != step.csv.escape, detected != step.csv.comment,
                try !(delimiter.map({ try Self.separator($0, flag: "--delimiter") }) ?? []).contains(detected),
                step.csv.customTerminator == nil
            {
                step.csv.quote = detected
                if !options.quiet { console.line("detected quote \(String(UnicodeScalar(detected))) in \(file)") }
            }
        }
        if let delimiter {
            let bytes = try Self.separator(delimiter, flag: "--delimiter")
            step.csv.delimiter = bytes[0]
            step.csv.delimiterSequence = bytes.count > 1 ? bytes : nil
        } else if let implied = DataFormat.impliedDelimiter(formatName) {
            step.csv.delimiter = implied
        } else if let sample, step.csv.customTerminator == nil,
            let detected = CSVDialectSniffer.sniffDelimiter(
                sample.bytes, quote: step.csv.quote, isComplete: sample.isComplete, skipLines: step.csv.skipLines,
                comment: step.csv.comment)
        {
            step.csv.delimiter = detected
            if detected != UInt8(ascii: ",") && !options.quiet {
                console.line("detected delimiter \(Self.describe(detected)) in \(file)")
            }
        }
        if let problem = step.csv.delimiterQuoteProblem { throw FerryError(.usage, problem) }
        if model == nil && !noHeader && columns == nil, step.csv.delimiterSequence == nil,
            step.csv.customTerminator == nil, let sample,
            let count = CSVDialectSniffer.headerlessColumnCount(
                sample.bytes, delimiter: step.csv.delimiter, quote: step.csv.quote, isComplete: sample.isComplete,
                skipLines: step.csv.skipLines,
                comment: step.csv.comment)
        {
            // The first row is data: the columns are named by position.
            step.csv.hasHeader = false
            step.csv.columns = (1...count).map { "column_\($0)" }
            if !options.quiet { console.line("detected no header row in \(file): columns column_1 … column_\(count)") }
        }
        if let columns {
            step.csv.columns = columns.split(separator: ",", omittingEmptySubsequences: false).map {
                String($0).trimmingCharacters(in: .whitespaces)
            }
        }
        if noHeader {
            guard step.csv.columns != nil else {
                throw FerryError(.usage, "--no-header needs --columns a,b,c to name the columns")
            }
            step.csv.hasHeader = false
        }
        step.csv.skipInitialSpace = skipInitialSpace
        if let quotedEmpty {
            guard let reading = CSVOptions.QuotedEmpty(rawValue: quotedEmpty) else {
                throw FerryError(.usage, "--quoted-empty must be string or null, not '\(quotedEmpty)'")
            }
            step.csv.quotedEmpty = reading
        }
        // Headers with blank or repeated names still import: they are renamed, not refused.
        step.csv.renamesUnusableHeaders = true
        // A step's null words reach the CSV reader through ReaderFactory (unquoted fields only).
        step.coercion.nullTokens = nullWords.isEmpty ? (model == nil ? Self.defaultNullWords : [""]) : Set(nullWords)
    }

    /// Applies the flags `--format pgcopy` takes: `--delimiter` (one character, a tab by default),
    /// `--header` or `--columns`, `--skip-lines` and `--null` (besides `\N`).
    func configureCopyText(_ step: inout ImportStep) throws {
        step.csv.readCopyText()
        if quote != nil || escape != nil || comment != nil || skipInitialSpace || quotedEmpty != nil
            || recordTerminator != nil || noHeader
        {
            throw FerryError(
                .usage,
                "--quote, --escape, --comment, --skip-initial-space, --quoted-empty, --record-terminator and --no-header apply to CSV, not --format pgcopy (it has no quotes, escapes with a backslash and has no header row unless --header)"
            )
        }
        if let delimiter { step.csv.delimiter = try Self.oneByte(delimiter, flag: "--delimiter") }
        if let problem = step.csv.delimiterQuoteProblem { throw FerryError(.usage, problem) }
        guard skipLines >= 0 else { throw FerryError(.usage, "--skip-lines must be 0 or more, not \(skipLines)") }
        step.csv.skipLines = skipLines
        step.csv.hasHeader = header
        if let columns {
            step.csv.columns = columns.split(separator: ",", omittingEmptySubsequences: false).map {
                String($0).trimmingCharacters(in: .whitespaces)
            }
        }
        guard header || step.csv.columns != nil else {
            throw FerryError(
                .usage, "--format pgcopy has no header row: name the columns with --columns a,b,c, or pass --header")
        }
        step.csv.renamesUnusableHeaders = true
        // An empty field is the empty string; \N is null, and so are the --null words.
        step.coercion.nullTokens = Set(nullWords)
    }

    /// Applies `--json-shape`, `--key-field` and, for rows, `--columns` to a JSON or NDJSON import.
    func configureJSONShape(_ step: inout ImportStep) throws {
        guard jsonShape != nil || keyField != nil else { return }
        guard step.format == .json || step.format == .ndjson else {
            throw FerryError(
                .usage, "--json-shape and --key-field apply to JSON and NDJSON, not \(step.formatName)")
        }
        switch jsonShape ?? "records" {
        case "records":
            step.jsonShape = .records
        case "object":
            guard step.format == .json else {
                throw FerryError(
                    .usage,
                    "--json-shape object applies to a JSON document, not to NDJSON (whose lines are the records)")
            }
            step.jsonShape = .object(keyField: keyField ?? "key")
        case "rows":
            let names = columns.map {
                $0.split(separator: ",", omittingEmptySubsequences: false).map {
                    String($0).trimmingCharacters(in: .whitespaces)
                }
            }
            if let names, Set(names).count != names.count || names.contains("") {
                throw FerryError(.usage, "--columns for rows must be distinct, non-empty names, not '\(columns ?? "")'")
            }
            step.jsonShape = .rows(columns: names)
        case let other:
            throw FerryError(.usage, "--json-shape must be records, object or rows, not '\(other)'")
        }
        if keyField != nil, case .records = step.jsonShape {
            throw FerryError(.usage, "--key-field applies to --json-shape object")
        }
        if keyField != nil, case .rows = step.jsonShape {
            throw FerryError(.usage, "--key-field applies to --json-shape object")
        }
    }

    /// Applies `--columns name:start:width,…` (required), `--skip-lines` and `--null` to a
    /// fixed-width import; the other CSV flags do not apply to it.
    func configureFixedWidth(_ step: inout ImportStep) throws {
        if delimiter != nil || quote != nil || escape != nil || noHeader || skipInitialSpace || comment != nil
            || quotedEmpty != nil
        {
            throw FerryError(
                .usage,
                "--delimiter, --quote, --escape, --no-header, --comment, --skip-initial-space and --quoted-empty apply to CSV, not fixed-width text"
            )
        }
        guard let columns else {
            throw FerryError(
                .usage,
                "--format fixed needs --columns name:start:width,… to say where the fields are (1-based, e.g. --columns id:1:5,name:6:20)"
            )
        }
        guard skipLines >= 0 else { throw FerryError(.usage, "--skip-lines must be 0 or more, not \(skipLines)") }
        step.fixedWidth = FixedWidthLayout(columns: try FixedWidthLayout.parse(columns), skipLines: skipLines)
        if let shortLines {
            guard let policy = FixedWidthLayout.ShortLines(rawValue: shortLines) else {
                throw FerryError(.usage, "--short-lines must be reject or pad, not '\(shortLines)'")
            }
            step.fixedWidth.shortLines = policy
        }
        let problems = step.fixedWidth.problems()
        guard problems.isEmpty else { throw FerryError(.usage, "--columns: " + problems.joined(separator: "; ")) }
        step.coercion.nullTokens = nullWords.isEmpty ? (model == nil ? Self.defaultNullWords : [""]) : Set(nullWords)
    }

    /// Null words of a `ferry import` without `--model`, as pandas and csvkit read them: an
    /// empty field, `NA`, `N/A`, `n/a`, `NULL`, `null` and `#N/A` (unquoted; `-` is not null).
    static let defaultNullWords: Set<String> = ["", "NA", "N/A", "n/a", "NULL", "null", "#N/A"]

    static func describe(_ byte: UInt8) -> String {
        byte == 9 ? "tab" : "'\(String(UnicodeScalar(byte)))'"
    }

    /// A delimiter or record terminator of one to 8 bytes (`\t`, `\r`, `\n` name those bytes).
    static func separator(_ text: String, flag: String) throws -> [UInt8] {
        guard let bytes = CSVOptions.separatorBytes(text) else {
            throw FerryError(.usage, "\(flag) must be one to 8 characters, got '\(text)'")
        }
        return bytes
    }

    static func oneByte(_ text: String, flag: String) throws -> UInt8 {
        if text == "\\t" || text == "tab" || text == "\t" { return UInt8(ascii: "\t") }
        guard text.utf8.count == 1, let byte = text.utf8.first else {
            throw FerryError(.usage, "\(flag) must be one character, got '\(text)'")
        }
        return byte
    }

    static func budget(_ text: String?, hasRejectsFile: Bool) throws -> RejectBudget {
        guard let text else { return hasRejectsFile ? .unlimited : .count(0) }
        if !hasRejectsFile && text != "0" {
            throw FerryError(.usage, "--max-rejects needs --rejects FILE: rejected records must go somewhere")
        }
        if text.hasSuffix("%"), let percent = Double(text.dropLast()) {
            guard (0...100).contains(percent) else {
                throw FerryError(.usage, "--max-rejects takes a percentage from 0% to 100%, got '\(text)'")
            }
            return .percent(percent)
        }
        if let count = Int(text), count >= 0 { return .count(count) }
        throw FerryError(.usage, "--max-rejects must be a count or a percentage like 1%, got '\(text)'")
    }

    /// `--field attribute=field`: the field (a column, a key or a path such as `address.city`)
    /// an attribute reads.
    static func fieldMappings(_ items: [String]) throws -> [FieldMapping] {
        try items.map { item in
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw FerryError(.usage, "--field needs attribute=field, e.g. --field city=address.city; got '\(item)'")
            }
            return FieldMapping(
                attribute: parts[0], source: .field(parts[1]), location: InputLocation(file: "--field \(item)"))
        }
    }

    static func typeOverrides(_ items: [String]) throws -> [String: AttributeType] {
        var result: [String: AttributeType] = [:]
        for item in items {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let type = AttributeType(name: parts[1]) else {
                throw FerryError(
                    .usage, "--type needs column=TYPE with a type such as int64, decimal, date; got '\(item)'")
            }
            result[parts[0]] = type
        }
        return result
    }
}
