/// Which source entity and property each destination one comes from, for one version step
/// (`source` → `destination`, adjacent versions), resolved through `renamed_from`.
///
/// Rules, for entities and, within each matched entity pair, for attributes and relationships
/// (attributes match attributes, relationships match relationships):
/// 1. `renamed_from: X` claims `X` of the previous version when `X` exists there.
/// 2. Otherwise a same-named entity or property matches. A `renamed_from` naming nothing in the
///    previous version is ignored when the name itself exists there (a leftover hint copied from
///    an older version file); without such a match it is an error.
/// 3. A source claimed by two destinations is an error (an ambiguous rename): neither gets it.
struct StepCorrespondence: Sendable {
    /// Destination entity name → source entity name.
    var entities: [String: String] = [:]
    /// Destination entity name → (destination attribute → source attribute).
    var attributes: [String: [String: String]] = [:]
    /// Destination entity name → (destination relationship → source relationship).
    var relationships: [String: [String: String]] = [:]
    /// `rename_unresolved` refusals.
    var problems: [ModelChange] = []

    init(source: ObjectModel, destination: ObjectModel, mappingFile: String) {
        let entityNames = source.entityNames
        let matched = Self.resolve(
            destination.entities.map { Claimant(name: $0.name, renamedFrom: $0.renamedFrom) }, sources: entityNames,
            problem: { problem in
                Self.change(
                    problem, kind: "entity", entity: nil, sourceEntity: nil, source: source, destination: destination,
                    mappingFile: mappingFile)
            })
        entities = matched.map
        problems += matched.problems
        for entity in destination.entities {
            guard let sourceName = entities[entity.name], let sourceEntity = source.entity(named: sourceName) else {
                continue
            }
            let attributes = Self.resolve(
                entity.attributes.map { Claimant(name: $0.name, renamedFrom: $0.renamedFrom) },
                sources: sourceEntity.attributes.map(\.name),
                problem: { problem in
                    Self.change(
                        problem, kind: "attribute", entity: entity.name, sourceEntity: sourceName, source: source,
                        destination: destination, mappingFile: mappingFile)
                })
            self.attributes[entity.name] = attributes.map
            problems += attributes.problems
            let relationships = Self.resolve(
                entity.relationships.map { Claimant(name: $0.name, renamedFrom: $0.renamedFrom) },
                sources: sourceEntity.relationships.map(\.name),
                problem: { problem in
                    Self.change(
                        problem, kind: "relationship", entity: entity.name, sourceEntity: sourceName, source: source,
                        destination: destination, mappingFile: mappingFile)
                })
            self.relationships[entity.name] = relationships.map
            problems += relationships.problems
        }
    }

    struct Claimant {
        var name: String
        var renamedFrom: String?
        /// The `renamed_from` when it names something other than the claimant itself.
        var rename: String? { renamedFrom.flatMap { $0 == name ? nil : $0 } }
    }

    enum Problem {
        /// `renamed_from` names nothing in the source, and the name itself is not there either.
        case missing(Claimant, candidates: [String])
        /// Several destinations claim the same source.
        case ambiguous([Claimant], source: String)
    }

    static func resolve(
        _ claimants: [Claimant], sources: [String], problem: (Problem) -> ModelChange
    ) -> (map: [String: String], problems: [ModelChange]) {
        let available = Set(sources)
        var claims: [String: [Claimant]] = [:]
        var problems: [ModelChange] = []
        for claimant in claimants {
            if let rename = claimant.rename, available.contains(rename) {
                claims[rename, default: []].append(claimant)
            } else if available.contains(claimant.name) {
                claims[claimant.name, default: []].append(claimant)
            } else if claimant.rename != nil {
                problems.append(problem(.missing(claimant, candidates: sources)))
            }
        }
        var map: [String: String] = [:]
        // Source order, so that problems come out in a stable order.
        for source in sources {
            guard let claimants = claims[source] else { continue }
            if claimants.count == 1 {
                map[claimants[0].name] = source
            } else {
                problems.append(problem(.ambiguous(claimants, source: source)))
            }
        }
        return (map, problems)
    }

    private static func change(
        _ problem: Problem, kind: String, entity: String?, sourceEntity: String?, source: ObjectModel,
        destination: ObjectModel, mappingFile: String
    ) -> ModelChange {
        func subject(_ name: String) -> String { entity.map { "\($0).\(name)" } ?? name }
        /// `attribute name of Customer in version 1`, `entity Purchase of version 1`.
        func scope(_ name: String?) -> String {
            let what = name.map { "\(kind) \($0)" } ?? kind
            return sourceEntity.map { "\(what) of \($0) in version \(source.version)" }
                ?? "\(what) of version \(source.version)"
        }
        switch problem {
        case .missing(let claimant, let candidates):
            let rename = claimant.rename ?? ""
            let what = entity == nil ? "entity \(claimant.name)" : subject(claimant.name)
            var fix = "correct it"
            if let match = Suggestions.closest(to: rename, in: candidates) { fix += " (did you mean '\(match)'?)" }
            fix += " or remove it to add \(what) as a new \(kind)"
            return ModelChange(
                kind: .renameUnresolved, entity: entity ?? claimant.name, property: entity == nil ? nil : claimant.name,
                detail: "renamed_from \(rename) (not found)", verdict: .refused,
                reason: "`renamed_from: \(rename)` on \(what) names no \(scope(nil))",
                fix: fix)
        case .ambiguous(let claimants, let sourceName):
            let names = claimants.map { claimant in
                let what = entity == nil ? claimant.name : subject(claimant.name)
                return claimant.rename != nil ? "\(what) (renamed_from: \(sourceName))" : "\(what) (same name)"
            }
            let explicit = claimants.filter { $0.rename != nil }.map { entity == nil ? $0.name : subject($0.name) }
            let fix: String
            if explicit.count == claimants.count {
                fix =
                    "keep `renamed_from: \(sourceName)` on only one of \(explicit.joined(separator: ", ")), or write \(mappingFile)"
            } else {
                fix =
                    "remove `renamed_from: \(sourceName)` from \(explicit.joined(separator: ", ")), or write \(mappingFile)"
            }
            let first = claimants[0]
            return ModelChange(
                kind: .renameUnresolved, entity: entity ?? first.name, property: entity == nil ? nil : first.name,
                detail: "ambiguous rename of \(sourceName)", verdict: .refused,
                reason:
                    "\(names.joined(separator: " and ")) \(names.count == 2 ? "both" : "all") claim \(scope(sourceName))",
                fix: fix)
        }
    }
}
