import FerryTestSupport
import Foundation
import Testing

/// The hierarchy cell of the conformance suite, on the engine that holds entity inheritance
/// (Core Data's layout; a ferry store refuses it, see ``hierarchyRefusedOnFerryLayout(engine:)``):
/// the Cars model (an abstract root with attributes on every level, a one-to-one with both sides
/// stored, a many-to-many declared on the root and inherited, a transient) through import,
/// updates and deletes on a sub-entity, export, verify and a lightweight migration that adds an
/// attribute to a sub-entity (`CarsVersions.xcdatamodeld`).
extension EngineConformanceTests {
    static let carsVersions = fixture("CarsVersions.xcdatamodeld")

    /// Every car's stored row, read from the shared root table (`ZCAR`): the entity number, the
    /// version (`Z_OPT`), the key, the root's and both sub-entities' columns, by key.
    static func carRows(_ store: EngineStore, extra: String = "") throws -> [String] {
        try StoreSnapshot.texts(
            store.location,
            "SELECT Z_ENT, Z_OPT, ZCARID, ZMAKER, ZTOPSPEED, ZISLIMITEDEDITION\(extra) FROM ZCAR ORDER BY ZCARID"
        ).map { $0.map { $0 ?? "NULL" }.joined(separator: "|") }
    }

    /// The cars of `entity` as CSV sorted by key, with `fields`.
    static func exportCars(
        _ store: EngineStore, model: String = cars, _ entity: String, fields: String
    ) throws -> String {
        try export(store, model: model, entity, sort: "carID", fields: fields, format: "csv")
            .replacingOccurrences(of: "\r\n", with: "\n")
    }

    @Test(
        "a hierarchy through import, sub-entity updates and deletes, export, verify and a migration adding a sub-entity's attribute"
    )
    func hierarchyLifecycle() throws {
        let store = try EngineStore(.coreData, name: "carslife")
        try Self.loadCars(store)
        let before = try Self.carRows(store)
        #expect(before.count == 4, "\(before)")

        // An update of a sub-entity changes its rows only (values and Z_OPT), also for an
        // attribute of the root, and a dry run counts them only.
        let dry = try Self.update(
            store, model: Self.cars, "SportCar", where: "TRUEPREDICATE", set: "maker=Sporty", ["--dry-run"])
        #expect(dry.stdout.contains("(dry run, rolled back): updated 2 in"), "\(dry.stdout)")
        #expect(try Self.carRows(store) == before, "a dry run changes nothing")
        try Self.update(store, model: Self.cars, "SportCar", where: "TRUEPREDICATE", set: "maker=Sporty")
        try Self.update(store, model: Self.cars, "LuxuryCar", where: "carID == 4", set: "isLimitedEdition=false")
        let after = try Self.carRows(store)
        for (old, new) in zip(before, after) {
            let key = old.split(separator: "|")[2]
            switch key {
            case "1", "2": #expect(new.contains("|Sporty|") && new != old, "\(old) → \(new)")
            case "4": #expect(new.hasSuffix("|Rolls|NULL|0"), "\(old) → \(new)")
            default: #expect(new == old, "the luxury BMW is untouched: \(old) → \(new)")
            }
        }
        #expect(
            try Self.exportCars(store, "LuxuryCar", fields: "carID,maker,isLimitedEdition,plate.text")
                == "carID,maker,isLimitedEdition,plate.text\n3,BMW,true,B-3\n4,Rolls,false,\n")
        #expect(
            try Self.exportCars(store, "Car", fields: "carID,maker,plate.text")
                == "carID,maker,plate.text\n1,Sporty,B-1\n2,Sporty,\n3,BMW,B-3\n4,Rolls,\n")
        // The inherited many-to-many from the other side, and the one-to-one from both.
        #expect(
            try Self.export(
                store, model: Self.cars, "Driver", sort: "name", fields: "name", where: "ANY cars.carID == 3"
            )
            .split(whereSeparator: \.isNewline) == [#"{"name":"Dan"}"#, #"{"name":"Eve"}"#])
        #expect(
            try Self.export(store, model: Self.cars, "Plate", sort: "text", fields: "text,car.carID", format: "csv")
                .replacingOccurrences(of: "\r\n", with: "\n")
                == "text,car.carID\nB-1,1\nB-3,3\n")

        // A delete on a sub-entity: its plate goes (cascade), its driver links go, the rest stays.
        try Self.delete(store, model: Self.cars, "SportCar", where: "carID == 1")
        #expect(try Self.keys(store, "Car") == [2, 3, 4])
        #expect(
            try Self.export(store, model: Self.cars, "Plate", sort: "text", fields: "text,car.carID", format: "csv")
                .replacingOccurrences(of: "\r\n", with: "\n")
                == "text,car.carID\nB-3,3\n")
        let eve = try Self.export(
            store, model: Self.cars, "Driver", sort: "name", fields: "name", where: "cars.@count == 1")
        #expect(eve.split(whereSeparator: \.isNewline) == [#"{"name":"Dan"}"#, #"{"name":"Eve"}"#], "\(eve)")
        try Self.ferry(["verify", store.location, "--model", Self.cars, "--checks", "all", "--quiet"], in: store)

        // A lightweight migration that adds SportCar.color: the rows stay, the new column is
        // null, a sub-entity update writes it, and the store verifies at the new version.
        try Self.ferry(["migrate", store.location, "--model", Self.carsVersions, "--no-backup", "--quiet"], in: store)
        let migrated = try Self.carRows(store, extra: ", ZCOLOR")
        #expect(migrated.count == 3, "\(migrated)")
        #expect(migrated.allSatisfy { $0.hasSuffix("|NULL") }, "\(migrated)")
        try Self.update(store, model: Self.carsVersions, "SportCar", where: "TRUEPREDICATE", set: "color=red")
        #expect(
            try Self.exportCars(store, model: Self.carsVersions, "SportCar", fields: "carID,maker,topSpeed,color")
                == "carID,maker,topSpeed,color\n2,Sporty,240,red\n")
        #expect(
            try Self.exportCars(store, model: Self.carsVersions, "LuxuryCar", fields: "carID,maker,isLimitedEdition")
                == "carID,maker,isLimitedEdition\n3,BMW,true\n4,Rolls,false\n")
        try Self.ferry(
            ["verify", store.location, "--model", Self.carsVersions, "--checks", "all", "--quiet"], in: store)
    }
}
