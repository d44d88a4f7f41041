import FerryCore
import FerryFormats

/// A job file: a store, a model and the steps to run on them.
public struct Job: Sendable {
    /// The job's name (`job:` or the file's base name).
    public var name: String
    public var description: String?
    /// The job file's path, as given.
    public var path: String
    public var store: StoreReference
    /// The model path, resolved against the job file's folder.
    public var modelPath: String?
    public var modelLocation: InputLocation?
    /// The model version the job works with (`model: {path: …, version: "1"}`); nil for the
    /// bundle's current version.
    public var modelVersion: String?
    public var modelVersionLocation: InputLocation?
    public var steps: [Step]
    /// The values of `$name` in step predicates and in the mapping files of migrate steps
    /// (`--param`, the environment, `params:`), typed by ``ParameterValue``.
    public var parameters: [String: Value]
    /// Where the `steps` key is (for "the job has no steps").
    public var stepsLocation: InputLocation?

    public init(
        name: String, description: String? = nil, path: String, store: StoreReference, modelPath: String?, modelLocation: InputLocation? = nil,
        modelVersion: String? = nil, modelVersionLocation: InputLocation? = nil, steps: [Step], parameters: [String: Value] = [:]
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
    public var location: InputLocation?

    public init(path: String, create: Bool = true, rebuild: Bool = false, copyFrom: String? = nil, location: InputLocation? = nil) {
        self.path = path
        self.create = create
        self.rebuild = rebuild
        self.copyFrom = copyFrom
        self.location = location
    }

    public var isInMemory: Bool { path == ":memory:" }
}

/// One step of a job.
public enum Step: Sendable {
    case `import`(ImportStep)
    case migrate(MigrateStep)
    case export(ExportStep)
    case verify(VerifyStep)
    case update(UpdateStep)
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

    public init(to: String? = nil, backup: Bool = true, location: InputLocation? = nil, toLocation: InputLocation? = nil) {
        self.to = to
        self.backup = backup
        self.location = location
        self.toLocation = toLocation
    }
}

/// A `verify` step: built-in checks and expectations run on the job's store; a failed check
/// fails the run with exit code 3.
public struct VerifyStep: Sendable {
    public var expectations: Expectations
    /// Offending records listed per check.
    public var maxOffending: Int
    public var location: InputLocation?

    public init(expectations: Expectations = Expectations(), maxOffending: Int = 5, location: InputLocation? = nil) {
        self.expectations = expectations
        self.maxOffending = maxOffending
        self.location = location
    }
}

/// The data formats ferry reads and writes.
public enum DataFormat: String, Sendable, Hashable, CaseIterable {
    case csv, json, ndjson
    /// Fixed-width text: fields are columns of characters (``FixedWidthLayout``); import only.
    case fixed

    /// A format of named text columns (CSV, fixed-width): every record has every column, the
    /// values are untyped text, and the reader applies the null words.
    public var readsTextColumns: Bool { self == .csv || self == .fixed }

    /// Why an export cannot be fixed-width.
    public static let fixedExportMessage = "ferry exports csv, tsv, json or ndjson; fixed-width text is read, not written"

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
    public static func dataExtension(of path: String) -> String {
        var parts = (path.split(separator: "/").last ?? "").split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        func popExtension() -> String? {
            guard parts.count > 1, let last = parts.last, !(parts.count == 2 && parts[0].isEmpty) else { return nil }
            parts.removeLast()
            return last
        }
        guard let outer = popExtension() else { return "" }
        guard Compression(pathExtension: outer) != nil, let inner = popExtension() else { return outer }
        return inner
    }

    /// The CSV delimiter a format name or file extension implies: a tab for `tsv` and `tab`,
    /// nil for everything else (the CSV default, a comma, or a given delimiter applies).
    public static func impliedDelimiter(_ nameOrExtension: String) -> UInt8? {
        switch nameOrExtension.lowercased() {
        case "tsv", "tab": return UInt8(ascii: "\t")
        default: return nil
        }
    }

    /// Parses `csv`, `tsv` (CSV with tabs), `json`, `ndjson` or `jsonl`.
    public init?(name: String) {
        switch name.lowercased() {
        case "csv", "tsv": self = .csv
        case "json": self = .json
        case "ndjson", "jsonl": self = .ndjson
        case "fixed": self = .fixed
        default: return nil
        }
    }
}

/// How one destination attribute gets its value during an import.
public struct FieldMapping: Sendable, Hashable {
    public enum Source: Sendable, Hashable {
        /// A field of the source record, by name (CSV column, JSON key).
        case field(String)
        /// A constant, written as text and coerced to the attribute's type.
        case constant(String)
    }

    /// The destination attribute.
    public var attribute: String
    public var source: Source
    /// Per-field overrides of the step's coercion options (nil: use the step's).
    public var trim: Bool?
    public var dateFormat: DateFormat?
    public var trueWords: Set<String>?
    public var falseWords: Set<String>?
    public var nullTokens: Set<String>?
    public var location: InputLocation?

    public init(attribute: String, source: Source, trim: Bool? = nil, dateFormat: DateFormat? = nil, trueWords: Set<String>? = nil, falseWords: Set<String>? = nil, nullTokens: Set<String>? = nil, location: InputLocation? = nil) {
        self.attribute = attribute
        self.source = source
        self.trim = trim
        self.dateFormat = dateFormat
        self.trueWords = trueWords
        self.falseWords = falseWords
        self.nullTokens = nullTokens
        self.location = location
    }
}

/// How a to-one relationship is resolved during an import: the source field holds a value of
/// a unique attribute (`match`) of the destination entity.
public struct RelationshipMapping: Sendable, Hashable {
    public enum Missing: String, Sendable, Hashable, CaseIterable {
        /// An unresolved reference rejects the record.
        case reject
        /// An unresolved reference leaves the relationship empty.
        case null
    }

    public var relationship: String
    public var field: String
    /// The destination attribute that identifies the related object.
    public var match: String
    public var missing: Missing
    public var location: InputLocation?

    public init(relationship: String, field: String, match: String, missing: Missing = .reject, location: InputLocation? = nil) {
        self.relationship = relationship
        self.field = field
        self.match = match
        self.missing = missing
        self.location = location
    }
}

/// How many rejected records a step tolerates.
public enum RejectBudget: Sendable, Hashable {
    case count(Int)
    /// A percentage of the records read (checked at the end of the step and whenever the
    /// count alone already exceeds it).
    case percent(Double)
    case unlimited
}

/// An `import` step.
public struct ImportStep: Sendable {
    /// The source paths and glob patterns, resolved against the job's folder (`-` for standard
    /// input): one, or several read one after the other as one source (see ``SourceFiles``).
    public var sources: [String]
    /// The source as a label (reports, messages): the one path or pattern, or the list of them.
    /// Setting it makes it the only source.
    public var source: String {
        get { sources.count == 1 ? sources[0] : sources.joined(separator: ", ") }
        set { sources = [newValue] }
    }
    public var format: DataFormat
    public var entity: String
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
    public var relationships: [RelationshipMapping]
    public var coercion: CoercionOptions
    public var onConflict: ConflictPolicy
    public var validate: Bool
    public var batchSize: Int
    public var rejectsPath: String?
    public var maxRejects: RejectBudget
    public var atomic: Bool
    /// Run the cheap checks on the entity after the step (`verify: false` turns them off).
    public var verify: Bool = true
    /// Where the step is (its `import` key).
    public var location: InputLocation?
    /// Where `entity:` is, for errors about the entity.
    public var entityLocation: InputLocation?
    /// Where `on_conflict:` is, for errors about the conflict policy.
    public var onConflictLocation: InputLocation?

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

/// An `export` step: the records of one entity, filtered, sorted and paged, written as CSV,
/// a JSON array or NDJSON (see docs/export.md).
public struct ExportStep: Sendable {
    public var entity: String
    /// The `where:` predicate, parsed (bound to the model by ``JobValidator`` and at run time).
    public var predicate: Predicate?
    public var sort: [SortDescriptor]
    /// The key paths to write; nil writes every attribute and every to-one relationship's key.
    public var fields: [FetchProperty]?
    public var limit: Int?
    public var offset: Int
    public var format: DataFormat
    /// The CSV delimiter: a comma, a tab for `format: tsv` or a `.tsv` output.
    public var csvDelimiter: UInt8 = UInt8(ascii: ",")
    /// The output path, resolved against the job's folder; `-` writes standard output.
    public var output: String
    /// Where the step is (its `export` key).
    public var location: InputLocation?
    /// Where `entity:` is.
    public var entityLocation: InputLocation?

    public init(
        entity: String, predicate: Predicate? = nil, sort: [SortDescriptor] = [], fields: [FetchProperty]? = nil, limit: Int? = nil,
        offset: Int = 0, format: DataFormat, output: String = "-", location: InputLocation? = nil, entityLocation: InputLocation? = nil
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
            entity: entity, predicate: predicate, sortDescriptors: sort, limit: limit, offset: offset, properties: fields,
            entityLocation: entityLocation)
    }
}

/// An `update` step: a batch update of the objects a predicate selects.
public struct UpdateStep: Sendable {
    public var entity: String
    public var predicate: Predicate
    /// Attribute → constant or expression (`=…` in the job file).
    public var values: [String: BatchUpdateRequest.PropertyValue]
    /// Where each `set:` entry is.
    public var valueLocations: [String: InputLocation]
    public var validate: Bool
    public var location: InputLocation?
    public var entityLocation: InputLocation?

    public init(
        entity: String, predicate: Predicate, values: [String: BatchUpdateRequest.PropertyValue], valueLocations: [String: InputLocation] = [:],
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
            entity: entity, predicate: predicate, propertiesToUpdate: values, validate: validate, propertyLocations: valueLocations,
            location: location)
    }
}

/// A `delete` step: a batch delete of the objects a predicate selects, applying the model's
/// delete rules unless `delete_rules: ignore`.
public struct DeleteStep: Sendable {
    public var entity: String
    public var predicate: Predicate
    public var deleteRules: BatchDeleteRequest.DeleteRules
    public var location: InputLocation?
    public var entityLocation: InputLocation?

    public init(
        entity: String, predicate: Predicate, deleteRules: BatchDeleteRequest.DeleteRules = .apply, location: InputLocation? = nil,
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
