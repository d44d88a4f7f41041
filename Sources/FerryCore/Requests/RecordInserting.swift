/// Writes one record at a time into one entity, deciding validation and the conflict policy
/// per record: what an `import` step needs from a store, whatever its backend.
///
/// ``BatchInserter`` is SQLite's (prepared statements, and the fast path's direct binding);
/// PostgreSQL writes in batches (``StagingRecordInserter``).
package protocol RecordInserting: AnyObject {
    /// Validates and writes one record (`values` aligned with the inserter's columns; `supplied`
    /// marks the values the record really has, nil meaning all). Record-level problems come back
    /// as `.rejected`; only store failures throw.
    func insert(_ values: [Value], supplied: [Bool]?) throws -> InsertOutcome
}

extension BatchInserter: RecordInserting {}

/// Writes records into one entity in batches: each record is decided at once when ferry alone
/// can decide it, else kept until ``flush()`` writes the kept ones together and gives their
/// outcomes, the outcomes a ``RecordInserting`` would give one record after the other.
///
/// `PostgresStagedInserter` is PostgreSQL's (COPY into a staging table). The caller keeps
/// the records' order: outcomes decided at once come after those of records still kept.
package protocol StagingRecordInserter: AnyObject {
    /// A rejection decided now, or nil when the record is kept for ``flush()``.
    func stage(_ values: [Value], supplied: [Bool]?) throws -> InsertOutcome?
    /// How many records are kept.
    var stagedCount: Int { get }
    /// True when a flush is due (the kept records reached the batch size).
    var isFull: Bool { get }
    /// Writes the kept records; one outcome per record, in the order they were staged.
    func flush() throws -> [InsertOutcome]
    /// A sync import's record rejected before staging whose key could be read (`values` aligned
    /// with the inserter's columns, the key's values set): the object holding that key is present
    /// in the source, in the record's place among the kept ones. It has no outcome in ``flush()``.
    func stagePresent(key values: [Value]) throws
}

/// A ``RecordInserting`` that tells the key of the object each record wrote or found: what a
/// nested import links related objects by.
package protocol KeyedRecordInserting: RecordInserting {
    /// The primary key of the object the last `.inserted` or `.updated` outcome wrote (or an
    /// update found); meaningless after any other outcome.
    var lastKey: Int64? { get }
}

extension BatchInserter: KeyedRecordInserting {}
