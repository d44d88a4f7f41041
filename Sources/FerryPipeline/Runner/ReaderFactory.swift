import FerryCore
import FerryFormats

/// Opens the streaming reader an import step needs.
enum ReaderFactory {
    static func open(step: ImportStep) throws -> any RecordReader {
        throw FerryError(.internal, "no reader for \(step.format.rawValue) yet")
    }
}
