/// Where something was read: a file, a 1-based line and column (in bytes), and for data
/// sources the 1-based record number.
///
/// Every error about user input carries one, so that messages read like a compiler's:
/// `orders.csv:12:7: error: 'abc' is not an integer (record 11)`.
public struct InputLocation: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The file path as the user gave it, or a label such as `<stdin>` or `--where`.
    public var file: String
    /// 1-based line, or 0 when unknown.
    public var line: Int
    /// 1-based column in bytes, or 0 when unknown.
    public var column: Int
    /// 1-based record number for data files, nil for definitions.
    public var record: Int?

    /// A location in `file`; 0 for an unknown line or column.
    public init(file: String, line: Int = 0, column: Int = 0, record: Int? = nil) {
        self.file = file
        self.line = line
        self.column = column
        self.record = record
    }

    /// `file:line:column`, leaving out the parts that are unknown.
    public var description: String {
        var text = file
        if line > 0 {
            text += ":\(line)"
            if column > 0 { text += ":\(column)" }
        }
        return text
    }
}
