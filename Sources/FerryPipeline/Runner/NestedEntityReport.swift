/// What an import with `nested:` did to one related entity's objects: those its records nest
/// (inserted, updated, unchanged), and the links it added and removed.
public struct NestedEntityReport: Sendable, Codable, Hashable {
    /// Objects the records nest that were new.
    public var inserted = 0
    /// Nested objects that existed and were updated (or replaced).
    public var updated = 0
    /// Nested objects that existed with the same values.
    public var unchanged = 0
    /// Links the records set to these objects (nested or named by key).
    public var linked = 0
    /// Links removed: objects absent from a sync's nested array, a to-one replaced.
    public var unlinked = 0

    /// A report with the given counts.
    public init(inserted: Int = 0, updated: Int = 0, unchanged: Int = 0, linked: Int = 0, unlinked: Int = 0) {
        self.inserted = inserted
        self.updated = updated
        self.unchanged = unchanged
        self.linked = linked
        self.unlinked = unlinked
    }
}

extension NestedObjects {
    /// The counts of the step so far, per related entity (nil when nothing was nested).
    var report: [String: NestedEntityReport]? {
        counts.isEmpty
            ? nil
            : counts.mapValues {
                NestedEntityReport(
                    inserted: $0.inserted, updated: $0.updated, unchanged: $0.unchanged, linked: $0.linked,
                    unlinked: $0.unlinked)
            }
    }
}
