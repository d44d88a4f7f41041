import FerryCore
import Foundation

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
    /// The file's size in bytes with every reject written so far (those of an earlier,
    /// interrupted run included when continuing one).
    public private(set) var size: Int64 = 0

    /// Creates (truncates) the rejects file; with `dryRun`, touches nothing and only counts.
    public init(path: String, dryRun: Bool = false) throws {
        self.path = path
        output = dryRun ? nil : try OutputFile(path: path)
    }

    /// Continues the rejects file of an interrupted import whose committed batches left it
    /// `size` bytes long: what lies beyond (the rejects of a batch that never committed) is cut
    /// off, and new rejects are appended. A file shorter than `size` (or gone) is an error: the
    /// rejects of committed batches would be lost.
    public init(continuing path: String, at size: Int64) throws {
        self.path = path
        let found = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value
        guard let found, found >= size else {
            throw FerryError(
                .usage,
                found.map {
                    "the rejects file has \($0) bytes, fewer than the \(size) the interrupted import had written to it"
                } ?? "the rejects file is missing; the interrupted import had written \(size) bytes of rejects to it",
                at: InputLocation(file: path),
                notes: ["the rejects of the committed batches must stay; run the import again without --resume"])
        }
        guard truncate(path, off_t(size)) == 0 else {
            throw FerryError(
                .io,
                "cannot cut the rejects of the interrupted batch from '\(path)': \(String(cString: strerror(errno)))",
                at: InputLocation(file: path))
        }
        output = try OutputFile(path: path, append: true)
        self.size = size
    }

    /// True when records are only counted (a dry run).
    public var isDryRun: Bool { output == nil }

    /// Writes one reject; `file` names the file it came from when the step reads several.
    public func write(
        file: String? = nil, record: Int, line: Int, column: Int, field: String?, reason: String, raw: String
    ) throws {
        var text = "{"
        if let file { text += "\"file\":" + JSONText.quote(file) + "," }
        text += "\"record\":\(record),\"line\":\(line),\"column\":\(column)"
        if let field { text += ",\"field\":" + JSONText.quote(field) }
        text += ",\"reason\":" + JSONText.quote(reason) + ",\"raw\":" + JSONText.quote(raw) + "}\n"
        try output?.write(text)
        count += 1
        size += Int64(text.utf8.count)
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
