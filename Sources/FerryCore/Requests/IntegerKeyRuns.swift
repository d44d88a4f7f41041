/// An exact, bounded in-memory map from integer keys to primary keys, kept as runs: a run is a
/// first key, a first primary key and a length, and maps `first + i` to `firstPrimaryKey + i`.
///
/// Objects usually get their primary keys in the order of their keys (a table imported sorted by
/// `id`), so a million keys often take a handful of runs; in the worst case each key is its own
/// run (24 bytes). ``ReferenceResolver`` builds one from the destination table to resolve an
/// import's references without a query per record.
package struct IntegerKeyRuns: Sendable {
    private var firstKeys: [Int64] = []
    private var firstPrimaryKeys: [Int64] = []
    private var lengths: [Int64] = []

    /// The number of runs.
    package var runCount: Int { firstKeys.count }

    /// Collects `(key, primary key)` pairs given in ascending key order (a key repeated keeps its
    /// first primary key, as an index scan finds it first); nil when `next` gives a key lower
    /// than the one before, or when more than `maximumRuns` runs would be needed.
    package init?(maximumRuns: Int, next: () throws -> (key: Int64, primaryKey: Int64)?) rethrows {
        var lastKey: Int64?
        while let (key, primaryKey) = try next() {
            if let lastKey {
                if key == lastKey { continue }
                if key < lastKey { return nil }
            }
            lastKey = key
            if let run = firstKeys.indices.last,
                key &- firstKeys[run] == lengths[run], primaryKey &- firstPrimaryKeys[run] == lengths[run]
            {
                lengths[run] += 1
                continue
            }
            guard firstKeys.count < maximumRuns else { return nil }
            firstKeys.append(key)
            firstPrimaryKeys.append(primaryKey)
            lengths.append(1)
        }
    }

    /// The primary key of `key`, nil when the map does not hold it.
    package func primaryKey(for key: Int64) -> Int64? {
        // The last run whose first key is at most `key`.
        var low = 0
        var high = firstKeys.count
        while low < high {
            let middle = (low + high) / 2
            if firstKeys[middle] <= key { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let run = low - 1
        // key ≥ first, so the difference is exact when read as unsigned.
        let offset = UInt64(bitPattern: key &- firstKeys[run])
        guard offset < UInt64(lengths[run]) else { return nil }
        return firstPrimaryKeys[run] &+ Int64(bitPattern: offset)
    }
}
