import FerryTestSupport
import Foundation
import Testing

/// The text ferry prints, pinned: each case runs the binary and compares its exit code, standard
/// output and standard error with `Fixtures/snapshots/NAME.txt`. Paths of temporary folders,
/// timestamps, durations and rates are replaced by placeholders first.
///
/// After a deliberate change of ferry's output, re-record with
/// `FERRY_RECORD_SNAPSHOTS=1 swift test --filter OutputSnapshotTests` and review the diff.
@Suite struct OutputSnapshotTests {
    static let snapshots = Fixtures.root.appendingPathComponent("snapshots")

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var arguments: [String]
        /// Files copied into the scratch folder first (repository path → name there).
        var copies: [(String, String)] = []
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "help", arguments: ["--help"]),
        Case(name: "model-show-shop", arguments: ["model", "show", "samples/models/Shop"]),
        Case(
            name: "model-diff-shop-1-2",
            arguments: ["model", "diff", "samples/models/Shop", "--from", "1", "--to", "2"]),
        Case(
            name: "model-diff-shop-2-3",
            arguments: ["model", "diff", "samples/models/Shop", "--from", "2", "--to", "3"]),
        Case(name: "validate-import-shop", arguments: ["validate", "pipelines/import-shop.yml"]),
        Case(
            name: "verify-shop-v2", arguments: ["verify", "$SCRATCH/shop.sqlite", "--checks", "all"],
            copies: [("samples/snapshots/shop-v2.sqlite", "shop.sqlite")]),
        Case(
            name: "verify-shop-v2-against-v3",
            arguments: ["verify", "$SCRATCH/shop.sqlite", "--model", "samples/models/Shop", "--checks", "cheap"],
            copies: [("samples/snapshots/shop-v2.sqlite", "shop.sqlite")]),
        Case(
            name: "store-info-shop-v1", arguments: ["store", "info", "$SCRATCH/shop.sqlite"],
            copies: [("samples/snapshots/shop-v1.sqlite", "shop.sqlite")]),
        Case(
            name: "export-where-syntax-error",
            arguments: [
                "export", "--store", "$SCRATCH/shop.sqlite", "--model", "samples/models/Shop", "--entity", "Customer",
                "--format", "csv", "--where", "email ==[c] AND",
            ],
            copies: [("samples/snapshots/shop-v2.sqlite", "shop.sqlite")]),
        Case(
            name: "import-missing-model",
            arguments: [
                "import", "samples/data/customers.csv", "--store", "$SCRATCH/x.sqlite", "--model",
                "samples/models/Nope", "--entity", "Customer",
            ]),
        Case(
            name: "validate-bad-job", arguments: ["validate", "$SCRATCH/job.yml"],
            copies: [("Tests/FerryCLITests/Fixtures/snapshots/bad-job.yml.in", "job.yml")]),
    ]

    @Test(arguments: cases)
    func outputMatchesItsSnapshot(_ testCase: Case) throws {
        let scratch = TemporaryDirectory("ferry-snapshot")
        for (from, to) in testCase.copies {
            try FileManager.default.copyItem(
                atPath: Fixtures.repository(from), toPath: scratch.url.appendingPathComponent(to).path)
        }
        let arguments = testCase.arguments.map { $0.replacingOccurrences(of: "$SCRATCH", with: scratch.url.path) }
        let result = try runFerry(arguments, cwd: TestPaths.packageRoot.path, env: ["COLUMNS": "100", "NO_COLOR": "1"])
        let actual = Self.normalized(
            "exit \(result.exitCode)\n--- stdout\n\(result.stdout)--- stderr\n\(result.stderr)",
            scratch: scratch.url.path)
        let file = Self.snapshots.appendingPathComponent("\(testCase.name).txt")
        if ProcessInfo.processInfo.environment["FERRY_RECORD_SNAPSHOTS"] == "1" {
            try FileManager.default.createDirectory(at: Self.snapshots, withIntermediateDirectories: true)
            try actual.write(to: file, atomically: true, encoding: .utf8)
            return
        }
        let expected = try #require(
            try? String(contentsOf: file, encoding: .utf8),
            "no snapshot \(file.lastPathComponent); record it with FERRY_RECORD_SNAPSHOTS=1")
        #expect(
            actual == expected,
            "\(testCase.name): ferry's output differs from \(file.lastPathComponent)\n\(Self.diff(expected, actual))")
    }

    /// Text with the parts that change from run to run replaced: the scratch folder, times,
    /// durations and rates.
    static func normalized(_ text: String, scratch: String) -> String {
        var text = text.replacingOccurrences(of: scratch, with: "<scratch>")
        let rules: [(String, String)] = [
            (#"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?"#, "<time>"),
            (#"\d[\d,]*(\.\d+)?\s?(ms|s|µs|rec/s|records/s|MiB|KiB|MB|KB)\b"#, "<n $2>"),
        ]
        for (pattern, template) in rules {
            let expression = try! NSRegularExpression(pattern: pattern)
            text = expression.stringByReplacingMatches(
                in: text, range: NSRange(text.startIndex..., in: text), withTemplate: template)
        }
        return text
    }

    /// The first differing line of two texts, for the failure message.
    static func diff(_ expected: String, _ actual: String) -> String {
        let want = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let got = actual.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(want.count, got.count) {
            let w = index < want.count ? String(want[index]) : "<none>"
            let g = index < got.count ? String(got[index]) : "<none>"
            if w != g { return "line \(index + 1):\n  expected: \(w)\n  actual:   \(g)" }
        }
        return "(no line differs)"
    }
}
