import FerryCore
import FerryFormats

/// A reader that first replays records already read (a sample for model inference) and then
/// continues with the underlying reader, so sampling needs no second pass over the input and
/// works on standard input. It forwards (``ForwardingRecordReader``): an importer takes the
/// sample and then reads the underlying reader through its fast path.
package final class SampledReader: ForwardingRecordReader {
    private let base: any RecordReader
    package private(set) var samples: [SourceRecord]
    private var replayed = 0

    /// Reads up to `count` records from `base` into memory (a bounded sample).
    package init(_ base: any RecordReader, sampleSize count: Int) throws {
        self.base = base
        try base.prepare()
        var samples: [SourceRecord] = []
        while samples.count < count, let record = try base.next() {
            samples.append(record)
        }
        self.samples = samples
    }

    package var sourceName: String { base.sourceName }
    package var fieldNames: [String] { base.fieldNames }
    package func fieldIndex(of name: String) -> Int { base.fieldIndex(of: name) }
    package func hasField(_ name: String) -> Bool { base.hasField(name) }
    package func prepare() throws {}
    package var currentLocation: InputLocation { base.currentLocation }
    package var wrapped: any RecordReader { base }
    package var progressFraction: Double? { base.progressFraction }

    package func takeHeldRecords() -> [SourceRecord] {
        let held = Array(samples[replayed...])
        samples = []
        replayed = 0
        return held
    }

    package func next() throws -> SourceRecord? {
        if replayed < samples.count {
            defer {
                replayed += 1
                if replayed == samples.count { samples = [] }
            }
            return samples[replayed]
        }
        return try base.next()
    }
}
