import FerryFormats
import FerryTestSupport
import Foundation
import Testing

@testable import FerryPipeline

/// What the read-ahead thread copies: every field must read back from the batch exactly as the
/// reader gave it, whether it shares the batch's copy of the raw record or was copied on its own.
@Suite("A record batch's copies of the reader's fields")
struct RecordBatchTests {
    @Test("fields inside the raw record share its copy; only unescaped ones are copied again; all read back as read")
    func fieldsShareTheRawCopy() throws {
        let dir = TemporaryDirectory()
        let csv = "a,b,c\nplain,\"quoted, with a comma\",\"doubled \"\"quotes\"\"\"\n1,Zoë Żółć,\"line\nbreak\"\n"
        let reader = try CSVReader(path: try dir.write("batch.csv", bytes: Array(csv.utf8)), options: CSVOptions())
        try reader.prepare()
        let batch = RecordBatch(capacity: 8, byteCapacity: 1 << 20, coerced: nil)
        var read: [[String]] = []
        while try reader.advance() {
            var fields: [String] = []
            _ = reader.forEachField { _, _, bytes in
                fields.append(String(decoding: bytes, as: UTF8.self))
                return true
            }
            read.append(fields)
            batch.append(from: reader, coercingWith: nil)
        }
        #expect(read == [["plain", "quoted, with a comma", "doubled \"quotes\""], ["1", "Zoë Żółć", "line\nbreak"]])
        #expect(batch.count == 2)
        for (index, record) in batch.records.enumerated() {
            let fields = (0..<record.fieldCount).map { offset in
                let slot = batch.fields[record.firstField + offset]
                return batch.withBytes(slot.start, slot.count) { String(decoding: $0, as: UTF8.self) }
            }
            #expect(fields == read[index], "record \(index + 1)")
        }
        // Besides the raw records, only the field whose doubled quotes were undone has bytes of its own.
        let raw = batch.records.reduce(0) { $0 + $1.rawCount }
        #expect(batch.byteCount == raw + "doubled \"quotes\"".utf8.count)
    }

    @Test("a field with invalid UTF-8 keeps the record whole, with its problem, as before")
    func invalidUTF8() throws {
        let dir = TemporaryDirectory()
        let bytes = Array("a,b\nfine,ok\nbad,".utf8) + [0xFF] + Array("x\n".utf8)
        let reader = try CSVReader(path: try dir.write("bad.csv", bytes: bytes), options: CSVOptions())
        try reader.prepare()
        let batch = RecordBatch(capacity: 8, byteCapacity: 1 << 20, coerced: nil)
        while try reader.advance() { batch.append(from: reader, coercingWith: nil) }
        #expect(batch.count == 2)
        #expect(batch.records[0].materialized == -1)
        #expect(batch.records[1].materialized == 0)
        #expect(batch.sourceRecord(at: 1).problem != nil)
        #expect(batch.sourceRecord(at: 0).fields.map { $0?.value } == [.text("fine"), .text("ok")])
    }
}
