/// What one top-level member of a JSON object holds (see ``JSONObjectFields``).
package enum JSONFieldKind: UInt8, Sendable {
    /// The object has no such key.
    case absent
    /// A string; its bytes are the decoded, valid UTF-8 text (escapes undone).
    case string
    /// A number; its bytes are the exact source spelling.
    case number
    case `true`
    case `false`
    case null
    /// A nested object or array; its bytes are compact JSON text (as in ``FieldValue/json(_:)``).
    case nested
}

extension JSONFieldKind {
    /// The kind as a ``ByteFieldReader`` gives it.
    @inline(__always)
    package var byteFieldKind: ByteFieldKind {
        switch self {
        case .absent: return .absent
        case .string: return .text
        case .number: return .number
        case .true: return .true
        case .false: return .false
        case .null: return .null
        case .nested: return .nested
        }
    }
}

/// The top-level members of the JSON object a reader is on, by field index, as kinds and bytes.
///
/// This is what ``JSONObjectReader/currentObject`` exposes so that an importer can coerce values
/// straight from bytes, without a `String` or ``FieldValue`` per field and without a
/// ``SourceRecord`` per record. The contents are valid until the reader advances. When an object
/// repeats a key, the last occurrence wins (as in ``SourceRecord``).
package final class JSONObjectFields {
    @usableFromInline
    struct Slot {
        @usableFromInline var kind: JSONFieldKind
        @usableFromInline var start: Int
        @usableFromInline var count: Int
        @usableFromInline var line: Int
        @usableFromInline var column: Int

        @usableFromInline
        init(kind: JSONFieldKind, start: Int, count: Int, line: Int, column: Int) {
            self.kind = kind
            self.start = start
            self.count = count
            self.line = line
            self.column = column
        }
    }

    /// Field slots `[0, count)`.
    @exclusivity(unchecked) @usableFromInline var slots: UnsafeMutablePointer<Slot>
    @exclusivity(unchecked) private var slotCapacity: Int
    /// Value bytes of the current object, copied out of the input (so they survive refills).
    @exclusivity(unchecked) @usableFromInline var arena: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var arenaCapacity: Int
    @exclusivity(unchecked) private var arenaCount = 0
    /// Number of field indexes the current object covers (fields at or beyond it are absent).
    @exclusivity(unchecked) package private(set) var count = 0

    init() {
        slotCapacity = 16
        slots = UnsafeMutablePointer<Slot>.allocate(capacity: slotCapacity)
        arenaCapacity = 1024
        arena = UnsafeMutablePointer<UInt8>.allocate(capacity: arenaCapacity)
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
        arena.deallocate()
    }

    /// The kind of the field at a reader field index (``JSONFieldKind/absent`` beyond ``count``).
    @inlinable @inline(__always)
    package func kind(_ index: Int) -> JSONFieldKind {
        index >= 0 && index < count ? slots[index].kind : .absent
    }

    /// Calls `body` with the field's bytes: a string's decoded UTF-8, a number's source spelling,
    /// a nested value's compact JSON text; empty for other kinds. Valid only inside `body`.
    @inlinable @inline(__always)
    package func withBytes<T>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        guard index >= 0 && index < count else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        let slot = slots[index]
        return try body(UnsafeBufferPointer(start: arena + slot.start, count: slot.count))
    }

    /// The 1-based line and byte column where the field's value starts (nil when absent).
    package func position(_ index: Int) -> (line: Int, column: Int)? {
        guard kind(index) != .absent else { return nil }
        return (slots[index].line, slots[index].column)
    }

    /// The field's value as a ``FieldValue`` (nil when absent), exactly as ``SourceRecord`` has it.
    package func value(_ index: Int) -> FieldValue? {
        let kind = kind(index)
        switch kind {
        case .absent: return nil
        case .true: return .bool(true)
        case .false: return .bool(false)
        case .null: return .null
        case .string, .number, .nested:
            let text = withBytes(index) { String(decoding: $0, as: UTF8.self) }
            return kind == .string ? .text(text) : kind == .number ? .number(text) : .json(text)
        }
    }

    /// The fields as a record has them (trailing absent fields included up to ``count``).
    func materialize() -> [Field?] {
        var fields: [Field?] = []
        fields.reserveCapacity(count)
        for index in 0..<count {
            guard let value = value(index) else {
                fields.append(nil)
                continue
            }
            fields.append(Field(value: value, line: slots[index].line, column: slots[index].column))
        }
        return fields
    }

    // MARK: - Filling (the decoder)

    /// Starts a new object covering `fieldCount` field indexes, all absent.
    func reset(fieldCount: Int) {
        arenaCount = 0
        if fieldCount > slotCapacity { growSlots(to: fieldCount) }
        let absent = Slot(kind: .absent, start: 0, count: 0, line: 0, column: 0)
        if count > 0 { slots.update(repeating: absent, count: min(count, fieldCount)) }
        if fieldCount > count { (slots + count).initialize(repeating: absent, count: fieldCount - count) }
        if count > fieldCount { (slots + fieldCount).deinitialize(count: count - fieldCount) }
        count = fieldCount
    }

    /// Sets the field at `index` (growing the covered range when it is a new key).
    @inline(__always)
    func set(_ index: Int, kind: JSONFieldKind, bytes: UnsafeBufferPointer<UInt8>, line: Int, column: Int) {
        if index >= count { extend(to: index + 1) }
        let start = arenaCount
        if bytes.count > 0, let source = bytes.baseAddress {
            if arenaCount + bytes.count > arenaCapacity { growArena(toFit: arenaCount + bytes.count) }
            (arena + arenaCount).update(from: source, count: bytes.count)
            arenaCount += bytes.count
        }
        slots[index] = Slot(kind: kind, start: start, count: bytes.count, line: line, column: column)
    }

    /// Where the next bytes appended to the arena go: the start of a field written in place
    /// (``append(_:)``, then ``set(_:kind:from:line:column:)``).
    var arenaEnd: Int { arenaCount }

    /// The last byte appended to the arena since `start`, nil when none was.
    @inline(__always)
    func lastByte(since start: Int) -> UInt8? { arenaCount > start ? arena[arenaCount - 1] : nil }

    /// Appends one byte of a field written in place.
    @inline(__always)
    func append(_ byte: UInt8) {
        if arenaCount == arenaCapacity { growArena(toFit: arenaCount + 1) }
        arena[arenaCount] = byte
        arenaCount += 1
    }

    /// Appends bytes of a field written in place.
    @inline(__always)
    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count > 0, let source = bytes.baseAddress else { return }
        if arenaCount + bytes.count > arenaCapacity { growArena(toFit: arenaCount + bytes.count) }
        (arena + arenaCount).update(from: source, count: bytes.count)
        arenaCount += bytes.count
    }

    /// Sets the field at `index` to the bytes appended in place since `start` (``arenaEnd``).
    @inline(__always)
    func set(_ index: Int, kind: JSONFieldKind, from start: Int, line: Int, column: Int) {
        if index >= count { extend(to: index + 1) }
        slots[index] = Slot(kind: kind, start: start, count: arenaCount - start, line: line, column: column)
    }

    /// Sets a field that has no bytes (true, false, null).
    @inline(__always)
    func set(_ index: Int, kind: JSONFieldKind, line: Int, column: Int) {
        if index >= count { extend(to: index + 1) }
        slots[index] = Slot(kind: kind, start: arenaCount, count: 0, line: line, column: column)
    }

    private func extend(to newCount: Int) {
        if newCount > slotCapacity { growSlots(to: newCount) }
        (slots + count).initialize(
            repeating: Slot(kind: .absent, start: 0, count: 0, line: 0, column: 0), count: newCount - count)
        count = newCount
    }

    private func growSlots(to minimum: Int) {
        var capacity = slotCapacity * 2
        while capacity < minimum { capacity *= 2 }
        let grown = UnsafeMutablePointer<Slot>.allocate(capacity: capacity)
        grown.moveInitialize(from: slots, count: count)
        slots.deallocate()
        slots = grown
        slotCapacity = capacity
    }

    private func growArena(toFit minimum: Int) {
        var capacity = arenaCapacity * 2
        while capacity < minimum { capacity *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        if arenaCount > 0 { grown.update(from: arena, count: arenaCount) }
        arena.deallocate()
        arena = grown
        arenaCapacity = capacity
    }
}

/// A JSON reader whose current record can be read field by field, without materializing it.
///
/// ``advance()`` moves to the next record; ``currentObject`` then gives its fields as bytes
/// (nil when the record has a problem: not an object, or a malformed NDJSON line), and
/// ``currentRecord()`` gives the same record as ``RecordReader/next()`` would have returned,
/// raw text and problem included. `next()` is `advance()` followed by `currentRecord()`.
/// The ``ByteFieldReader`` requirements read ``currentObject``.
package protocol JSONObjectReader: ByteFieldReader {
    /// The current record's fields when it is a well-formed object; nil when it has a problem.
    /// Valid until the next call to ``advance()`` or ``RecordReader/next()``.
    var currentObject: JSONObjectFields? { get }
}

extension JSONObjectReader {
    package var currentRecordIsWellFormed: Bool { currentObject != nil }

    /// String bytes are decoded and checked by the tokenizer.
    package var textIsValidUTF8: Bool { true }

    package var currentFieldCount: Int { currentObject?.count ?? 0 }

    @inline(__always)
    package func fieldKind(_ index: Int) -> ByteFieldKind {
        (currentObject?.kind(index) ?? .absent).byteFieldKind
    }

    @inline(__always)
    package func withFieldBytes<T>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        guard let fields = currentObject else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try fields.withBytes(index, body)
    }

    package func fieldPosition(_ index: Int) -> (line: Int, column: Int)? { currentObject?.position(index) }

    /// The object looked up once for all its fields (each lookup of ``currentObject`` costs a
    /// retain and a release).
    package func forEachField(
        _ body: (ByteFieldKind, (line: Int, column: Int), UnsafeBufferPointer<UInt8>) -> Bool
    ) -> Bool {
        guard let fields = currentObject else { return true }
        for index in 0..<fields.count {
            let slot = fields.slots[index]
            let kind = slot.kind.byteFieldKind
            let position = slot.kind == .absent ? (0, 0) : (slot.line, slot.column)
            let bytes =
                kind.hasBytes
                ? UnsafeBufferPointer(start: fields.arena + slot.start, count: slot.count)
                : UnsafeBufferPointer(start: nil, count: 0)
            if !body(kind, position, bytes) { return false }
        }
        return true
    }
}
