import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// ``Migrator`` on PostgreSQL stores through the library, with what only the library can give a
/// migration: a Swift policy (the sample's PhoneNormalizer stand-in) and the migration options.
@Suite(
    "PostgreSQL migrations (library)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresMigrationTests {
    static func migrator(_ store: String, backup: Bool = true) throws -> Migrator {
        let bundle = try ModelLoader().load(path: SampleMigrationTests.bundlePath)
        let registry = PolicyRegistry()
        registry.register("PhoneNormalizer") { TestPhoneNormalizer() }
        var options = MigrationOptions(backup: backup, registry: registry)
        options.checksums = true
        return Migrator(
            storePath: store, bundle: bundle, options: options, mappingProvider: MigrationMappings.provider(for: bundle)
        )
    }

    @Test(
        "v1 → v2 → v3 in one run with the bundle's mapping file and its Swift policy: the objects, the report and the plan are those of the same migration of a SQLite store"
    )
    func policyMatchesSQLite() throws {
        let directory = TemporaryDirectory()
        let schema = "ferry_migpolicy_" + UUID().uuidString.lowercased().replacing("-", with: "").prefix(12)
        let url = try PostgresTestServer.requireURL() + "?schema=" + schema
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        let sqlite = directory.file("shop.sqlite")
        try FileManager.default.copyItem(atPath: "\(SampleMigrationTests.snapshots)/shop-v1.sqlite", toPath: sqlite)
        try PostgresStoreLoader.load(sqlite, into: url)

        let plan = try Self.migrator(url).plan()
        let expectedPlan = try Self.migrator(sqlite).plan()
        #expect(plan.source.version == "1" && plan.target.version == "3")
        #expect(plan.steps.map(\.destination.version) == expectedPlan.steps.map(\.destination.version))
        #expect(plan.counts == expectedPlan.counts)

        let expected = try Self.migrator(sqlite, backup: false).run()
        let report = try Self.migrator(url, backup: false).run()
        #expect(report.fromVersion == "1" && report.toVersion == "3")
        #expect(report.steps.map { "\($0.from)→\($0.to)" } == ["1→2", "2→3"])
        #expect(report.backup == nil)
        for (step, expectedStep) in zip(report.steps, expected.steps) {
            #expect(
                step.entities.map { [$0.mapping, "\($0.read)", "\($0.written)", "\($0.unchanged ?? [])"] }
                    == expectedStep.entities.map {
                        [$0.mapping, "\($0.read)", "\($0.written)", "\($0.unchanged ?? [])"]
                    })
        }
        let migrated = try PostgresStoreLoader.exports(url)
        #expect(migrated == (try PostgresStoreLoader.exports(sqlite)))
        #expect(migrated["version"] == "3")
        // The policy ran: every phone is +digits.
        let phones = (migrated["Customer"] ?? "").split(separator: "\n").filter { $0.contains("\"phone\":\"") }
        #expect(!phones.isEmpty && phones.allSatisfy { $0.contains("\"phone\":\"+") })
        // No backup with backup: false, no scratch schema.
        #expect(try PostgresStoreLoader.schemas(startingWith: schema) == [schema])
        // The run log carries the migration, as on SQLite.
        let store = try Store.open(
            at: url, model: try #require(try ModelLoader().load(path: SampleMigrationTests.bundlePath).version("3")))
        #expect(
            try store.withDatabase { try $0.scalar("SELECT count(*) FROM ferry_runs WHERE step = 'migrate'")?.int64 }
                == 2)
    }

    @Test(
        "a step that fails (no such policy registered) names the store, not the private snapshot, and changes nothing")
    func failingStepNamesTheStore() throws {
        let schema = "ferry_migfail_" + UUID().uuidString.lowercased().replacing("-", with: "").prefix(12)
        let url = try PostgresTestServer.requireURL() + "?schema=" + schema
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        let directory = TemporaryDirectory()
        let sqlite = directory.file("shop.sqlite")
        try FileManager.default.copyItem(atPath: "\(SampleMigrationTests.snapshots)/shop-v2.sqlite", toPath: sqlite)
        try PostgresStoreLoader.load(sqlite, into: url)
        let before = try PostgresStoreLoader.exports(url)
        let bundle = try ModelLoader().load(path: SampleMigrationTests.bundlePath)
        let migrator = Migrator(
            storePath: url, bundle: bundle, options: MigrationOptions(registry: PolicyRegistry()),
            mappingProvider: MigrationMappings.provider(for: bundle))
        let error = try #require(throws: FerryError.self) { try migrator.run() }
        #expect(error.message.contains("no migration policy named 'PhoneNormalizer'"), "\(error)")
        #expect(!"\(error)".contains("ferry-migrate-"), "\(error)")
        #expect(try PostgresStoreLoader.exports(url) == before)
        #expect(try PostgresStoreLoader.schemas(startingWith: schema) == [schema])
    }
}
