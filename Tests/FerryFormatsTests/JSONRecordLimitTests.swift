import FerryCore
@_spi(Testing) import FerryFormats
import FerryTestSupport
import Foundation
import Testing

/// One enormous JSON or NDJSON record is a located error found with bounded memory: the readers
/// never hold more than the record limit (plus a chunk) of it.
@Suite("JSON record size limit")
struct JSONRecordLimitTests {
    static let chunkSizes = [1, 7, 64, 1 << 12]

    @Test("an NDJSON line longer than the limit is a located error; the window stays bounded")
    func longNDJSONLine() throws {
        let directory = TemporaryDirectory("ferry-json-limit")
        let long = "{\"id\": 2, \"text\": \"" + String(repeating: "x", count: 100_000) + "\"}\n"
        let path = try directory.write("long.ndjson", "{\"id\": 1}\n" + long + "{\"id\": 3}\n")
        for chunkSize in Self.chunkSizes {
            let reader = try NDJSONReader(path: path, chunkSize: chunkSize, maxRecordBytes: 1000)
            #expect(try reader.next()?.problem == nil)
            let message = thrownText { _ = try reader.next() }
            #expect(
                message == "\(path):2:1: error: record is longer than 1000 bytes (record 2)", "chunk size \(chunkSize)")
            #expect(
                reader.windowHighWater <= 4 * (1000 + chunkSize) + 64,
                "chunk size \(chunkSize): \(reader.windowHighWater)")
        }
    }

    @Test("a line exactly at the limit is read")
    func ndjsonLineAtTheLimit() throws {
        let directory = TemporaryDirectory("ferry-json-limit")
        let line = "{\"t\": \"" + String(repeating: "x", count: 992) + "\"}"
        #expect(line.utf8.count == 1001)
        let path = try directory.write("edge.ndjson", line + "\n")
        let reader = try NDJSONReader(path: path, chunkSize: 64, maxRecordBytes: 1001)
        let record = try #require(try reader.next())
        #expect(record.problem == nil)
        #expect(try reader.next() == nil)
    }

    @Test("a JSON array element with a string longer than the limit is an error at the string")
    func longJSONString() throws {
        let directory = TemporaryDirectory("ferry-json-limit")
        let text = "[\n  {\"id\": 1},\n  {\"id\": 2, \"text\": \"" + String(repeating: "y", count: 100_000) + "\"}\n]\n"
        let path = try directory.write("long.json", text)
        for chunkSize in Self.chunkSizes {
            let reader = try JSONArrayReader(path: path, chunkSize: chunkSize, maxRecordBytes: 1000)
            #expect(try reader.next()?.problem == nil)
            let message = thrownText { _ = try reader.next() }
            #expect(
                message == "\(path):3:21: error: record is longer than 1000 bytes (record 2)", "chunk size \(chunkSize)"
            )
            #expect(
                reader.windowHighWater <= 4 * (1000 + chunkSize) + 64,
                "chunk size \(chunkSize): \(reader.windowHighWater)")
        }
    }

    @Test("many small records add up to far more than the limit without an error")
    func manySmallRecords() throws {
        let directory = TemporaryDirectory("ferry-json-limit")
        let records = (1...2_000).map { "{\"id\": \($0), \"name\": \"n\($0)\"}" }
        let json = try directory.write("many.json", "[" + records.joined(separator: ",\n") + "]")
        let ndjson = try directory.write("many.ndjson", records.joined(separator: "\n"))
        let arrayReader = try JSONArrayReader(path: json, chunkSize: 64, maxRecordBytes: 100)
        #expect(try readAll(arrayReader).count == 2_000)
        let lineReader = try NDJSONReader(path: ndjson, chunkSize: 64, maxRecordBytes: 100)
        #expect(try readAll(lineReader).count == 2_000)
    }

    @Test("a record that fits in one chunk is held to the limit too, located at its start")
    func recordWithinOneChunk() throws {
        let directory = TemporaryDirectory("ferry-json-limit")
        let record = "{\"id\": 2, \"text\": \"" + String(repeating: "w", count: 150) + "\"}"
        let ndjson = try directory.write("short.ndjson", "{\"id\": 1}\n" + record + "\n")
        let lineReader = try NDJSONReader(path: ndjson, chunkSize: 1 << 16, maxRecordBytes: 100)
        #expect(try lineReader.next()?.problem == nil)
        #expect(
            thrownText { _ = try lineReader.next() }
                == "\(ndjson):2:1: error: record is longer than 100 bytes (record 2)")
        let json = try directory.write("short.json", "[{\"id\": 1},\n   " + record + "]")
        let arrayReader = try JSONArrayReader(path: json, chunkSize: 1 << 16, maxRecordBytes: 100)
        #expect(try arrayReader.next()?.problem == nil)
        #expect(
            thrownText { _ = try arrayReader.next() }
                == "\(json):2:4: error: record is longer than 100 bytes (record 2)")
    }

    @Test("the default limit is 64 MiB, as for CSV")
    func defaultLimit() {
        #expect(RecordLimits.defaultMaxRecordBytes == 64 << 20)
    }
}
