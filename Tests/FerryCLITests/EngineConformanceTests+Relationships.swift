import FerryTestSupport
import Foundation
import Testing

/// The relationship cells of the conformance suite: a job's `nested:` import (an owner nesting a
/// one-to-one and a to-many whose objects link a many-to-many by text keys) re-imported with each
/// conflict policy and a sync, relationships by key (a to-one by a text key through
/// `relationships:`, a to-many by text keys), each with a key that matches nothing; and the
/// delete rules a real model mixes (`deny`, a cascade through two levels) with an update whose
/// predicate follows a key path through two to-ones.
extension EngineConformanceTests {
    /// Runs a job written as `yaml` (its store `${store}`) on `store`, requiring exit `status`;
    /// the job's file is `name`.yml in the store's directory.
    @discardableResult
    static func runJob(
        _ store: EngineStore, _ name: String, _ yaml: String, params: [String] = [], exit status: Int32 = 0
    ) throws -> ProcessResult {
        let job = try store.directory.write("\(name).yml", yaml)
        return try ferry(
            ["run", job, "--param", "store=\(store.location)"] + params.flatMap { ["--param", $0] }, in: store,
            exit: status)
    }

    /// The job's `store:` line: a new store of the engine (Core Data's layout when it is one).
    static func jobStore(_ store: EngineStore, creating: Bool) -> String {
        creating && store.engine == .coreData
            ? #"store: {path: "${store}", layout: coredata}"# : #"store: {path: "${store}"}"#
    }

    /// A run's step lines (nested entities' too) and error lines, without timings and with the
    /// store's location as `STORE`.
    static func stepLines(_ store: EngineStore, _ result: ProcessResult) -> String {
        (result.stdout + result.stderr).split(separator: "\n").map(String.init).filter {
            $0.hasPrefix("step ") || $0.hasPrefix("  nested ") || $0.contains("error:")
        }.map {
            store.normalized($0.replacing(#/ in [0-9.]+ s( \([0-9,]+ records\/s\))?/#, with: ""))
                .replacingOccurrences(of: store.directory.path, with: "DIR")
        }
        .joined(separator: "\n")
    }

    /// The rejects file `name` of the store's directory, one reject a line, with the store's
    /// location as `STORE` (empty when the run wrote none).
    static func rejects(_ store: EngineStore, _ name: String) -> String {
        let path = store.directory.url.appendingPathComponent(name).path
        return store.normalized((try? String(contentsOfFile: path, encoding: .utf8)) ?? "")
            .replacingOccurrences(of: store.directory.path, with: "DIR")
    }

    // MARK: - Nested imports and relationships by key

    /// The first job: tags, owners nesting a passport (one-to-one) and vehicles (to-many) whose
    /// tags are text keys (Cy's "rusty" matches nothing), free passports, people linked to a
    /// passport by its number (Fay's "P-404" matches nothing), vehicles linked to tags by text keys
    /// at the top level (Saab's "blue" matches nothing).
    static func nestedJob(_ store: EngineStore) -> String {
        """
        \(jobStore(store, creating: true))
        model: "\(garage)"
        steps:
          - import: {source: "\(fixture("tags.ndjson"))", entity: Tag}
          - import: {source: "\(fixture("owners.ndjson"))", entity: Person, nested: true, rejects: owners.rejects.ndjson, max_rejects: unlimited}
          - import: {source: "\(fixture("passports-free.ndjson"))", entity: Passport}
          - import: {source: "\(fixture("vehicles-by-tag.ndjson"))", entity: Vehicle, nested: true, rejects: vehicles.rejects.ndjson, max_rejects: unlimited}

        """
    }

    /// The job that links people to a passport by its number through `relationships:` (Fay's
    /// "P-404" matches nothing): the side of the one-to-one that a ferry store does not keep.
    static func passportJob(_ store: EngineStore) -> String {
        """
        \(jobStore(store, creating: false))
        model: "\(garage)"
        steps:
          - import:
              source: "\(fixture("people-by-passport.csv"))"
              entity: Person
              relationships: {passport: {field: passportNumber, match: number}}
              rejects: people.rejects.ndjson
              max_rejects: unlimited

        """
    }

    /// The job that imports `owners-again.ndjson` nested, with `on_conflict: ${policy}` and the
    /// step keys in `extra`.
    static func nestedAgainJob(_ store: EngineStore, extra: String = "") -> String {
        """
        \(jobStore(store, creating: false))
        model: "\(garage)"
        steps:
          - import: {source: "\(fixture("owners-again.ndjson"))", entity: Person, nested: true, on_conflict: "${policy}", rejects: again.rejects.ndjson, max_rejects: unlimited\(extra)}

        """
    }

    @Test(
        "nested imports and relationships by key, with each conflict policy and a sync: the same objects and the same located rejects on every engine",
        arguments: Engine.available)
    func nestedImportsAndRelationshipsByKey(engine: Engine) throws {
        let outcome = try Self.conforms("nested imports, relationships by key", engine) { engine in
            let store = try EngineStore(engine, name: "nested")
            defer { store.dropSchemas() }
            var outcome: [String: String] = [:]
            outcome["load"] = Self.stepLines(store, try Self.runJob(store, "load", Self.nestedJob(store)))
            for file in ["owners", "vehicles"] {
                outcome["\(file) rejects"] = Self.rejects(store, "\(file).rejects.ndjson")
            }
            for (entity, export) in try Self.exportGarage(store) { outcome["\(entity) after the load"] = export }
            // Each policy over the loaded store, then a sync: error refuses Bob (already there).
            for policy in ["error", "keep", "update", "replace"] {
                let run = try Self.runJob(
                    store, "again-\(policy)", Self.nestedAgainJob(store), params: ["policy=\(policy)"])
                outcome[policy] = Self.stepLines(store, run)
                outcome["\(policy) rejects"] = Self.rejects(store, "again.rejects.ndjson")
                for (entity, export) in try Self.exportGarage(store) { outcome["\(entity) after \(policy)"] = export }
            }
            let sync = try Self.runJob(
                store, "again-sync", Self.nestedAgainJob(store, extra: ", mode: sync, max_delete: none"),
                params: ["policy=update"])
            outcome["sync"] = Self.stepLines(store, sync)
            for (entity, export) in try Self.exportGarage(store) { outcome["\(entity) after the sync"] = export }
            try Self.ferry(["verify", store.location, "--model", Self.garage, "--checks", "all", "--quiet"], in: store)
            return outcome
        }
        try Self.oneToOneByKey(engine)
        // Fixed points, whatever the engine: the located rejects of keys that match nothing.
        #expect(
            outcome["owners rejects"]?.contains(
                #""field":"vehicles[0].tags[1]","reason":"Vehicle.tags: no Tag with label = rusty""#) == true,
            "\(engine): \(outcome["owners rejects"] ?? "")")
        #expect(
            outcome["vehicles rejects"]?.contains(
                #""line":2,"column":45,"field":"tags[0]","reason":"Vehicle.tags: no Tag with label = blue""#) == true,
            "\(engine): \(outcome["vehicles rejects"] ?? "")")
        // The one-to-one linked by a text key, seen from both sides; Cy's record left nothing.
        #expect(
            outcome["Passport after the load"]?.contains(
                #""number":"P-9","issued":"2022-02-02T02:02:02.000002Z","holder.personID":null}"#)
                == true, "\(engine): \(outcome["Passport after the load"] ?? "")")
        #expect(outcome["Person after the load"]?.contains(#""name":"Cy""#) == false)
        #expect(outcome["Vehicle after the load"]?.contains(#""vehicleID":13"#) == false)
        #expect(
            outcome["Vehicle after the load"]?.contains(#"{"vehicleID":15,"maker":"Opel""#) == true,
            "\(engine): \(outcome["Vehicle after the load"] ?? "")")
        #expect(
            outcome["error rejects"]?.contains(
                #""line":1,"column":14,"field":"personID","reason":"another Person already has the same personID (uniqueness constraint)""#
            )
                == true, "\(engine): \(outcome["error rejects"] ?? "")")
        #expect(
            outcome["Person after update"]?.contains(#""personID":2,"name":"Bob 2""#) == true,
            "\(engine): \(outcome["Person after update"] ?? "")")
        #expect(
            outcome["Passport after update"]?.contains(
                #""number":"P-2","issued":"2021-06-01T00:00:00.500Z","holder.personID":2"#)
                == true, "\(engine): \(outcome["Passport after update"] ?? "")")
        // The sync leaves Ann out: their passports go with them (cascade), cars stay.
        #expect(outcome["Person after the sync"]?.contains(#""name":"Ann""#) == false)
        #expect(outcome["Passport after the sync"]?.contains("P-1") == false)
        #expect(outcome["Vehicle after the sync"]?.contains(#""vehicleID":10"#) == true)
    }

    /// What a ferry store (SQLite or PostgreSQL) says of `relationships:` on the side of a
    /// one-to-one whose key it keeps in the other entity.
    static let oneToOneByKeyRefusal =
        "error: Person.passport is one side of a one-to-one whose key this store keeps in Passport.holder; 'relationships:' links only keys kept in Person's rows: map Passport.holder in the step that imports Passport, or link nested objects with 'nested: true'"

    /// A one-to-one linked by a text key through `relationships:` from the side a ferry store does
    /// not keep: a Core Data store keeps both sides and links it (a key that matches nothing is a
    /// located reject); a ferry store refuses the step by name, at the mapping, identically on
    /// SQLite and PostgreSQL, before the steps before it leave anything half done.
    static func oneToOneByKey(_ engine: Engine) throws {
        let store = try EngineStore(engine, name: "onetoone")
        defer { store.dropSchemas() }
        try load(store, model: garage, [("people.ndjson", "Person"), ("passports-free.ndjson", "Passport")])
        let run = try runJob(store, "passports", passportJob(store), exit: engine == .coreData ? 0 : 64)
        guard engine == .coreData else {
            let lines = stepLines(store, run)
            #expect(lines.contains("passports.yml:"), "located at the job: \(lines)")
            #expect(lines.contains(oneToOneByKeyRefusal), "\(engine): \(lines)")
            return
        }
        #expect(
            rejects(store, "people.rejects.ndjson").contains(
                #""line":3,"column":7,"field":"passportNumber","reason":"Person.passport: no Passport with number = P-404""#
            ),
            "\(rejects(store, "people.rejects.ndjson"))")
        #expect(
            try export(store, "Passport", sort: "number", fields: "number,holder.personID", format: "csv")
                .replacingOccurrences(of: "\r\n", with: "\n") == "number,holder.personID\nP-8,\nP-9,5\n")
        #expect(
            try export(
                store, "Person", sort: "personID", fields: "personID,passport.number", where: "personID == 5",
                format: "csv"
            )
            .replacingOccurrences(of: "\r\n", with: "\n") == "personID,passport.number\n5,P-9\n")
        try ferry(["verify", store.location, "--model", garage, "--checks", "all", "--quiet"], in: store)
    }

    // MARK: - Delete rules and key-path updates

    static let fleet = fixture("Fleet.xcdatamodel")

    /// Every Fleet entity, by its key, with its to-one relationships' keys.
    static func exportFleet(_ store: EngineStore) throws -> [String: String] {
        var result: [String: String] = [:]
        for (entity, sort, fields) in [
            ("Company", "name", "name"), ("Depot", "code", "code,company.name"),
            ("Truck", "plate", "plate,load,depot.code,mechanic.name"), ("Mechanic", "name", "name"),
        ] {
            result[entity] = try export(store, model: fleet, entity, sort: sort, fields: fields, format: "csv")
                .replacingOccurrences(of: "\r\n", with: "\n")
        }
        return result
    }

    /// `ferry delete` of `entity` where `predicate` on the Fleet store, requiring exit `status`:
    /// its step line (or its error) with the store's location as `STORE`.
    static func deleteFleet(
        _ store: EngineStore, _ entity: String, where predicate: String, exit status: Int32 = 0
    ) throws -> String {
        let result = try ferry(
            ["delete", "--store", store.location, "--model", fleet, "--entity", entity, "--where", predicate],
            in: store, exit: status)
        return status == 0 ? summary(result) : store.normalized(result.stderr)
    }

    @Test(
        "delete rules deny (the same refusal) and cascade through two levels, and an update through a key path: the same objects on every engine",
        arguments: Engine.available)
    func deleteRulesAndKeyPathUpdate(engine: Engine) throws {
        let outcome = try Self.conforms("delete rules, key-path update", engine) { engine in
            let store = try EngineStore(engine, name: "fleet")
            defer { store.dropSchemas() }
            try Self.load(store, model: Self.fleet, [("fleet.ndjson", "Company"), ("mechanics.ndjson", "Mechanic")])
            var outcome: [String: String] = [:]
            outcome["update"] = Self.summary(
                try Self.update(
                    store, model: Self.fleet, "Truck", where: "depot.company.name == 'Acme' AND mechanic.name != 'Max'",
                    set: "load=9", []))
            // To-ones by text keys through relationships: (T6's depot Z9 matches nothing).
            let trucks = try Self.runJob(
                store, "trucks",
                """
                \(Self.jobStore(store, creating: false))
                model: "\(Self.fleet)"
                steps:
                  - import:
                      source: "\(Self.fixture("trucks-by-key.csv"))"
                      entity: Truck
                      relationships: {depot: {field: depot, match: code}, mechanic: {field: mechanic, match: name, missing: "null"}}
                      rejects: trucks.rejects.ndjson
                      max_rejects: unlimited

                """)
            outcome["trucks by key"] = Self.stepLines(store, trucks)
            outcome["trucks rejects"] = Self.rejects(store, "trucks.rejects.ndjson")
            outcome["deny"] = try Self.deleteFleet(store, "Mechanic", where: "name == 'Max'", exit: 1)
            outcome["delete Ida"] = try Self.deleteFleet(store, "Mechanic", where: "name == 'Ida'")
            outcome["cascade"] = try Self.deleteFleet(store, "Company", where: "name BEGINSWITH 'Ac'")
            for (entity, export) in try Self.exportFleet(store) { outcome[entity] = export }
            try Self.ferry(["verify", store.location, "--model", Self.fleet, "--checks", "all", "--quiet"], in: store)
            return outcome
        }
        // Fixed points: the key path selected T2 and T3 (T1's mechanic is Max); T6's depot matched
        // nothing; Max is kept by deny; Acme's depots and their trucks (T7 linked by key too) went
        // through two levels of cascade; Bolt's depot and its trucks stayed.
        #expect(
            outcome["trucks rejects"]?.contains(
                #""line":3,"column":6,"field":"depot","reason":"Truck.depot: no Depot with code = Z9""#) == true,
            "\(engine): \(outcome["trucks rejects"] ?? "")")
        #expect(
            outcome["deny"]?.contains(
                "error: cannot delete 1 Mechanic object: relationship Mechanic.trucks has delete rule deny and 3 related Truck objects refer to them; nothing was deleted"
            ) == true, "\(engine): \(outcome["deny"] ?? "")")
        #expect(
            outcome["cascade"]?.hasSuffix("deleted 1, cascade 2 Depot, 4 Truck") == true,
            "\(engine): \(outcome["cascade"] ?? "")")
        #expect(outcome["update"]?.contains("updated 2") == true, "\(engine): \(outcome["update"] ?? "")")
        #expect(
            outcome["Mechanic"]?.split(whereSeparator: \.isNewline) == ["name", "Max"],
            "\(engine): \(outcome["Mechanic"] ?? "")")
        #expect(outcome["Depot"]?.split(whereSeparator: \.isNewline) == ["code,company.name", "B1,Bolt"])
        #expect(
            outcome["Truck"]?.split(whereSeparator: \.isNewline) == [
                "plate,load,depot.code,mechanic.name", "T4,4,B1,Max", "T5,5,B1,Max",
            ],
            "\(engine): \(outcome["Truck"] ?? "")")
    }
}
