/// Writes one record at a time into one entity, deciding validation and the conflict policy
/// per record: what an `import` step needs from a store, whatever its backend.
///
/// ``BatchInserter`` is SQLite's (prepared statements, and the fast path's direct binding);
/// ``PostgresRowInserter`` is PostgreSQL's.
package protocol RecordInserting: AnyObject {
    /// Validates and writes one record (`values` aligned with the inserter's columns; `supplied`
    /// marks the values the record really has, nil meaning all). Record-level problems come back
    /// as `.rejected`; only store failures throw.
    func insert(_ values: [Value], supplied: [Bool]?) throws -> InsertOutcome
}

extension BatchInserter: RecordInserting {}
