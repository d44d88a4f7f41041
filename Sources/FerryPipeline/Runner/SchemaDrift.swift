import FerryCore
import FerryFormats

/// One difference between a source's fields and the fields an import step reads, as the run
/// report names it: the field, whether it is new or missing, where it was first seen and what
/// the step did about it (`on_new_field:`, `on_missing_field:`).
public struct SchemaDrift: Sendable, Codable, Hashable {
    /// How the source differs.
    public enum Change: String, Sendable, Codable, Hashable {
        /// The source has a field no attribute or relationship of the step reads.
        case new
        /// The source lacks a field the step reads.
        case missing
    }

    /// What the step did about the difference.
    public enum Action: String, Sendable, Codable, Hashable {
        /// The step failed (`error`).
        case error
        /// The field was not imported (`on_new_field: ignore`).
        case ignored
        /// The field was added to the store's model, and imported (`on_new_field: add`).
        case added
        /// The field read as null (`on_missing_field: null`).
        case null
    }

    /// The source field, as the source spells it.
    public var field: String
    /// New or missing.
    public var change: Change
    /// The file the field was first seen in (new) or is missing from; nil for standard input.
    public var file: String?
    /// The line it was first seen on: a CSV header's line, the first JSON record with the field;
    /// nil for a field no record has (missing from JSON records) or when the line is unknown.
    public var line: Int?
    /// What the step did.
    public var action: Action
    /// The attribute a missing field was read into, when one was.
    public var attribute: String?

    /// A drift of `field` first seen at `file`, `line`.
    public init(
        field: String, change: Change, file: String?, line: Int?, action: Action, attribute: String? = nil
    ) {
        self.field = field
        self.change = change
        self.file = file
        self.line = line
        self.action = action
        self.attribute = attribute
    }

    /// `new field 'zip' (day2.csv:1) ignored`, for the step's summary line.
    public var summary: String {
        let place = file.map { file in " (\(file)\(line.map { ":\($0)" } ?? ""))" } ?? ""
        let verb =
            switch action {
            case .error: "failed the step"
            case .ignored: "not imported"
            case .added: "added to the model"
            case .null: "read as null"
            }
        return "\(change.rawValue) field '\(field)'\(place) \(verb)"
    }

    /// The location the report and errors give.
    var location: InputLocation? { file.map { InputLocation(file: $0, line: line ?? 0) } }

    enum CodingKeys: String, CodingKey {
        case field, change, file, line, action, attribute
    }
}

/// Compares a file source's fields with the fields an import step reads, and applies the step's
/// `on_new_field` and `on_missing_field`: before the first record for CSV and fixed-width text
/// (whose header names every field), after the last one for JSON and NDJSON (whose records
/// name their own keys). Database sources declare their columns and are not checked.
struct SchemaDriftCheck {
    let step: ImportStep

    /// The line of the header row of `reader`'s current file (1 when it has none).
    static func headerLine(of reader: any RecordReader) -> Int {
        var current: any RecordReader = reader
        while true {
            if let csv = current as? CSVReader { return max(csv.headerLine, 1) }
            if let forwarding = current as? any ForwardingRecordReader {
                current = forwarding.wrapped
            } else if let files = current as? MultiFileReader, let file = try? files.currentFile() {
                current = file
            } else {
                return 1
            }
        }
    }

    /// True when `field` (a top-level field of the source) is read by the step: a mapped name
    /// equals it, or is a path into it (`address.city`, `tags[0]`).
    static func reads(_ field: String, mapped: Set<String>) -> Bool {
        if mapped.contains(field) { return true }
        return mapped.contains { name in
            name.hasPrefix(field)
                && (name.dropFirst(field.count).first == "." || name.dropFirst(field.count).first == "[")
        }
    }

    /// CSV and fixed-width text, before any record: the header's new fields, and the missing
    /// fields the plan reads as null. Appends to `drift`, then throws on a field that fails.
    func atStart(reader: any RecordReader, plan: ImportPlan, drift: inout [SchemaDrift]) throws {
        guard step.database == nil, step.format.readsTextColumns else { return }
        let file = reader.sourceName
        let line = Self.headerLine(of: reader)
        for missing in plan.missingFields {
            drift.append(
                SchemaDrift(
                    field: missing.field, change: .missing, file: file, line: line, action: .null,
                    attribute: missing.reader))
        }
        // Columns the job names itself (a fixed-width layout, CSV without a header row) are its
        // own choice, not the file's: only a header row can bring a new field.
        guard step.format == .csv, step.csv.hasHeader, step.csv.columns == nil else { return }
        let mapped = plan.mappedFieldNames
        let new = reader.fieldNames.filter { !Self.reads($0, mapped: mapped) }
        try apply(new: new.map { ($0, file, line) }, reader: reader, mapped: mapped, drift: &drift)
    }

    /// JSON and NDJSON, after the last record: keys some record had that nothing reads (each
    /// with the first record that had it), and fields the step names that no record had.
    func atEnd(reader: any RecordReader, plan: ImportPlan, drift: inout [SchemaDrift]) throws {
        guard step.database == nil, !step.format.readsTextColumns else { return }
        let mapped = plan.mappedFieldNames
        let new = reader.fieldNames.filter { reader.hasField($0) && !Self.reads($0, mapped: mapped) }
        var missing: [(field: String, reader: String)] = []
        for column in plan.attributes {
            guard case .field(_, let name) = column.source, expects(column.attribute.name, field: name) else {
                continue
            }
            if !reader.hasField(Self.topLevel(name)) { missing.append((name, column.attribute.name)) }
        }
        for reference in plan.references where !reader.hasField(Self.topLevel(reference.mapping.field)) {
            missing.append((reference.mapping.field, reference.mapping.relationship))
        }
        let file = step.sources == ["-"] ? nil : reader.sourceName
        for field in missing {
            let action: SchemaDrift.Action = step.drift.onMissingField == .error ? .error : .null
            drift.append(
                SchemaDrift(
                    field: field.field, change: .missing, file: file, line: nil, action: action,
                    attribute: field.reader))
            if action == .error {
                throw FerryError(
                    .invalidInput,
                    "no record of the source has the field '\(field.field)', which the step reads into \(step.entity).\(field.reader) (on_missing_field: error); the step was rolled back",
                    at: InputLocation(file: file ?? step.source),
                    notes: [
                        "a renamed field is a missing field plus a new one: map the new name in 'fields:', or set 'on_missing_field: null' on the step (--on-missing-field null) to read it as null"
                    ])
            }
        }
        guard !new.isEmpty else { return }
        let firstSeen = firstLines(of: new)
        try apply(
            new: new.map { ($0, firstSeen[$0]?.file ?? file, firstSeen[$0]?.line) }, reader: reader, mapped: mapped,
            drift: &drift)
    }

    /// Records the new fields with the step's policy; throws for `error` (and for `add`, which
    /// only an inferred model can take: its fields were added before the step).
    private func apply(
        new: [(field: String, file: String?, line: Int?)], reader: any RecordReader, mapped: Set<String>,
        drift: inout [SchemaDrift]
    ) throws {
        let policy = step.drift.onNewField
        for (field, file, line) in new {
            drift.append(
                SchemaDrift(
                    field: field, change: .new, file: file, line: line, action: policy == .ignore ? .ignored : .error))
        }
        guard policy != .ignore, let first = new.first else { return }
        let names = new.map { "'\($0.field)'" }.joined(separator: ", ")
        let located = InputLocation(file: first.file ?? step.source, line: first.line ?? 0)
        if policy == .add, step.modelIsInferred {
            throw FerryError(
                .invalidInput,
                "new field\(new.count == 1 ? "" : "s") \(names) in the source after the records the model was inferred from: on_new_field: add adds the fields of the header or of the first --sample records; the step was rolled back",
                at: located,
                notes: ["import again with a larger --sample, or with --on-new-field ignore to import without them"])
        }
        if policy == .add {
            throw FerryError(
                .invalidDefinition,
                "on_new_field: add cannot add \(names) to \(step.entity): the step's model is a model file, which the store's model must match; add the attribute\(new.count == 1 ? "" : "s") in a new version of the model and migrate the store, or set 'on_new_field: ignore'",
                at: step.drift.newFieldLocation ?? located)
        }
        throw FerryError(
            .invalidInput,
            "new field\(new.count == 1 ? "" : "s") \(names) in the source: no attribute or relationship of \(step.entity) reads \(new.count == 1 ? "it" : "them") (on_new_field: error)\(step.format.readsTextColumns ? "; nothing was imported" : "; the step was rolled back")",
            at: located,
            notes: [
                "fields the step reads: \(reader.fieldNames.filter { Self.reads($0, mapped: mapped) && reader.hasField($0) }.joined(separator: ", "))",
                "map \(new.count == 1 ? "it" : "them") in 'fields:', or set 'on_new_field: ignore' on the step (--on-new-field ignore) to import without \(new.count == 1 ? "it" : "them")",
            ])
    }

    /// Whether a JSON field the step reads counts as expected: one `fields:` names, or with an
    /// `on_missing_field` written, also one read by its attribute's name.
    private func expects(_ attribute: String, field: String) -> Bool {
        step.drift.missingField != nil || step.fields.contains { $0.attribute == attribute }
    }

    /// The top-level key of a field path (`address.city` → `address`).
    static func topLevel(_ path: String) -> String {
        String(path.prefix { $0 != "." && $0 != "[" })
    }

    /// The file and line of the first record that has each of `fields`, read again from the
    /// start (only when there are new fields; standard input cannot be read twice).
    private func firstLines(of fields: [String]) -> [String: (file: String?, line: Int)] {
        guard step.sources != ["-"], let reader = try? ReaderFactory.open(step: step) else { return [:] }
        var found: [String: (file: String?, line: Int)] = [:]
        do {
            try reader.prepare()
            while found.count < fields.count, let record = try reader.next() {
                for field in fields where found[field] == nil && reader.hasField(field) {
                    found[field] = (record.sourceName ?? reader.sourceName, record.line)
                }
            }
        } catch {
            // A record that cannot be read again leaves the remaining lines unknown.
        }
        return found
    }
}
