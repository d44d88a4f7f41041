/// Options for reading CSV.
///
/// The defaults read RFC 4180 files with a header row, where an unquoted empty field is null
/// and a quoted empty field (`""`) is the empty string, as PostgreSQL's `COPY … CSV` does.
public struct CSVOptions: Sendable, Hashable {
    /// The field delimiter (one byte); `\t` for TSV.
    public var delimiter: UInt8 = UInt8(ascii: ",")
    /// The quote character (one byte).
    public var quote: UInt8 = UInt8(ascii: "\"")
    /// Whether the first row names the columns.
    public var hasHeader: Bool = true

    /// Why the delimiter and the quote cannot read a file (the same byte, or a line break), nil
    /// when they can: one rule for `ferry validate` and the reader.
    package var delimiterQuoteProblem: String? {
        guard delimiter != quote, delimiter != 10, delimiter != 13, quote != 10, quote != 13 else {
            return "CSV delimiter and quote must be two different characters other than a line break"
        }
        return nil
    }
    /// What a quoted empty field (`""`) reads as (`quoted_empty:`).
    public enum QuotedEmpty: String, Sendable, Hashable, CaseIterable {
        /// The empty string, as PostgreSQL's `COPY … CSV` reads it (the default).
        case string
        /// Null, like an unquoted empty field: for files that quote every field, empty ones too.
        case null
    }

    /// What a quoted empty field (`""`) reads as; every other quoted field is taken literally.
    public var quotedEmpty: QuotedEmpty = .string
    /// Column names when there is no header row (or to replace the header's names).
    public var columns: [String]? = nil
    /// Texts that read as ``FieldValue/null`` when a field is written unquoted; a quoted field
    /// is never null. The default `[""]` makes `a,,b` null and `a,"",b` an empty string.
    public var nullTokens: Set<String> = [""]
    /// Skip blanks (spaces) at the start of every field, so that `a, "b"` reads `b` as a quoted
    /// field, as Python's `csv` does with `skipinitialspace`.
    public var skipInitialSpace: Bool = false
    /// Accept a header with blank or repeated names: a blank one becomes `column_N` (its 1-based
    /// position), a repeated one `name_2`, `name_3`, …. Off by default: a job maps fields by name.
    public var renamesUnusableHeaders: Bool = false
    /// Lines skipped before the header (or the first record), whatever they hold.
    public var skipLines: Int = 0
    /// Lines that start with this byte are comments, skipped like blank lines.
    public var comment: UInt8? = nil
    /// The escape character of MySQL- and PostgreSQL-style text exports (usually `\`): inside
    /// or outside quotes, it makes the byte after it literal (`\"`, `\,`, `\\`, an escaped line
    /// break), as Python's `csv` escapechar does; an unquoted field that is exactly the escape
    /// and `N` (`\N`) is null, as MySQL writes NULL. Nil: no escape (quotes are doubled).
    public var escape: UInt8? = nil

    /// Options with the RFC 4180 defaults unless given.
    public init(
        delimiter: UInt8 = UInt8(ascii: ","),
        quote: UInt8 = UInt8(ascii: "\""),
        hasHeader: Bool = true,
        columns: [String]? = nil,
        nullTokens: Set<String> = [""],
        skipInitialSpace: Bool = false,
        renamesUnusableHeaders: Bool = false
    ) {
        self.delimiter = delimiter
        self.quote = quote
        self.hasHeader = hasHeader
        self.columns = columns
        self.nullTokens = nullTokens
        self.skipInitialSpace = skipInitialSpace
        self.renamesUnusableHeaders = renamesUnusableHeaders
    }
}
