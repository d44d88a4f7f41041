import FerryCore
import FerryFormats

/// Opens the streaming reader an import step needs.
public enum ReaderFactory {
    public static func open(step: ImportStep) throws -> any RecordReader {
        switch step.format {
        case .csv:
            var options = step.csv
            // The step's null words apply to unquoted CSV fields; a quoted field is never null.
            if !step.coercion.nullTokens.isEmpty { options.nullTokens = step.coercion.nullTokens }
            return try CSVReader(path: step.source, options: options, encoding: step.encoding)
        case .json:
            return try JSONArrayReader(
                path: step.source, pointer: step.jsonPointer, maxDepth: step.jsonMaxDepth, maxRecordBytes: step.jsonMaxRecordBytes,
                encoding: step.encoding)
        case .ndjson:
            return try NDJSONReader(path: step.source, maxDepth: step.jsonMaxDepth, maxRecordBytes: step.jsonMaxRecordBytes, encoding: step.encoding)
        }
    }
}
