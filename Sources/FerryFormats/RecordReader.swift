public import FerryCore

/// The value of one field as a reader found it, before any coercion to a model type.
public enum FieldValue: Sendable, Hashable {
    /// A string (CSV field, JSON string). CSV fields are always text.
    case text(String)
    /// A JSON number, in its exact source spelling (never rounded through Double).
    case number(String)
    /// A JSON `true` / `false`.
    case bool(Bool)
    /// A JSON `null`, or a CSV field equal to one of the reader's null tokens.
    case null
    /// A JSON object or array, as compact JSON text.
    case json(String)
    /// A value a database gave with its type (a SQLite or PostgreSQL column, a Core Data
    /// attribute): converted to the attribute's type without a round trip through text.
    case typed(Value)
}

/// One field of a record: its value and where it starts in the input.
///
/// Two fields are equal when their values and positions are; ``quoted`` says how the value was
/// written and takes no part in equality.
public struct Field: Sendable, Hashable {
    /// The field's value as read.
    public var value: FieldValue
    /// 1-based line and byte column where the field's value starts.
    public var line: Int
    /// The 1-based byte column where the field's value starts.
    public var column: Int
    /// The CSV field was quoted: it is taken literally (never trimmed, never a null word).
    public var quoted: Bool

    /// A field with `value` starting at `line` and `column`.
    public init(value: FieldValue, line: Int, column: Int, quoted: Bool = false) {
        self.value = value
        self.line = line
        self.column = column
        self.quoted = quoted
    }

    /// Equal values at the same position; `quoted` is ignored.
    public static func == (lhs: Field, rhs: Field) -> Bool {
        lhs.value == rhs.value && lhs.line == rhs.line && lhs.column == rhs.column
    }

    /// Hashes the value and the position, as `==` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(value)
        hasher.combine(line)
        hasher.combine(column)
    }
}

/// One record read from a data source.
///
/// Fields are indexed by the reader's field index (see ``RecordReader/fieldIndex(of:)``), so a
/// consumer resolves a field name once and then reads by position. A field that the record
/// does not have (a JSON key that is absent, a short CSV row) is `nil`.
public struct SourceRecord: Sendable {
    /// 1-based number of the record in its source (CSV: data rows after the header).
    public var number: Int
    /// Where the record starts.
    public var line: Int
    /// The 1-based byte column where the record starts.
    public var column: Int
    /// Fields by field index; shorter than the reader's field count when trailing fields are absent.
    public var fields: [Field?]
    /// The record's bytes exactly as they appear in the input, without the trailing record
    /// separator. Kept as bytes: they are decoded only when a record is rejected.
    public var rawBytes: [UInt8]

    /// The record's text as it appears in the input (for rejects files); invalid UTF-8 is shown
    /// as U+FFFD here only.
    public var raw: String {
        get { String(decoding: rawBytes, as: UTF8.self) }
        set { rawBytes = Array(newValue.utf8) }
    }
    /// Set when the reader could delimit the record but it is malformed (wrong field count,
    /// invalid UTF-8, a line of NDJSON that is not an object): the importer rejects it and reading
    /// goes on. Problems that make the rest of the input unreadable are thrown instead.
    public var problem: FerryError?
    /// The file the record came from, set by a reader of several files (`MultiFileReader`);
    /// nil when it is the reader's only source.
    public var sourceName: String?

    /// A record whose raw text is given as a string.
    public init(number: Int, line: Int, column: Int = 1, fields: [Field?], raw: String, problem: FerryError? = nil) {
        self.number = number
        self.line = line
        self.column = column
        self.fields = fields
        self.rawBytes = Array(raw.utf8)
        self.problem = problem
    }

    /// A record whose raw text is given as bytes (what readers do: no decoding per record).
    public init(
        number: Int, line: Int, column: Int = 1, fields: [Field?], rawBytes: [UInt8], problem: FerryError? = nil
    ) {
        self.number = number
        self.line = line
        self.column = column
        self.fields = fields
        self.rawBytes = rawBytes
        self.problem = problem
    }

    /// The field at a reader field index, or nil when absent.
    @inlinable
    public subscript(index: Int) -> Field? {
        index < fields.count ? fields[index] : nil
    }
}

/// A streaming source of records: CSV, a JSON array, NDJSON.
///
/// Readers hold only a bounded buffer, never the whole input. Like a GRDB cursor, iteration may
/// throw and cannot be repeated. Every error is a `FerryError` with code `.invalidInput` and a
/// location carrying file, line, column and record number.
public protocol RecordReader: AnyObject {
    /// The label used in locations: the path as the user gave it, or `<stdin>`.
    var sourceName: String { get }
    /// Field names known so far, in field-index order. For CSV this is the header (or the given
    /// column names) once the first record was requested; for JSON it grows as new keys appear.
    var fieldNames: [String] { get }
    /// The stable index of a field name, registering it if it has not been seen yet, so that a
    /// consumer can resolve its mapping before reading (JSON keys that appear later fill it).
    /// For CSV, asking for a name that is not a column returns an index that is never filled;
    /// use ``hasField(_:)`` to check columns after ``prepare()``.
    func fieldIndex(of name: String) -> Int
    /// True when the source has (or, for JSON, has seen) this field.
    func hasField(_ name: String) -> Bool
    /// Reads what is needed to know the field names (the CSV header); a no-op for JSON.
    func prepare() throws
    /// The next record, or nil at the end of the input.
    func next() throws -> SourceRecord?
    /// Where the reader is now (for errors raised by the consumer between records).
    var currentLocation: InputLocation { get }
    /// The part of the input read so far, 0…1 (bytes of the file on disk), or nil when the
    /// input's size is unknown (standard input, a pipe). Safe to ask from another thread.
    var progressFraction: Double? { get }
    /// How much of its one file the reader has taken from the disk (nil for a reader of several
    /// files or of no file): what a resumable import hashes to recognise the file later.
    var inputProgress: InputProgress? { get }
}

extension RecordReader {
    /// Nil: the input's size is unknown, unless a reader says otherwise.
    public var progressFraction: Double? { nil }
    /// Nil: the reader does not say how much of a file it has read, unless it says otherwise.
    public var inputProgress: InputProgress? { nil }
}

/// A reader that wraps another one and can step aside: it first hands over the records it holds
/// (such as a sample read for model inference), then the wrapped reader continues. A consumer
/// takes the held records, then reads the wrapped reader directly, so that wrapping a reader
/// never costs it its byte-level fast path (``ByteFieldReader``).
package protocol ForwardingRecordReader: RecordReader {
    /// The reader the records after the held ones come from.
    var wrapped: any RecordReader { get }
    /// Removes and returns the records to deliver before the wrapped reader's.
    func takeHeldRecords() -> [SourceRecord]
}
