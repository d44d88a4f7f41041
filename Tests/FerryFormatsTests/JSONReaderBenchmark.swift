import FerryCore
import FerryFormats
import FerryTestSupport
import Foundation
import Testing

/// Throughput of the JSON readers on generated files; not a timed unit test.
///
/// Runs only with `FERRY_BENCH=1`, in a release build: `Scripts/bench-json.sh`.
/// `FERRY_BENCH_RECORDS` sets the record count (default 1,000,000).
@Suite("JSON reader benchmark", .serialized, .enabled(if: ProcessInfo.processInfo.environment["FERRY_BENCH"] != nil))
struct JSONReaderBenchmark {
    static var recordCount: Int {
        Int(ProcessInfo.processInfo.environment["FERRY_BENCH_RECORDS"] ?? "") ?? 1_000_000
    }

    /// One record of 9 fields: integers, text, a decimal, a bool, a date string, null, a nested array.
    static func line(_ i: Int) -> String {
        #"{"id":\#(i),"name":"customer \#(i)","email":"user\#(i)@example.com","balance":\#(i % 10_000).\#(i % 100),"#
            + #""active":\#(i % 3 == 0 ? "true" : "false"),"created":"2024-05-\#(10 + i % 18)T12:34:56Z","#
            + #""city":"Wellington","note":null,"tags":["a","b"]}"#
    }

    static func generate(_ path: String, array: Bool) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var chunk = array ? "[\n" : ""
        for i in 0..<recordCount {
            chunk += line(i)
            chunk += array ? (i + 1 < recordCount ? ",\n" : "\n]\n") : "\n"
            if chunk.utf8.count > 1 << 20 {
                handle.write(Data(chunk.utf8))
                chunk = ""
            }
        }
        handle.write(Data(chunk.utf8))
    }

    static func measure(_ label: String, path: String, _ makeReader: () throws -> any RecordReader) throws {
        let size = Double((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        var best = Double.infinity
        for _ in 0..<3 {
            let reader = try makeReader()
            let id = reader.fieldIndex(of: "id")
            let clock = ContinuousClock()
            var count = 0
            var checksum = 0
            let elapsed = try clock.measure {
                while let record = try reader.next() {
                    count += 1
                    if case .number(let text)? = record[id]?.value { checksum &+= text.utf8.count }
                }
            }
            #expect(count == recordCount && checksum > 0)
            let seconds = elapsed.seconds
            best = min(best, seconds)
        }
        let megabytes = size / 1_048_576
        print(
            "\(label): \(recordCount) records, \(String(format: "%.1f", megabytes)) MiB in "
                + "\(String(format: "%.3f", best)) s (\(String(format: "%.0f", megabytes / best)) MiB/s)")
    }

    @Test("NDJSON: 9-field records")
    func ndjson() throws {
        let dir = TemporaryDirectory("ferry-bench")
        let path = dir.file("bench.ndjson")
        try Self.generate(path, array: false)
        try Self.measure("NDJSONReader", path: path) { try NDJSONReader(path: path) }
    }

    @Test("JSON array: 9-field records")
    func jsonArray() throws {
        let dir = TemporaryDirectory("ferry-bench")
        let path = dir.file("bench.json")
        try Self.generate(path, array: true)
        try Self.measure("JSONArrayReader", path: path) { try JSONArrayReader(path: path) }
    }
}
