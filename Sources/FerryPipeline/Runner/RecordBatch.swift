import FerryFormats
import Foundation

/// A reusable batch of records copied out of a ``ByteFieldReader``: what the read-ahead thread
/// hands to the importing thread (see ``ReadAheadReader``).
///
/// Each record keeps what the import needs later, after the reader has moved on: its fields as
/// kinds, bytes and positions, its raw bytes (for a rejects file), and its number and start.
/// The raw bytes are copied once; a field the reader hands from inside them (a CSV field
/// without doubled quotes) points into that copy, and only the others are copied again (a CSV
/// field whose doubled quotes were undone; every JSON field, which the JSON readers decode into
/// memory of their own). A
/// record that is not well formed, or whose CSV text is not valid UTF-8, is kept materialized,
/// exactly as the reader gave it; so is a record longer than the batch's byte capacity, which
/// then takes the general path from that one copy instead of being copied into the batch and
/// out again (a 60 MB record would take twice its size more). Clearing keeps the storage, so
/// memory stays flat.
final class RecordBatch {
    struct Record {
        var number: Int
        var line: Int
        var column: Int
        var rawStart: Int
        var rawCount: Int
        /// Index of the record's first field in ``fields``.
        var firstField: Int
        var fieldCount: Int
        /// Index into ``materialized`` for a record kept whole, or -1.
        var materialized: Int
        /// The record's row in ``coerced`` when the reader thread coerced it, or -1.
        var coercedRow = -1
    }

    struct FieldSlot {
        var kind: ByteFieldKind
        var start: Int
        var count: Int
        var line: Int
        var column: Int
    }

    @exclusivity(unchecked) private(set) var records: [Record] = []
    @exclusivity(unchecked) private(set) var fields: [FieldSlot] = []
    @exclusivity(unchecked) private(set) var materialized: [SourceRecord] = []
    /// Raw and field bytes of every record, back to back.
    @exclusivity(unchecked) private(set) var bytes: [UInt8] = []
    /// The raw bytes of the records kept materialized (they count toward the batch's size too).
    @exclusivity(unchecked) private var materializedBytes = 0
    private let byteCapacity: Int
    /// An error the reader threw after the records of this batch (the end of the import).
    var error: (any Error)?
    /// True when the input ended after the records of this batch.
    var isLast = false

    var count: Int { records.count }
    var byteCount: Int { bytes.count + materializedBytes }

    /// The rows the reader thread coerced (nil when it only reads).
    let coerced: CoercedRows?

    init(capacity: Int, byteCapacity: Int, coerced: CoercedRows?) {
        self.byteCapacity = byteCapacity
        self.coerced = coerced
        records.reserveCapacity(capacity)
        bytes.reserveCapacity(byteCapacity)
    }

    func clear() {
        records.removeAll(keepingCapacity: true)
        fields.removeAll(keepingCapacity: true)
        materialized.removeAll(keepingCapacity: true)
        materializedBytes = 0
        coerced?.clear()
        if bytes.capacity > 4 * byteCapacity {
            // A very long record grew the batch: give the memory back.
            bytes = []
            bytes.reserveCapacity(byteCapacity)
        } else {
            bytes.removeAll(keepingCapacity: true)
        }
        error = nil
        isLast = false
    }

    /// Copies the reader's current record and, when the batch has ``coerced`` rows, coerces it
    /// with `plan` (a record the plan cannot coerce is left to the importing thread).
    func append<Reader: ByteFieldReader>(
        from reader: Reader, coercingWith plan: ReadAheadCoercion?
    ) {
        guard reader.currentRecordIsWellFormed, reader.withCurrentRawBytes({ $0.count }) <= byteCapacity else {
            records.append(materialize(reader.currentRecord()))
            return
        }
        let start = reader.currentRecordStart
        let rawStart = bytes.count
        // Where the reader keeps the raw bytes: a field inside them (a CSV field without
        // doubled quotes) is not copied again but found in the batch's copy of the raw record,
        // once its bytes are compared equal there; a field in other memory is copied as before.
        let rawAddress = reader.withCurrentRawBytes { raw in
            bytes.append(contentsOf: raw)
            return UInt(bitPattern: raw.baseAddress)
        }
        let rawCount = bytes.count - rawStart
        var record = Record(
            number: start.number, line: start.line, column: start.column, rawStart: rawStart,
            rawCount: rawCount,
            firstField: fields.count, fieldCount: 0, materialized: -1)
        let checkText = !reader.textIsValidUTF8
        let valid = reader.forEachField { kind, position, field in
            var slot = FieldSlot(
                kind: kind, start: bytes.count, count: 0, line: position.line, column: position.column)
            if kind.hasBytes {
                if checkText && !UTF8Bytes.isValid(field) { return false }
                if let offset = rawOffset(of: field, raw: (rawAddress, rawStart, rawCount)) {
                    slot.start = rawStart + offset
                } else {
                    bytes.append(contentsOf: field)
                }
                slot.count = field.count
            }
            fields.append(slot)
            return true
        }
        guard valid else {
            // The reader names the invalid field in the record's problem.
            fields.removeSubrange(record.firstField...)
            bytes.removeSubrange(rawStart...)
            records.append(materialize(reader.currentRecord()))
            return
        }
        record.fieldCount = fields.count - record.firstField
        if let plan, let coerced {
            // Every field's bytes were checked above (or the reader vouches for them).
            record.coercedRow =
                plan.plan.coerceRow(from: reader, kinds: plan.kinds, into: coerced, textValidated: true) ?? -1
        }
        records.append(record)
    }

    /// The offset in the raw record of `field` when the reader hands it from inside the raw
    /// bytes (at `raw.address`, copied to `raw.start` in the batch) and the copy there holds
    /// the same bytes; nil otherwise.
    @inline(__always)
    private func rawOffset(of field: UnsafeBufferPointer<UInt8>, raw: (address: UInt, start: Int, count: Int)) -> Int? {
        guard let base = field.baseAddress, field.count > 0, field.count <= raw.count else { return nil }
        let address = UInt(bitPattern: base)
        guard address >= raw.address, address - raw.address <= UInt(raw.count - field.count) else { return nil }
        let offset = Int(address - raw.address)
        let same = bytes.withUnsafeBufferPointer { copy in
            memcmp(copy.baseAddress.unsafelyUnwrapped + raw.start + offset, base, field.count) == 0
        }
        return same ? offset : nil
    }

    private func materialize(_ source: SourceRecord) -> Record {
        materialized.append(source)
        materializedBytes += source.rawBytes.count
        return Record(
            number: source.number, line: source.line, column: source.column, rawStart: 0, rawCount: 0,
            firstField: fields.count, fieldCount: 0, materialized: materialized.count - 1)
    }

    /// The record at `index` as a ``SourceRecord``, as the reader would have given it.
    func sourceRecord(at index: Int) -> SourceRecord {
        let record = records[index]
        if record.materialized >= 0 { return materialized[record.materialized] }
        var values: [Field?] = []
        values.reserveCapacity(record.fieldCount)
        for offset in 0..<record.fieldCount {
            let slot = fields[record.firstField + offset]
            let value: FieldValue
            switch slot.kind {
            case .absent:
                values.append(nil)
                continue
            case .null: value = .null
            case .true: value = .bool(true)
            case .false: value = .bool(false)
            case .text, .quotedText: value = .text(text(slot.start, slot.count))
            case .number: value = .number(text(slot.start, slot.count))
            case .nested: value = .json(text(slot.start, slot.count))
            }
            values.append(Field(value: value, line: slot.line, column: slot.column, quoted: slot.kind == .quotedText))
        }
        return SourceRecord(
            number: record.number, line: record.line, column: record.column, fields: values,
            rawBytes: Array(bytes[record.rawStart..<(record.rawStart + record.rawCount)]))
    }

    private func text(_ start: Int, _ count: Int) -> String {
        bytes.withUnsafeBufferPointer {
            String(decoding: UnsafeBufferPointer(rebasing: $0[start..<(start + count)]), as: UTF8.self)
        }
    }

    @inline(__always)
    func withBytes<T>(_ start: Int, _ count: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try bytes.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[start..<(start + count)])) }
    }
}
