import FerryCore
import FerryFormats
import FerryPostgres
import FerryPostgresStore

/// The import fast path on PostgreSQL: a record coerced from its field bytes (on the read-ahead
/// thread when it had the time, see ``ReadAheadReader``) is encoded straight into the batch's
/// COPY rows, with no `Value`, `DatabaseValue` or `PostgresValue` per field and no
/// ``SourceRecord``: integers as digits, text, canonical decimals, UUIDs and dates copied from
/// their bytes. It makes exactly the checks ``PostgresStagedInserter/stage(_:supplied:)`` makes
/// (defaults, validation rules, required values), and a record that fails one takes the
/// general path, which gives the reason.
extension ImportPlan {
    /// True when the fast path can stage this step's records on PostgreSQL: new rows only
    /// (`error`, `keep`), no sync, no nested objects.
    var stagesEncodedRows: Bool {
        postgresInserter?.acceptsEncodedRows == true && sync == nil && nested == nil
    }

    /// The source field each column reads (attributes, then references), -1 for a constant.
    var columnFieldIndexes: [Int] {
        attributes.map { if case .field(let index, _) = $0.source { index } else { -1 } }
            + references.map(\.fieldIndex)
    }

    /// Stages the record the read-ahead thread coerced into row `row` of `rows`, resolving its
    /// references here (they read the store).
    func stageFast(coerced rows: CoercedRows, row: Int) throws -> FastOutcome {
        guard let inserter = postgresInserter else { return .useGeneralPath }
        let staged = try inserter.stageEncoded { copy in
            guard try rows.encode(row, into: &copy, for: inserter) else { return false }
            for offset in 0..<references.count {
                let key = rows.referenceKey(row, offset)
                guard let primaryKey = try resolve(key, offset) else { return false }
                if primaryKey == nil, case .key = key, references[offset].reachesOwnEntity {
                    // Not found, but it may be a staged record of this import: the general path
                    // writes the staged records and looks again.
                    return false
                }
                if let primaryKey {
                    copy.appendField(primaryKey)
                } else if inserter.requiresValue(column: attributes.count + offset) {
                    return false
                } else {
                    copy.appendNull()
                }
            }
            return true
        }
        return staged ? .staged : .useGeneralPath
    }

    /// Stages the reader's current (well-formed) record, coercing it on this thread.
    func stageFast<Reader: ByteFieldReader>(from reader: Reader, kinds: [FastKind]) throws -> FastOutcome {
        stagingScratch.clear()
        guard let row = coerceRow(from: reader, kinds: kinds, into: stagingScratch) else { return .useGeneralPath }
        return try stageFast(coerced: stagingScratch, row: row)
    }

    /// Resolves the reference keys of every record of the read-ahead reader's current batch
    /// with one query per reference (``ReferenceResolver/prefetch(_:)``), so that the records
    /// then resolve them without a round trip each. Keys it cannot read (a record the general
    /// path takes) are looked up when met, as before.
    func prefetchReferences(in reader: ReadAheadReader) throws {
        guard !prefetchedReferences.isEmpty else { return }
        var keys = Array(repeating: [Value](), count: references.count)
        reader.forEachWellFormedRecordOfBatch {
            for offset in prefetchedReferences {
                if case .key(let key) = referenceKey(from: reader, offset) { keys[offset].append(key) }
            }
        }
        try ReferenceResolver.prefetch(prefetchedReferences.map { (references[$0].resolver, keys[$0]) })
    }
}
