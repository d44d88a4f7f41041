import FerryTestSupport
import Foundation
import Testing

/// The store cells of the conformance suite: export in every format with predicates on dates
/// and key paths, `ferry copy` between engines, `ferry check` and a migration with a mapping
/// file; and the model features a ferry store or a Core Data store holds or refuses.
extension EngineConformanceTests {
    /// Export formats `ferry export --help` lists.
    static let exportFormats = ["csv", "tsv", "json", "ndjson"]

    /// Where each engine's store is copied: a file into PostgreSQL, PostgreSQL back into a file,
    /// a Core Data store into a ferry store file (and into PostgreSQL, in the test).
    static func copyDestination(of engine: Engine) -> Engine {
        engine == .sqlite && Engine.available.contains(.postgres) ? .postgres : .sqlite
    }

    @Test(
        "export in every format with date and key-path predicates, copy to another engine, check, and migrate with a mapping file: the same objects on every engine",
        arguments: Engine.available)
    func exportCopyCheckAndMappedMigration(engine: Engine) throws {
        let outcome = try Self.conforms("export, copy, check, mapped migration", engine) { engine in
            let store = try EngineStore(engine, name: "stores")
            defer { store.dropSchemas() }
            try Self.loadGarage(store)
            var outcome: [String: String] = [:]
            // A date between two milliseconds compared with one on the millisecond, and one
            // written with sub-millisecond digits; the one-to-one, to-one and to-many paths.
            for format in Self.exportFormats {
                outcome["Person as \(format)"] = try Self.export(
                    store, "Person", sort: "born", fields: Self.personFields,
                    where: "born >= CAST('1980-02-03T04:05:06.123Z', 'NSDate') OR passport.number == 'P-2'",
                    format: format)
            }
            outcome["Vehicle"] = try Self.export(
                store, "Vehicle", sort: "vehicleID", fields: "vehicleID,maker,owner.personID",
                where:
                    "owner.born == CAST('1980-02-03T04:05:06.123456Z', 'NSDate') AND ANY tags.label IN {'fast', 'old'}",
                format: "csv")
            outcome["Passport"] = try Self.export(
                store, "Passport", sort: "number", fields: "number,issued,holder.personID",
                where: "holder.born > '1980-02-03T04:05:06.1234Z' AND holder.vehicles.@count > 0", format: "json")

            let copy = try store.sibling(Self.copyDestination(of: engine), name: "copy")
            defer { copy.dropSchemas() }
            let model = engine == .coreData ? ["--model", Self.garage] : []
            try Self.ferry(["copy", store.location, copy.location, "--quiet"] + model, in: store)
            for (entity, export) in try Self.exportGarage(copy) { outcome["copy: \(entity)"] = export }
            if engine == .coreData, Engine.available.contains(.postgres) {
                // Into PostgreSQL too (through a ferry store file): the same objects.
                let postgres = try store.sibling(.postgres, name: "copypg")
                defer { postgres.dropSchemas() }
                try Self.ferry(["copy", store.location, postgres.location, "--quiet"] + model, in: store)
                let copied = try Self.exportGarage(postgres)
                for (entity, export) in copied {
                    #expect(export == outcome["copy: \(entity)"], "Core Data → PostgreSQL: \(entity)")
                }
            }

            let mappings = ["--mappings", Self.fixture("mappings")]
            if engine == .postgres {
                let refused = try Self.ferry(
                    ["check", store.location, "--model", Self.garageVersions, "--quiet"] + mappings, in: store,
                    exit: 64)
                #expect(refused.stderr.contains(Self.checkRefusal), "\(refused.stderr)")
            } else {
                let checked = try Self.ferry(
                    ["check", store.location, "--model", Self.garageVersions] + mappings, in: store)
                #expect(checked.stdout.contains("1 of 1 snapshot passed"), "\(engine): \(checked.stdout)")
            }
            try Self.ferry(
                ["migrate", store.location, "--model", Self.garageVersions, "--no-backup", "--quiet"] + mappings,
                in: store)
            outcome["Person after the mapped migration"] = try Self.export(
                store, model: Self.garageVersions, "Person", sort: "personID", fields: Self.personFieldsV2)
            outcome["Vehicle after the mapped migration"] = try Self.export(
                store, model: Self.garageVersions, "Vehicle", sort: "vehicleID", fields: "vehicleID,owner.personID")
            try Self.ferry(
                ["verify", store.location, "--model", Self.garageVersions, "--checks", "all", "--quiet"], in: store)
            return outcome
        }
        // Fixed points: Bob (1975), Dee (…06.123), Ann (…06.123456), in the instants' order.
        let people = (outcome["Person as csv"] ?? "").split(whereSeparator: \.isNewline).dropFirst().map {
            $0.prefix(while: { $0 != "," })
        }
        #expect(people == ["2", "4", "1"], "\(engine): \(outcome["Person as csv"] ?? "")")
        #expect(outcome["Person as ndjson"]?.contains("04:05:06.123456Z") == true)
        #expect(
            outcome["Vehicle"]?.split(whereSeparator: \.isNewline) == [
                "vehicleID,maker,owner.personID", "10,BMW,1", "11,Fiat,1",
            ],
            "\(engine)")
        #expect(outcome["Passport"]?.contains(#""number":"P-1""#) == true, "\(engine): \(outcome["Passport"] ?? "")")
        #expect(outcome["Passport"]?.contains(#""number":"P-2""#) == false, "\(outcome["Passport"] ?? "")")
        #expect(outcome["copy: Person"]?.contains(#""passport.number":"P-1""#) == true)
        #expect(outcome["copy: Person"]?.contains("04:05:06.123456Z") == true)
        let mapped = outcome["Person after the mapped migration"] ?? ""
        #expect(mapped.contains(#"{"personID":1,"name":"Ann","nickname":"ann!","born""#), "\(engine): \(mapped)")
        #expect(mapped.contains(#""grade":13"#), "\(engine): \(mapped)")
        #expect(outcome["Vehicle after the mapped migration"]?.contains(#""vehicleID":11"#) == false)
    }

    /// What `ferry check` says of a PostgreSQL store.
    static let checkRefusal =
        "is a postgresql: URL; ferry check migrates copies of snapshot files: copy the store into one first (ferry copy URL snapshot.sqlite)"

    // MARK: - Model features

    @Test(
        "compound uniqueness rejects a duplicate pair the same way on every engine; ordered to-many and derived attributes are held or refused by name",
        arguments: Engine.available)
    func modelFeatures(engine: Engine) throws {
        let slotsModel = Self.fixture("Slots.xcdatamodel")
        let outcome = try Self.conforms("model features", engine) { engine in
            let store = try EngineStore(engine, name: "features")
            defer { store.dropSchemas() }
            var outcome: [String: String] = [:]
            // Slot is unique by (day, room): a room twice at other times, two rooms at one time.
            try Self.ferry(
                [
                    "import", Self.fixture("slots.ndjson"), "--store", store.location, "--model", slotsModel,
                    "--entity", "Slot", "--quiet",
                ] + store.creating, in: store)
            let duplicate = try Self.ferry(
                [
                    "import", Self.fixture("slots-dup.ndjson"), "--store", store.location, "--model", slotsModel,
                    "--entity", "Slot", "--quiet",
                ], in: store, exit: 2)
            outcome["duplicate pair"] = duplicate.stderr
            outcome["Slot"] = try Self.export(
                store, model: slotsModel, "Slot", sort: "day,room", fields: "day,room,title", format: "csv")
            return outcome
        }
        #expect(
            outcome["duplicate pair"]?.contains(
                "slots-dup.ndjson:1:9: error: another Slot already has the same day, room (uniqueness constraint) (record 1)"
            ) == true, "\(engine): \(outcome["duplicate pair"] ?? "")")
        let slots = (outcome["Slot"] ?? "").split(whereSeparator: \.isNewline).map(String.init)
        #expect(slots.last == "2024-05-01T09:00:00.000001Z,A,", "sorted by instant: \(slots)")
        #expect(slots.count == 4, "\(slots)")

        // A derived attribute: refused by every engine, naming it.
        let store = try EngineStore(engine, name: "derived")
        defer { store.dropSchemas() }
        let derived = try Self.ferry(
            [
                "import", Self.fixture("players.ndjson"), "--store", store.location, "--model",
                Self.fixture("Scores.xcdatamodel"), "--entity", "Player", "--quiet",
            ] + store.creating, in: store, exit: 64)
        #expect(derived.stderr.contains("Scores.xcdatamodel/contents:5:9: error: "), "\(derived.stderr)")
        #expect(
            derived.stderr.contains("Player.scoreCount") && derived.stderr.contains("derived"), "\(derived.stderr)")

        // An ordered to-many: a Core Data store keeps the order of the array; a ferry store refuses it.
        let routes = engine == .coreData ? try EngineStore(engine, name: "routes") : store
        let routesModel = Self.fixture("Routes.xcdatamodel")
        let imported = try Self.ferry(
            [
                "import", Self.fixture("routes.ndjson"), "--store", routes.location, "--model", routesModel,
                "--entity", "Route", "--nested", "--quiet",
            ] + routes.creating, in: routes, exit: engine == .coreData ? 0 : 64)
        guard engine == .coreData else {
            #expect(
                imported.stderr.contains(
                    "Routes.xcdatamodel/contents:5:9: error: a ferry store cannot hold ordered to-many relationships: 'Route.stops' is ordered yet"
                ), "\(engine): \(imported.stderr)")
            return
        }
        let stops = try runProgram(
            "/usr/bin/sqlite3",
            [
                routes.location,
                "SELECT s.ZNAME FROM Z_1STOPS AS j JOIN ZSTOP AS s ON s.Z_PK = j.Z_2STOPS ORDER BY j.Z_FOK_2STOPS",
            ])
        #expect(stops.stdout == "c\na\nb\n", "\(stops)")
        try Self.ferry(
            ["verify", routes.location, "--model", routesModel, "--checks", "all", "--quiet"], in: routes)
    }
}
