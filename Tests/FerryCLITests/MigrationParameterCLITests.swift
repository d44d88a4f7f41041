import FerryTestSupport
import Foundation
import Testing

/// `$name` parameters reach the expressions of a bundle's mapping files, from `ferry migrate
/// --param` and from a job's parameters for its `migrate` steps (Fixtures/models/PriceBundle:
/// `local_price: $source.price * $rate`).
@Suite("migration parameters reach mapping files, through the real binary")
struct MigrationParameterCLITests {
    static let bundle = Fixtures.path("models/PriceBundle")

    /// A version-1 store of the three prices of Fixtures/data/prices.csv.
    func versionOneStore(_ dir: TemporaryDirectory) throws -> String {
        let store = dir.file("prices.sqlite")
        let result = try runFerry([
            "import", Fixtures.path("data/prices.csv"), "--store", store, "--model", Self.bundle + "/v1.yml",
            "--entity", "Product",
        ])
        #expect(result.exitCode == 0, "\(result)")
        return store
    }

    func localPrices(_ store: String) throws -> [String?] {
        try StoreSnapshot.texts(store, #"SELECT local_price FROM "Product" ORDER BY sku"#).map { $0[0] }
    }

    @Test("ferry migrate --param rate=1.1 computes every local price with the rate, exactly")
    func migrateCommandParameter() throws {
        let dir = TemporaryDirectory()
        let store = try versionOneStore(dir)
        let result = try runFerry(["migrate", store, "--model", Self.bundle, "--param", "rate=1.1", "--no-backup"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("migrated from version 1 to 2"), "\(result)")
        #expect(try localPrices(store) == ["11", "2.75", "1.089"])
        let verify = try runFerry(["verify", store, "--checks", "all"])
        #expect(verify.exitCode == 0, "\(verify)")
    }

    @Test("ferry migrate --dry-run with --param plans the step; without it, the mapping names the missing parameter")
    func missingParameter() throws {
        let dir = TemporaryDirectory()
        let store = try versionOneStore(dir)
        let before = try StoreSnapshot.take(store)

        let plan = try runFerry(["migrate", store, "--model", Self.bundle, "--param", "rate=3", "--dry-run"])
        #expect(plan.exitCode == 0, "\(plan)")
        #expect(plan.stdout.contains("local_price = $source.price * $rate"), "\(plan)")

        let missing = try runFerry(["migrate", store, "--model", Self.bundle])
        #expect(missing.exitCode == 64, "\(missing)")
        #expect(missing.stderr.contains("1-to-2.yml:8:"), "\(missing)")
        #expect(missing.stderr.contains("unknown parameter '$rate'"), "\(missing)")

        let misspelt = try runFerry(["migrate", store, "--model", Self.bundle, "--param", "rte=3"])
        #expect(misspelt.exitCode == 64, "\(misspelt)")
        #expect(misspelt.stderr.contains("unknown parameter '$rate'; did you mean '$rte'?"), "\(misspelt)")
        // Nothing was touched by the dry run or the refused runs.
        #expect(try StoreSnapshot.take(store) == before)
    }

    @Test("a job's migrate step passes the job's parameters: params: by default, --param over it")
    func jobMigrateStep() throws {
        let job = Fixtures.path("jobs/migrate-prices.yml")
        let dir = TemporaryDirectory()

        let defaults = dir.file("defaults.sqlite")
        let validated = try runFerry(["validate", job, "--param", "store=\(defaults)"])
        #expect(validated.exitCode == 0, "\(validated)")
        let run = try runFerry(["run", job, "--param", "store=\(defaults)"])
        #expect(run.exitCode == 0, "\(run)")
        #expect(try localPrices(defaults) == ["20", "5", "1.98"])

        let given = dir.file("given.sqlite")
        let rerun = try runFerry(["run", job, "--param", "store=\(given)", "--param", "rate=0.5"])
        #expect(rerun.exitCode == 0, "\(rerun)")
        #expect(try localPrices(given) == ["5", "1.25", "0.495"])
        let verify = try runFerry(["verify", given, "--checks", "all"])
        #expect(verify.exitCode == 0, "\(verify)")
    }
}
