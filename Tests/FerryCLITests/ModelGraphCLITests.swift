import FerryTestSupport
import Foundation
import Testing

/// `ferry model graph` through the real binary: the same text as the renderers' golden files
/// (`Tests/FerryPipelineTests/Fixtures/diagrams`), for a model bundle, an Xcode model and a
/// store; SVG through Graphviz, and a clear error without it.
@Suite("ferry model graph")
struct ModelGraphCLITests {
    static func golden(_ name: String) throws -> String {
        try String(
            contentsOf: TestPaths.packageRoot.appendingPathComponent(
                "Tests/FerryPipelineTests/Fixtures/diagrams/\(name)"),
            encoding: .utf8)
    }

    @Test("Mermaid on standard output by default; DOT to --output")
    func formats() throws {
        let mermaid = try runFerry(["model", "graph", Fixtures.repository("samples/models/Shop")])
        #expect(mermaid.exitCode == 0, "\(mermaid)")
        #expect(mermaid.stderr == "")
        #expect(mermaid.stdout == (try Self.golden("shop.mmd")))

        let directory = TemporaryDirectory("ferry-model-graph")
        let output = directory.url.appendingPathComponent("library.dot").path
        let dot = try runFerry([
            "model", "graph", Fixtures.repository("samples/coredata/Library.xcdatamodeld"), "--format", "dot",
            "--output", output,
        ])
        #expect(dot.exitCode == 0, "\(dot)")
        #expect(dot.stdout == "")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == (try Self.golden("library.dot")))
    }

    @Test("a store is drawn with the model it records")
    func store() throws {
        let fromStore = try runFerry(["model", "graph", Fixtures.repository("samples/snapshots/shop-v2.sqlite")])
        let fromModel = try runFerry(["model", "graph", Fixtures.repository("samples/models/Shop"), "--version", "2"])
        #expect(fromStore.exitCode == 0, "\(fromStore)")
        #expect(fromModel.exitCode == 0, "\(fromModel)")
        #expect(fromStore.stdout.hasPrefix("---\ntitle: Shop 2\n---\nclassDiagram\n"))
        #expect(fromStore.stdout == fromModel.stdout)
    }

    @Test("an unknown version is a usage error naming the versions")
    func unknownVersion() throws {
        let result = try runFerry(["model", "graph", Fixtures.repository("samples/models/Shop"), "--version", "4"])
        #expect(result.exitCode == 64)
        #expect(result.stdout == "")
        #expect(result.stderr.contains("--version 4: model Shop has no version '4' (versions: 1, 2, 3)"), "\(result)")
    }

    @Test(
        "svg through Graphviz, named on standard error",
        .enabled(if: Graphviz.shouldRun, Comment(rawValue: Graphviz.skipReason)))
    func svg() throws {
        let dot = try #require(Graphviz.executable, "CI=true but Graphviz's dot is not on PATH")
        let result = try runFerry(["model", "graph", Fixtures.repository("samples/models/Shop"), "--format", "svg"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr == "ferry: SVG drawn by Graphviz (\(dot) -Tsvg)\n")
        #expect(result.stdout.contains("<svg"))
        for entity in ["Customer", "Brand", "Product", "Order", "LineItem", "Review"] {
            #expect(result.stdout.contains(">\(entity)<"), "\(entity) is not in the SVG")
        }
    }

    @Test("svg without Graphviz: exit 64, saying to install it or use mermaid or dot; nothing written")
    func svgWithoutGraphviz() throws {
        let directory = TemporaryDirectory("ferry-model-graph-nodot")
        let output = directory.url.appendingPathComponent("shop.svg").path
        let result = try runFerry(
            ["model", "graph", Fixtures.repository("samples/models/Shop"), "--format", "svg", "--output", output],
            env: ["PATH": directory.url.path])
        #expect(result.exitCode == 64, "\(result)")
        #expect(
            result.stderr
                == "error: --format svg needs Graphviz's 'dot' on PATH, and there is none: install graphviz (apt-get install graphviz, brew install graphviz), or use --format mermaid or --format dot\n"
        )
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
