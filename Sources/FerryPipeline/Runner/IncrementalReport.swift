/// What an incremental database read did (`incremental` in the report): the column, the mark it
/// started from and the one it committed, and the rows it read.
public struct IncrementalReport: Sendable, Codable, Hashable {
    /// The source's increasing column.
    public var column: String
    /// The mark the run read from (rows at or past it); nil on a first run without `initial:`.
    public var from: String?
    /// The mark the run committed: the column's value in the last row read (the start when no
    /// row was read).
    public var to: String?
    /// The rows the run read past the mark.
    public var rows = 0

    /// A report of reading `column` from `from`.
    public init(column: String, from: String?) {
        self.column = column
        self.from = from
        self.to = from
    }
}

/// Which files a `files: new` import read (`file_selection` in the report).
public struct FileSelectionReport: Sendable, Codable, Hashable {
    /// The files read: never imported before, or changed since (same path, new content).
    public var new = 0
    /// Of the new files, those whose path was imported before with other content.
    public var changed = 0
    /// The files skipped: imported before with the same size and SHA-256.
    public var alreadyImported = 0

    /// A report of `new` files read (`changed` of them changed) and `alreadyImported` skipped.
    public init(new: Int = 0, changed: Int = 0, alreadyImported: Int = 0) {
        self.new = new
        self.changed = changed
        self.alreadyImported = alreadyImported
    }

    enum CodingKeys: String, CodingKey {
        case new, changed
        case alreadyImported = "already_imported"
    }
}
