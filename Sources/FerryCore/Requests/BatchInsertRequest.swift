/// Inserts many objects of one entity in one transaction, in the spirit of Core Data's
/// `NSBatchInsertRequest` with a handler: the handler fills one row at a time until it says it
/// is done, so no more than one row is ever held.
///
/// ```swift
/// var next = 0
/// let request = BatchInsertRequest(entity: "Customer", columns: [.attribute("id"), .attribute("email")]) { row in
///     guard next < 1000 else { return true }          // done
///     row = [.integer(Int64(next)), .string("c\(next)@example.com")]
///     next += 1
///     return false
/// }
/// let result = try store.execute(request)
/// ```
public struct BatchInsertRequest {
    /// The entity whose objects are inserted.
    public var entity: String
    /// The properties each row gives, in row order.
    public var columns: [InsertColumn]
    /// What a row whose unique key exists already does (reject it, by default).
    public var conflictPolicy: ConflictPolicy
    /// Check optionality and validation rules (on by default, as Core Data validates on save).
    public var validate: Bool
    /// Fills `row` (one value per column) and returns false, or returns true when there are no more rows.
    public var rowHandler: (inout [Value]) throws -> Bool
    /// Called for each rejected row with its 0-based index and the reason.
    public var onReject: ((Int, String) -> Void)?

    /// An insert of the rows `rowHandler` produces into `entity`.
    public init(
        entity: String, columns: [InsertColumn], conflictPolicy: ConflictPolicy = .error, validate: Bool = true,
        rowHandler: @escaping (inout [Value]) throws -> Bool
    ) {
        self.entity = entity
        self.columns = columns
        self.conflictPolicy = conflictPolicy
        self.validate = validate
        self.rowHandler = rowHandler
    }
}

/// Counts from a batch insert; `read == inserted + updated + unchanged + skipped + rejected`.
public struct BatchInsertResult: Sendable, Hashable {
    /// Rows produced by the row handler.
    public var read = 0
    /// Objects inserted.
    public var inserted = 0
    /// Existing objects updated or replaced (`.update`, `.replace`).
    public var updated = 0
    /// Records a sync found with the same values (never for a plain batch insert).
    public var unchanged = 0
    /// Rows skipped (`.keep` and an existing key).
    public var skipped = 0
    /// Rows rejected (reported through `onReject`).
    public var rejected = 0

    /// All counts zero.
    public init() {}

    package mutating func count(_ outcome: InsertOutcome) {
        read += 1
        switch outcome {
        case .inserted: inserted += 1
        case .updated: updated += 1
        case .unchanged: unchanged += 1
        case .skipped: skipped += 1
        case .rejected: rejected += 1
        }
    }
}

extension Store {
    /// Runs a batch insert in one write transaction and returns its counts.
    public func execute(_ request: BatchInsertRequest) throws -> BatchInsertResult {
        try withDatabase { try $0.engineSession() }.runBatchInsert(request, in: self)
    }
}
