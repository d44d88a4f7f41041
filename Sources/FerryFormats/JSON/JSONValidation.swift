import FerryCore

/// Checks that the file at `path` (`-` for standard input) is one well-formed JSON document
/// (RFC 8259): exactly one value with only white space around it, nested at most `maxDepth`
/// levels. A leading UTF-8 byte order mark is ignored.
///
/// Reads the file in chunks of `chunkSize` bytes, never holding it whole.
///
/// - Throws: a `FerryError` with code `.invalidInput` located at the first offending byte
///   (`file:line:column`), or `.io` when the file cannot be read.
public func validateJSONDocument(path: String, chunkSize: Int = 1 << 18, maxDepth: Int = JSONSyntax.maxDepth) throws {
    let input = try InputFile(path: path)
    let tokenizer = JSONTokenizer(
        window: ByteWindow(input: input, chunkSize: chunkSize), sourceName: input.name, maxDepth: maxDepth)
    while try tokenizer.next() != .end {}
}
