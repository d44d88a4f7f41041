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
    /// Column names when there is no header row (or to replace the header's names).
    public var columns: [String]? = nil
    /// Texts that read as ``FieldValue/null`` when a field is written unquoted; a quoted field
    /// is never null. The default `[""]` makes `a,,b` null and `a,"",b` an empty string.
    public var nullTokens: Set<String> = [""]

    public init(
        delimiter: UInt8 = UInt8(ascii: ","),
        quote: UInt8 = UInt8(ascii: "\""),
        hasHeader: Bool = true,
        columns: [String]? = nil,
        nullTokens: Set<String> = [""]
    ) {
        self.delimiter = delimiter
        self.quote = quote
        self.hasHeader = hasHeader
        self.columns = columns
        self.nullTokens = nullTokens
    }
}
