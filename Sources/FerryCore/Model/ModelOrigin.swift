/// Where a model version was read from. It decides which lightweight-migration rules its diffs
/// follow (``MigrationRuleSet``): Xcode models follow Core Data's, ferry's YAML models ferry's.
public enum ModelOrigin: String, Sendable, Hashable, Codable, EmptyValue {
    /// A ferry model file (YAML or JSON).
    case ferry
    /// An Xcode data model (`.xcdatamodel` inside an `.xcdatamodeld` package, or on its own).
    case xcode

    /// A missing origin is ferry's: models recorded before Xcode models were read.
    public static var empty: ModelOrigin { .ferry }
}
