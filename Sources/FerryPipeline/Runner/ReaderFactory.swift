import FerryCore
import FerryFormats

/// Opens the streaming reader an import step needs.
package enum ReaderFactory {
    /// The reader of the step's sources: one file's reader, a `MultiFileReader` when the step
    /// names several files or a glob pattern (expanded here, in natural order), or a
    /// `DatabaseRecordReader` over a database's table, query or entity.
    package static func open(step: ImportStep) throws -> any RecordReader {
        if let database = step.database { return try DatabaseRecordReader.open(database) }
        let files = try SourceFiles.expand(step.sources)
        if files.count == 1 && !SourceFiles.isPattern(step.sources[0]) {
            return try open(step: step, file: files[0])
        }
        return MultiFileReader(files: files) { try open(step: step, file: $0) }
    }

    /// The reader of one file of the step.
    static func open(step: ImportStep, file: String) throws -> any RecordReader {
        switch step.format {
        case .csv:
            var options = step.csv
            // The step's null words apply to unquoted CSV fields; a quoted field is never null.
            if !step.coercion.nullTokens.isEmpty { options.nullTokens = step.coercion.nullTokens }
            return try CSVReader(path: file, options: options, encoding: step.encoding)
        case .json:
            return try JSONArrayReader(
                path: file, pointer: step.jsonPointer, maxDepth: step.jsonMaxDepth,
                maxRecordBytes: step.jsonMaxRecordBytes,
                encoding: step.encoding, shape: step.jsonShape)
        case .fixed:
            return try FixedWidthReader(
                path: file, layout: step.fixedWidth, nullTokens: step.coercion.nullTokens, encoding: step.encoding)
        case .ndjson:
            return try NDJSONReader(
                path: file, maxDepth: step.jsonMaxDepth, maxRecordBytes: step.jsonMaxRecordBytes,
                encoding: step.encoding, shape: step.jsonShape)
        }
    }
}
