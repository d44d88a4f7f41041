import FerryCore
import FerryFormats

import struct Foundation.TimeZone

/// A job file: a store, a model and the steps to run on them.
public struct Job: Sendable {
    /// The job's name (`job:` or the file's base name).
    public var name: String
    /// The job's `description:`, shown in reports; nil when the file has none.
    public var description: String?
    /// The job file's path, as given.
    public var path: String
    /// The store the steps run on (`store:`).
    public var store: StoreReference
    /// The model path, resolved against the job file's folder.
    public var modelPath: String?
    /// Where `model:` is in the job file, for errors about the model.
    public var modelLocation: InputLocation?
    /// The model version the job works with (`model: {path: …, version: "1"}`); nil for the
    /// bundle's current version.
    public var modelVersion: String?
    /// Where the model's `version:` is, for errors about the version.
    public var modelVersionLocation: InputLocation?
    /// The steps, in the order they run.
    public var steps: [Step]
    /// The values of `$name` in step predicates and in the mapping files of migrate steps
    /// (`--param`, the environment, `params:`), typed by `ParameterValue`.
    public var parameters: [String: Value]
    /// Where the `steps` key is (for "the job has no steps").
    public var stepsLocation: InputLocation?

    /// A job with its store, model and steps, as ``JobLoader`` builds it from a job file.
    public init(
        name: String, description: String? = nil, path: String, store: StoreReference, modelPath: String?,
        modelLocation: InputLocation? = nil,
        modelVersion: String? = nil, modelVersionLocation: InputLocation? = nil, steps: [Step],
        parameters: [String: Value] = [:]
    ) {
        self.name = name
        self.description = description
        self.path = path
        self.store = store
        self.modelPath = modelPath
        self.modelLocation = modelLocation
        self.modelVersion = modelVersion
        self.modelVersionLocation = modelVersionLocation
        self.steps = steps
        self.parameters = parameters
    }

    /// The version of `bundle` the job works with: `modelVersion` when set, else the current one.
    /// - Throws: `FerryError` (`invalidDefinition`) at `version:` when the bundle has no such version.
    public func model(in bundle: ModelBundle) throws -> ObjectModel {
        guard let label = modelVersion else { return bundle.current }
        guard let model = bundle.version(label) else {
            let labels = bundle.versions.map(\.version)
            throw FerryError(
                .invalidDefinition,
                "model \(bundle.name) has no version '\(label)' (versions: \(labels.joined(separator: ", ")))\(Suggestions.didYouMean(label, in: labels))",
                at: modelVersionLocation ?? modelLocation ?? InputLocation(file: path))
        }
        return model
    }
}

/// Where a job's store is.
public struct StoreReference: Sendable, Hashable {
    /// A file path resolved against the job's folder, or `:memory:`.
    public var path: String
    /// Create the store when it does not exist.
    public var create: Bool
    /// Build a new store from scratch beside the old one and swap it in atomically only when every
    /// step succeeded (a nightly full reload that never leaves a half-built store behind).
    public var rebuild: Bool
    /// A store file copied over `path` (with its `-wal`/`-shm`) before the steps run, so that a
    /// job can work on a fresh copy of a snapshot (resolved against the job's folder).
    public var copyFrom: String?
    /// `migrate: auto`: a store at another version of the job's model bundle is migrated to the
    /// job's model when the job starts (Core Data's `shouldMigrateStoreAutomatically`).
    public var migrateAutomatically = false
    /// `layout: coredata`: a store the job creates is a Core Data store for the job's model (an
    /// existing store's layout is detected, never given).
    public var createsCoreDataStore = false
    /// `compiled_model:` the compiled model (`App.momd`) whose version hashes a new Core Data
    /// store records (resolved against the job's folder).
    public var compiledModel: String?
    /// Where `store:` is in the job file.
    public var location: InputLocation?

    /// A store at `path`, created when missing unless `create` is false.
    public init(
        path: String, create: Bool = true, rebuild: Bool = false, copyFrom: String? = nil,
        location: InputLocation? = nil
    ) {
        self.path = path
        self.create = create
        self.rebuild = rebuild
        self.copyFrom = copyFrom
        self.location = location
    }

    /// Whether the store lives in memory only (`:memory:`).
    public var isInMemory: Bool { path == ":memory:" }
}

/// One step of a job.
public enum Step: Sendable {
    /// Reads records into an entity.
    case `import`(ImportStep)
    /// Migrates the store to a later model version.
    case migrate(MigrateStep)
    /// Writes an entity's records to a file.
    case export(ExportStep)
    /// Runs the built-in checks and the expectations.
    case verify(VerifyStep)
    /// Sets attributes of the objects a predicate selects.
    case update(UpdateStep)
    /// Deletes the objects a predicate selects.
    case delete(DeleteStep)

    /// Where the step is in the job file.
    public var location: InputLocation? {
        switch self {
        case .import(let step): return step.location
        case .migrate(let step): return step.location
        case .export(let step): return step.location
        case .verify(let step): return step.location
        case .update(let step): return step.location
        case .delete(let step): return step.location
        }
    }

    /// `import`, `export`, … as written in the job file.
    public var kind: String {
        switch self {
        case .import: return "import"
        case .migrate: return "migrate"
        case .export: return "export"
        case .verify: return "verify"
        case .update: return "update"
        case .delete: return "delete"
        }
    }
}

/// A `migrate` step: moves the job's store to a later version of the job's model bundle, one
/// version step at a time (each inferred or with its mapping file).
public struct MigrateStep: Sendable, Hashable {
    /// The target version label; nil for the bundle's current version.
    public var to: String?
    /// Keep the original store (and its `-wal`/`-shm`) as a backup beside it.
    public var backup: Bool
    /// Where the step is (its `migrate` key).
    public var location: InputLocation?
    /// Where `to:` is, for errors about the version.
    public var toLocation: InputLocation?

    /// A step to `to` (nil: the bundle's current version), keeping a backup unless `backup` is false.
    public init(
        to: String? = nil, backup: Bool = true, location: InputLocation? = nil, toLocation: InputLocation? = nil
    ) {
        self.to = to
        self.backup = backup
        self.location = location
        self.toLocation = toLocation
    }
}

/// A `verify` step: built-in checks and expectations run on the job's store; a failed check
/// fails the run with exit code 3.
public struct VerifyStep: Sendable {
    /// The counts, assertions and records the store must meet (`expect:`), besides the built-in checks.
    public var expectations: Expectations
    /// Offending records listed per check.
    public var maxOffending: Int
    /// Where the step is (its `verify` key).
    public var location: InputLocation?

    /// A step running the built-in checks and `expectations`, listing up to `maxOffending` records per check.
    public init(expectations: Expectations = Expectations(), maxOffending: Int = 5, location: InputLocation? = nil) {
        self.expectations = expectations
        self.maxOffending = maxOffending
        self.location = location
    }
}

/// The data formats ferry reads and writes.
public enum DataFormat: String, Sendable, Hashable, CaseIterable {
    /// CSV (or TSV), a JSON document, and NDJSON (one JSON value per line).
    case csv, json, ndjson
    /// Fixed-width text: fields are columns of characters (`FixedWidthLayout`); import only.
    case fixed

    /// A format of named text columns (CSV, fixed-width): every record has every column, the
    /// values are untyped text, and the reader applies the null words.
    public var readsTextColumns: Bool { self == .csv || self == .fixed }

    /// Why an export cannot be fixed-width.
    package static let fixedExportMessage =
        "ferry exports csv, tsv, json or ndjson; fixed-width text is read, not written"

    /// The format for a file name's extension (`.csv`, `.tsv`, `.json`, `.ndjson`, `.jsonl`), or nil.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "csv", "tsv", "tab", "txt": self = .csv
        case "json": self = .json
        case "ndjson", "jsonl", "ldjson": self = .ndjson
        default: return nil
        }
    }

    /// The extension that names a file's data format, looking through a compression extension:
    /// `csv` for `orders.csv` and `orders.csv.gz`, `gz` for `orders.gz`.
    package static func dataExtension(of path: String) -> String {
        var parts = (path.split(separator: "/").last ?? "").split(separator: ".", omittingEmptySubsequences: false).map(
            String.init)
        func popExtension() -> String? {
            guard parts.count > 1, let last = parts.last, !(parts.count == 2 && parts[0].isEmpty) else { return nil }
            parts.removeLast()
            return last
        }
        guard let outer = popExtension() else { return "" }
        guard Compression(pathExtension: outer) != nil, let inner = popExtension() else { return outer }
        return inner
    }

    /// The files whose extensions give the format of an import's sources, in reading order: a
    /// glob pattern's matches (the pattern itself while it matches nothing), a path as written.
    /// The first file decides the format (`nightly/*` of `day1.csv`, `day2.csv` is CSV); the
    /// others must agree with it unless a format is given.
    package static func filesNamingFormat(of sources: [String]) -> [String] {
        sources.flatMap { source in
            SourceFiles.isPattern(source) ? ((try? SourceFiles.matching(source)) ?? [source]) : [source]
        }
    }

    /// The CSV delimiter a format name or file extension implies: a tab for `tsv` and `tab`,
    /// nil for everything else (the CSV default, a comma, or a given delimiter applies).
    package static func impliedDelimiter(_ nameOrExtension: String) -> UInt8? {
        switch nameOrExtension.lowercased() {
        case "tsv", "tab": return UInt8(ascii: "\t")
        default: return nil
        }
    }

    /// True for `pgcopy`: PostgreSQL's `COPY … TEXT` format, read by the CSV reader with
    /// ``CSVOptions/copyText``.
    package static func isCopyText(_ name: String) -> Bool { name.lowercased() == "pgcopy" }

    /// Parses `csv`, `tsv` (CSV with tabs), `pgcopy` (PostgreSQL COPY text), `json`, `ndjson` or `jsonl`.
    public init?(name: String) {
        switch name.lowercased() {
        case "csv", "tsv", "pgcopy": self = .csv
        case "json": self = .json
        case "ndjson", "jsonl": self = .ndjson
        case "fixed": self = .fixed
        default: return nil
        }
    }
}

/// How one destination attribute gets its value during an import.
public struct FieldMapping: Sendable, Hashable {
    /// Where the attribute's value comes from.
    public enum Source: Sendable, Hashable {
        /// A field of the source record, by name (CSV column, JSON key).
        case field(String)
        /// A constant, written as text and coerced to the attribute's type.
        case constant(String)
    }

    /// The destination attribute.
    public var attribute: String
    /// The source field or constant.
    public var source: Source
    /// Per-field overrides of the step's coercion options (nil: use the step's).
    public var trim: Bool?
    /// The field's date format (`date_format:`); nil: the step's.
    public var dateFormat: DateFormat?
    /// The words read as true (`true_words:`); nil: the step's.
    public var trueWords: Set<String>?
    /// The words read as false (`false_words:`); nil: the step's.
    public var falseWords: Set<String>?
    /// The texts read as null (`null:`); nil: the step's.
    public var nullTokens: Set<String>?
    /// The zone of the field's dates written without one (`timezone:`); nil: the step's.
    public var timeZone: TimeZone?
    /// Where the mapping is in the job file.
    public var location: InputLocation?

    /// A mapping of `attribute` from `source`, with optional per-field coercion overrides.
    public init(
        attribute: String, source: Source, trim: Bool? = nil, dateFormat: DateFormat? = nil,
        trueWords: Set<String>? = nil, falseWords: Set<String>? = nil, nullTokens: Set<String>? = nil,
        location: InputLocation? = nil
    ) {
        self.attribute = attribute
        self.source = source
        self.trim = trim
        self.dateFormat = dateFormat
        self.trueWords = trueWords
        self.falseWords = falseWords
        self.nullTokens = nullTokens
        self.location = location
    }

    /// The step's coercion options with this field's overrides applied.
    public func options(overriding step: CoercionOptions) -> CoercionOptions {
        var options = step
        if let trim { options.trim = trim }
        if let dateFormat { options.dateFormat = dateFormat }
        if let trueWords { options.trueWords = trueWords }
        if let falseWords { options.falseWords = falseWords }
        if let nullTokens { options.nullTokens = nullTokens }
        if let timeZone { options.timeZone = timeZone }
        return options
    }
}

/// How a to-one relationship is resolved during an import: the source field holds a value of
/// a unique attribute (`match`) of the destination entity.
public struct RelationshipMapping: Sendable, Hashable {
    /// What an unresolved reference does (`missing:`).
    public enum Missing: String, Sendable, Hashable, CaseIterable {
        /// An unresolved reference rejects the record.
        case reject
        /// An unresolved reference leaves the relationship empty.
        case null
    }

    /// The to-one relationship of the step's entity.
    public var relationship: String
    /// The source field holding the related object's `match` value.
    public var field: String
    /// The destination attribute that identifies the related object.
    public var match: String
    /// What a reference to no object does: reject the record (the default) or leave it empty.
    public var missing: Missing
    /// Where the mapping is in the job file.
    public var location: InputLocation?

    /// Resolves `relationship` by looking up the value of `field` in the destination's `match` attribute.
    public init(
        relationship: String, field: String, match: String, missing: Missing = .reject, location: InputLocation? = nil
    ) {
        self.relationship = relationship
        self.field = field
        self.match = match
        self.missing = missing
        self.location = location
    }
}

/// How many rejected records a step tolerates.
public enum RejectBudget: Sendable, Hashable {
    /// At most this many rejected records.
    case count(Int)
    /// A percentage of the records read (checked at the end of the step and whenever the
    /// count alone already exceeds it).
    case percent(Double)
    /// Any number of rejected records.
    case unlimited
}

/// An `import` step.
public struct ImportStep: Sendable {
    /// The source paths and glob patterns, resolved against the job's folder (`-` for standard
    /// input): one, or several read one after the other as one source (see `SourceFiles`).
    public var sources: [String]
    /// The files the step reads (none for a database on a server): what a job must not overwrite.
    public var inputFiles: [String] {
        guard let database else { return sources }
        return database.file.map { [$0] } ?? []
    }
    /// The source as a label (reports, messages): the one path or pattern, or the list of them.
    /// Setting it makes it the only source.
    public var source: String {
        get { sources.count == 1 ? sources[0] : sources.joined(separator: ", ") }
        set { sources = [newValue] }
    }
    /// The source's data format (`format:`, or the file extension's).
    public var format: DataFormat
    /// The database the step reads instead of files (`source: {sqlite: …, table: …}`); then
    /// ``sources`` holds its label only.
    public var database: DatabaseSource? {
        didSet { if let database { sources = [database.label] } }
    }
    /// The entity the records become objects of.
    public var entity: String
    /// How a CSV source is read (`csv:`: delimiter, header, quoting).
    public var csv: CSVOptions
    /// The source's text encoding; nil reads UTF-8 (or what a UTF-16/32 byte order mark says).
    public var encoding: TextEncoding?
    /// A JSON pointer (RFC 6901) to the array of records; empty for the top level.
    public var jsonPointer: String
    /// How the JSON or NDJSON records are laid out (`json: {shape: …}`).
    public var jsonShape = JSONShape.records
    /// The columns of a `format: fixed` source (`fixed: {columns: […]}`).
    public var fixedWidth = FixedWidthLayout(columns: [])
    /// The deepest JSON nesting a json or ndjson record may have (`json: {max_depth: N}`).
    public var jsonMaxDepth: Int = 512
    /// The most bytes one json or ndjson record may have (`json: {max_record_bytes: N}`).
    public var jsonMaxRecordBytes: Int = RecordLimits.defaultMaxRecordBytes
    /// Explicit field mappings; attributes not listed map from same-named fields.
    public var fields: [FieldMapping]
    /// How to-one relationships are resolved from source fields.
    public var relationships: [RelationshipMapping]
    /// How source text becomes typed values (trimming, null words, booleans, dates).
    public var coercion: CoercionOptions
    /// What an object with an existing unique key does (`on_conflict:`).
    public var onConflict: ConflictPolicy
    /// Check each value against its attribute's validation rules (`validate:`).
    public var validate: Bool
    /// The records inserted per transaction (`batch_size:`).
    public var batchSize: Int
    /// The file rejected records are written to (`rejects:`); nil writes none.
    public var rejectsPath: String?
    /// How many rejected records the step tolerates (`max_rejects:`).
    public var maxRejects: RejectBudget
    /// How the command that made the step sets rejects aside, for the note of a step that allows
    /// none (nil: a job step's keys, `rejects:` and `max_rejects:`).
    package var rejectsAdvice: String?
    /// Roll the whole step back when it fails (`atomic:`), rather than keep the batches written.
    public var atomic: Bool
    /// Run the cheap checks on the entity after the step (`verify: false` turns them off).
    public var verify: Bool = true
    /// `append` (the default) or `sync`: make the entity hold exactly the source's records.
    public var mode = ImportMode.append
    /// The attributes that identify a record in a sync (`key:`); nil for the entity's first
    /// uniqueness constraint the source supplies.
    public var key: [String]?
    /// How attributes that `fields:` does not map name their source fields (`key_style:`).
    public var keyStyle = SourceKeyStyle.asIs
    /// Nested JSON objects and arrays create or link related objects (`nested:`); nil when off.
    public var nested: NestedOptions?
    /// Options of a sync (`allow_empty`, `unkeyed_rejects`).
    public var sync = SyncOptions()
    /// Read only the files of the source that no earlier run of the job imported, by path, size
    /// and SHA-256 (`files: new`); false reads every file (`files: all`, the default).
    public var newFilesOnly = false
    /// What fields the source has that the step does not read, or lacks, do (`on_new_field:`,
    /// `on_missing_field:`).
    public var drift = SchemaDriftPolicy()
    /// Source fields the import added to the store's model before the step (`on_new_field: add`
    /// on an inferred model), with where each was first seen: the step's report names them.
    package var addedFields: [SchemaDrift] = []
    /// The step's entity was inferred from the source (`ferry import` without `--model`).
    package var modelIsInferred = false
    /// Where `mode:` is, for errors about the sync.
    public var modeLocation: InputLocation?
    /// Where `key:` is, for errors about the key.
    public var keyLocation: InputLocation?
    /// Where the step is (its `import` key).
    public var location: InputLocation?
    /// Where `entity:` is, for errors about the entity.
    public var entityLocation: InputLocation?
    /// Where `on_conflict:` is, for errors about the conflict policy.
    public var onConflictLocation: InputLocation?

    /// An import of `source` (one path or pattern) into `entity`; every option has the job file's default.
    public init(
        source: String,
        format: DataFormat,
        entity: String,
        csv: CSVOptions = CSVOptions(),
        jsonPointer: String = "",
        fields: [FieldMapping] = [],
        relationships: [RelationshipMapping] = [],
        coercion: CoercionOptions = CoercionOptions(),
        onConflict: ConflictPolicy = .error,
        validate: Bool = true,
        batchSize: Int = 10_000,
        rejectsPath: String? = nil,
        maxRejects: RejectBudget = .count(0),
        atomic: Bool = true,
        location: InputLocation? = nil,
        entityLocation: InputLocation? = nil,
        onConflictLocation: InputLocation? = nil
    ) {
        self.sources = [source]
        self.format = format
        self.entity = entity
        self.csv = csv
        self.jsonPointer = jsonPointer
        self.fields = fields
        self.relationships = relationships
        self.coercion = coercion
        self.onConflict = onConflict
        self.validate = validate
        self.batchSize = batchSize
        self.rejectsPath = rejectsPath
        self.maxRejects = maxRejects
        self.atomic = atomic
        self.location = location
        self.entityLocation = entityLocation
        self.onConflictLocation = onConflictLocation
    }
}

/// How an import treats the entity's existing rows.
public enum ImportMode: String, Sendable, Hashable, CaseIterable {
    /// Add the source's records (updating existing ones as `on_conflict` says).
    case append
    /// Make the entity hold exactly the source's records: insert new keys, update changed
    /// rows, delete the rows whose key the source no longer has (a nightly full extract).
    case sync
}

/// What a sync import does in the two cases where deleting could destroy what the source
/// still has (see docs/files.md "Sync imports").
public struct SyncOptions: Sendable, Hashable {
    /// What to do when rejected records have no readable key.
    public enum UnkeyedRejects: String, Sendable, Hashable, CaseIterable {
        /// Delete nothing (the rows such a record stands for cannot be told apart); say so.
        case skipDeletes = "skip_deletes"
        /// Delete the absent rows anyway.
        case delete
    }

    /// An empty source deletes every row of the entity only when this is true
    /// (`allow_empty: true`, `--allow-empty-sync`): a guard against a truncated nightly file.
    public var allowEmpty = false
    /// What rejected records without a readable key do to the deletions (`unkeyed_rejects:`).
    public var unkeyedRejects = UnkeyedRejects.skipDeletes
    /// How many rows the sync may delete (`max_delete:`, `--max-delete`): a guard against a
    /// truncated source; over it the step is rolled back.
    public var maxDelete = DeletionLimit.default

    /// Sync options; by default an empty source and unkeyed rejects delete nothing, and at most
    /// 10% of the rows (at least one) are deleted.
    public init(
        allowEmpty: Bool = false, unkeyedRejects: UnkeyedRejects = .skipDeletes, maxDelete: DeletionLimit = .default
    ) {
        self.allowEmpty = allowEmpty
        self.unkeyedRejects = unkeyedRejects
        self.maxDelete = maxDelete
    }
}

/// How many rows a sync may delete (`max_delete:` on the step, `--max-delete` on `ferry import`):
/// rsync's `--max-delete` for a nightly extract cut short. One rule for SQLite and PostgreSQL.
public enum DeletionLimit: Sendable, Hashable, CustomStringConvertible {
    /// At most this many rows (`500`).
    case count(Int)
    /// At most this share (0…1) of the entity's rows before the step (`0.25`, `25%`), rounded
    /// down but never below one row: a sync of a tiny table may always delete one row.
    case fraction(Double)
    /// Any number (`none`, `unlimited`).
    case unlimited

    /// The default: 10% of the rows, at least one.
    public static let `default` = DeletionLimit.fraction(0.10)

    /// Reads `500`, `0.25`, `25%`, `none` or `unlimited`; nil for anything else (a negative
    /// count, a share over 100%).
    public init?(parsing text: String) {
        func trim(_ text: Substring) -> String {
            var text = text
            while text.first == " " { text.removeFirst() }
            while text.last == " " { text.removeLast() }
            return String(text)
        }
        let trimmed = trim(text[...]).lowercased()
        if trimmed == "none" || trimmed == "unlimited" {
            self = .unlimited
        } else if trimmed.hasSuffix("%") {
            guard let percent = Double(trim(trimmed.dropLast())), percent.isFinite, percent >= 0,
                percent <= 100
            else { return nil }
            self = .fraction(percent / 100)
        } else if let count = Int(trimmed) {
            guard count >= 0 else { return nil }
            self = .count(count)
        } else if let share = Double(trimmed), share.isFinite, share >= 0, share < 1 {
            self = .fraction(share)
        } else {
            return nil
        }
    }

    /// The most rows a sync may delete from an entity that held `total` rows (nil: any number).
    public func allowed(ofTotal total: Int) -> Int? {
        switch self {
        case .count(let count): return count
        case .fraction(let share):
            guard share > 0 else { return 0 }
            return max(1, Int((share * Double(total)).rounded(.down)))
        case .unlimited: return nil
        }
    }

    /// As written in a job file: `500`, `25%`, `none`.
    public var description: String {
        switch self {
        case .count(let count): return "\(count)"
        case .fraction(let share):
            let percent = share * 100
            return percent == percent.rounded() ? "\(Int(percent))%" : "\(percent)%"
        case .unlimited: return "none"
        }
    }
}

/// An `export` step: the records of one entity, filtered, sorted and paged, written as CSV,
/// a JSON array or NDJSON (see docs/export.md).
public struct ExportStep: Sendable {
    /// The entity whose records are written.
    public var entity: String
    /// The `where:` predicate, parsed (bound to the model by `JobValidator` and at run time).
    public var predicate: Predicate?
    /// The sort order (`sort:`); empty: the store's order.
    public var sort: [SortDescriptor]
    /// The key paths to write; nil writes every attribute and every to-one relationship's key.
    public var fields: [FetchProperty]?
    /// The most records written (`limit:`); nil: all.
    public var limit: Int?
    /// The records skipped before the first written (`offset:`).
    public var offset: Int
    /// The output's data format (csv, json or ndjson).
    public var format: DataFormat
    /// The CSV delimiter: a comma, a tab for `format: tsv` or a `.tsv` output.
    public var csvDelimiter: UInt8 = UInt8(ascii: ",")
    /// The output path, resolved against the job's folder; `-` writes standard output.
    public var output: String
    /// Where the step is (its `export` key).
    public var location: InputLocation?
    /// Where `entity:` is.
    public var entityLocation: InputLocation?

    /// An export of `entity` to `output` (`-`: standard output) in `format`.
    public init(
        entity: String, predicate: Predicate? = nil, sort: [SortDescriptor] = [], fields: [FetchProperty]? = nil,
        limit: Int? = nil,
        offset: Int = 0, format: DataFormat, output: String = "-", location: InputLocation? = nil,
        entityLocation: InputLocation? = nil
    ) {
        self.entity = entity
        self.predicate = predicate
        self.sort = sort
        self.fields = fields
        self.limit = limit
        self.offset = offset
        self.format = format
        self.output = output
        self.location = location
        self.entityLocation = entityLocation
    }

    /// The fetch request the step runs.
    public var fetchRequest: FetchRequest {
        FetchRequest(
            entity: entity, predicate: predicate, sortDescriptors: sort, limit: limit, offset: offset,
            properties: fields,
            entityLocation: entityLocation)
    }
}

/// An `update` step: a batch update of the objects a predicate selects.
public struct UpdateStep: Sendable {
    /// The entity whose objects are updated.
    public var entity: String
    /// The objects to update (`where:`).
    public var predicate: Predicate
    /// Attribute → constant or expression (`=…` in the job file).
    public var values: [String: BatchUpdateRequest.PropertyValue]
    /// Where each `set:` entry is.
    public var valueLocations: [String: InputLocation]
    /// Check the new values against the attributes' validation rules.
    public var validate: Bool
    /// Where the step is (its `update` key).
    public var location: InputLocation?
    /// Where `entity:` is.
    public var entityLocation: InputLocation?

    /// An update of the `entity` objects that `predicate` selects, setting `values`.
    public init(
        entity: String, predicate: Predicate, values: [String: BatchUpdateRequest.PropertyValue],
        valueLocations: [String: InputLocation] = [:],
        validate: Bool = true, location: InputLocation? = nil, entityLocation: InputLocation? = nil
    ) {
        self.entity = entity
        self.predicate = predicate
        self.values = values
        self.valueLocations = valueLocations
        self.validate = validate
        self.location = location
        self.entityLocation = entityLocation
    }

    /// The library request this step runs.
    public var request: BatchUpdateRequest {
        BatchUpdateRequest(
            entity: entity, predicate: predicate, propertiesToUpdate: values, validate: validate,
            propertyLocations: valueLocations,
            location: location)
    }
}

/// A `delete` step: a batch delete of the objects a predicate selects, applying the model's
/// delete rules unless `delete_rules: ignore`.
public struct DeleteStep: Sendable {
    /// The entity whose objects are deleted.
    public var entity: String
    /// The objects to delete (`where:`).
    public var predicate: Predicate
    /// Whether the model's delete rules (cascade, nullify, deny) apply (`delete_rules:`).
    public var deleteRules: BatchDeleteRequest.DeleteRules
    /// Where the step is (its `delete` key).
    public var location: InputLocation?
    /// Where `entity:` is.
    public var entityLocation: InputLocation?

    /// A delete of the `entity` objects that `predicate` selects.
    public init(
        entity: String, predicate: Predicate, deleteRules: BatchDeleteRequest.DeleteRules = .apply,
        location: InputLocation? = nil,
        entityLocation: InputLocation? = nil
    ) {
        self.entity = entity
        self.predicate = predicate
        self.deleteRules = deleteRules
        self.location = location
        self.entityLocation = entityLocation
    }

    /// The library request this step runs.
    public var request: BatchDeleteRequest {
        BatchDeleteRequest(entity: entity, predicate: predicate, deleteRules: deleteRules, location: location)
    }
}
