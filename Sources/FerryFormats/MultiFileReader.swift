package import FerryCore
import Foundation

/// Reads several files of one format, one after the other, as one source (a nightly folder:
/// `source: nightly/*.csv.gz`).
///
/// Each file has its own reader (so compression, encoding and byte order marks are per file,
/// and every line, column and record number is one of its own file), opened only when the
/// previous file is done. The files share one set of field indexes: every CSV file must have
/// the first one's header row (a file whose header differs is a located error naming it, before
/// any of its records is read), and each JSON reader learns the keys the previous files
/// registered, in the same order, before it reads.
///
/// A consumer that wants each file's byte-level fast path takes the files one by one
/// (``currentFile()``, then ``nextFile()``) instead of calling ``next()``; both give the same
/// records in the same order. Records from ``next()`` carry their file in
/// ``SourceRecord/sourceName``.
package final class MultiFileReader: RecordReader {
    /// The files, in reading order.
    package let files: [String]
    private let open: (String) throws -> any RecordReader
    /// The index in `files` of the file being read.
    private var position = 0
    private var current: (any RecordReader)?
    private var exhausted = false
    /// The first CSV file's header row: the one every other file must have.
    private var header: [String]?
    /// Each file's size in bytes (nil for one that has none, such as a pipe).
    private let sizes: [Int64?]

    /// A reader of `files` (at least one), each opened by `open` when its turn comes.
    package init(files: [String], open: @escaping (String) throws -> any RecordReader) {
        precondition(!files.isEmpty, "a multi-file reader needs files")
        self.files = files
        self.open = open
        sizes = files.map { path in
            (try? FileManager.default.attributesOfItem(atPath: path)).flatMap { attributes in
                attributes[.type] as? FileAttributeType == .typeRegular
                    ? (attributes[.size] as? NSNumber)?.int64Value : nil
            }
        }
    }

    /// The part of all the files read so far: the files done, and the current one's part.
    package var progressFraction: Double? {
        let known = sizes.compactMap { $0 }
        guard known.count == sizes.count else { return nil }
        let total = known.reduce(0, +)
        guard total > 0 else { return nil }
        let done = known.prefix(position).reduce(0, +)
        let current = Double(known[min(position, known.count - 1)]) * (exhausted ? 1 : current?.progressFraction ?? 0)
        return min(1, (Double(done) + current) / Double(total))
    }

    /// The file being read.
    package var sourceName: String { current?.sourceName ?? files[position] }
    package var fieldNames: [String] { (try? currentFile())?.fieldNames ?? [] }
    package func fieldIndex(of name: String) -> Int { (try? currentFile())?.fieldIndex(of: name) ?? 0 }
    package func hasField(_ name: String) -> Bool { (try? currentFile())?.hasField(name) ?? false }
    package func prepare() throws { _ = try currentFile() }
    package var currentLocation: InputLocation { current?.currentLocation ?? InputLocation(file: files[position]) }

    package func next() throws -> SourceRecord? {
        while !exhausted {
            let reader = try currentFile()
            if var record = try reader.next() {
                record.sourceName = reader.sourceName
                return record
            }
            guard try nextFile() != nil else { return nil }
        }
        return nil
    }

    /// The reader of the file being read, opened (and its header read) on first use.
    package func currentFile() throws -> any RecordReader {
        if let current { return current }
        let reader = try open(files[position])
        try reader.prepare()
        if let csv = reader as? CSVReader { header = csv.headerRow }
        current = reader
        return reader
    }

    /// Moves on to the next file and returns its reader (header read and checked, field
    /// indexes shared); nil after the last file.
    package func nextFile() throws -> (any RecordReader)? {
        let previous = try currentFile()
        guard position + 1 < files.count else {
            exhausted = true
            return nil
        }
        position += 1
        current = nil
        let reader = try open(files[position])
        try reader.prepare()
        if let csv = reader as? CSVReader {
            try checkHeader(csv)
        }
        // The same name gets the same index in every file (JSON readers register keys as they
        // come; a CSV file with the same header already has them).
        for name in previous.fieldNames { _ = reader.fieldIndex(of: name) }
        current = reader
        return reader
    }

    /// A CSV file must have the first file's header row, name for name.
    private func checkHeader(_ reader: CSVReader) throws {
        guard let expected = header, let found = reader.headerRow, found != expected else { return }
        let first = files[0]
        let difference: String
        if let index = (0..<min(expected.count, found.count)).first(where: { expected[$0] != found[$0] }) {
            difference = "column \(index + 1) is '\(found[index])' where \(first) has '\(expected[index])'"
        } else if found.count > expected.count {
            difference =
                "it has \(found.count) columns, \(first) has \(expected.count): '\(found[expected.count])' is extra"
        } else {
            difference =
                "it has \(found.count) columns, \(first) has \(expected.count): '\(expected[found.count])' is missing"
        }
        throw FerryError(
            .invalidInput, "the header row of \(reader.sourceName) differs from the first file's: \(difference)",
            at: InputLocation(file: reader.sourceName, line: reader.headerLine, column: 1),
            notes: [
                "the files of one import step must share their columns; import a file with other columns in a step of its own"
            ])
    }
}
