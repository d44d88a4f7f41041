import FerryCore
import FerryFormats
import Foundation
import Testing

/// Parsing throughput, not a timed unit test: runs only when `FERRY_CSV_BENCH` names a file
/// (generated on first use: 1M rows, 9 columns, ~120 MB, with quoted commas, doubled quotes
/// and a few embedded newlines). Run it on a release build (the test target uses `@testable`,
/// hence `-enable-testing`; `swift test -c release` without `--skip-build` does the same):
///
///     swift build -c release --build-tests -Xswiftc -enable-testing
///     FERRY_CSV_BENCH=/tmp/ferry-bench.csv swift test -c release --skip-build --filter CSVReaderBenchmark
@Suite("CSVReaderBenchmark")
struct CSVReaderBenchmark {
    static let path = ProcessInfo.processInfo.environment["FERRY_CSV_BENCH"]

    @Test("parse 1M rows", .enabled(if: path != nil))
    func parse() throws {
        let path = try #require(Self.path)
        if !FileManager.default.fileExists(atPath: path) { try Self.generate(path: path, rows: 1_000_000) }
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        for run in 1...3 {
            let clock = ContinuousClock()
            var records = 0
            var nulls = 0
            var bytes = 0
            var problems = 0
            let elapsed = try clock.measure {
                let reader = try CSVReader(path: path, options: CSVOptions())
                while let record = try reader.next() {
                    records += 1
                    if record.problem != nil { problems += 1 }
                    for field in record.fields {
                        switch field?.value {
                        case .text(let text)?: bytes += text.utf8.count
                        default: nulls += 1
                        }
                    }
                }
            }
            let seconds = elapsed.seconds
            let megabytes = Double(size) / 1_000_000
            print(
                "csv-parse run \(run): \(records) records, \(megabytes) MB in \(String(format: "%.3f", seconds)) s = "
                    + "\(String(format: "%.0f", megabytes / seconds)) MB/s (\(nulls) nulls, \(bytes) text bytes, \(problems) problems)"
            )
            #expect(records == 1_000_000)
            #expect(problems == 0)
        }
    }

    static func generate(path: String, rows: Int) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw FerryError(.io, "cannot create '\(path)'")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let cities = ["Zürich", "Berlin", "São Paulo", "New York, NY", "東京", "Paris"]
        var chunk = "id,uuid,name,email,amount,created,note,city,active\n"
        for row in 1...rows {
            let uuid = String(
                format: "%08x-%04x-4%03x-a%03x-%012x", row &* 2_654_435_761 & 0xFFFF_FFFF, row & 0xFFFF, row & 0xFFF,
                (row >> 3) & 0xFFF, row &* 97)
            let name = row % 3 == 0 ? "\"Doe, Jane \(row)\"" : "John Smith \(row)"
            let note: String
            switch row % 10 {
            case 0: note = "\"she said \"\"hello\"\" twice\""
            case 5: note = ""
            default: note = row % 100_000 == 1 ? "\"first line\nsecond line\"" : "plain note \(row % 977)"
            }
            let city = cities[row % cities.count]
            let quotedCity = city.contains(",") ? "\"\(city)\"" : city
            chunk +=
                "\(row),\(uuid),\(name),user\(row)@example.com,\(row % 100_000).\(row % 100),2024-0\(row % 9 + 1)-1\(row % 10)T12:34:56Z,\(note),\(quotedCity),\(row % 2 == 0 ? "true" : "false")\n"
            if chunk.utf8.count > 1 << 20 {
                handle.write(Data(chunk.utf8))
                chunk = ""
            }
        }
        handle.write(Data(chunk.utf8))
    }
}
