/// The lightweight-migration rules a ``ModelDiff`` judges changes by, chosen by the models'
/// ``ModelOrigin``: a diff that involves an Xcode model follows Core Data's documented rules
/// (ModelDiff+CoreDataRules.swift); a diff of ferry model files follows ferry's own rules
/// (docs/migration.md). Where the two differ, Xcode models follow Core Data.
public enum MigrationRuleSet: String, Sendable, Hashable, Codable {
    /// ferry's rules for YAML/JSON models (docs/migration.md).
    case ferry
    /// Core Data's lightweight (inferred) migration rules, for Xcode models (docs/coredata.md).
    case coreData = "core-data"

    /// Core Data's rules when either side was read from an Xcode model, else ferry's.
    public init(source: ObjectModel, destination: ObjectModel) {
        self = source.origin == .xcode || destination.origin == .xcode ? .coreData : .ferry
    }

    /// The rule set as `ferry model diff` names it.
    public var title: String {
        switch self {
        case .ferry: return "ferry's lightweight-migration rules (ferry model files)"
        case .coreData: return "Core Data's lightweight-migration rules (Xcode model)"
        }
    }
}
