import FerryTestSupport
import Foundation
import Testing

/// `ferry model diff --format mermaid|dot|html`: the newer version drawn with every change
/// marked (added, removed, renamed, changed) and whether inference or the step's mapping makes
/// it. Golden files in `Fixtures/diagrams` (re-record with `FERRY_RECORD_SNAPSHOTS=1`).
@Suite("ferry model diff: pictures")
struct ModelDiffPictureCLITests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/diagrams")

    static func expectGolden(_ text: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let problem = try Golden.mismatch(text, file: folder.appendingPathComponent(name))
        #expect(problem == nil, "\(problem ?? "")", sourceLocation: sourceLocation)
    }

    var shop: String { Fixtures.repository("samples/models/Shop") }

    @Test("Shop 1 → 3 in Mermaid: inferred and mapped changes marked, with a legend")
    func mermaid() throws {
        let result = try runFerry(["model", "diff", shop, "--from", "1", "--to", "3", "--format", "mermaid"])
        // 2 → 3 is not lightweight: the exit code says so whatever the format.
        #expect(result.exitCode == 65, "\(result)")
        #expect(result.stderr == "")
        try Self.expectGolden(result.stdout, "shop-1-to-3.mmd")
        let text = result.stdout
        #expect(text.contains("title: Shop 1 → 3\n"))
        #expect(text.contains("        first_name: string [added, mapped]\n"))
        // Version 1's name (full_name in version 2) is gone: version 3 splits it in two.
        #expect(text.contains("        name: string [removed, inferred]\n"))
        #expect(text.contains("    style Brand fill:#d9f2d9,stroke:#2e7d32\n"))
        #expect(text.contains("    note \"Legend: "))
    }

    @Test("a lightweight step: every mark inferred, exit 0; DOT accepted by Graphviz")
    func dot() throws {
        let result = try runFerry(["model", "diff", shop, "--from", "1", "--to", "2", "--format", "dot"])
        #expect(result.exitCode == 0, "\(result)")
        try Self.expectGolden(result.stdout, "shop-1-to-2.dot")
        #expect(!result.stdout.contains("mapped]"))
        #expect(result.stdout.contains("[renamed, inferred]"))
        if Graphviz.shouldRun { #expect(try Graphviz.svg(result.stdout).contains("<svg")) }
    }

    @Test("HTML: one self-contained, well-formed page with the picture and every change")
    func html() throws {
        let directory = TemporaryDirectory("ferry-diff-html")
        let output = directory.url.appendingPathComponent("diff.html").path
        let result = try runFerry([
            "model", "diff", shop, "--from", "1", "--to", "3", "--format", "html", "--output", output,
        ])
        #expect(result.exitCode == 65, "\(result)")
        #expect(result.stdout == "")
        let page = try String(contentsOfFile: output, encoding: .utf8)
        #expect(HTMLCheck.problems(in: page) == [])
        #expect(page.hasPrefix("<!DOCTYPE html>\n"))
        #expect(page.contains("<h2>Shop 1 → 2 <span class=\"note\">"))
        #expect(page.contains("<h2>Shop 2 → 3 <span class=\"note\">"))
        #expect(page.contains("<td>first_name</td>"))
        #expect(page.contains("<p>Migrates with the steps&apos; mappings: "))
        if let dot = Graphviz.executable {
            #expect(result.stderr == "ferry: picture drawn by Graphviz (\(dot) -Tsvg)\n")
            #expect(page.contains("<svg"))
        } else {
            #expect(page.contains("<pre>---&#10;title: Shop 1 → 3&#10;"))
        }
    }

    @Test("HTML without Graphviz: the Mermaid text instead, said on standard error")
    func htmlWithoutGraphviz() throws {
        let directory = TemporaryDirectory("ferry-diff-html-nodot")
        let result = try runFerry(
            ["model", "diff", shop, "--from", "1", "--to", "2", "--format", "html"], env: ["PATH": directory.url.path])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr == "ferry: Graphviz's dot is not on PATH: the page shows the picture as Mermaid text\n")
        #expect(HTMLCheck.problems(in: result.stdout) == [])
        #expect(result.stdout.contains("<pre>---&#10;title: Shop 1 → 2&#10;"))
        #expect(!result.stdout.contains("<svg"))
    }

    @Test("text and JSON are as before; --json with another --format is a usage error")
    func formats() throws {
        let text = try runFerry(["model", "diff", shop, "--from", "1", "--to", "2"])
        let explicit = try runFerry(["model", "diff", shop, "--from", "1", "--to", "2", "--format", "text"])
        #expect(text.stdout == explicit.stdout && text.exitCode == explicit.exitCode)
        let json = try runFerry(["model", "diff", shop, "--from", "1", "--to", "2", "--json"])
        let jsonFormat = try runFerry(["model", "diff", shop, "--from", "1", "--to", "2", "--format", "json"])
        #expect(json.stdout == jsonFormat.stdout)
        let both = try runFerry(["model", "diff", shop, "--from", "1", "--json", "--format", "dot"])
        #expect(both.exitCode == 64)
        #expect(both.stderr.contains("--json and --format dot ask for two outputs; give one"), "\(both)")
    }

    @Test("--output naming one of the compared models is refused; the model is untouched")
    func outputOverModelRefused() throws {
        let dir = TemporaryDirectory()
        let old = try dir.write("old.yml", "version: \"1\"\nentities:\n  Book:\n    attributes:\n      title: string\n")
        let new = try dir.write(
            "new.yml", "version: \"2\"\nentities:\n  Book:\n    attributes:\n      title: string\n      pages: int64\n")
        let before = try String(contentsOfFile: new, encoding: .utf8)
        for format in ["html", "mermaid", "text"] {
            let result = try runFerry(["model", "diff", old, new, "--format", format, "--output", new])
            #expect(result.exitCode == 64, "\(format): \(result)")
            #expect(result.stderr.contains("refusing to write --output"), "\(result)")
            #expect(try String(contentsOfFile: new, encoding: .utf8) == before)
        }
    }
}
