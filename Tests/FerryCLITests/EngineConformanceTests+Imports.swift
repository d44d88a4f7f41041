import FerryTestSupport
import Foundation
import Testing

/// The import cells of the conformance suite: each conflict policy re-importing changed records
/// over a loaded store, a sync that deletes the rows its source no longer has (with the model's
/// delete rules), an inferred migration of what they left, and the resume of a failed import.
extension EngineConformanceTests {
    /// The Person fields of the first Garage version, every attribute type and the one-to-one.
    static let personFields = "personID,name,born,active,height,homepage,photo,rank,token,passport.number"
    /// The Person fields of Garage 2: `nickname` added, `rank` renamed `grade`, `homepage` removed.
    static let personFieldsV2 = "personID,name,nickname,born,grade,passport.number"

    /// `ferry import FILE --entity Person` into `store` with `flags`, requiring exit `status`.
    @discardableResult
    static func importPeople(
        _ store: EngineStore, _ file: String, _ flags: [String], exit status: Int32 = 0
    ) throws -> ProcessResult {
        try ferry(
            ["import", fixture(file), "--store", store.location, "--model", garage, "--entity", "Person"] + flags,
            in: store, exit: status)
    }

    /// The objects of `entity` that `predicate` selects, as NDJSON (or `format`) sorted by the
    /// comma-separated keys of `sort`, with `fields`.
    static func export(
        _ store: EngineStore, model: String = garage, _ entity: String, sort: String, fields: String,
        where predicate: String = "TRUEPREDICATE", format: String = "ndjson"
    ) throws -> String {
        try ferry(
            [
                "export", "--store", store.location, "--model", model, "--entity", entity, "--where", predicate,
                "--format", format, "--fields", fields, "--quiet",
            ] + sort.split(separator: ",").flatMap { ["--sort", String($0)] }, in: store
        ).stdout
    }

    @Test(
        "import with each conflict policy, then a sync, then an inferred migration: the same objects on every engine",
        arguments: Engine.available)
    func conflictPoliciesSyncAndMigration(engine: Engine) throws {
        let outcome = try Self.conforms("conflict policies, sync, inferred migration", engine) { engine in
            let store = try EngineStore(engine, name: "policies")
            defer { store.dropSchemas() }
            try Self.loadGarage(store)
            var outcome: [String: String] = [:]
            // error: the first record already there rejects the step, nothing is written.
            let refused = try Self.importPeople(store, "people-keep.ndjson", ["--on-conflict", "error"], exit: 2)
            outcome["error"] = store.normalized(refused.stderr)
            for (policy, file) in [
                ("keep", "people-keep.ndjson"), ("update", "people-update.ndjson"),
                ("replace", "people-replace.ndjson"),
            ] {
                outcome[policy] = Self.summary(try Self.importPeople(store, file, ["--on-conflict", policy]))
            }
            outcome["Person after the policies"] = try Self.export(
                store, "Person", sort: "personID", fields: Self.personFields)
            // The sync leaves Ann out: her passport goes with her (cascade), her cars stay (nullify).
            outcome["sync"] = Self.summary(
                try Self.importPeople(store, "people-sync.ndjson", ["--mode", "sync", "--max-delete", "1"]))
            for (entity, export) in try Self.exportGarage(store) { outcome["\(entity) after the sync"] = export }
            try Self.ferry(
                ["migrate", store.location, "--model", Self.garageVersions, "--no-backup", "--quiet"], in: store)
            outcome["Person after the migration"] = try Self.export(
                store, model: Self.garageVersions, "Person", sort: "personID", fields: Self.personFieldsV2)
            try Self.ferry(
                ["verify", store.location, "--model", Self.garageVersions, "--checks", "all", "--quiet"], in: store)
            return outcome
        }
        // Fixed points, whatever the engine.
        #expect(
            outcome["error"]?.contains(
                "people-keep.ndjson:1:14: error: another Person already has the same personID (uniqueness constraint) (record 1)"
            ) == true, "\(engine): \(outcome["error"] ?? "")")
        #expect(outcome["keep"]?.hasSuffix("read 2, inserted 1, updated 0, skipped 1, rejected 0") == true)
        #expect(outcome["update"]?.hasSuffix("read 2, inserted 1, updated 1, skipped 0, rejected 0") == true)
        #expect(outcome["replace"]?.hasSuffix("read 1, inserted 0, updated 1, skipped 0, rejected 0") == true)
        let people = outcome["Person after the policies"] ?? ""
        // keep left Bob's rank, update changed only his name, replace reset Ann's unsupplied values.
        #expect(people.contains(#"{"personID":2,"name":"Bob U","born":"1975-12-31T23:59:59.999Z","active":false"#))
        #expect(people.contains(#""rank":-2"#), "\(engine): \(people)")
        #expect(people.contains(#"{"personID":1,"name":"Ann R","born":null,"active":null,"height":1.5"#))
        #expect(people.contains(#""born":"2001-01-01T00:00:00.000001Z""#), "\(engine): \(people)")
        #expect(
            outcome["sync"]?.hasSuffix(
                "read 6, inserted 1, updated 1, unchanged 4, deleted 1, skipped 0, rejected 0; cascade 1 Passport; nullified 2 Vehicle.owner"
            ) == true,
            "\(engine): \(outcome["sync"] ?? "")")
        #expect(outcome["Passport after the sync"]?.contains("P-1") == false)
        #expect(
            outcome["Vehicle after the sync"]?.contains(#""vehicleID":11,"maker":"Fiat""#) == true,
            "nullify keeps Ann's cars: \(outcome["Vehicle after the sync"] ?? "")")
        let migrated = outcome["Person after the migration"] ?? ""
        #expect(
            migrated.contains(
                #"{"personID":2,"name":"Bob U","nickname":null,"born":"1975-12-31T23:59:59.999Z","grade":-2"#))
        #expect(migrated.contains(#""born":"1980-02-03T04:05:06.1234Z""#), "\(engine): \(migrated)")
    }

    /// Loads the people, then imports vehicles with `--atomic false` one record per batch: the
    /// third record's mileage is not a number, over a budget of 0, after two committed batches;
    /// then the same command with a budget of 1 and `--resume`. The failure, the resume and the
    /// vehicles left.
    static func failedAndResumedImport(
        _ engine: Engine
    ) throws -> (failed: String, resumed: ProcessResult, vehicles: String) {
        let store = try EngineStore(engine, name: "resume")
        defer { store.dropSchemas() }
        try importPeople(store, "people.ndjson", store.creating + ["--quiet"])
        let importing = [
            "import", fixture("vehicles-resume.ndjson"), "--store", store.location, "--model", garage,
            "--entity", "Vehicle", "--nested", "--atomic", "false", "--batch-size", "1", "--rejects", "rejects.ndjson",
        ]
        let failed = try ferry(importing + ["--max-rejects", "0"], in: store, exit: 2)
        let resumed = try runFerry(importing + ["--max-rejects", "1", "--resume"], cwd: store.directory.path)
        let vehicles = try export(store, "Vehicle", sort: "vehicleID", fields: "vehicleID,owner.personID")
        return (store.normalized(failed.stderr), resumed, vehicles)
    }

    @Test(
        "a failed --atomic false import resumes after its committed batches, or is refused where the store keeps no progress",
        arguments: Engine.available)
    func resumeAfterFailedImport(engine: Engine) throws {
        guard engine != .coreData else {
            // A Core Data store has no table for ferry's progress: no resume is offered, --resume
            // says why, and the two committed batches stay.
            let (failed, resumed, vehicles) = try Self.failedAndResumedImport(engine)
            #expect(failed.contains("vehicles-resume.ndjson:3:59: error: more than 0 records were rejected"))
            #expect(!failed.contains("--resume"), "\(failed)")
            #expect(failed.contains("the batches committed before the failure stay in the store"), "\(failed)")
            #expect(resumed.exitCode == 64, "\(resumed)")
            #expect(resumed.stderr.contains(Self.noProgressRefusal), "\(resumed.stderr)")
            #expect(vehicles.contains(#""vehicleID":21"#) && !vehicles.contains(#""vehicleID":23"#), "\(vehicles)")
            return
        }
        let outcome = try Self.conforms("resume", engine) { engine in
            let (failed, resumed, vehicles) = try Self.failedAndResumedImport(engine)
            #expect(resumed.exitCode == 0, "\(engine): \(resumed)")
            return ["failure": failed, "resume": Self.summary(resumed), "Vehicle": vehicles]
        }
        #expect(
            outcome["failure"]?.contains("vehicles-resume.ndjson:3:59: error: more than 0 records were rejected")
                == true)
        #expect(outcome["failure"]?.contains("--max-rejects 0 --resume") == true, "\(outcome["failure"] ?? "")")
        let vehicles = outcome["Vehicle"] ?? ""
        #expect(vehicles.contains(#"{"vehicleID":23,"owner.personID":3}"#), "\(engine): \(vehicles)")
        #expect(!vehicles.contains(#""vehicleID":22"#), "\(engine): \(vehicles)")
    }

    /// What `--resume` says on a store that keeps no import progress.
    static let noProgressRefusal =
        "cannot resume step 1 import Vehicle: the store keeps no import progress (a Core Data store has no table for it); run the import again without --resume"
}
