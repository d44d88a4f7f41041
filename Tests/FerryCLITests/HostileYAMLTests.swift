import FerryTestSupport
import Foundation
import Testing

/// YAML files that made ferry grow memory without bound (alias expansion), crash (deep nesting)
/// or run unbounded: each is refused before any tree is built, with a located error and exit 64.
@Suite("hostile YAML definitions")
struct HostileYAMLTests {
    static let model = """
        name: Shop
        entities:
          Customer:
            attributes:
              id: {type: int64, optional: false, unique: true}
              age: int16
        """

    func directory(job: String) throws -> TemporaryDirectory {
        let directory = TemporaryDirectory("ferry-cli-hostile-yaml")
        try directory.write("shop.yml", Self.model)
        try directory.write("job.yml", job)
        return directory
    }

    func validate(_ job: String) throws -> ProcessResult {
        let directory = try directory(job: job)
        return try runFerry(["validate", "job.yml"], cwd: directory.path, timeout: .seconds(60))
    }

    /// The classic "billion laughs": nine levels of nine aliases each (9⁹ strings once expanded).
    static func laughs(levels: Int) -> String {
        var lines = [#"lol0: &lol0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]"#]
        for level in 1..<levels {
            let aliases = Array(repeating: "*lol\(level - 1)", count: 9).joined(separator: ", ")
            lines.append("lol\(level): &lol\(level) [\(aliases)]")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test("a billion laughs is refused at the alias that expands it beyond 200,000 values, in milliseconds")
    func billionLaughs() throws {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try validate(Self.laughs(levels: 9) + "store: shop.sqlite\nmodel: shop.yml\nsteps: []\n")
        #expect(clock.now - start < .seconds(20))
        #expect(result.exitCode == 64, "\(result)")
        #expect(!result.wasSignaled)
        // lol4 holds 66,430 values: the second alias of line 6 takes the file beyond the budget.
        #expect(
            result.stderr.contains(
                "job.yml:6:21: error: YAML document is too large: more than 200000 values once its aliases are expanded"
            ),
            "\(result.stderr)")
    }

    @Test("an alias used as a mapping key is counted like any other")
    func aliasAsKey() throws {
        // Five levels make about 75,000 values; each alias of lol4 adds 66,430 more: the second goes beyond.
        let result = try validate(
            Self.laughs(levels: 5) + "store: shop.sqlite\nmodel: shop.yml\nsteps: []\nk: {*lol4: 1, *lol4: 2}\n")
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.contains("job.yml:9:15: error: YAML document is too large"), "\(result.stderr)")
    }

    @Test("more than 100 alias uses are refused at the 101st")
    func tooManyAliases() throws {
        let aliases = Array(repeating: "*w", count: 101).joined(separator: ",")
        let result = try validate("w: &w x\nstore: shop.sqlite\nmodel: shop.yml\nsteps: []\nother: [\(aliases)]\n")
        #expect(result.exitCode == 64, "\(result)")
        // `other: [` is 8 columns, then 100 aliases of 3 columns each.
        #expect(
            result.stderr.contains("job.yml:5:309: error: too many YAML aliases: more than 100 in one file"),
            "\(result.stderr)")
    }

    @Test("anchors and aliases within the budget still work")
    func aliasesWithinBudget() throws {
        let result = try validate(
            """
            store: shop.sqlite
            model: shop.yml
            steps:
              - delete: &purge {entity: Customer, where: &adults "age >= 18"}
              - delete: {entity: Customer, where: *adults}
              - delete: *purge
            """)
        #expect(result.exitCode == 0, "\(result)")
    }

    @Test("lists nested 65 deep (flow) or 100,000 deep, and mappings 70 deep (block), are located errors")
    func deepNesting() throws {
        let message = "error: YAML is nested too deeply: more than 64 levels of mappings and lists"
        let flow = try validate(
            "store: shop.sqlite\nmodel: shop.yml\nsteps: " + String(repeating: "[", count: 65)
                + String(repeating: "]", count: 65) + "\n")
        #expect(flow.exitCode == 64, "\(flow)")
        // The 65th '[' (the document's mapping is the first level): column 8 + 64.
        #expect(flow.stderr.contains("job.yml:3:71: \(message)"), "\(flow.stderr)")
        let huge = try validate(
            "store: shop.sqlite\nmodel: shop.yml\nsteps: " + String(repeating: "[", count: 100_000)
                + String(repeating: "]", count: 100_000) + "\n")
        #expect(huge.exitCode == 64, "\(huge)")
        #expect(!huge.wasSignaled)
        #expect(huge.stderr.contains("job.yml:3:"), "\(huge.stderr)")
        #expect(huge.stderr.contains(message), "\(huge.stderr)")
        var block = "store: shop.sqlite\nmodel: shop.yml\nsteps:\n"
        for level in 1...70 { block += String(repeating: "  ", count: level) + "k:\n" }
        let blockResult = try validate(block)
        #expect(blockResult.exitCode == 64, "\(blockResult)")
        #expect(blockResult.stderr.contains("job.yml:67:129: \(message)"), "\(blockResult.stderr)")
    }

    @Test("a YAML file over 4 MiB is refused where the limit falls, without reading the rest")
    func hugeFile() throws {
        let directory = try directory(
            job: "store: shop.sqlite\nmodel: shop.yml\nsteps: []\n# " + String(repeating: "x", count: 5 << 20) + "\n")
        let result = try runFerry(["validate", "job.yml"], cwd: directory.path)
        #expect(result.exitCode == 64, "\(result)")
        // Three short lines (45 bytes) come first; byte 4,194,304 is on line 4.
        #expect(
            result.stderr.contains("job.yml:4:4194260: error: YAML file is too large: more than 4 MiB"),
            "\(result.stderr)")
    }

    @Test("a job with 1,001 steps is refused at its steps list")
    func tooManySteps() throws {
        let steps = String(repeating: "  - delete: {entity: Customer, where: \"age > 1\"}\n", count: 1_001)
        let result = try validate("store: shop.sqlite\nmodel: shop.yml\nsteps:\n" + steps)
        #expect(result.exitCode == 64, "\(result)")
        #expect(
            result.stderr.contains("job.yml:4:3: error: the job has 1001 steps; at most 1000 are allowed"),
            "\(result.stderr)")
    }

    @Test("a model with 1,001 entities, or an entity with 1,001 attributes, is refused by ferry model show")
    func tooManyEntitiesAndAttributes() throws {
        let directory = TemporaryDirectory("ferry-cli-hostile-model")
        var entities = "name: Big\nentities:\n"
        for index in 0...1_000 { entities += "  E\(index):\n    attributes: {a: string}\n" }
        try directory.write("entities.yml", entities)
        let manyEntities = try runFerry(["model", "show", "entities.yml"], cwd: directory.path)
        #expect(manyEntities.exitCode == 64, "\(manyEntities)")
        #expect(
            manyEntities.stderr.contains(
                "entities.yml:3:3: error: the model has 1001 entities; at most 1000 are allowed"),
            "\(manyEntities.stderr)")

        var attributes = "name: Wide\nentities:\n  Wide:\n    attributes:\n"
        for index in 0...1_000 { attributes += "      a\(index): string\n" }
        try directory.write("attributes.yml", attributes)
        let manyAttributes = try runFerry(["model", "show", "attributes.yml"], cwd: directory.path)
        #expect(manyAttributes.exitCode == 64, "\(manyAttributes)")
        #expect(
            manyAttributes.stderr.contains(
                "attributes.yml:3:3: error: entity 'Wide' has 1001 attributes and relationships; at most 1000 are allowed"
            ),
            "\(manyAttributes.stderr)")
    }
}
