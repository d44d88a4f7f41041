import FerryCore
import FerryFormats
import Foundation

/// Looks at a set of data files (CSV, TSV, JSON, NDJSON) the way a whole-database import looks
/// at a database (``DatabaseModelInference``): each file is a table, its dialect, encoding and
/// header are detected, its types inferred from a sample (``ModelInference``), a column named
/// like a key (`id`, `author_id` in authors.csv) whose sampled values are distinct and never
/// empty is its key, and a column named after another file (`author_id`, `author`, `authors_id`)
/// whose values are all keys of that file is a foreign key, which becomes a to-one relationship.
/// What `ferry init` writes a model and a job from.
package enum FileSetInference {
    /// What was detected in one file.
    package struct File: Sendable {
        /// The file as given.
        package var path: String
        /// The table (and step source) name: the file's name without its extensions.
        package var table: String
        package var format: DataFormat
        /// The detected delimiter of a CSV file (nil: a comma).
        package var delimiter: UInt8?
        /// An encoding other than UTF-8 (nil: UTF-8, or UTF-16/32 with a byte order mark).
        package var encoding: TextEncoding?
        /// The names given to the columns of a CSV file whose first row is data.
        package var columns: [String]?
        /// The number of records sampled.
        package var sampled: Int
        /// The key column, if one was found.
        package var key: String?
        /// Columns referring to another file's key: column → (file's table, its key column).
        package var references: [String: (table: String, column: String)] = [:]
        /// Why each column got its type (column → reason), for comments.
        package var typeReasons: [String: String] = [:]

        /// The import step reading this file with the detected options.
        package var step: ImportStep {
            var step = ImportStep(source: path, format: format, entity: table)
            step.sources = [path]
            step.encoding = encoding
            if let delimiter { step.csv.delimiter = delimiter }
            if let columns {
                step.csv.hasHeader = false
                step.csv.columns = columns
            }
            step.coercion.nullTokens = format.readsTextColumns ? [""] : []
            return step
        }
    }

    /// The files, the inferred model and the plan of import steps (referenced files first).
    package struct Result: Sendable {
        package var files: [File]
        package var plan: DatabaseModelInference.Plan

        /// The file a step of the plan reads.
        package func file(ofTable table: String) -> File? { files.first { $0.table == table } }
    }

    /// Infers a model named `modelName` from the files at `paths`, each sampled up to
    /// `sampleSize` records.
    /// - Throws: `.usage` for a file whose format its extension does not tell; the readers'
    ///   errors for unreadable data.
    package static func infer(paths: [String], modelName: String, sampleSize: Int = 100_000) throws -> Result {
        var files: [File] = []
        var samples: [String: SampledReader] = [:]
        var taken: Set<String> = []
        for path in paths {
            let dataExtension = DataFormat.dataExtension(of: path)
            guard let format = DataFormat(pathExtension: dataExtension), format != .fixed else {
                throw FerryError(
                    .usage,
                    "cannot tell the format of '\(path)' from its extension (.csv, .tsv, .json, .ndjson, .jsonl)")
            }
            var table = AttributeNaming.identifier(Self.baseName(path), fallback: "data")
            var suffix = 2
            while taken.contains(table.lowercased()) {
                table = AttributeNaming.identifier(Self.baseName(path), fallback: "data") + "_\(suffix)"
                suffix += 1
            }
            taken.insert(table.lowercased())
            var file = File(path: path, table: table, format: format, sampled: 0)
            if !Self.isUTF8(path) { file.encoding = try TextEncoding(named: "windows-1252") }
            if format == .csv {
                let sample = CSVDialectSniffer.sample(path: path, encoding: file.encoding)
                if let implied = DataFormat.impliedDelimiter(dataExtension) {
                    file.delimiter = implied
                } else if let sample,
                    let detected = CSVDialectSniffer.sniffDelimiter(sample.bytes, isComplete: sample.isComplete),
                    detected != UInt8(ascii: ",")
                {
                    file.delimiter = detected
                }
                if let sample,
                    let count = CSVDialectSniffer.headerlessColumnCount(
                        sample.bytes, delimiter: file.delimiter ?? UInt8(ascii: ","), quote: UInt8(ascii: "\""),
                        isComplete: sample.isComplete, skipLines: 0, comment: nil)
                {
                    file.columns = (1...count).map { "column_\($0)" }
                }
            }
            let sampled = try SampledReader(ReaderFactory.open(step: file.step), sampleSize: sampleSize)
            file.sampled = sampled.samples.count
            samples[table] = sampled
            files.append(file)
        }

        // Keys: a column named like one whose sampled values are distinct and never empty.
        var keyValues: [String: Set<String>] = [:]
        for index in files.indices {
            guard let sampled = samples[files[index].table], !sampled.samples.isEmpty else { continue }
            let table = files[index].table
            for (position, field) in sampled.fieldNames.enumerated() where Self.isKeyName(field, of: table) {
                let values = sampled.samples.map {
                    Self.text($0.fields.indices.contains(position) ? $0.fields[position] : nil)
                }
                let present = values.compactMap { $0 }
                guard present.count == values.count, Set(present).count == present.count else { continue }
                files[index].key = field
                keyValues[table] = Set(present)
                break
            }
        }

        // Foreign keys: a column named after a keyed file, all of whose values are its keys.
        for index in files.indices {
            guard let sampled = samples[files[index].table] else { continue }
            for (position, field) in sampled.fieldNames.enumerated() where field != files[index].key {
                let values = sampled.samples.compactMap {
                    Self.text($0.fields.indices.contains(position) ? $0.fields[position] : nil)
                }
                guard !values.isEmpty else { continue }
                for target in files where target.table != files[index].table {
                    guard let key = target.key, let keys = keyValues[target.table],
                        Self.refers(field, to: target.table, key: key), values.allSatisfy(keys.contains)
                    else { continue }
                    files[index].references[field] = (target.table, key)
                    break
                }
            }
        }

        let schema = SourceSchema(
            tables: files.map { file in
                let fieldNames = samples[file.table]?.fieldNames ?? []
                return SourceSchema.Table(
                    name: file.table,
                    columns: fieldNames.map { SourceSchema.Column(name: $0, declaredType: nil, notNull: false) },
                    primaryKey: file.key.map { [$0] } ?? [],
                    foreignKeys: file.references.sorted { $0.key < $1.key }.map {
                        SourceSchema.ForeignKey(
                            columns: [$0.key], table: $0.value.table, referencedColumns: [$0.value.column])
                    },
                    uniqueKeys: [])
            })
        var plan = try DatabaseModelInference.plan(schema: schema, modelName: modelName) { table, entityName in
            let sampled = samples[table.name]
            let format = files.first { $0.table == table.name }?.format ?? .csv
            return ModelInference.infer(
                entityNamed: entityName, fieldNames: sampled?.fieldNames ?? [], samples: sampled?.samples ?? [],
                textIsUntyped: format.readsTextColumns)
        }
        for (index, table) in plan.tables.enumerated() {
            guard let file = files.first(where: { $0.table == table }) else { continue }
            let inferred = plan.steps[index]
            plan.steps[index] = file.step
            plan.steps[index].entity = inferred.entity
            plan.steps[index].fields = inferred.fields
            plan.steps[index].relationships = inferred.relationships
        }
        return Result(files: files, plan: plan)
    }

    /// The file's name without its directory and data extensions (`books.csv.gz` → `books`).
    static func baseName(_ path: String) -> String {
        var name = (path as NSString).lastPathComponent
        while !(name as NSString).pathExtension.isEmpty { name = (name as NSString).deletingPathExtension }
        return name
    }

    /// True when the start of the file, decompressed as the readers see it (UTF-16/32 with a
    /// byte order mark decoded), is UTF-8, a sequence cut at the end of the sample aside.
    static func isUTF8(_ path: String) -> Bool {
        guard let bytes = CSVDialectSniffer.sample(path: path)?.bytes else { return true }
        for cut in 0...min(3, bytes.count) where String(validating: bytes.dropLast(cut), as: UTF8.self) != nil {
            return true
        }
        return false
    }

    /// `id`, or the table's name (or its singular) followed by `_id` or `id`, in any case.
    static func isKeyName(_ column: String, of table: String) -> Bool {
        let name = column.lowercased()
        if name == "id" { return true }
        return names(of: table).contains { name == "\($0)_id" || name == "\($0)id" }
    }

    /// Whether `column` is named after `table` (`author_id`, `authorId`, `author`, `authors_id`)
    /// or carries the name of its key (`author_id` in books.csv and authors.csv).
    static func refers(_ column: String, to table: String, key: String) -> Bool {
        let name = column.lowercased()
        if name == key.lowercased() && name != "id" { return true }
        let base = DatabaseModelInference.relationshipName(forColumn: column).lowercased()
        return base != name && names(of: table).contains(base) || names(of: table).contains(name)
    }

    /// The table's name and its singular (`authors` → `author`, `categories` → `category`), lower case.
    static func names(of table: String) -> Set<String> {
        let name = table.lowercased()
        var names: Set<String> = [name]
        if name.hasSuffix("ies"), name.count > 3 { names.insert(String(name.dropLast(3)) + "y") }
        if name.hasSuffix("ses") || name.hasSuffix("xes") { names.insert(String(name.dropLast(2))) }
        if name.hasSuffix("s"), name.count > 1 { names.insert(String(name.dropLast())) }
        return names
    }

    /// A field's value as text for comparing keys; nil for null, absent and nested values.
    static func text(_ field: Field?) -> String? {
        switch field?.value {
        case .text(let text)?: return text.isEmpty ? nil : text
        case .number(let text)?: return text
        case .bool(let value)?: return value ? "true" : "false"
        case .typed(let value)?: return "\(value)"
        default: return nil
        }
    }
}
