import FerryTestSupport
import Foundation
import Testing

/// Issue 25: a policy that is not registered was reported only when its step ran, after the
/// earlier steps had done their work. Every step's policies are now resolved before the first.
@Suite("unregistered policies are refused before the first step, through the real binary")
struct MigrationPolicyCheckCLITests {
    @Test(
        "PeopleSteps 1 → 3 with step 2 → 3 naming an unregistered policy: refused before step 1 starts, store unchanged"
    )
    func refusedBeforeFirstStep() throws {
        let dir = TemporaryDirectory()
        let store = try MigrationCrashTests.v1Store(in: dir, rows: 1...2_000)
        let before = try StoreSnapshot.take(store, excluding: [])
        let mappings = dir.file("mappings")
        try FileManager.default.createDirectory(atPath: mappings, withIntermediateDirectories: true)
        let file = try dir.write(
            "mappings/2-to-3.yml", "from: \"2\"\nto: \"3\"\nentities:\n  Person:\n    policy: NoSuchPolicy\n")

        for arguments in [
            ["migrate", store, "--model", MigrationCrashTests.bundle, "--mappings", mappings, "--verbose"],
            ["migrate", store, "--model", MigrationCrashTests.bundle, "--mappings", mappings, "--dry-run"],
        ] {
            let result = try runFerry(arguments)
            #expect(result.exitCode == 1, "\(arguments): \(result)")
            #expect(
                result.stderr.contains("\(file):5:13: error: no migration policy named 'NoSuchPolicy' is registered"),
                "\(result)")
            #expect(!result.stderr.contains("[1/2]"), "step 1 started: \(result)")
            #expect(try MigrationCrashTests.version(of: store) == "1")
            #expect(try StoreSnapshot.take(store, excluding: []) == before)
        }
    }
}
