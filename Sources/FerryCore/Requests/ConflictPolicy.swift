/// What a batch insert does when a record hits a uniqueness constraint (Core Data's merge
/// policies, named for what they do).
public enum ConflictPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Reject the record (Core Data's `NSErrorMergePolicy`).
    case error
    /// Update the existing object with the attributes the record supplies, leaving the others as
    /// they are (`NSMergeByPropertyObjectTrumpMergePolicy`, without Core Data's pitfall of
    /// resetting unsupplied attributes).
    case update
    /// Keep the existing object and skip the record (`NSMergeByPropertyStoreTrumpMergePolicy`).
    case keep
    /// Overwrite the existing object entirely; unsupplied attributes get their defaults
    /// (`NSOverwriteMergePolicy`). The object keeps its identity, so relationships to it stay.
    case replace
}
