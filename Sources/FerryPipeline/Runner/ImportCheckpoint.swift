import FerryCore

/// Where an `atomic: false` import step stood at its last committed batch: written in the same
/// transaction as the batch (``ImportCheckpointLog``), so that the rows in the store and the
/// checkpoint always agree, whenever ferry is killed. `--resume` continues from it.
struct ImportCheckpoint: Codable {
    /// The parts of the step that decide what its rows are (see ``definition(of:model:)``).
    var definition: [String: String]
    /// The files read so far, in order, each as far as it was read (the last one is the one
    /// being read; the others were read to their end).
    var files: [SourceIdentity]
    /// The counts of the committed records (`read` is where reading resumes), per file too.
    var state: ImportState
    /// The rejects file's size after the committed batches' rejects (nil without one).
    var rejectsSize: Int64?
    /// The files a `files: new` import chose to read (nil otherwise): its resume reads the same
    /// ones, though the files it committed are recorded as imported by now.
    var selectedFiles: [String]? = nil

    /// What must not change between an interrupted import and its resume: the entity and its
    /// model, the sources and their format, the mapping, the conflict policy and the rejects file.
    static func definition(of step: ImportStep, model: ObjectModel) -> [String: String] {
        let entity = model.entity(named: step.entity)
        let attributes =
            entity.map {
                $0.attributes.map { "\($0.name):\($0.type)\($0.isOptional ? "?" : "")" }.joined(separator: ",")
            } ?? ""
        let fields = step.fields.map { field -> String in
            switch field.source {
            case .field(let name): return "\(field.attribute)=field:\(name)"
            case .constant(let value): return "\(field.attribute)=value:\(value)"
            }
        }
        let relationships = step.relationships.map {
            "\($0.relationship)=\($0.field)->\($0.match)/\($0.missing.rawValue)"
        }
        var definition = [
            "entity": step.entity,
            "model": "\(model.name) \(model.version): \(attributes)",
            "source": step.sources.joined(separator: ", "),
            "format": step.formatName,
            "mapping": (fields + relationships).joined(separator: "; "),
            "on_conflict": step.onConflict.rawValue,
            "rejects": step.rejectsPath ?? "",
        ]
        if let nested = step.nested { definition["nested"] = "max_depth \(nested.maxDepth)" }
        return definition
    }

    /// The names of the parts of the definition that differ from `current`, sorted.
    func changes(from current: [String: String]) -> [String] {
        Set(definition.keys).union(current.keys).filter { definition[$0] != current[$0] }.sorted()
    }
}
