/// Each version step's mapping, made once: a mapping depends only on its two versions, so
/// mapping files are parsed and models compared once however often a run looks a step up
/// (``Migrator/plan()`` then ``Migrator/run()``, or `ferry check` migrating one snapshot per
/// shipped version through the same steps).
package final class StepMappingCache {
    private let provider: (ObjectModel, ObjectModel) throws -> MappingModel
    private var mappings: [String: MappingModel] = [:]

    /// Caches what `provider` makes (a failure is not cached: it is raised again next time).
    package init(_ provider: @escaping (ObjectModel, ObjectModel) throws -> MappingModel) {
        self.provider = provider
    }

    /// The mapping from `from` to `to`, from the provider the first time it is asked for.
    package func mapping(from: ObjectModel, to: ObjectModel) throws -> MappingModel {
        let key = "\(from.version)\u{1F}\(to.version)"
        if let known = mappings[key] { return known }
        let mapping = try provider(from, to)
        mappings[key] = mapping
        return mapping
    }
}
