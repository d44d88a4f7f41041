import FerryTestSupport
import Foundation
import Testing

/// Predicates, update expressions and mapping expressions that crashed ferry (deep recursion) or
/// failed with a raw SQLite error: each is now a located error with exit 64, and input at the
/// limits still runs through SQLite.
@Suite("hostile predicates and expressions", .serialized)
struct HostileSyntaxTests {
    /// The shop of the update and delete tests: customers 1–3 (ages 34, 19, 52), orders of 1 and 2.
    func makeStore() throws -> TemporaryDirectory { try MutationCLITests().makeStore() }

    static let everyone = "id,email,age\r\n1,Ann@X.io,34\r\n2,bob@x.io,19\r\n3,CY@x.io,52\r\n"

    func export(
        _ predicate: String, entity: String = "Customer", in directory: TemporaryDirectory
    ) throws -> ProcessResult {
        try runFerry(
            [
                "export", "--store", "shop.sqlite", "--entity", entity, "--where", predicate, "--format", "csv",
                "--quiet",
            ],
            cwd: directory.path)
    }

    func update(_ expression: String, in directory: TemporaryDirectory) throws -> ProcessResult {
        try runFerry(
            [
                "update", "--store", "shop.sqlite", "--entity", "Customer", "--where", "age > 1", "--set",
                "age==\(expression)", "--dry-run",
            ],
            cwd: directory.path)
    }

    static func repeated(_ text: String, _ count: Int) -> String { String(repeating: text, count: count) }

    static let predicateTooDeep =
        "error: predicate is nested too deeply: more than 16 levels of parentheses, NOT, SUBQUERY, CAST and lists"
    static let updateTooDeep =
        "error: expression is nested too deeply: more than 16 levels of parentheses, not, ? :, function calls and chained operators"

    // MARK: - Predicates

    @Test("--where with 10,000 NOTs, or 17, is a located error; 16 run through SQLite")
    func deepNot() throws {
        let directory = try makeStore()
        let atLimit = try export(Self.repeated("NOT ", 16) + "age < 100", in: directory)
        #expect(atLimit.exitCode == 0, "\(atLimit)")
        #expect(atLimit.stdout == Self.everyone)
        let over = try export(Self.repeated("NOT ", 17) + "age > 100", in: directory)
        #expect(over.exitCode == 64, "\(over)")
        // The 17th NOT is at column 1 + 16 × 4.
        #expect(over.stderr.contains("--where:1:65: \(Self.predicateTooDeep)"), "\(over.stderr)")
        // 10,000 NOTs (a crash before) are more tokens than a predicate may have: the 10,001st is refused.
        let huge = try export(Self.repeated("NOT ", 10_000) + "age > 100", in: directory)
        #expect(huge.exitCode == 64, "\(huge)")
        #expect(!huge.wasSignaled)
        #expect(
            huge.stderr.contains("--where:1:40001: error: predicate is too long: more than 10000 tokens"),
            "\(huge.stderr)")
    }

    @Test("parentheses around AND and OR: 16 levels run, 17 and 30,000 are located errors")
    func deepParentheses() throws {
        let directory = try makeStore()
        let atLimit = try export(
            "age > 1" + Self.repeated(" AND (age > 1 OR (age > 1", 8) + Self.repeated("))", 8), in: directory)
        #expect(atLimit.exitCode == 0, "\(atLimit)")
        let over = try export(
            "age > 1" + Self.repeated(" AND (age > 1 OR (age > 1", 8) + " AND (age > 1" + Self.repeated(")", 17),
            in: directory)
        #expect(over.exitCode == 64, "\(over)")
        #expect(over.stderr.contains(Self.predicateTooDeep), "\(over.stderr)")
        let huge = try export(Self.repeated("(", 30_000) + "age > 1" + Self.repeated(")", 30_000), in: directory)
        #expect(huge.exitCode == 64, "\(huge)")
        #expect(huge.stderr.contains("error: predicate is too long: more than 10000 tokens"), "\(huge.stderr)")
        #expect(huge.stderr.contains("--where:1:10001: "), "\(huge.stderr)")
    }

    @Test("100,000 nested parentheses in a job's where: is a located error from ferry validate")
    func deepParenthesesInJob() throws {
        let directory = try makeStore()
        let predicate = Self.repeated("(", 100_000) + "age > 1" + Self.repeated(")", 100_000)
        try directory.write(
            "purge.yml",
            """
            store: shop.sqlite
            model: shop.yml
            steps:
              - delete: {entity: Customer, where: "\(predicate)"}
            """)
        let result = try runFerry(["validate", "purge.yml"], cwd: directory.path)
        #expect(result.exitCode == 64, "\(result)")
        #expect(!result.wasSignaled)
        // The quoted value's text starts at column 40 of line 4; its 10,001st token is 10,000 columns on.
        #expect(
            result.stderr.contains("purge.yml:4:10040: error: predicate is too long: more than 10000 tokens"),
            "\(result.stderr)")
    }

    @Test("SUBQUERY counts four levels: 4 nested run (export and delete), 5 are a located error")
    func nestedSubqueries() throws {
        let directory = try makeStore()
        func nested(_ count: Int) -> String {
            Self.repeated("SUBQUERY(orders, $o, ", count) + "TRUEPREDICATE" + Self.repeated(").@count > 0", count)
        }
        let exported = try export(nested(4), in: directory)
        #expect(exported.exitCode == 0, "\(exported)")
        #expect(exported.stdout == "id,email,age\r\n1,Ann@X.io,34\r\n2,bob@x.io,19\r\n")
        let deleted = try runFerry(
            ["delete", "--store", "shop.sqlite", "--entity", "Customer", "--where", nested(4), "--dry-run"],
            cwd: directory.path)
        #expect(deleted.exitCode == 0, "\(deleted)")
        let over = try export(nested(5), in: directory)
        #expect(over.exitCode == 64, "\(over)")
        #expect(over.stderr.contains("--where:1:85: \(Self.predicateTooDeep)"), "\(over.stderr)")
    }

    @Test("500 comparisons run; 501 are a located error instead of SQLite's expression depth error")
    func flatComparisons() throws {
        let directory = try makeStore()
        let atLimit = try export(Array(repeating: "age > 20", count: 500).joined(separator: " OR "), in: directory)
        #expect(atLimit.exitCode == 0, "\(atLimit)")
        #expect(atLimit.stdout == "id,email,age\r\n1,Ann@X.io,34\r\n3,CY@x.io,52\r\n")
        let over = try export(Array(repeating: "age > 20", count: 2_000).joined(separator: " OR "), in: directory)
        #expect(over.exitCode == 64, "\(over)")
        // Comparison 501 starts 500 × 12 columns in.
        #expect(
            over.stderr.contains(
                "--where:1:6001: error: predicate is too long: more than 500 comparisons; use IN {…} for a list of values"
            ),
            "\(over.stderr)")
        #expect(!over.stderr.contains("SQLite"))
    }

    // MARK: - Update expressions

    @Test("update --set: a flat 1,000-term chain and 700 nested parentheses are located errors")
    func deepUpdateExpressions() throws {
        let directory = try makeStore()
        let flat = try update("age" + Self.repeated("+0", 999), in: directory)
        #expect(flat.exitCode == 64, "\(flat)")
        #expect(!flat.wasSignaled)
        // `age==` is 5 columns; the 17th '+' follows "age" and 16 "+0".
        #expect(flat.stderr.contains("--set #1:1:41: \(Self.updateTooDeep)"), "\(flat.stderr)")
        let nested = try update(Self.repeated("(", 700) + "age" + Self.repeated(")", 700), in: directory)
        #expect(nested.exitCode == 64, "\(nested)")
        #expect(nested.stderr.contains("--set #1:1:22: \(Self.updateTooDeep)"), "\(nested.stderr)")
        let long = try update(Self.repeated("-", 30_000) + "age", in: directory)
        #expect(long.exitCode == 64, "\(long)")
        #expect(
            long.stderr.contains("--set #1:1:10006: error: expression is too long: more than 10000 tokens"),
            "\(long.stderr)")
    }

    @Test("update --set at the limits runs through SQLite: 16 chained terms, 16 nested coalesce, 100 arguments")
    func updateExpressionsAtTheLimits() throws {
        let directory = try makeStore()
        let flat = try update("age" + Self.repeated("+0", 16), in: directory)
        #expect(flat.exitCode == 0, "\(flat)")
        let calls = try update(Self.repeated("coalesce(age, ", 16) + "age" + Self.repeated(")", 16), in: directory)
        #expect(calls.exitCode == 0, "\(calls)")
        let arguments = try update(
            "coalesce(" + Array(repeating: "age", count: 100).joined(separator: ", ") + ")", in: directory)
        #expect(arguments.exitCode == 0, "\(arguments)")
        let tooMany = try update(
            "coalesce(" + Array(repeating: "age", count: 200).joined(separator: ", ") + ")", in: directory)
        #expect(tooMany.exitCode == 64, "\(tooMany)")
        #expect(tooMany.stderr.contains("error: coalesce() has too many arguments: more than 100"), "\(tooMany.stderr)")
        #expect(!tooMany.stderr.contains("SQLite"))
    }

    // MARK: - Mapping expressions

    @Test("a mapping value expression 500 levels deep is a located error from ferry migrate")
    func deepMappingExpression() throws {
        let directory = TemporaryDirectory("ferry-cli-hostile-mapping")
        try directory.write("model.yml", "name: People\ncurrent: \"2\"\nversions: [v1.yml, v2.yml]\n")
        try directory.write("v1.yml", "version: \"1\"\nentities:\n  Person:\n    attributes:\n      name: string\n")
        try directory.write(
            "v2.yml", "version: \"2\"\nentities:\n  Person:\n    attributes:\n      name: string\n      city: string\n")
        try FileManager.default.createDirectory(atPath: directory.file("mappings"), withIntermediateDirectories: true)
        let expression = Self.repeated("(", 500) + "$source.name" + Self.repeated(")", 500)
        try directory.write(
            "mappings/1-to-2.yml",
            "from: \"1\"\nto: \"2\"\nentities:\n  Person:\n    attributes:\n      city: \(expression)\n")
        try directory.write("people.csv", "name\nAnn\n")
        try directory.write(
            "load.yml",
            "store: people.sqlite\nmodel: v1.yml\nsteps:\n  - import: {source: people.csv, entity: Person}\n")
        let load = try runFerry(["run", "load.yml", "--quiet"], cwd: directory.path)
        #expect(load.exitCode == 0, "\(load)")
        let result = try runFerry(["migrate", "people.sqlite", "--model", ".", "--dry-run"], cwd: directory.path)
        #expect(result.exitCode == 64, "\(result)")
        #expect(!result.wasSignaled)
        // The 17th '(' of the value that starts at column 13 of line 6.
        #expect(
            result.stderr.contains(
                "mappings/1-to-2.yml:6:29: error: expression is nested too deeply: more than 16 levels of parentheses, not, ? :, function calls and chained operators"
            ),
            "\(result.stderr)")
    }
}
