import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `ferry export` and `ferry store info` on a PostgreSQL store through the built binary: the same
/// output as from a SQLite store holding the same objects.
@Suite(
    "PostgreSQL stores (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresStoreCLITests {
    static let customers: [[Value]] = [
        [
            .integer(1), .string("zoe@example.com"), .string("Zoë \"quoted\",\tTab"), .integer(41),
            .decimal("123456789012345678901234567890.50"), .bool(true), .date(-14_182_939_877),
        ],
        [
            .integer(2), .string("ann@example.org"), .string(""), .integer(30), .decimal("-0.1"), .bool(false),
            .date(1_709_251_199_999),
        ],
        [.integer(3), .string("bob@example.com"), .null, .integer(55), .null, .null, .null],
        [
            .integer(4), .string("émile@example.com"), .string("line\nbreak 🚢"), .null, .decimal("7"), .bool(true),
            .date(0),
        ],
    ]

    /// Creates a store at `path` holding ``customers`` and releases it (and its writer lock).
    static func fill(_ path: String) throws {
        let store = try Store.open(at: path, model: SampleModels.shop())
        var next = 0
        let request = BatchInsertRequest(
            entity: "Customer",
            columns: ["id", "email", "name", "age", "balance", "active", "joined"].map { .attribute($0) }
        ) { row in
            guard next < customers.count else { return true }
            row = customers[next]
            next += 1
            return false
        }
        #expect(try store.execute(request).inserted == customers.count)
    }

    static func dropSchema(_ url: String, _ schema: String) {
        PostgresStoreLoader.dropSchemas(startingWith: schema)
    }

    @Test(
        "export from PostgreSQL writes exactly what export from SQLite writes, in every format, with predicates, sorts and limits"
    )
    func exportMatchesSQLite() throws {
        let directory = TemporaryDirectory()
        let schema = "ferry_cli_" + UUID().uuidString.lowercased().replacing("-", with: "")
        let url = try PostgresTestServer.requireURL() + "?schema=" + schema
        defer { Self.dropSchema(url, schema) }
        try Self.fill(directory.file("shop.sqlite"))
        try Self.fill(url)
        let variants: [[String]] = [
            ["--format", "csv"], ["--format", "ndjson"], ["--format", "json"], ["--format", "tsv"],
            ["--format", "csv", "--where", "name CONTAINS[cd] 'e' OR balance < 0", "--sort", "balance:desc"],
            ["--format", "csv", "--sort", "name", "--limit", "2", "--offset", "1", "--fields", "email,name"],
        ]
        for variant in variants {
            let expected = try runFerry(
                ["export", "--store", "shop.sqlite", "--entity", "Customer", "--quiet"] + variant, cwd: directory.path)
            let actual = try runFerry(
                ["export", "--store", url, "--entity", "Customer", "--quiet"] + variant, cwd: directory.path)
            #expect(expected.exitCode == 0, "\(expected.stderr)")
            #expect(actual.exitCode == 0, "\(variant): \(actual.stderr)")
            #expect(actual.stdout == expected.stdout, "\(variant)")
        }
        let info = try runFerry(["store", "info", url, "--json"], cwd: directory.path)
        #expect(info.exitCode == 0, "\(info.stderr)")
        #expect(info.stdout.contains("\"model\" : \"Shop\"") || info.stdout.contains("\"model\":\"Shop\""))
        #expect(info.stdout.contains("\"count\" : 4") || info.stdout.contains("\"count\":4"))
    }

    @Test(
        "every attribute type, null and hostile value exports from PostgreSQL (streamed by COPY) exactly as from SQLite, in every format"
    )
    func everyTypeExportMatchesSQLite() throws {
        let directory = TemporaryDirectory()
        let schema = "ferry_cli_types_" + UUID().uuidString.lowercased().replacing("-", with: "")
        let url = try PostgresTestServer.requireURL() + "?schema=" + schema
        defer { Self.dropSchema(url, schema) }
        for store in [directory.file("types.sqlite"), url] {
            try EveryTypeSample.fill(try Store.open(at: store, model: EveryTypeSample.model))
        }
        let variants: [[String]] = [
            ["--format", "csv"], ["--format", "ndjson"], ["--format", "json"], ["--format", "tsv"],
            ["--format", "csv", "--where", "text BEGINSWITH 'b' OR real > 1 OR flag == NO", "--sort", "moment:desc"],
            [
                "--format", "ndjson", "--sort", "text", "--limit", "9", "--offset", "4", "--fields",
                "text,owner,tag,payload",
            ],
            ["--format", "csv", "--where", "text == 'quote \" and \\' apostrophe' OR text == 'back\\\\slash'"],
        ]
        for variant in variants {
            let expected = try runFerry(
                ["export", "--store", "types.sqlite", "--entity", "Item", "--quiet"] + variant, cwd: directory.path)
            let actual = try runFerry(
                ["export", "--store", url, "--entity", "Item", "--quiet"] + variant, cwd: directory.path)
            #expect(expected.exitCode == 0, "\(expected.stderr)")
            #expect(actual.exitCode == 0, "\(variant): \(actual.stderr)")
            #expect(!actual.stdout.isEmpty)
            #expect(actual.stdout == expected.stdout, "\(variant)")
        }
        // Written to a file: the same bytes, and a failed export leaves no file behind.
        let written = try runFerry(
            ["export", "--store", url, "--entity", "Item", "--format", "csv", "--output", "items.csv", "--quiet"],
            cwd: directory.path)
        #expect(written.exitCode == 0, "\(written.stderr)")
        let fromSQLite = try runFerry(
            ["export", "--store", "types.sqlite", "--entity", "Item", "--format", "csv"], cwd: directory.path)
        #expect(try String(contentsOfFile: directory.file("items.csv"), encoding: .utf8) == fromSQLite.stdout)
    }

    @Test(
        "a missing PostgreSQL store, an unreachable server and an update ferry cannot compute fail clearly, never printing a password"
    )
    func failures() throws {
        let directory = TemporaryDirectory()
        let schema = "ferry_cli_missing_" + UUID().uuidString.lowercased().replacing("-", with: "")
        let url = try PostgresTestServer.requireURL() + "?schema=" + schema
        let missing = try runFerry(
            ["export", "--store", url, "--entity", "Customer", "--format", "csv"], cwd: directory.path)
        #expect(missing.exitCode != 0)
        #expect(missing.stderr.contains("is not a ferry store"), "\(missing.stderr)")
        let unreachable = try runFerry(
            [
                "export", "--store", "postgresql://someone:s3cret@127.0.0.1:1/nowhere", "--entity", "Customer",
                "--format", "csv",
            ], cwd: directory.path)
        #expect(unreachable.exitCode != 0)
        #expect(unreachable.stderr.contains("cannot connect"), "\(unreachable.stderr)")
        #expect(!unreachable.stderr.contains("s3cret"))
        let target = url.replacing("ferry_cli_missing_", with: "ferry_cli_import_")
        defer { Self.dropSchema(target, String(schema.replacing("ferry_cli_missing_", with: "ferry_cli_import_"))) }
        try directory.write("in.csv", "id,email\n9,new@example.com\n")
        try Self.fill(target)
        // An expression ferry cannot compute for an object names it; nothing is changed.
        let failed = try runFerry(
            [
                "update", "--store", target, "--entity", "Customer", "--where", "age != nil", "--set",
                "age==age / (age - age)",
            ],
            cwd: directory.path)
        #expect(failed.exitCode != 0)
        #expect(failed.stderr.contains("Customer ferry_pk"), "\(failed.stderr)")
    }
}
