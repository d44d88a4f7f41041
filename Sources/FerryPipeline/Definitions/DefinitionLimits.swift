import FerryCore

/// How many steps, entities and properties a definition file may declare: far more than anyone
/// writes by hand, and below what SQLite allows (2,000 columns per table), so that a generated or
/// hostile file is a located error instead of a raw SQLite error or an endless run.
/// See docs/files.md, "Limits".
enum DefinitionLimits {
    /// The most steps in one job.
    static let maximumSteps = 1_000
    /// The most entities in one model version (or one mapping file).
    static let maximumEntities = 1_000
    /// The most attributes plus relationships of one entity.
    static let maximumProperties = 1_000
}

extension DefinitionReader {
    /// Reports a `count` above `maximum` at `location` (the list or mapping that holds the items);
    /// true when the count is within the limit.
    func checkCount(_ count: Int, maximum: Int, of what: String, in context: String, at location: InputLocation) -> Bool
    {
        guard count > maximum else { return true }
        fail("\(context) has \(count) \(what); at most \(maximum) are allowed", at: location)
        return false
    }
}
