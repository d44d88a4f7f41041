import FerryTestSupport
import Foundation
import Testing

/// The policy cell of the conformance suite: a migration step whose mapping names a Swift
/// `EntityMigrationPolicy` for every object (`ferry-test-policies`' `CityFromEmailPolicy`,
/// PeopleSteps 1 → 2), on every engine: the row path that policies take must give the objects an
/// inferred or mapped step gives, whatever the store.
extension EngineConformanceTests {
    @Test(
        "a migration step with a Swift policy for every object: the same objects on every engine",
        arguments: Engine.available)
    func policyMigration(engine: Engine) throws {
        let outcome = try Self.conforms("policy migration", engine) { engine in
            let store = try EngineStore(engine, name: "policy")
            defer { store.dropSchemas() }
            let data = try store.directory.write("people-\(engine.rawValue).csv", bytes: BigFiles.csv(ids: 1...300))
            try Self.ferry(
                [
                    "import", data, "--store", store.location, "--model", Fixtures.peopleModel, "--entity", "Person",
                    "--quiet",
                ] + store.creating, in: store)
            let migrated = try FerryProcess(
                [
                    "migrate", store.location, "--model", MigrationCrashTests.bundle, "--to", "2", "--mappings",
                    Fixtures.path("models/PeopleStepsPolicy"), "--no-backup",
                ], cwd: store.directory.path, executable: FerryBinary.sibling("ferry-test-policies")
            ).wait(timeout: .seconds(120))
            #expect(migrated.exitCode == 0, "\(engine): \(migrated)")
            // The version the step migrated to (with the bundle, a ferry store must be at its current version).
            let model = Fixtures.path("models/PeopleSteps/v2.yml")
            var outcome: [String: String] = [:]
            outcome["migration"] = store.normalized(Self.summary(migrated))
            outcome["Person"] = try Self.export(
                store, model: model, "Person", sort: "id", fields: "id,email,name,age,city,level")
            try Self.ferry(["verify", store.location, "--model", model, "--checks", "all", "--quiet"], in: store)
            return outcome
        }
        // Fixed points: the policy ran for every person, and the inferred parts of the step too.
        let people = (outcome["Person"] ?? "").split(whereSeparator: \.isNewline)
        #expect(people.count == 300, "\(engine)")
        #expect(people.allSatisfy { $0.contains(#""city":"example"#) && $0.contains(#""level":1"#) }, "\(engine)")
    }
}
