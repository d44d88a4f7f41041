/// What a `mode: sync` import matched records by, and the first keys it inserted, updated and
/// deleted (a dry run's preview). The counts are the step's own (`inserted`, `updated`,
/// `unchanged`, `deleted`, …).
public struct SyncReport: Sendable, Codable, Hashable {
    /// The key attributes records were matched by.
    public var key: [String]
    /// The first keys (at most `SyncKeySamples.limit` each) of the rows inserted, updated and
    /// deleted (or that a dry run would), as `id=4` or `(sku=A1, store=3)`.
    public var insertedKeys: [String]
    /// The first keys of the rows updated (see ``insertedKeys``).
    public var updatedKeys: [String]
    /// The first keys of the rows deleted (see ``insertedKeys``).
    public var deletedKeys: [String]
    /// Why the rows absent from the source were kept, when they were (rejected records without
    /// a readable key); nil when they were deleted.
    public var deletionsSkipped: String?

    /// A report of a sync matched by `key`.
    public init(
        key: [String], insertedKeys: [String] = [], updatedKeys: [String] = [], deletedKeys: [String] = [],
        deletionsSkipped: String? = nil
    ) {
        self.key = key
        self.insertedKeys = insertedKeys
        self.updatedKeys = updatedKeys
        self.deletedKeys = deletedKeys
        self.deletionsSkipped = deletionsSkipped
    }

    enum CodingKeys: String, CodingKey {
        case key
        case insertedKeys = "inserted_keys"
        case updatedKeys = "updated_keys"
        case deletedKeys = "deleted_keys"
        case deletionsSkipped = "deletions_skipped"
    }
}

/// The first keys a running sync inserted and updated (and, at its end, the absent ones).
struct SyncKeySamples {
    /// How many keys of each kind a report lists.
    static let limit = 5
    /// The sync's key attributes; nil when the step is not a sync.
    var key: [String]?
    var inserted: [String] = []
    var updated: [String] = []
    var deleted: [String] = []

    mutating func note(inserted key: String) {
        if inserted.count < Self.limit { inserted.append(key) }
    }

    mutating func note(updated key: String) {
        if updated.count < Self.limit { updated.append(key) }
    }
}
