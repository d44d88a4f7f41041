import FerryCore

/// Writes rejected records as NDJSON, one object per record:
/// `{"record":12,"line":13,"column":7,"field":"age","reason":"'abc' is not an integer","raw":"…"}`,
/// led by `"file":"nightly/day2.csv"` when the step reads several files.
///
/// The raw record is kept byte for byte (as far as it is valid UTF-8), so a fixed file can be
/// re-imported from the rejects.
public final class RejectsWriter {
    /// The rejects file's path.
    public let path: String
    /// Nil in a dry run: rejects are counted, and the file is neither created nor changed.
    private let output: OutputFile?
    /// Rejects written (or counted, in a dry run) so far.
    public private(set) var count = 0

    /// Creates (truncates) the rejects file; with `dryRun`, touches nothing and only counts.
    public init(path: String, dryRun: Bool = false) throws {
        self.path = path
        output = dryRun ? nil : try OutputFile(path: path)
    }

    /// True when records are only counted (a dry run).
    public var isDryRun: Bool { output == nil }

    /// Writes one reject; `file` names the file it came from when the step reads several.
    public func write(file: String? = nil, record: Int, line: Int, column: Int, field: String?, reason: String, raw: String) throws {
        var text = "{"
        if let file { text += "\"file\":" + JSONText.quote(file) + "," }
        text += "\"record\":\(record),\"line\":\(line),\"column\":\(column)"
        if let field { text += ",\"field\":" + JSONText.quote(field) }
        text += ",\"reason\":" + JSONText.quote(reason) + ",\"raw\":" + JSONText.quote(raw) + "}\n"
        try output?.write(text)
        count += 1
    }

    /// Writes every reject so far to the disk: called before the batch that rejected them commits,
    /// so a kill never keeps a batch whose rejects are lost.
    public func synchronize() throws { try output?.synchronize() }

    /// Writes the remaining rejects and closes the file; a failure to write them is thrown.
    public func close() throws {
        try output?.synchronize()
        try output?.close()
    }
}
