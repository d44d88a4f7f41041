import FerryTestSupport
import Foundation
import Testing

/// The migration policies article (docs/migration-policies.md, a DocC article too) shows only code that compiles: each of its Swift
/// blocks is a part of a source file that ferry's build (the test policies executable) or CI
/// (the samples, built by their run-sample.sh) compiles, compared with blanks collapsed.
@Suite("the migration policies article's examples are compiled code")
struct PolicyArticleTests {
    static let root = TestPaths.packageRoot.path
    static let article = root + "/docs/migration-policies.md"
    static let compiled = [
        "Tests/FerryTestPolicies", "samples/custom-policy/Sources/shop-ferry",
        "samples/coredata-migration/Sources/revised-ferry",
    ]

    /// Text with every run of blanks and line breaks made one space.
    static func collapsed(_ text: some StringProtocol) -> String {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).joined(separator: " ")
    }

    /// The article's fenced blocks marked `swift`.
    static func swiftBlocks(of markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    @Test("every Swift block of the article is in a compiled source file")
    func blocksCompile() throws {
        let markdown = try String(contentsOfFile: Self.article, encoding: .utf8)
        let blocks = Self.swiftBlocks(of: markdown)
        #expect(blocks.count >= 6, "the article's examples were found: \(blocks.count)")
        var sources = ""
        for folder in Self.compiled {
            let path = Self.root + "/" + folder
            for name in try FileManager.default.contentsOfDirectory(atPath: path) where name.hasSuffix(".swift") {
                sources += try String(contentsOfFile: path + "/" + name, encoding: .utf8) + "\n"
            }
        }
        let compiled = Self.collapsed(sources)
        for block in blocks {
            #expect(compiled.contains(Self.collapsed(block)), "not in a compiled file:\n\(block)")
        }
    }
}
