import FerryTestSupport
import Foundation
import Testing

/// The policy cell of the conformance suite: a migration step whose mapping names a Swift
/// `EntityMigrationPolicy` for every object (`ferry-test-policies`' `CityFromEmailPolicy`,
/// PeopleSteps 1 → 2), on every engine: the row path that policies take must give the objects an
/// inferred or mapped step gives, whatever the store. The same policy written against the
/// by-position row API (`CityFromEmailRowPolicy`) must give the same store as the dictionary API.
extension EngineConformanceTests {
    @Test(
        "a migration step with a Swift policy for every object: the same objects on every engine, through either policy API",
        arguments: Engine.available)
    func policyMigration(engine: Engine) throws {
        let outcome = try Self.conforms("policy migration", engine) { engine in
            try Self.policyStep(engine, mappings: "PeopleStepsPolicy").outcome
        }
        // Fixed points: the policy ran for every person, and the inferred parts of the step too.
        let people = (outcome["Person"] ?? "").split(whereSeparator: \.isNewline)
        #expect(people.count == 300, "\(engine)")
        #expect(people.allSatisfy { $0.contains(#""city":"example"#) && $0.contains(#""level":1"#) }, "\(engine)")
        // The by-position twin: the same summary, the same objects, the same stored rows.
        let dictionaryAPI = try Self.policyStep(engine, mappings: "PeopleStepsPolicy")
        let rowAPI = try Self.policyStep(engine, mappings: "PeopleStepsPolicyRows")
        for key in Set(dictionaryAPI.outcome.keys).union(rowAPI.outcome.keys).sorted() {
            #expect(
                rowAPI.outcome[key] == dictionaryAPI.outcome[key],
                "\(engine): the row API's \(key) differs from the dictionary API's")
        }
        #expect(rowAPI.rows == dictionaryAPI.rows, "\(engine): the stored rows differ between the two APIs")
        if engine != .postgres { #expect(rowAPI.rows?.split(separator: "\n").count == 300, "\(engine)") }
    }

    /// Imports 300 people into a new store of `engine` and migrates it 1 → 2 with the policy the
    /// mapping folder `mappings` names: the step's summary and the people exported (`outcome`),
    /// and on SQLite files every stored row of the table, key included (`rows`).
    static func policyStep(_ engine: Engine, mappings: String) throws -> (outcome: [String: String], rows: String?) {
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
                Fixtures.path("models/\(mappings)"), "--no-backup",
            ], cwd: store.directory.path, executable: FerryBinary.sibling("ferry-test-policies")
        ).wait(timeout: .seconds(120))
        #expect(migrated.exitCode == 0, "\(engine): \(migrated)")
        // The version the step migrated to (with the bundle, a ferry store must be at its current version).
        let model = Fixtures.path("models/PeopleSteps/v2.yml")
        var outcome: [String: String] = [:]
        outcome["migration"] = store.normalized(Self.summary(migrated)).replacingOccurrences(
            of: "/\(mappings)/", with: "/MAPPINGS/")
        outcome["Person"] = try Self.export(
            store, model: model, "Person", sort: "id", fields: "id,email,name,age,city,level")
        try Self.ferry(["verify", store.location, "--model", model, "--checks", "all", "--quiet"], in: store)
        let table: String? =
            switch engine {
            case .sqlite: "SELECT * FROM Person ORDER BY ferry_pk"
            case .coreData: "SELECT * FROM ZPERSON ORDER BY Z_PK"
            case .postgres: nil
            }
        let rows = try table.map { sql in
            try StoreSnapshot.texts(store.location, sql).map { row in row.map { $0 ?? "NULL" }.joined(separator: "|") }
                .joined(separator: "\n")
        }
        return (outcome, rows)
    }
}
