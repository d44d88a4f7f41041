import FerryFormats

/// The records PostgreSQL's fast path staged since the last flush, kept compactly until the
/// flush tells their outcomes: each record's number, start and raw bytes (for a rejects file)
/// and where the fields of the plan's columns are (to locate a rejection), instead of a
/// ``SourceRecord`` per record. Cleared and reused with each flush, so memory stays flat.
final class StagedRecordTrail {
    private struct Entry {
        var number: Int
        var line: Int
        var column: Int
        var rawStart: Int
        var rawCount: Int
    }

    /// The source field each column of the plan reads (attributes, then references), or -1.
    private let fieldIndexes: [Int]
    @exclusivity(unchecked) private var entries: [Entry] = []
    @exclusivity(unchecked) private var raw: [UInt8] = []
    /// Line and column of each entry's columns' fields, `fieldIndexes.count` per entry (0 when absent).
    @exclusivity(unchecked) private var positions: [(line: Int, column: Int)] = []

    /// A trail for records whose plan columns read `fieldIndexes` (-1: a constant, no field).
    init(fieldIndexes: [Int]) {
        self.fieldIndexes = fieldIndexes
    }

    var count: Int { entries.count }

    /// Keeps what a rejection of the reader's current record needs; returns its index.
    func append<Reader: ByteFieldReader>(from reader: Reader) -> Int {
        let start = reader.currentRecordStart
        let rawStart = raw.count
        reader.withCurrentRawBytes { raw.append(contentsOf: $0) }
        entries.append(
            Entry(
                number: start.number, line: start.line, column: start.column, rawStart: rawStart,
                rawCount: raw.count - rawStart))
        for index in fieldIndexes {
            positions.append(index < 0 ? (0, 0) : reader.fieldPosition(index) ?? (0, 0))
        }
        return entries.count - 1
    }

    /// Where the field of plan column `column` of entry `index` is, nil when the column reads no
    /// field or the record lacked it.
    func location(_ index: Int, column: Int) -> (line: Int, column: Int)? {
        guard column >= 0, column < fieldIndexes.count else { return nil }
        let position = positions[index * fieldIndexes.count + column]
        return position.line > 0 ? position : nil
    }

    /// Entry `index` as a record for a rejects file: its number, start and raw bytes (no fields).
    func record(_ index: Int) -> SourceRecord {
        let entry = entries[index]
        return SourceRecord(
            number: entry.number, line: entry.line, column: entry.column, fields: [],
            rawBytes: Array(raw[entry.rawStart..<(entry.rawStart + entry.rawCount)]))
    }

    /// Forgets every entry, keeping the storage (unless a very long record grew it).
    func removeAll() {
        entries.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
        if raw.capacity > 16 << 20 { raw = [] } else { raw.removeAll(keepingCapacity: true) }
    }
}
