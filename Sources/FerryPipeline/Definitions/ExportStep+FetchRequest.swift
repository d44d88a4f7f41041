import FerryCore

extension ExportStep {
    /// The step that exports what the model's stored fetch request `name` fetches: its entity,
    /// its predicate (and-ed with `predicate`, when given) and its limit (unless `limit` is given).
    ///
    /// - Throws: `.usage` when the model has no such fetch request or `entity` names another
    ///   entity; `.invalidPredicate` for a bad stored predicate, located in the model file.
    public static func fetching(
        _ name: String, in model: ObjectModel, entity: String? = nil, predicate: Predicate? = nil, limit: Int? = nil,
        format: DataFormat, output: String
    ) throws -> ExportStep {
        guard let template = model.fetchRequest(named: name) else {
            let names = model.fetchRequests.map(\.name)
            let known = names.isEmpty ? "it has none" : "it has \(names.joined(separator: ", "))"
            throw FerryError(
                .usage,
                "model \(model.name) version \(model.version) has no fetch request '\(name)' (\(known))\(Suggestions.didYouMean(name, in: names))"
            )
        }
        if let entity, entity != template.entity {
            throw FerryError(.usage, "fetch request '\(name)' fetches \(template.entity), not \(entity)")
        }
        var step = ExportStep(
            entity: template.entity, format: format, output: output, entityLocation: template.location)
        var predicates: [Predicate] = []
        if let text = template.predicate {
            predicates.append(
                try Predicate(
                    format: text, location: template.location ?? InputLocation(file: "fetch request '\(name)'")))
        }
        if let predicate { predicates.append(predicate) }
        step.predicate = predicates.count > 1 ? .and(predicates) : predicates.first
        step.limit = limit ?? template.limit
        return step
    }
}
