import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// A `rebuild: true` job on a PostgreSQL store holds the store's writer lock from its first step
/// to the swap, through the built binary: an import or an update started while the rebuild
/// builds either waits and then writes into the store that was swapped in, or fails saying the
/// store is locked; never "success" with its rows gone at the swap.
@Suite(
    "PostgreSQL rebuild and concurrent writers (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresRebuildWriterCLITests {
    /// The ids of the Person rows of the store at `url`, with their ages.
    static func ages(_ url: String) throws -> [Int: Int] {
        let export = try runFerry(
            ["export", "--store", url, "--entity", "Person", "--format", "csv", "--fields", "id,age", "--quiet"])
        #expect(export.exitCode == 0, "\(export)")
        var ages: [Int: Int] = [:]
        for line in export.stdout.split(whereSeparator: \.isNewline).dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == 2, let id = Int(fields[0]) else { continue }
            ages[id] = Int(fields[1]) ?? -1
        }
        return ages
    }

    @Test(
        "an import and an update started while a rebuild: true job builds wait for it and land in the store it swapped in, or fail saying the store is locked; never success with their rows gone"
    )
    func writersDuringRebuild() throws {
        let directory = TemporaryDirectory()
        let (schema, url, job, _, large) = try PostgresWorkSchemaKillTests.rebuiltStore("writers", in: directory)
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        let extra = try directory.write("extra.csv", bytes: BigFiles.csv(ids: 900_001...900_010))

        let rebuild = try FerryProcess(["run", job, "--param", "store=\(url)", "--param", "data=\(large)"])
        // Once the rebuild's work schema exists, it is building: the writers start then.
        let started = ContinuousClock.now
        while try PostgresWorkSchemaKillTests.leftovers(of: schema).isEmpty, rebuild.isRunning,
            ContinuousClock.now - started < .seconds(60)
        {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(rebuild.isRunning, "the rebuild ended before a writer could start")
        let importer = try FerryProcess([
            "import", extra, "--store", url, "--model", Fixtures.peopleModel, "--entity", "Person",
        ])
        let updater = try FerryProcess([
            "update", "--store", url, "--entity", "Person", "--where", "id == 1", "--set", "age=123",
        ])
        let rebuilt = try rebuild.wait()
        let imported = try importer.wait()
        let updated = try updater.wait()
        #expect(rebuilt.exitCode == 0, "\(rebuilt)")

        let ages = try Self.ages(url)
        #expect(ages.count >= 60_000, "the rebuilt store: \(ages.count) rows")
        if imported.exitCode == 0 {
            #expect(
                (900_001...900_010).allSatisfy { ages[$0] != nil },
                "the import reported success but its rows are not in the store: \(imported)")
        } else {
            #expect(imported.stderr.contains("locked by another process"), "\(imported)")
        }
        if updated.exitCode == 0 {
            #expect(ages[1] == 123, "the update reported success but the store does not have it: \(updated)")
        } else {
            #expect(updated.stderr.contains("locked by another process"), "\(updated)")
        }
        #expect(imported.exitCode == 0 || updated.exitCode == 0, "\(imported)\n\(updated)")
        #expect(try PostgresWorkSchemaKillTests.leftovers(of: schema) == [])
    }
}
