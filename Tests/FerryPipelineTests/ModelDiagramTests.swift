import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// `ferry model graph`'s renderers: Mermaid and DOT text of real models, kept as golden files in
/// `Fixtures/diagrams` (re-record with `FERRY_RECORD_SNAPSHOTS=1` and review the diff), and every
/// DOT text drawn by Graphviz.
@Suite("model diagrams: Mermaid and DOT")
struct ModelDiagramTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var model: String
        var testDescription: String { name }
    }

    static let cases = [
        Case(name: "shop", model: TestPaths.packageRoot.appendingPathComponent("samples/models/Shop").path),
        Case(
            name: "library",
            model: TestPaths.packageRoot.appendingPathComponent("samples/coredata/Library.xcdatamodeld").path),
        Case(name: "inheritance", model: Fixtures.path("xcode/Inheritance.xcdatamodeld")),
    ]

    static let goldenFolder = Fixtures.root.appendingPathComponent("diagrams")

    /// `text` equals the golden file `name`, or is recorded there under `FERRY_RECORD_SNAPSHOTS=1`.
    static func expectGolden(_ text: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let problem = try Golden.mismatch(text, file: goldenFolder.appendingPathComponent(name))
        #expect(problem == nil, "\(problem ?? "")", sourceLocation: sourceLocation)
    }

    @Test("Mermaid text matches the golden file", arguments: cases)
    func mermaid(_ testCase: Case) throws {
        let model = try ModelLoader().load(path: testCase.model).current
        let text = MermaidDiagram.render(ModelDiagram(model: model))
        try Self.expectGolden(text, "\(testCase.name).mmd")
        // Every entity is a class, every sub-entity points at its parent.
        for entity in model.entities {
            #expect(text.contains("    class \(entity.name)"), "\(entity.name) is not drawn")
            if let parent = entity.parent { #expect(text.contains("    \(parent) <|-- \(entity.name)\n")) }
        }
    }

    @Test("DOT text matches the golden file", arguments: cases)
    func dot(_ testCase: Case) throws {
        let model = try ModelLoader().load(path: testCase.model).current
        try Self.expectGolden(DOTDiagram.render(ModelDiagram(model: model)), "\(testCase.name).dot")
    }

    @Test(
        "Graphviz draws every golden DOT file, with every entity",
        .enabled(if: Graphviz.shouldRun, Comment(rawValue: Graphviz.skipReason)),
        arguments: cases)
    func graphvizDrawsGoldenFiles(_ testCase: Case) throws {
        let model = try ModelLoader().load(path: testCase.model).current
        let text = try String(
            contentsOf: Self.goldenFolder.appendingPathComponent("\(testCase.name).dot"), encoding: .utf8)
        let svg = try Graphviz.svg(text)
        for entity in model.entities { #expect(svg.contains(">\(entity.name)<"), "\(entity.name) is not in the SVG") }
    }

    @Test(
        "the wibosco chain (shared data): the newest version with every change from the first marked",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
    func wiboscoChain() throws {
        let root = try #require(SharedData.root, "CI=true but \(SharedData.skipReason)")
        let bundle = try ModelLoader().load(
            path: root.appendingPathComponent(
                "coredata/wibosco-CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"
            ).path)
        let path = bundle.versions
        let first = try #require(path.first)
        let last = try #require(path.last)
        let coverage = try zip(path, path.dropFirst()).map { from, to in
            try MigrationMappings.stepMapping(from: from, to: to, in: bundle).map(MappingCoverage.init) ?? .none
        }
        let diagram = ModelDiagram(
            diff: ModelDiff(from: first, to: last, through: Array(path.dropFirst().dropLast())), older: first,
            newer: last, coverage: MappingCoverage(merging: coverage))
        try Self.expectGolden(MermaidDiagram.render(diagram), "wibosco-chain.mmd")
        let dot = DOTDiagram.render(diagram)
        try Self.expectGolden(dot, "wibosco-chain.dot")
        if Graphviz.shouldRun { #expect(try Graphviz.svg(dot).contains("<svg")) }
    }

    @Test("each relationship pair is drawn once, with both multiplicities and delete rules")
    func relationshipsOnce() throws {
        let shop = try ModelLoader().load(path: Self.cases[0].model).current
        let diagram = ModelDiagram(model: shop)
        let declared = shop.entities.reduce(0) { $0 + $1.relationships.count }
        let ends = diagram.relationships.reduce(0) { $0 + 1 + ($1.inverse == nil ? 0 : 1) }
        #expect(ends == declared)
        let orders = try #require(diagram.relationships.first { $0.forward.name == "orders" })
        #expect(orders.forward.entity == "Customer" && orders.destination == "Order")
        #expect(orders.text == "orders (deny) / customer (nullify)")
        #expect(orders.forward.multiplicity == "0..*")
        #expect(orders.inverse?.multiplicity == "1")
        #expect(
            MermaidDiagram.render(diagram).contains(
                "    Customer \"1\" -- \"0..*\" Order : orders (deny) / customer (nullify)\n"))
    }

    @Test("marks colour the marked parts and add a legend")
    func marks() throws {
        var diagram = ModelDiagram(model: try ModelLoader().load(path: Self.cases[0].model).current)
        diagram.entities[0].mark = DiagramMark(kind: .changed, origin: .mapped, detail: "full_name split")
        diagram.entities[0].attributes[2].mark = DiagramMark(kind: .added, origin: .mapped, detail: "added")
        diagram.legend = [.added, .changed]
        let mermaid = MermaidDiagram.render(diagram)
        #expect(mermaid.contains("        first_name: string [added, mapped]\n"))
        #expect(mermaid.contains("    style Customer fill:#fdf0c4,stroke:#b26a00\n"))
        #expect(mermaid.contains("    note \"Legend: [added] green, [changed] yellow"))
        let dot = DOTDiagram.render(diagram)
        #expect(dot.contains("<td align=\"left\" bgcolor=\"#d9f2d9\">first_name: string [added, mapped]</td>"))
        #expect(dot.contains("\"legend\" [label=<"))
        if Graphviz.shouldRun { #expect(try Graphviz.svg(dot).contains("<svg")) }
    }
}
