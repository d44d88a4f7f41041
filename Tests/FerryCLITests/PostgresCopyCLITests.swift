import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `ferry copy` between SQLite and PostgreSQL stores through the built binary: round trips keep
/// every object (exports byte for byte, checksums of every attribute equal), and the refusals
/// leave every store as it was, with no scratch schema behind.
@Suite(
    "ferry copy with PostgreSQL stores (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresCopyCLITests {
    /// Every entity exported as NDJSON, JSON attributes left out (compared by checksum, by value).
    static func exports(_ store: String, cwd: String) throws -> [String] {
        try PostgresMutationCLITests.exports(store, cwd: cwd)
    }

    /// Checksums of every attribute of every entity (JSON by value).
    static func checksums(_ path: String) throws -> [EntityChecksum] {
        let model = try #require(try Store.metadata(at: path)?.model)
        let store = try Store.open(
            at: path, model: model, options: Store.Options(createIfMissing: false, readOnly: true))
        return try model.entities.map {
            try EntityChecksum.compute(store: store, entity: $0.name, attributes: $0.attributes.map(\.name))
        }
    }

    /// Runs fixed SQL on the test server (through a throwaway store's session): a script, then a query.
    @discardableResult
    static func serverSQL(_ script: String, query: String = "SELECT 1") throws -> [[DatabaseValue]] {
        let (url, drop) = try PostgresImportCLITests.freshStore("sql")
        defer { drop() }
        let store = try Store.open(at: url, model: SampleModels.shop())
        return try store.withDatabase { database in
            if !script.isEmpty { try database.executeScript(script) }
            return try database.rows(query)
        }
    }

    static func scratchSchemas() throws -> Int64 {
        try serverSQL(
            "", query: "SELECT count(*) FROM pg_catalog.pg_namespace WHERE right(nspname, 11) = '_ferry_copy'"
        ).first?.first?.int64 ?? -1
    }

    @Test(
        "SQLite → PostgreSQL → SQLite and PostgreSQL → PostgreSQL keep every object: exports byte for byte, equal checksums, keys numbered after the copied ones"
    )
    func roundTrip() throws {
        let directory = TemporaryDirectory()
        let (url, drop) = try PostgresImportCLITests.freshStore("copy")
        let (second, dropSecond) = try PostgresImportCLITests.freshStore("copy2")
        defer {
            drop()
            dropSecond()
        }
        try directory.write("shop.yml", try PostgresImportCLITests.shopJob { _ in #"store: {path: "${store}"}"# })
        let filled = try runFerry(
            ["run", "shop.yml", "--param", "store=shop.sqlite", "--param", "out=."], cwd: directory.path)
        #expect(filled.exitCode == 0, "\(filled.stderr)")

        let there = try runFerry(["copy", "shop.sqlite", url], cwd: directory.path)
        #expect(there.exitCode == 0, "\(there.stderr)")
        #expect(there.stdout.contains("Customer: 197 of 197 objects copied"), "\(there.stdout)")
        #expect(there.stdout.contains("checksums agree for 4"), "\(there.stdout)")
        let onward = try runFerry(["copy", url, second], cwd: directory.path)
        #expect(onward.exitCode == 0, "\(onward.stderr)")
        let back = try runFerry(["copy", second, "back.sqlite"], cwd: directory.path)
        #expect(back.exitCode == 0, "\(back.stderr)")

        let original = try Self.exports("shop.sqlite", cwd: directory.path)
        #expect(try Self.exports(url, cwd: directory.path) == original)
        #expect(try Self.exports(second, cwd: directory.path) == original)
        #expect(try Self.exports("back.sqlite", cwd: directory.path) == original)
        let sums = try Self.checksums(directory.file("shop.sqlite"))
        #expect(try Self.checksums(url) == sums)
        #expect(try Self.checksums(directory.file("back.sqlite")) == sums)

        // The copied keys are taken: new objects are numbered after them.
        let store = try Store.open(at: url, model: try #require(try Store.metadata(at: url)?.model))
        let keys = try store.withDatabase { database in
            try database.rows(
                "SELECT max(ferry_pk), nextval(pg_get_serial_sequence('\"Customer\"', 'ferry_pk')) FROM \"Customer\"")
        }
        let row = try #require(keys.first)
        #expect((row[1].int64 ?? 0) > (row[0].int64 ?? Int64.max))
        #expect(try Self.scratchSchemas() == 0)
    }

    @Test(
        "refusals: a destination with objects (unless --replace), another model, a schema that is not a ferry store (even with --replace), a missing source; nothing changes"
    )
    func refusals() throws {
        let directory = TemporaryDirectory()
        let (url, drop) = try PostgresImportCLITests.freshStore("copyrefuse")
        let (other, dropOther) = try PostgresImportCLITests.freshStore("copyother")
        defer {
            drop()
            dropOther()
        }
        try directory.write("shop.yml", try PostgresImportCLITests.shopJob { _ in #"store: {path: "${store}"}"# })
        #expect(
            try runFerry(["run", "shop.yml", "--param", "store=shop.sqlite", "--param", "out=."], cwd: directory.path)
                .exitCode == 0)
        #expect(try runFerry(["copy", "shop.sqlite", url], cwd: directory.path).exitCode == 0)
        let before = try Self.exports(url, cwd: directory.path)

        let full = try runFerry(["copy", "shop.sqlite", url], cwd: directory.path)
        #expect(full.exitCode == 64)
        #expect(
            full.stderr.contains(
                "already holds 2216 objects; ferry copy writes only into a new or empty store (pass --replace to replace it)"
            ), "\(full.stderr)")

        // An empty store of another model.
        let model = ObjectModel(
            name: "Other", version: "7",
            entities: [EntityDescription(name: "Thing", attributes: [AttributeDescription(name: "x", type: .int64)])])
        _ = try Store.open(at: other, model: model)
        let mismatch = try runFerry(["copy", "shop.sqlite", other], cwd: directory.path)
        #expect(mismatch.exitCode == 64)
        #expect(
            mismatch.stderr.contains("is at model Other version 7, the source at Shop version 1"), "\(mismatch.stderr)")

        // A schema of someone else's tables is never replaced.
        let foreign = "ferry_foreign_" + UUID().uuidString.lowercased().replacing("-", with: "")
        try Self.serverSQL(
            "CREATE SCHEMA \(foreign); CREATE TABLE \(foreign).accounts (id integer); INSERT INTO \(foreign).accounts VALUES (1)"
        )
        defer { _ = try? Self.serverSQL("DROP SCHEMA \(foreign) CASCADE") }
        let foreignURL = try PostgresTestServer.requireURL() + "?schema=" + foreign
        for extra in [[], ["--replace"]] {
            let refused = try runFerry(["copy", "shop.sqlite", foreignURL] + extra, cwd: directory.path)
            #expect(refused.exitCode == 64, "\(refused.stderr)")
            #expect(
                refused.stderr.contains("is a PostgreSQL schema but not a ferry store; ferry copy never overwrites it"),
                "\(refused.stderr)")
        }
        #expect(try Self.serverSQL("", query: "SELECT count(*) FROM \(foreign).accounts").first?.first?.int64 == 1)

        let missing = try runFerry(
            ["copy", try PostgresTestServer.requireURL() + "?schema=ferry_no_such_store", "x.sqlite"],
            cwd: directory.path)
        #expect(missing.exitCode != 0)
        #expect(missing.stderr.contains("is not a ferry store"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("x.sqlite")))

        #expect(try Self.exports(url, cwd: directory.path) == before)
        #expect(try Self.scratchSchemas() == 0)
        // --replace replaces a ferry store.
        let replaced = try runFerry(["copy", "shop.sqlite", url, "--replace"], cwd: directory.path)
        #expect(replaced.exitCode == 0, "\(replaced.stderr)")
        #expect(try Self.exports(url, cwd: directory.path) == before)
    }
}
