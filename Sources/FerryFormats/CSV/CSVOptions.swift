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

    /// The whole delimiter when it is several bytes long (`||`, `::`); ``delimiter`` is then its
    /// first byte. Nil (or one byte): ``delimiter`` alone.
    public var delimiterSequence: [UInt8]? = nil
    /// The bytes that end a record (`~`, a lone CR), nil for the usual LF, CRLF or CR. With
    /// one, line breaks are ordinary bytes of a field, and the line numbers of locations count
    /// records' terminators.
    public var recordTerminator: [UInt8]? = nil
    /// PostgreSQL's `COPY … TEXT` format: no quoting, a backslash escapes (`\t`, `\n`, `\x41`,
    /// `\101`, `\\`), `\N` is null, an empty field is the empty string, and a line that is
    /// only a backslash and a period ends the data.
    public var copyText: Bool = false

    /// Sets the options PostgreSQL's `COPY … TEXT` format reads with: tab-separated, no header
    /// row unless asked, `\N` the only null (an empty field is the empty string).
    public mutating func readCopyText() {
        copyText = true
        delimiter = 9
        hasHeader = false
        nullTokens = []
    }

    /// The bytes a delimiter or record terminator setting names: `\t` (or `tab`), `\r`, `\n`
    /// and `\r\n` written with backslashes name those bytes; any other text is taken as
    /// written. Nil when it is empty or longer than 8 bytes.
    package static func separatorBytes(_ text: String) -> [UInt8]? {
        if text.lowercased() == "tab" { return [9] }
        var bytes: [UInt8] = []
        var rest = Substring(text)
        while let first = rest.first {
            let escapes: [(String, UInt8)] = [("\\t", 9), ("\\r", 13), ("\\n", 10)]
            if first == "\\", let (spelling, byte) = escapes.first(where: { rest.hasPrefix($0.0) }) {
                bytes.append(byte)
                rest = rest.dropFirst(spelling.count)
            } else {
                bytes.append(contentsOf: String(first).utf8)
                rest = rest.dropFirst()
            }
        }
        return bytes.isEmpty || bytes.count > 8 ? nil : bytes
    }

    /// The delimiter's bytes: ``delimiterSequence`` when it is longer than one byte, else ``delimiter``.
    package var delimiterBytes: [UInt8] {
        if let delimiterSequence, delimiterSequence.count > 1 { return delimiterSequence }
        return [delimiter]
    }

    /// The record terminator when it is not the usual one (LF, CRLF or CR: today's scanner).
    package var customTerminator: [UInt8]? {
        guard let recordTerminator, !recordTerminator.isEmpty, recordTerminator != [10], recordTerminator != [13, 10]
        else { return nil }
        return recordTerminator
    }

    /// Why the delimiter, the quote and the record terminator cannot read a file (the same byte,
    /// a line break as a delimiter, one that starts the other), nil when they can: one rule for
    /// `ferry validate` and the reader.
    package var delimiterQuoteProblem: String? {
        let delimiters = delimiterBytes
        let terminator = customTerminator
        let breaks: [UInt8] = terminator ?? [10, 13]
        if copyText {
            guard delimiters.count == 1, delimiter != UInt8(ascii: "\\"), !breaks.contains(delimiter) else {
                return "the pgcopy delimiter must be one character other than a backslash and a line break"
            }
            return nil
        }
        if terminator == nil && delimiters.count == 1 {
            guard delimiter != quote, delimiter != 10, delimiter != 13, quote != 10, quote != 13 else {
                return "CSV delimiter and quote must be two different characters other than a line break"
            }
            return nil
        }
        guard !delimiters.contains(quote), !breaks.contains(quote) else {
            return "the CSV quote must differ from every character of the delimiter and the record terminator"
        }
        if let terminator {
            guard terminator[0] != delimiters[0], !terminator.contains(quote) else {
                return "the CSV delimiter and the record terminator must start with two different characters"
            }
            return nil
        }
        guard !delimiters.contains(10), !delimiters.contains(13) else {
            return "the CSV delimiter cannot hold a line break"
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
