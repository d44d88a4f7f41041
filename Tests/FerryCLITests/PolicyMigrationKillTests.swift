import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// A migration whose step runs a Swift policy for every object (`ferry-test-policies`'
/// `CityFromEmailPolicy`, PeopleSteps 1 → 2), killed with SIGKILL at moments spread over a
/// measured run: the store is the original or the fully migrated one, never a mix, and a rerun
/// finishes and cleans up, as for inferred steps (MigrationCrashTests).
@Suite("policy migrations killed at any moment", .serialized)
struct PolicyMigrationKillTests {
    static let rows = 1...60_000

    static func migrate(_ store: String) throws -> FerryProcess {
        try FerryProcess(
            [
                "migrate", store, "--model", MigrationCrashTests.bundle, "--to", "2", "--mappings",
                Fixtures.path("models/PeopleStepsPolicy"), "--quiet",
            ], executable: FerryBinary.sibling("ferry-test-policies"))
    }

    @Test("SIGKILL during a policy migration leaves the original or the migrated store; a rerun finishes")
    func killAtManyMoments() throws {
        let dir = TemporaryDirectory()
        let store = try MigrationCrashTests.v1Store(in: dir, rows: Self.rows)
        let pristine = dir.file("pristine.sqlite")
        try FileManager.default.copyItem(atPath: store, toPath: pristine)
        let original = try StoreSnapshot.take(pristine, excluding: [])

        let reference = dir.file("reference.sqlite")
        try FileManager.default.copyItem(atPath: pristine, toPath: reference)
        let started = ContinuousClock.now
        let full = try Self.migrate(reference).wait(timeout: .seconds(300))
        let duration = ContinuousClock.now - started
        #expect(full.exitCode == 0, "\(full)")
        #expect(try MigrationCrashTests.version(of: reference) == "2")
        let migrated = try MigrationCrashTests.migratedContent(reference)
        // The policy ran for every person.
        #expect(
            try StoreSnapshot.integers(reference, "SELECT count(*) FROM Person WHERE city IS NOT NULL")
                == [Int64(Self.rows.count)])

        var moments: [MigrationCrashTests.Moment] = (1...7).map { .after(duration * (Double($0) / 8)) }
        moments += [.exists(".ferry-migrating-1"), .backupExists]
        var outcomes: [String] = []
        for moment in moments {
            try MigrationCrashTests.restore(store, from: pristine)
            let killed = try MigrationCrashTests.migrateAndKill(store, at: moment, process: Self.migrate)
            #expect(try StoreSnapshot.texts(store, "PRAGMA integrity_check") == [["ok"]], "killed \(moment)")
            let outcome: String
            if try MigrationCrashTests.version(of: store) == "1" {
                #expect(try StoreSnapshot.take(store, excluding: []) == original, "killed \(moment): not the original")
                outcome = "original"
            } else {
                #expect(try MigrationCrashTests.version(of: store) == "2", "killed \(moment)")
                #expect(
                    try MigrationCrashTests.migratedContent(store) == migrated,
                    "killed \(moment): not the migrated store")
                outcome = "migrated"
            }
            outcomes.append("\(moment): \(killed ? "killed" : "finished"), \(outcome)")
            let rerun = try Self.migrate(store).wait(timeout: .seconds(300))
            #expect(rerun.exitCode == 0, "rerun after a kill \(moment): \(rerun)")
            #expect(try MigrationCrashTests.leftovers(of: store).scratch == [], "rerun after a kill \(moment)")
            #expect(try MigrationCrashTests.migratedContent(store) == migrated, "rerun after a kill \(moment)")
        }
        print("policy migration kill outcomes (a full run took \(duration)):\n  " + outcomes.joined(separator: "\n  "))
        #expect(outcomes.filter { $0.hasSuffix("killed, original") }.count >= 5, "\(outcomes)")
    }
}
