import FerryTestSupport
import Foundation
import Testing

/// The progress line on a terminal (a pseudo-terminal from `script(1)`), through the binary.
@Suite("progress line on a terminal (CLI)", .serialized)
struct ProgressLineTests {
    static let script = "/usr/bin/script"

    @Test(
        "the progress line fits a 60-column terminal, shows the percent read, redraws in place and is cleared before the summary",
        .enabled(if: FileManager.default.isExecutableFile(atPath: script)))
    func fitsTheTerminal() throws {
        let directory = TemporaryDirectory()
        let binary = try FerryBinary.require()
        let command = [
            "stty", "cols", "60;", binary, "import", BigFiles.big, "--store", directory.file("s.sqlite"), "--model",
            Fixtures.peopleModel, "--entity", "Person",
        ]
        .map { $0.hasSuffix(";") ? $0 : "'\($0)'" }.joined(separator: " ")
        let result = try FerryProcess(["-qec", command, "/dev/null"], env: ["TERM": "xterm"], executable: Self.script)
            .wait()
        let text = result.stdout
        #expect(result.exitCode == 0, "\(result)")
        let redraws = text.components(separatedBy: "\r\u{1B}[K").dropFirst()
        let progress = redraws.filter { $0.hasPrefix("[1/1] ") }
        #expect(!progress.isEmpty, "no progress line drawn: \(text.debugDescription)")
        var percents: [Int] = []
        for line in progress {
            #expect(line.count <= 59, "wider than the terminal: \(line.debugDescription)")
            #expect(!line.contains("\n"), "the progress line is not redrawn in place: \(line.debugDescription)")
            #expect(line.hasSuffix(" rejected") || line.hasSuffix(" left"), "\(line.debugDescription)")
            // The input's size is known: the line shows how much of it was read.
            let percent = line.split(separator: " ").first { $0.hasSuffix("%") }.flatMap { Int($0.dropLast()) }
            #expect(percent != nil, "no percent in \(line.debugDescription)")
            if let percent { percents.append(percent) }
        }
        #expect(percents == percents.sorted(), "the percent went back: \(percents)")
        #expect(percents.allSatisfy { (0...100).contains($0) })
        let last = try #require(redraws.last)
        #expect(
            last.hasPrefix("step 1 import Person from "),
            "the last progress line was not cleared: \(last.debugDescription)")
        #expect(last.contains("read 300,000, inserted 300,000"), "\(last.debugDescription)")
    }
}
