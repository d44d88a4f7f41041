import FerryCore
import FerryFormats
import FerryPostgresStore
import Foundation

/// Reads a job file (see `docs/files.md`) into a ``Job``: resolves paths against the job's
/// folder, substitutes `${name}` parameters and checks every key.
///
/// ```swift
/// let job = try JobLoader().load(path: "pipelines/import-shop.yml", parameters: ["data": "/srv/in"])
/// ```
///
/// Every problem found is reported: the loader throws `FerryErrors` (code `invalidDefinition`)
/// whose errors each name a `file:line:column`. It does not look at the model; see
/// `JobValidator` for that.
public struct JobLoader: Sendable {
    /// A loader. PostgreSQL's engine is registered, so that a job's `store:` may name one.
    public init() { PostgreSQLEngine.register() }

    package static let jobKeys = ["job", "description", "store", "model", "params", "steps"]
    package static let storeKeys = ["path", "create", "rebuild", "copy_from", "migrate", "layout", "compiled_model"]
    package static let modelKeys = ["path", "version"]
    package static let migrateKeys = ["to", "backup"]
    package static let importKeys = [
        "source", "format", "entity", "encoding", "fields", "relationships", "csv", "json", "fixed", "null", "trim",
        "date_format", "timezone", "decimal_comma", "true", "false",
        "on_conflict", "validate", "batch_size", "rejects", "max_rejects", "atomic", "verify", "mode", "key",
        "allow_empty", "unkeyed_rejects", "max_delete", "key_style", "nested", "files", "on_new_field",
        "on_missing_field",
    ]
    package static let fieldKeys = ["field", "value", "trim", "date_format", "timezone", "true", "false", "null"]
    package static let relationshipKeys = ["field", "match", "missing"]
    package static let csvKeys = [
        "delimiter", "quote", "escape", "header", "columns", "null", "skip_initial_space", "skip_lines", "comment",
        "quoted_empty", "record_terminator",
    ]
    /// The `csv:` keys that apply to PostgreSQL COPY text (`format: pgcopy`).
    package static let pgcopyKeys = ["delimiter", "header", "columns", "null", "skip_lines"]
    package static let fixedKeys = ["columns", "skip_lines", "short_lines"]
    package static let fixedColumnKeys = ["name", "start", "width"]
    package static let jsonKeys = ["pointer", "max_depth", "max_record_bytes", "shape", "key_field", "columns"]
    package static let nestedKeys = ["max_depth"]
    /// Keys a verify step takes besides an expectations file's.
    package static let verifyExtraKeys = ["max_offending"]
    /// Step kinds a job may name; `import` and `verify` run today.
    package static let stepKinds = ["import", "export", "migrate", "verify", "update", "delete"]

    /// Loads the job at `path`. `${name}` takes its value from `parameters` (`--param`), else
    /// `environment`, else the job's `params:`, else the `${name:-default}` default.
    public func load(
        path: String, parameters: [String: String] = [:],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Job {
        let reader = DefinitionReader(code: .invalidDefinition)
        let root: YAMLNode?
        do {
            root = try YAMLNode.load(path: path, code: .invalidDefinition)
        } catch {
            throw FerryErrors([error])
        }
        guard let root else {
            throw FerryErrors([
                FerryError(
                    .invalidDefinition, "the job file is empty", at: InputLocation(file: path, line: 1, column: 1))
            ])
        }
        let job = load(root, path: path, parameters: parameters, environment: environment, reader: reader)
        if !reader.errors.isEmpty { throw FerryErrors(reader.errors) }
        guard let job else {
            throw FerryErrors([FerryError(.invalidDefinition, "no job", at: InputLocation(file: path))])
        }
        return job
    }

    private func load(
        _ root: YAMLNode, path: String, parameters: [String: String], environment: [String: String],
        reader: DefinitionReader
    ) -> Job? {
        guard let top = reader.mapping(root, for: "the job file") else { return nil }
        reader.checkKeys(top, allowed: Self.jobKeys, in: "the job")

        var defaults: [String: String] = [:]
        if let node = top["params"], let params = reader.mapping(node, for: "params") {
            for entry in params.entries {
                if let value = reader.string(entry.value, for: entry.key) { defaults[entry.key] = value }
            }
        }
        reader.substitute = { text, location, reader in
            Self.substitute(text, at: location, reader: reader) { name in
                parameters[name] ?? environment[name] ?? defaults[name]
            }
        }

        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        func resolve(_ file: String) -> String { Self.resolve(file, against: folder) }

        let name = top["job"].flatMap { reader.string($0, for: "job") } ?? ModelLoader.baseName(path)
        let description = top["description"].flatMap { reader.optionalString($0, for: "description") }

        var store = StoreReference(path: ":memory:")
        if let node = top["store"] {
            if case .mapping = node.content, let mapping = reader.mapping(node, for: "store") {
                reader.checkKeys(mapping, allowed: Self.storeKeys, in: "'store'")
                if let pathNode = mapping["path"] {
                    if let value = reader.string(pathNode, for: "path") {
                        store = StoreReference(path: resolve(value), location: pathNode.location)
                    }
                } else {
                    reader.fail("'store' needs a 'path'", at: node.location)
                }
                if let createNode = mapping["create"], let create = reader.bool(createNode, for: "create") {
                    store.create = create
                }
                if let rebuildNode = mapping["rebuild"], let rebuild = reader.bool(rebuildNode, for: "rebuild") {
                    store.rebuild = rebuild
                }
                if let migrateNode = mapping["migrate"], let mode = reader.string(migrateNode, for: "migrate") {
                    switch mode {
                    case "auto": store.migrateAutomatically = true
                    case "never": store.migrateAutomatically = false
                    default:
                        reader.fail(
                            "'migrate' on a store is 'auto' or 'never', not '\(mode)'", at: migrateNode.location)
                    }
                }
                if let layoutNode = mapping["layout"], let layout = reader.string(layoutNode, for: "layout") {
                    switch layout {
                    case "coredata": store.createsCoreDataStore = true
                    case "ferry": store.createsCoreDataStore = false
                    default:
                        reader.fail(
                            "'layout' of a store is 'ferry' or 'coredata', not '\(layout)'", at: layoutNode.location)
                    }
                }
                if let compiledNode = mapping["compiled_model"],
                    let compiled = reader.string(compiledNode, for: "compiled_model")
                {
                    if store.createsCoreDataStore {
                        store.compiledModel = resolve(compiled)
                    } else {
                        reader.fail(
                            "'compiled_model' applies to a store with 'layout: coredata'", at: compiledNode.location)
                    }
                }
                if let copyNode = mapping["copy_from"], let copy = reader.string(copyNode, for: "copy_from") {
                    if store.isInMemory {
                        reader.fail("'copy_from' needs a store file, not \":memory:\"", at: copyNode.location)
                    } else if store.rebuild {
                        reader.fail(
                            "'copy_from' and 'rebuild: true' exclude each other: a rebuilt store starts empty",
                            at: copyNode.location)
                    } else {
                        store.copyFrom = resolve(copy)
                    }
                }
            } else if let value = reader.string(node, for: "store") {
                store = StoreReference(path: resolve(value), location: node.location)
            }
        } else {
            reader.fail("the job has no 'store' (a path or \":memory:\")", at: top.location)
        }

        var modelPath: String?
        var modelLocation: InputLocation?
        var modelVersion: String?
        var modelVersionLocation: InputLocation?
        if let node = top["model"] {
            if case .mapping = node.content, let mapping = reader.mapping(node, for: "model") {
                reader.checkKeys(mapping, allowed: Self.modelKeys, in: "'model'")
                if let pathNode = mapping["path"] {
                    if let value = reader.string(pathNode, for: "path") {
                        modelPath = resolve(value)
                        modelLocation = pathNode.location
                    }
                } else {
                    reader.fail(
                        "'model' needs a 'path' (a bundle folder, model.yml, or a model file)", at: node.location)
                }
                if let versionNode = mapping["version"], let value = reader.string(versionNode, for: "version") {
                    modelVersion = value
                    modelVersionLocation = versionNode.location
                }
            } else if let value = reader.string(node, for: "model") {
                modelPath = resolve(value)
                modelLocation = node.location
            }
        }

        var steps: [Step] = []
        if let node = top["steps"], let items = reader.list(node, for: "steps"),
            reader.checkCount(
                items.count, maximum: DefinitionLimits.maximumSteps, of: "steps", in: "the job", at: node.location)
        {
            for item in items {
                if let step = loadStep(item, resolve: resolve, reader: reader) { steps.append(step) }
            }
        } else if top["steps"] == nil {
            reader.fail("the job has no 'steps'", at: top.location)
        }
        // `$name` in step predicates takes the same values as `${name}` (typed: numbers, booleans,
        // else text); variables nothing defines stay, and binding reports them.
        // Precedence as for `${name}`: --param, then the environment, then `params:`. Migrate
        // steps' mapping expressions read the same values.
        let values = ParameterValue.typed(
            defaults.merging(environment, uniquingKeysWith: { _, env in env }).merging(
                parameters, uniquingKeysWith: { _, cli in cli }))
        let variables = values.mapValues { PredicateArgument.value($0) }
        steps = steps.map { step in
            do {
                switch step {
                case .export(var export):
                    export.predicate = try export.predicate?.substituting(variables)
                    return .export(export)
                case .update(var update):
                    update.predicate = try update.predicate.substituting(variables)
                    return .update(update)
                case .delete(var delete):
                    delete.predicate = try delete.predicate.substituting(variables)
                    return .delete(delete)
                default:
                    return step
                }
            } catch let error as FerryError {
                reader.record(error)
                return step
            } catch {
                return step
            }
        }
        var job = Job(
            name: name, description: description, path: path, store: store, modelPath: modelPath,
            modelLocation: modelLocation,
            modelVersion: modelVersion, modelVersionLocation: modelVersionLocation, steps: steps, parameters: values)
        job.stepsLocation = top["steps"]?.location
        return job
    }

    // MARK: - Parameters and paths

    /// Replaces every `${name}` and `${name:-default}` (the default may hold references itself:
    /// `${store:-${out}/shop.sqlite}`) in `text`; nil after reporting an
    /// undefined parameter or a malformed reference.
    static func substitute(
        _ text: String, at location: InputLocation, reader: DefinitionReader, lookup: (String) -> String?
    ) -> String? {
        guard text.contains("${") else { return text }
        var result = ""
        var rest = Substring(text)
        var ok = true
        while let start = rest.range(of: "${") {
            result += rest[rest.startIndex..<start.lowerBound]
            // The closing brace of this reference: a default may hold references of its own.
            var depth = 1
            var cursor = start.upperBound
            var found: Substring.Index?
            while cursor < rest.endIndex {
                if rest[cursor...].hasPrefix("${") {
                    depth += 1
                    cursor = rest.index(cursor, offsetBy: 2)
                    continue
                }
                if rest[cursor] == "}" {
                    depth -= 1
                    if depth == 0 {
                        found = cursor
                        break
                    }
                }
                cursor = rest.index(after: cursor)
            }
            guard let end = found else {
                reader.fail("unterminated '${' in '\(text)'", at: location)
                return nil
            }
            let body = rest[start.upperBound..<end]
            var name = String(body)
            var fallback: String?
            if let separator = body.range(of: ":-") {
                name = String(body[body.startIndex..<separator.lowerBound])
                fallback = String(body[separator.upperBound...])
            }
            if name.isEmpty {
                reader.fail("empty parameter name in '\(text)'", at: location)
                ok = false
            } else if let value = lookup(name) {
                result += value
            } else if let fallback {
                // `${store:-${out}/shop.sqlite}`: the default's own references are replaced too.
                guard let value = substitute(fallback, at: location, reader: reader, lookup: lookup) else { return nil }
                result += value
            } else {
                reader.fail(
                    "undefined parameter '\(name)'", at: location,
                    notes: [
                        "give --param \(name)=VALUE, set the environment variable \(name), or add \(name) under params:"
                    ])
                ok = false
            }
            rest = rest[rest.index(after: end)...]
        }
        result += rest
        return ok ? result : nil
    }

    /// A path relative to the job's folder; `:memory:`, `-`, absolute paths and URLs (which are
    /// never file paths: the validator refuses them where a file is needed) stay as they are.
    static func resolve(_ path: String, against folder: URL) -> String {
        if path == ":memory:" || path == "-" || path.hasPrefix("/") || PathOrURL(path).isURL { return path }
        return URL(fileURLWithPath: path, relativeTo: folder).standardizedFileURL.path
    }

    // MARK: - Steps

    private func loadStep(_ node: YAMLNode, resolve: (String) -> String, reader: DefinitionReader) -> Step? {
        guard let mapping = reader.mapping(node, for: "steps") else { return nil }
        guard mapping.entries.count == 1, let entry = mapping.entries.first else {
            if mapping.entries.isEmpty {
                reader.fail("a step needs a kind (\(Self.stepKinds.joined(separator: ", ")))", at: node.location)
            } else {
                reader.fail(
                    "a step has one key, its kind, but found \(mapping.keys.map { "'\($0)'" }.joined(separator: ", ")) (indent the step's keys under its kind)",
                    at: node.location)
            }
            return nil
        }
        switch entry.key {
        case "import":
            return loadImport(entry, resolve: resolve, reader: reader).map(Step.import)
        case "migrate":
            return loadMigrate(entry, reader: reader).map(Step.migrate)
        case "export":
            return loadExport(entry, resolve: resolve, reader: reader).map(Step.export)
        case "verify":
            return loadVerify(entry, reader: reader).map(Step.verify)
        case "update":
            return loadUpdate(entry, reader: reader).map(Step.update)
        case "delete":
            return loadDelete(entry, reader: reader).map(Step.delete)
        case let kind where Self.stepKinds.contains(kind):
            reader.fail("step '\(kind)' is not supported yet", at: entry.keyLocation)
            return nil
        default:
            reader.fail(
                "unknown step '\(entry.key)'\(Suggestions.didYouMean(entry.key, in: Self.stepKinds))",
                at: entry.keyLocation)
            return nil
        }
    }

    /// `- migrate:` (to the current version), `- migrate: {to: "3", backup: false}`.
    private func loadMigrate(_ entry: YAMLMapping.Entry, reader: DefinitionReader) -> MigrateStep? {
        guard let mapping = reader.mapping(entry.value, for: "migrate") else { return nil }
        reader.checkKeys(mapping, allowed: Self.migrateKeys, in: "a migrate step")
        var step = MigrateStep(location: entry.keyLocation)
        if let node = mapping["to"], let label = reader.string(node, for: "to") {
            step.to = label
            step.toLocation = node.location
        }
        if let node = mapping["backup"], let backup = reader.bool(node, for: "backup") { step.backup = backup }
        return step
    }

    /// `files: new | all`, and what an incremental read (`files: new`, a database source's
    /// `incremental:`) needs of the rest of the step: no sync (its source is a part of the data),
    /// and a conflict policy that skips or updates the rows read again at the last value.
    private func loadIncrementalChecks(_ mapping: YAMLMapping, into step: inout ImportStep, reader: DefinitionReader) {
        if let node = mapping["files"], let text = reader.string(node, for: "files") {
            switch text {
            case "new": step.newFilesOnly = true
            case "all": step.newFilesOnly = false
            default:
                reader.fail(
                    "expected 'new' or 'all' for 'files' but found '\(text)'\(Suggestions.didYouMean(text, in: ["new", "all"]))",
                    at: node.location)
            }
            if step.newFilesOnly, step.database != nil || step.sources == ["-"] {
                reader.fail(
                    "'files: new' applies to files (a path, a glob pattern or a list), not to \(step.database == nil ? "standard input" : "a database source")",
                    at: node.location)
            }
        }
        let incremental = step.database?.incremental
        guard incremental != nil || step.newFilesOnly else { return }
        let what = incremental != nil ? "'incremental'" : "'files: new'"
        if step.mode == .sync, let location = step.modeLocation {
            reader.fail(
                "\(what) reads only a part of the source, so 'mode: sync' would delete the rows it did not read",
                at: location)
        }
        if let incremental, step.onConflict == .error {
            reader.fail(
                "'incremental' reads the rows at the last committed value of '\(incremental.column)' again (so that rows sharing that value are never lost): the step needs 'on_conflict: keep' or 'on_conflict: update'",
                at: step.onConflictLocation ?? incremental.location ?? step.location ?? InputLocation(file: ""),
                notes: [
                    "the entity needs a uniqueness constraint the source's rows supply, which tells a row read again"
                ])
        }
    }

    /// `mode`, `key`, `allow_empty`, `unkeyed_rejects` and `max_delete` (all but `mode` only with
    /// `mode: sync`).
    private func loadSync(_ mapping: YAMLMapping, into step: inout ImportStep, reader: DefinitionReader) {
        if let node = mapping["mode"], let mode = reader.choice(node, for: "mode", as: ImportMode.self) {
            step.mode = mode
            step.modeLocation = node.location
        }
        if let node = mapping["key"], let key = reader.strings(node, for: "key") {
            if key.isEmpty {
                reader.fail("'key' names no attribute", at: node.location)
            } else {
                step.key = key
            }
            step.keyLocation = node.location
        }
        for name in ["key", "allow_empty", "unkeyed_rejects", "max_delete"] where step.mode != .sync {
            if let location = mapping.keyLocation(name) {
                reader.fail("'\(name)' applies only to 'mode: sync'", at: location)
            }
        }
        if let node = mapping["allow_empty"], let allow = reader.bool(node, for: "allow_empty") {
            step.sync.allowEmpty = allow
        }
        if let node = mapping["unkeyed_rejects"],
            let choice = reader.choice(node, for: "unkeyed_rejects", as: SyncOptions.UnkeyedRejects.self)
        {
            step.sync.unkeyedRejects = choice
        }
        if let node = mapping["max_delete"], let text = reader.string(node, for: "max_delete") {
            if let limit = DeletionLimit(parsing: text) {
                step.sync.maxDelete = limit
            } else {
                reader.fail(
                    "expected a count (500), a share (0.25 or \"25%\") or 'none' for 'max_delete' but found '\(text)'",
                    at: node.location)
            }
        }
    }

    private func loadImport(
        _ entry: YAMLMapping.Entry, resolve: (String) -> String, reader: DefinitionReader
    ) -> ImportStep? {
        guard let mapping = reader.mapping(entry.value, for: "import") else { return nil }
        reader.checkKeys(mapping, allowed: Self.importKeys, in: "an import step")
        var complete = true
        func required(_ key: String) -> (String, YAMLNode)? {
            guard let node = mapping[key] else {
                reader.fail("the import step needs '\(key)'", at: entry.keyLocation)
                complete = false
                return nil
            }
            guard let value = reader.string(node, for: key) else {
                complete = false
                return nil
            }
            return (value, node)
        }
        // `source:` is a path or glob pattern, or a list of them (read one after the other).
        var sources: [String] = []
        var source: (String, YAMLNode)?
        var database: DatabaseSource?
        if let node = mapping["source"] {
            if case .mapping = node.content {
                // A database: `{sqlite: legacy.db, table: customers}` (JobLoader+DatabaseSource).
                database = loadDatabaseSource(node, resolve: resolve, reader: reader)
                if database == nil { complete = false }
                for key in Self.fileOnlyImportKeys where mapping[key] != nil {
                    reader.fail(
                        "'\(key)' applies to files, not to a database source (whose columns have types)",
                        at: mapping.keyLocation(key) ?? node.location)
                }
            } else if let list = reader.strings(node, for: "source") {
                if list.isEmpty {
                    reader.fail("'source' lists no file", at: node.location)
                    complete = false
                } else {
                    sources = list.map { resolve($0) }
                    source = (list[0], node)
                }
            } else {
                complete = false
            }
        } else {
            _ = required("source")
        }
        let entity = required("entity")

        var step = ImportStep(
            source: "-", format: .csv, entity: entity?.0 ?? "", location: entry.keyLocation,
            entityLocation: entity?.1.location)
        if !sources.isEmpty { step.sources = sources }
        step.database = database
        do {
            try SourceFiles.checkStandardInput(sources)
        } catch {
            reader.fail(error.message, at: source?.1.location ?? entry.keyLocation)
            complete = false
        }
        var tabSeparated = false
        if let node = mapping["format"] {
            if let name = reader.string(node, for: "format") {
                if let format = DataFormat(name: name) {
                    step.format = format
                    tabSeparated = DataFormat.impliedDelimiter(name) == 9
                    if DataFormat.isCopyText(name) { step.csv.readCopyText() }
                } else {
                    reader.fail(
                        "unknown format '\(name)' (csv, json, ndjson, fixed, pgcopy)\(Suggestions.didYouMean(name, in: ["csv", "json", "ndjson", "jsonl", "tsv", "fixed", "pgcopy"]))",
                        at: node.location)
                    complete = false
                }
            }
        } else if let (written, node) = source {
            // The first file's extension decides (a pattern's first match), as written when it is a path.
            let files = DataFormat.filesNamingFormat(of: sources)
            let path = files.first.flatMap { $0 == sources.first ? nil : $0 } ?? written
            let pathExtension = DataFormat.dataExtension(of: path)
            if path == "-" {
                reader.fail(
                    "cannot tell the format of standard input; add 'format:' (csv, json, ndjson)", at: node.location)
                complete = false
            } else if let format = DataFormat(pathExtension: pathExtension) {
                step.format = format
                tabSeparated = DataFormat.impliedDelimiter(pathExtension) == 9
            } else {
                reader.fail(
                    "cannot tell the format of '\(path)' from its extension; add 'format:' (csv, json, ndjson)",
                    at: node.location)
                complete = false
            }
            // One step reads one format: the other files' extensions must say the same.
            for other in files.dropFirst() where complete {
                let format = DataFormat(pathExtension: DataFormat.dataExtension(of: other))
                if format != step.format
                    || (DataFormat.impliedDelimiter(DataFormat.dataExtension(of: other)) == 9) != tabSeparated
                {
                    reader.fail(
                        "the sources of one step must have one format: '\(other)' is not \(tabSeparated ? "tsv" : step.format.rawValue) like '\(path)'; add 'format:' to read them all alike",
                        at: node.location)
                    complete = false
                }
            }
        }
        if tabSeparated { step.csv.delimiter = 9 }

        var nullTokens: Set<String>?
        if let node = mapping["null"], let words = reader.strings(node, for: "null") { nullTokens = Set(words) }
        if let node = mapping["csv"], let csv = reader.mapping(node, for: "csv") {
            // pgcopy takes a subset of the csv keys.
            let copyText = step.csv.copyText
            reader.checkKeys(
                csv, allowed: copyText ? Self.pgcopyKeys : Self.csvKeys,
                in: copyText ? "'csv' of the pgcopy format" : "'csv'")
            if step.format != .csv, complete {
                reader.fail(
                    "'csv' options apply only to the csv format, not \(step.formatName)",
                    at: mapping.keyLocation("csv") ?? node.location)
            }
            if let node = csv["delimiter"], let bytes = separator(node, for: "delimiter", reader: reader) {
                step.csv.delimiter = bytes[0]
                step.csv.delimiterSequence = bytes.count > 1 ? bytes : nil
            }
            if let node = csv["record_terminator"],
                let bytes = separator(node, for: "record_terminator", reader: reader)
            {
                step.csv.recordTerminator = bytes
            }
            if let node = csv["quote"], let byte = oneByte(node, for: "quote", reader: reader) { step.csv.quote = byte }
            if let problem = step.csv.delimiterQuoteProblem {
                reader.fail(
                    problem,
                    at: csv["quote"]?.location ?? csv["record_terminator"]?.location ?? csv["delimiter"]?.location
                        ?? csv.location)
            }
            if let node = csv["header"], let header = reader.bool(node, for: "header") { step.csv.hasHeader = header }
            if let node = csv["columns"], let columns = reader.strings(node, for: "columns") {
                step.csv.columns = columns
            }
            if let node = csv["quoted_empty"],
                let quotedEmpty = reader.choice(node, for: "quoted_empty", as: CSVOptions.QuotedEmpty.self)
            {
                step.csv.quotedEmpty = quotedEmpty
            }
            if let node = csv["skip_initial_space"], let skip = reader.bool(node, for: "skip_initial_space") {
                step.csv.skipInitialSpace = skip
            }
            if let node = csv["skip_lines"], let count = reader.int(node, for: "skip_lines") {
                step.csv.skipLines = count
            }
            if let node = csv["comment"], let byte = oneByte(node, for: "comment", reader: reader) {
                step.csv.comment = byte
            }
            if let node = csv["escape"], let byte = oneByte(node, for: "escape", reader: reader) {
                if byte == step.csv.delimiter || byte == step.csv.quote || byte == 10 || byte == 13 {
                    reader.fail(
                        "the CSV escape character must differ from the delimiter, the quote (a doubled quote already escapes it) and line breaks",
                        at: node.location)
                }
                step.csv.escape = byte
            }
            if let node = csv["null"], let words = reader.strings(node, for: "null") {
                nullTokens = (nullTokens ?? []).union(words)
            }
            if !step.csv.hasHeader, step.csv.columns == nil, !step.csv.copyText {
                reader.fail(
                    "'header: false' needs 'columns: [...]' to name the columns",
                    at: csv["header"]?.location ?? csv.location)
            }
        }
        if let node = mapping["json"], let json = reader.mapping(node, for: "json") {
            reader.checkKeys(json, allowed: Self.jsonKeys, in: "'json'")
            loadJSONShape(json, into: &step, reader: reader)
            if step.format.readsTextColumns, complete {
                reader.fail(
                    "'json' options apply only to the json and ndjson formats, not \(step.formatName)",
                    at: mapping.keyLocation("json") ?? node.location)
            }
            if let node = json["max_depth"], let depth = reader.int(node, for: "max_depth", minimum: 1) {
                step.jsonMaxDepth = depth
            }
            if let node = json["max_record_bytes"], let bytes = reader.int(node, for: "max_record_bytes", minimum: 1) {
                step.jsonMaxRecordBytes = bytes
            }
            if let node = json["pointer"], let pointer = reader.string(node, for: "pointer") {
                if step.format == .ndjson, complete {
                    reader.fail(
                        "'pointer' applies only to the json format, not ndjson",
                        at: json.keyLocation("pointer") ?? node.location)
                }
                if pointer.hasPrefix("/") {
                    step.jsonPointer = pointer
                } else {
                    reader.fail(
                        "a JSON pointer starts with '/' (e.g. /data/items), not '\(pointer)'", at: node.location)
                }
            }
        }

        if let node = mapping["fixed"], let fixed = reader.mapping(node, for: "fixed") {
            if step.format != .fixed, complete {
                reader.fail(
                    "'fixed' options apply only to the fixed format, not \(step.formatName)",
                    at: mapping.keyLocation("fixed") ?? node.location)
            }
            loadFixedWidth(fixed, into: &step, reader: reader)
        } else if step.format == .fixed {
            reader.fail(
                "'format: fixed' needs 'fixed: {columns: [{name: id, start: 1, width: 5}, …]}' to say where the fields are",
                at: mapping["format"]?.location ?? entry.keyLocation)
        }

        if step.csv.copyText, !step.csv.hasHeader, step.csv.columns == nil {
            reader.fail(
                "'format: pgcopy' has no header row unless 'csv: {header: true}' says so: name the columns with 'csv: {columns: [...]}'",
                at: mapping["format"]?.location ?? entry.keyLocation)
        }
        // An empty COPY text field is the empty string: only \N (and the step's words) are null.
        step.coercion.nullTokens =
            nullTokens ?? (step.format.readsTextColumns && database == nil && !step.csv.copyText ? [""] : [])
        if let node = mapping["trim"], let trim = reader.bool(node, for: "trim") { step.coercion.trim = trim }
        if let node = mapping["decimal_comma"], let flag = reader.bool(node, for: "decimal_comma") {
            step.coercion.decimalComma = flag
        }
        if let node = mapping["encoding"], let name = reader.string(node, for: "encoding") {
            do {
                step.encoding = try TextEncoding(named: name)
            } catch {
                reader.fail(error.message, at: node.location)
            }
        }
        if let node = mapping["date_format"], let format = dateFormat(node, reader: reader) {
            step.coercion.dateFormat = format
        }
        if let node = mapping["timezone"], let name = reader.string(node, for: "timezone") {
            step.coercion.timeZone = timeZone(name, at: node, reader: reader)
        }
        if let node = mapping["true"], let words = reader.strings(node, for: "true") {
            step.coercion.trueWords = Set(words.map { $0.lowercased() })
        }
        if let node = mapping["false"], let words = reader.strings(node, for: "false") {
            step.coercion.falseWords = Set(words.map { $0.lowercased() })
        }

        if let node = mapping["fields"], let fields = reader.mapping(node, for: "fields") {
            for field in fields.entries {
                if let mapping = loadField(field, reader: reader) { step.fields.append(mapping) }
            }
        }
        if let node = mapping["relationships"], let relationships = reader.mapping(node, for: "relationships") {
            for relationship in relationships.entries {
                if let mapping = loadRelationship(relationship, reader: reader) { step.relationships.append(mapping) }
            }
        }
        if let node = mapping["on_conflict"],
            let policy = reader.choice(node, for: "on_conflict", as: ConflictPolicy.self)
        {
            step.onConflict = policy
            step.onConflictLocation = node.location
        }
        if let node = mapping["validate"], let validate = reader.bool(node, for: "validate") {
            step.validate = validate
        }
        if let node = mapping["batch_size"], let size = reader.int(node, for: "batch_size", minimum: 1) {
            step.batchSize = size
        }
        if let node = mapping["atomic"], let atomic = reader.bool(node, for: "atomic") { step.atomic = atomic }
        if let node = mapping["verify"], let verify = reader.bool(node, for: "verify") { step.verify = verify }
        loadSync(mapping, into: &step, reader: reader)
        if let node = mapping["on_new_field"],
            let policy = reader.choice(node, for: "on_new_field", as: SchemaDriftPolicy.NewField.self)
        {
            step.drift.newField = policy
            step.drift.newFieldLocation = node.location
        }
        if let node = mapping["on_missing_field"],
            let policy = reader.choice(node, for: "on_missing_field", as: SchemaDriftPolicy.MissingField.self)
        {
            step.drift.missingField = policy
            step.drift.missingFieldLocation = node.location
        }
        if let node = mapping["key_style"], let style = reader.choice(node, for: "key_style", as: SourceKeyStyle.self) {
            step.keyStyle = style
        }
        if let node = mapping["nested"] { loadNested(node, into: &step, reader: reader) }
        loadIncrementalChecks(mapping, into: &step, reader: reader)
        if let node = mapping["rejects"], let rejects = reader.string(node, for: "rejects") {
            step.rejectsPath = resolve(rejects)
        }
        if let node = mapping["max_rejects"], let budget = rejectBudget(node, reader: reader) {
            step.maxRejects = budget
            let allowsRejects: Bool
            switch budget {
            case .count(let count): allowsRejects = count > 0
            case .percent(let percent): allowsRejects = percent > 0
            case .unlimited: allowsRejects = true
            }
            if allowsRejects, step.rejectsPath == nil {
                reader.fail(
                    "'max_rejects' allows rejected records but the step has no 'rejects' file: they would be lost",
                    at: node.location)
            }
        }
        return complete ? step : nil
    }

    private func loadVerify(_ entry: YAMLMapping.Entry, reader: DefinitionReader) -> VerifyStep? {
        guard let mapping = reader.mapping(entry.value, for: "verify") else { return nil }
        let expectations = ExpectationsLoader.read(
            mapping, reader: reader, allowImported: true, context: "a verify step", extraKeys: Self.verifyExtraKeys)
        var step = VerifyStep(expectations: expectations, location: entry.keyLocation)
        if let node = mapping["max_offending"], let limit = reader.int(node, for: "max_offending") {
            step.maxOffending = limit
        }
        return step
    }

    private func loadField(_ entry: YAMLMapping.Entry, reader: DefinitionReader) -> FieldMapping? {
        if case .scalar(_, isNull: false) = entry.value.content {
            guard let field = reader.string(entry.value, for: entry.key) else { return nil }
            return FieldMapping(attribute: entry.key, source: .field(field), location: entry.keyLocation)
        }
        guard case .mapping = entry.value.content, let mapping = reader.mapping(entry.value, for: entry.key) else {
            reader.wrongType("a field name or a mapping", for: entry.key, found: entry.value)
            return nil
        }
        reader.checkKeys(mapping, allowed: Self.fieldKeys, in: "field mapping '\(entry.key)'")
        var result = FieldMapping(attribute: entry.key, source: .field(entry.key), location: entry.keyLocation)
        switch (mapping["field"], mapping["value"]) {
        case (.some, .some):
            reader.fail("field mapping '\(entry.key)' has both 'field' and 'value'; give one", at: entry.keyLocation)
            return nil
        case (.some(let node), nil):
            guard let field = reader.string(node, for: "field") else { return nil }
            result.source = .field(field)
        case (nil, .some(let node)):
            guard let value = reader.string(node, for: "value") else { return nil }
            result.source = .constant(value)
        case (nil, nil):
            break
        }
        if let node = mapping["trim"] { result.trim = reader.bool(node, for: "trim") }
        if let node = mapping["date_format"] { result.dateFormat = dateFormat(node, reader: reader) }
        if let node = mapping["timezone"], let name = reader.string(node, for: "timezone") {
            result.timeZone = timeZone(name, at: node, reader: reader)
        }
        if let node = mapping["true"] {
            result.trueWords = reader.strings(node, for: "true").map { Set($0.map { $0.lowercased() }) }
        }
        if let node = mapping["false"] {
            result.falseWords = reader.strings(node, for: "false").map { Set($0.map { $0.lowercased() }) }
        }
        if let node = mapping["null"] { result.nullTokens = reader.strings(node, for: "null").map(Set.init) }
        return result
    }

    private func loadRelationship(_ entry: YAMLMapping.Entry, reader: DefinitionReader) -> RelationshipMapping? {
        guard let mapping = reader.mapping(entry.value, for: entry.key) else { return nil }
        reader.checkKeys(mapping, allowed: Self.relationshipKeys, in: "relationship mapping '\(entry.key)'")
        guard let matchNode = mapping["match"] else {
            reader.fail(
                "relationship mapping '\(entry.key)' needs 'match' (a unique attribute of the destination)",
                at: entry.keyLocation)
            return nil
        }
        guard let match = reader.string(matchNode, for: "match") else { return nil }
        var result = RelationshipMapping(
            relationship: entry.key, field: entry.key, match: match, location: entry.keyLocation)
        if let node = mapping["field"] {
            guard let field = reader.string(node, for: "field") else { return nil }
            result.field = field
        }
        if let node = mapping["missing"],
            let missing = reader.choice(node, for: "missing", as: RelationshipMapping.Missing.self)
        {
            result.missing = missing
        }
        return result
    }

    // MARK: - Scalars

    /// The zone a `timezone:` names, or nil after reporting why it is not one.
    private func timeZone(_ name: String, at node: YAMLNode, reader: DefinitionReader) -> TimeZone? {
        guard let zone = CoercionOptions.timeZone(named: name) else {
            reader.fail(CoercionOptions.timeZoneProblem(name), at: node.location)
            return nil
        }
        return zone
    }

    /// One format, or a list tried in order (`date_format: [dd.MM.yyyy, iso8601]`).
    private func dateFormat(_ node: YAMLNode, reader: DefinitionReader) -> DateFormat? {
        if case .sequence(let items) = node.content {
            guard !items.isEmpty else {
                reader.fail("'date_format' lists no formats", at: node.location)
                return nil
            }
            let formats = items.compactMap { dateFormat($0, reader: reader) }
            return formats.count == items.count ? .firstOf(formats) : nil
        }
        guard let text = reader.string(node, for: "date_format") else { return nil }
        switch DateFormat.parse(text) {
        case .success(let format): return format
        case .failure(let error):
            reader.fail(error.message, at: node.location, notes: error.notes)
            return nil
        }
    }

    /// A delimiter or record terminator of one or more bytes: `\t` (or `tab`), `\r` and `\n`
    /// name a tab, a carriage return and a line feed; anything else is taken as written.
    private func separator(_ node: YAMLNode, for name: String, reader: DefinitionReader) -> [UInt8]? {
        guard let text = reader.string(node, for: name) else { return nil }
        guard let bytes = CSVOptions.separatorBytes(text) else {
            reader.fail("'\(name)' must be one to 8 characters, not '\(text)'", at: node.location)
            return nil
        }
        return bytes
    }

    private func oneByte(_ node: YAMLNode, for name: String, reader: DefinitionReader) -> UInt8? {
        guard let text = reader.string(node, for: name) else { return nil }
        if text == "\\t" || text.lowercased() == "tab" { return 9 }
        let bytes = Array(text.utf8)
        guard bytes.count == 1, let byte = bytes.first else {
            reader.fail("'\(name)' must be one character (one byte), not '\(text)'", at: node.location)
            return nil
        }
        return byte
    }

    private func rejectBudget(_ node: YAMLNode, reader: DefinitionReader) -> RejectBudget? {
        guard let text = reader.string(node, for: "max_rejects") else { return nil }
        if text == "unlimited" { return .unlimited }
        if text.hasSuffix("%"), let percent = Double(text.dropLast()), percent >= 0, percent <= 100 {
            return .percent(percent)
        }
        if let count = Int(text), count >= 0 { return .count(count) }
        reader.fail(
            "expected a count or a percentage like \"1%\" for 'max_rejects' but found '\(text)'", at: node.location)
        return nil
    }
}

extension JobLoader {
    /// `fixed: {columns: [{name, start, width}, …], skip_lines: N, short_lines: pad}`: the layout of a fixed-width
    /// source, checked here (names, 1-based starts, widths, overlaps) at its location.
    func loadFixedWidth(_ fixed: YAMLMapping, into step: inout ImportStep, reader: DefinitionReader) {
        reader.checkKeys(fixed, allowed: Self.fixedKeys, in: "'fixed'")
        if let node = fixed["skip_lines"], let count = reader.int(node, for: "skip_lines") {
            step.fixedWidth.skipLines = count
        }
        if let node = fixed["short_lines"],
            let shortLines = reader.choice(node, for: "short_lines", as: FixedWidthLayout.ShortLines.self)
        {
            step.fixedWidth.shortLines = shortLines
        }
        guard let node = fixed["columns"] else {
            reader.fail("'fixed' needs 'columns: [{name: id, start: 1, width: 5}, …]'", at: fixed.location)
            return
        }
        guard let items = reader.list(node, for: "columns") else { return }
        var columns: [FixedWidthLayout.Column] = []
        for item in items {
            guard let column = reader.mapping(item, for: "columns") else { continue }
            reader.checkKeys(column, allowed: Self.fixedColumnKeys, in: "a fixed-width column")
            guard let nameNode = column["name"], let startNode = column["start"], let widthNode = column["width"] else {
                reader.fail("a fixed-width column needs 'name', 'start' (1-based) and 'width'", at: column.location)
                continue
            }
            guard let name = reader.string(nameNode, for: "name"),
                let start = reader.int(startNode, for: "start", minimum: 1),
                let width = reader.int(widthNode, for: "width", minimum: 1)
            else { continue }
            columns.append(FixedWidthLayout.Column(name: name, start: start, width: width))
        }
        step.fixedWidth.columns = columns
        for problem in step.fixedWidth.problems() { reader.fail(problem, at: node.location) }
    }
}

extension JobLoader {
    /// `json: {shape: records | object | rows, key_field: id, columns: [a, b]}`: how the records
    /// are laid out; `key_field` belongs to `object` (a JSON document only), `columns` to `rows`.
    func loadJSONShape(_ json: YAMLMapping, into step: inout ImportStep, reader: DefinitionReader) {
        let keyField = json["key_field"].flatMap { reader.string($0, for: "key_field") }
        let columns = json["columns"].flatMap { reader.strings($0, for: "columns") }
        var shape = "records"
        if let node = json["shape"], let name = reader.string(node, for: "shape") {
            guard ["records", "object", "rows"].contains(name) else {
                reader.fail(
                    "unknown JSON shape '\(name)' (records, object, rows)\(Suggestions.didYouMean(name, in: ["records", "object", "rows"]))",
                    at: node.location)
                return
            }
            shape = name
        }
        let location = json["shape"]?.location ?? json.location
        if keyField != nil && shape != "object" {
            reader.fail(
                "'key_field' applies to 'shape: object' (an object whose members are the records)",
                at: json.keyLocation("key_field") ?? location)
        }
        if columns != nil && shape != "rows" {
            reader.fail(
                "'columns' applies to 'shape: rows' (arrays of values)", at: json.keyLocation("columns") ?? location)
        }
        switch shape {
        case "object":
            if step.format == .ndjson {
                reader.fail(
                    "'shape: object' applies to a JSON document, not to NDJSON (whose lines are the records)",
                    at: location)
            }
            step.jsonShape = .object(keyField: keyField ?? "key")
        case "rows":
            if let columns, Set(columns).count != columns.count || columns.contains("") {
                reader.fail(
                    "the columns of 'shape: rows' must be distinct, non-empty names",
                    at: json["columns"]?.location ?? location)
            }
            step.jsonShape = .rows(columns: columns)
        default:
            step.jsonShape = .records
        }
    }
}
