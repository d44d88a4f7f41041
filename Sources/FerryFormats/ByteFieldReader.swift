/// What one field of a ``ByteFieldReader``'s current record holds.
package enum ByteFieldKind: UInt8, Sendable {
    /// The record has no such field (an absent JSON key, a field index beyond the record).
    case absent
    /// A JSON `null`, or an unquoted CSV field equal to a null token.
    case null
    /// Text: an unquoted CSV field or a JSON string.
    case text
    /// A quoted CSV field: text taken literally (never trimmed, never a null word).
    case quotedText
    /// A JSON number; its bytes are the exact source spelling.
    case number
    case `true`
    case `false`
    /// A nested JSON object or array; its bytes are compact JSON text.
    case nested

    /// True for the kinds whose value is in the field's bytes.
    @inlinable
    package var hasBytes: Bool {
        switch self {
        case .text, .quotedText, .number, .nested: return true
        case .absent, .null, .true, .false: return false
        }
    }
}

/// A reader whose current record can be read field by field as bytes, without materializing a
/// ``SourceRecord``: the import fast path.
///
/// ``advance()`` moves to the next record. When ``currentRecordIsWellFormed`` is true, the
/// record's fields are available through ``fieldKind(_:)`` and ``withFieldBytes(_:_:)``;
/// otherwise (or whenever the consumer needs the precise record, e.g. to reject it)
/// ``currentRecord()`` gives exactly what ``RecordReader/next()`` would have returned, raw text
/// and problem included. Everything is valid until the next ``advance()`` or `next()`.
///
/// CSV and the JSON readers adopt it; so do wrappers that keep the fast path for the readers
/// they wrap (a read-ahead reader that parses on another thread hands over copies).
package protocol ByteFieldReader: RecordReader {
    /// Moves to the next record; false at the end of the input. Throws what `next()` throws.
    func advance() throws -> Bool
    /// True when the current record has no structural problem (wrong field count, not an
    /// object): its fields can be read as bytes. Text bytes may still be invalid UTF-8 unless
    /// ``textIsValidUTF8`` says otherwise.
    var currentRecordIsWellFormed: Bool { get }
    /// True when text bytes are known to be valid UTF-8 (decoded JSON strings); false when the
    /// consumer must check them (CSV fields).
    var textIsValidUTF8: Bool { get }
    /// The number of field indexes the current record covers (fields beyond it are absent).
    var currentFieldCount: Int { get }
    /// The kind of a field of the current (well-formed) record.
    func fieldKind(_ index: Int) -> ByteFieldKind
    /// Calls `body` with a field's bytes (quotes removed and doubled quotes undone for CSV,
    /// escapes undone for JSON strings); empty for kinds without bytes. Valid only inside `body`.
    func withFieldBytes<T>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T
    /// The 1-based line and byte column where a field's value starts (nil when absent).
    func fieldPosition(_ index: Int) -> (line: Int, column: Int)?
    /// Calls `body` with each field of the current (well-formed) record in order, up to
    /// ``currentFieldCount``: its kind, position (line 0 when absent) and bytes (valid only inside
    /// `body`); stops when `body` returns false. Returns false when `body` stopped it. A reader
    /// can give all its fields more cheaply than field by field (the JSON readers look up their
    /// object once).
    func forEachField(_ body: (ByteFieldKind, (line: Int, column: Int), UnsafeBufferPointer<UInt8>) -> Bool) -> Bool
    /// The current record's number, and the line and column where it starts.
    var currentRecordStart: (number: Int, line: Int, column: Int) { get }
    /// Calls `body` with the current record's bytes exactly as in the input (without the
    /// record separator), as ``SourceRecord/rawBytes`` has them.
    func withCurrentRawBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T
    /// The current record as a ``SourceRecord`` (fields, raw text, problem).
    func currentRecord() -> SourceRecord
}

extension ByteFieldReader {
    /// Field by field, through ``fieldKind(_:)``, ``fieldPosition(_:)`` and ``withFieldBytes(_:_:)``.
    package func forEachField(
        _ body: (ByteFieldKind, (line: Int, column: Int), UnsafeBufferPointer<UInt8>) -> Bool
    ) -> Bool {
        for index in 0..<currentFieldCount {
            let kind = fieldKind(index)
            let position = fieldPosition(index) ?? (0, 0)
            let proceed =
                kind.hasBytes
                ? withFieldBytes(index) { body(kind, position, $0) }
                : body(kind, position, UnsafeBufferPointer(start: nil, count: 0))
            if !proceed { return false }
        }
        return true
    }

    /// A field's value as a ``FieldValue`` (nil when absent), exactly as ``SourceRecord`` has it.
    package func fieldValue(_ index: Int) -> FieldValue? {
        let kind = fieldKind(index)
        switch kind {
        case .absent: return nil
        case .null: return .null
        case .true: return .bool(true)
        case .false: return .bool(false)
        case .text, .quotedText, .number, .nested:
            let text = withFieldBytes(index) { String(decoding: $0, as: UTF8.self) }
            return kind == .number ? .number(text) : kind == .nested ? .json(text) : .text(text)
        }
    }
}
