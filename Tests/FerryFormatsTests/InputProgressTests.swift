import FerryCore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryFormats

/// An input's progress counts the bytes taken from the file on disk (compressed ones for
/// compressed input), out of the file's size, so the progress line's percent is that of the file.
@Suite struct InputProgressTests {
    /// About 1 MB that compresses poorly (random digits), so even compressed input takes several
    /// of the decompressor's 64 KiB reads.
    static let text: String = {
        var random = SeededGenerator(state: 11)
        return (1...40_000).map { "\($0),\(UInt64.random(in: 0...UInt64.max, using: &random))\n" }.joined()
    }()

    @Test(arguments: [nil] + Compression.allCases)
    func countsTheFilesBytes(compression: Compression?) throws {
        let directory = TemporaryDirectory("ferry-progress")
        let path = directory.url.appendingPathComponent("data.csv").path
        if let compression {
            try Compressing.write(Array(Self.text.utf8), compression, to: path)
        } else {
            try Data(Self.text.utf8).write(to: URL(fileURLWithPath: path))
        }
        let size = Int64(try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
        let input = try InputFile(path: path)
        #expect(input.progress.totalBytes == size)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var decoded = 0
        var fractions: [Double] = []
        while true {
            let n = try buffer.withUnsafeMutableBytes { try input.read(into: $0.baseAddress!, count: $0.count) }
            if n == 0 { break }
            decoded += n
            fractions.append(try #require(input.progress.fraction))
        }
        #expect(decoded == Self.text.utf8.count)
        #expect(input.progress.bytesRead == size)
        #expect(input.progress.fraction == 1)
        #expect(fractions == fractions.sorted(), "the fraction never goes back")
        #expect(fractions.contains { $0 > 0 && $0 < 1 } || size <= 4096 + Compression.magicLength)
    }

    @Test func aDeviceHasNoSize() throws {
        let input = try InputFile(path: "/dev/null")
        #expect(input.progress.totalBytes == nil)
        #expect(input.progress.fraction == nil)
    }

    @Test func severalFilesCountTogether() throws {
        let directory = TemporaryDirectory("ferry-progress")
        let paths = try (1...3).map { index in
            let path = directory.url.appendingPathComponent("part\(index).csv").path
            try Data(("id,value\n" + Self.text).utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        let reader = MultiFileReader(files: paths) { try CSVReader(path: $0, options: CSVOptions()) }
        var fractions: [Double] = []
        var records = 0
        while try reader.next() != nil {
            records += 1
            if records % 1000 == 0 { fractions.append(try #require(reader.progressFraction)) }
        }
        #expect(records == 3 * 40_000)
        #expect(fractions == fractions.sorted(), "the fraction never goes back")
        #expect(fractions.contains { $0 > 0.3 && $0 < 0.7 }, "the second file is about the middle")
        #expect(reader.progressFraction == 1)
    }
}
