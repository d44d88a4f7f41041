import FerryCore
import FerryFormats
import Foundation

/// The model and job files `ferry init` writes from a ``FileSetInference/Result``: plain YAML
/// that runs as it is, with the schema line editors read and a comment on every inferred choice.
package struct InitYAMLWriter {
    /// Where the published schemas are (the `$id` of schemas/*.schema.json without the file name).
    package static let schemaBase = "https://raw.githubusercontent.com/ferry/ferry/main/schemas/"

    package var result: FileSetInference.Result
    /// The job's name, and the model's.
    package var name: String
    /// The store as the job names it (relative to the job's folder, absolute, or a URL).
    package var store: String
    /// The file the job names as its model, relative to the job's folder.
    package var modelFile = "model.yml"
    /// Each data file as the job names it (relative to the job's folder where it is inside).
    package var relativePath: (String) -> String
    /// True for `ferry init` without files: the job is an example over generated data.
    package var isExample = false

    package init(
        result: FileSetInference.Result, name: String, store: String, relativePath: @escaping (String) -> String
    ) {
        self.result = result
        self.name = name
        self.store = store
        self.relativePath = relativePath
    }

    var fileList: String {
        let names = result.files.map { ($0.path as NSString).lastPathComponent }
        guard names.count > 1, let last = names.last else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " and " + last
    }

    // MARK: - The model

    /// model.yml: one entity per file, with comments saying why each type, key and relationship.
    package func modelText() -> String {
        let model = result.plan.model
        var lines = [
            "# yaml-language-server: $schema=\(Self.schemaBase)model.schema.json",
            "# The model ferry init inferred from \(fileList); edit it freely (ferry validate checks it).",
            "# One entity per file and one attribute per column, with the narrowest type every sampled value",
            "# fits without loss; a file's key column (named like a key, its values distinct and never",
            "# empty) is unique and required; a column whose values are all keys of another file becomes a",
            "# to-one relationship to it, with a to-many inverse.",
            "name: \(Self.scalar(name))",
            "version: \"1\"",
            "entities:",
        ]
        for entity in model.entities {
            let source = sourceFile(ofEntity: entity.name)
            let sampled = source.map { " (\($0.sampled) record\($0.sampled == 1 ? "" : "s") sampled)" } ?? ""
            lines.append(
                "  \(Self.scalar(entity.name)):  # \(source.map { ($0.path as NSString).lastPathComponent } ?? entity.name)\(sampled)"
            )
            lines.append("    attributes:")
            let keyAttributes = Set(entity.uniquenessConstraints.filter { $0.count == 1 }.flatMap { $0 })
            for attribute in entity.attributes {
                let type = attribute.type.rawValue
                let value = attribute.isOptional ? type : "{type: \(type), optional: false}"
                var comment = Self.typeReason(attribute.type)
                if keyAttributes.contains(attribute.name) {
                    comment = "the key: named like one, distinct and never empty in the sample; " + comment
                }
                lines.append("      \(Self.scalar(attribute.name)): \(value)  # \(comment)")
            }
            if !entity.uniquenessConstraints.isEmpty {
                lines.append("    unique:")
                for constraint in entity.uniquenessConstraints {
                    lines.append("      - [\(constraint.map(Self.scalar).joined(separator: ", "))]")
                }
            }
            if !entity.relationships.isEmpty {
                lines.append("    relationships:")
                for relationship in entity.relationships {
                    var fields = ["destination: \(Self.scalar(relationship.destination))"]
                    if relationship.isToMany { fields.append("to_many: true") }
                    if let inverse = relationship.inverse { fields.append("inverse: \(Self.scalar(inverse))") }
                    if !relationship.isOptional { fields.append("optional: false") }
                    let comment: String
                    if relationship.isToMany {
                        comment = "the inverse of \(relationship.destination).\(relationship.inverse ?? "")"
                    } else if let mapping = mapping(of: relationship.name, in: entity.name) {
                        comment =
                            "the \(mapping.field) values of \(fileName(ofEntity: entity.name)) are all \(mapping.match) values of \(fileName(ofEntity: relationship.destination))"
                    } else {
                        comment = "a reference to \(relationship.destination)"
                    }
                    lines.append(
                        "      \(Self.scalar(relationship.name)): {\(fields.joined(separator: ", "))}  # \(comment)")
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - The job

    /// job.yml: one import step per file, referenced files first.
    package func jobText() -> String {
        var lines = ["# yaml-language-server: $schema=\(Self.schemaBase)job.schema.json"]
        if isExample {
            lines += [
                "# An example job that ferry init wrote over generated sample data (\(fileList)). Run it,",
                "# then point the sources at your own files, or let ferry init FILE... write a job for them.",
            ]
        } else {
            lines.append("# The job ferry init wrote for \(fileList).")
        }
        lines += [
            "# Run it with: ferry run job.yml (relative paths are relative to this file). Every choice below",
            "# was guessed from the data: check the comments, then edit freely (ferry validate job.yml).",
            "job: \(Self.scalar(name))",
            "store: {path: \(Self.scalar(store)), rebuild: true}  # rebuilt on every run: a full reload that replaces the store only when every step succeeded",
            "model: \(Self.scalar(modelFile))  # the model ferry init inferred: entities, types, keys, relationships",
            "steps:",
        ]
        for (index, step) in result.plan.steps.enumerated() {
            let table = result.plan.tables[index]
            guard let file = result.file(ofTable: table) else { continue }
            let fileName = (file.path as NSString).lastPathComponent
            let referrers = result.files.filter { other in other.references.values.contains { $0.table == table } }
            let order =
                referrers.isEmpty
                ? ""
                : "; read before \(referrers.map { ($0.path as NSString).lastPathComponent }.joined(separator: ", ")), which refer\(referrers.count == 1 ? "s" : "") to it"
            lines.append("  # \(fileName): \(describe(file))\(order)")
            lines.append("  - import:")
            lines.append("      source: \(Self.scalar(relativePath(file.path)))")
            lines.append("      entity: \(Self.scalar(step.entity))  # named after the file")
            if file.format == .csv {
                var options: [String] = []
                var why: [String] = []
                if let delimiter = file.delimiter,
                    DataFormat.impliedDelimiter(DataFormat.dataExtension(of: file.path)) == nil
                {
                    options.append("delimiter: \(Self.scalar(Self.describe(delimiter)))")
                    why.append("the delimiter that splits every sampled line into as many fields")
                }
                if let columns = file.columns {
                    options.append("header: false")
                    options.append("columns: [\(columns.map(Self.scalar).joined(separator: ", "))]")
                    why.append("the first row is data: its values have the kinds of the rows below")
                }
                if !options.isEmpty {
                    lines.append("      csv: {\(options.joined(separator: ", "))}  # \(why.joined(separator: "; "))")
                }
            }
            if let encoding = file.encoding {
                lines.append("      encoding: \(Self.scalar(encoding.name))  # the file is not valid UTF-8")
            }
            if !step.fields.isEmpty {
                lines.append("      fields:  # attribute: column, where the column's name is not an attribute name")
                for field in step.fields {
                    guard case .field(let column) = field.source else { continue }
                    lines.append("        \(Self.scalar(field.attribute)): \(Self.scalar(column))")
                }
            }
            if !step.relationships.isEmpty {
                lines.append("      relationships:")
                for relationship in step.relationships {
                    let target =
                        result.plan.model.entity(named: step.entity)?.relationship(named: relationship.relationship)?
                        .destination ?? ""
                    lines.append(
                        "        \(Self.scalar(relationship.relationship)): {field: \(Self.scalar(relationship.field)), match: \(Self.scalar(relationship.match))}  # the \(target) whose \(relationship.match) is this record's \(relationship.field)"
                    )
                }
            }
            if file.key != nil {
                lines.append(
                    "      on_conflict: error  # a key seen twice is a data error (update would refresh the object instead)"
                )
            }
            lines.append(
                "      rejects: \(Self.scalar(table + ".rejects.ndjson"))  # records that do not fit the model, each with its reason"
            )
            lines.append(
                "      max_rejects: 0  # any rejected record fails the step (nothing is kept); raise it (10, \"1%\") to let some through"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Helpers

    func sourceFile(ofEntity entity: String) -> FileSetInference.File? {
        guard let index = result.plan.steps.firstIndex(where: { $0.entity == entity }) else { return nil }
        return result.file(ofTable: result.plan.tables[index])
    }

    func fileName(ofEntity entity: String) -> String {
        sourceFile(ofEntity: entity).map { ($0.path as NSString).lastPathComponent } ?? entity
    }

    func mapping(of relationship: String, in entity: String) -> RelationshipMapping? {
        result.plan.steps.first { $0.entity == entity }?.relationships.first { $0.relationship == relationship }
    }

    /// `csv, ';'-delimited, header row, UTF-8 (4 records sampled)`.
    func describe(_ file: FileSetInference.File) -> String {
        var parts = [DataFormat.dataExtension(of: file.path) == "tsv" ? "tsv" : file.format.rawValue]
        if file.format == .csv {
            parts.append("delimiter '\(Self.describe(file.delimiter ?? UInt8(ascii: ",")))'")
            parts.append(file.columns == nil ? "header row" : "no header row")
        }
        parts.append(file.encoding?.name ?? "UTF-8")
        return parts.joined(separator: ", ") + " (\(file.sampled) record\(file.sampled == 1 ? "" : "s") sampled)"
    }

    static func describe(_ delimiter: UInt8) -> String {
        delimiter == 9 ? "\\t" : String(UnicodeScalar(delimiter))
    }

    static func typeReason(_ type: AttributeType) -> String {
        switch type {
        case .int16, .int32, .int64: return "every sampled value is a whole number"
        case .decimal, .double, .float: return "every sampled value is a number"
        case .bool: return "every sampled value is true or false"
        case .date: return "every sampled value is a date"
        case .uuid: return "every sampled value is a UUID"
        case .json: return "nested JSON values"
        case .binary: return "binary values"
        case .uri: return "URIs"
        case .string: return "text (not every value is a number, date or boolean)"
        }
    }

    /// A YAML scalar for `text`: plain when that reads back as the same text, else double-quoted.
    static func scalar(_ text: String) -> String {
        let reserved: Set<String> = [
            "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~", ".inf", "-.inf", "+.inf", ".nan",
        ]
        let plain =
            !text.isEmpty && !reserved.contains(text.lowercased()) && Double(text) == nil
            && text.unicodeScalars.allSatisfy {
                CharacterSet.alphanumerics.contains($0) || "_-./".unicodeScalars.contains($0)
            }
            && !(text.first?.isNumber ?? true)
        return plain ? text : JSONEscaping.quote(text)
    }
}
