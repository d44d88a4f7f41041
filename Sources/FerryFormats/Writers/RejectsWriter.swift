import FerryCore

/// Writes rejected records as NDJSON, one object per record:
/// `{"record":12,"line":13,"column":7,"field":"age","reason":"'abc' is not an integer","raw":"…"}`.
///
/// The raw record is kept byte for byte (as far as it is valid UTF-8), so a fixed file can be
/// re-imported from the rejects.
public final class RejectsWriter {
    public let path: String
    private let output: OutputFile
    public private(set) var count = 0

    public init(path: String) throws {
        self.path = path
        output = try OutputFile(path: path)
    }

    public func write(record: Int, line: Int, column: Int, field: String?, reason: String, raw: String) throws {
        var text = "{\"record\":\(record),\"line\":\(line),\"column\":\(column)"
        if let field { text += ",\"field\":" + JSONText.quote(field) }
        text += ",\"reason\":" + JSONText.quote(reason) + ",\"raw\":" + JSONText.quote(raw) + "}\n"
        try output.write(text)
        count += 1
    }

    public func close() throws { try output.close() }
}
