import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `ferry migrate` and `ferry check` on Core Data stores whose model has entity hierarchies,
/// through the real binary: a Fleet model (Vehicle ← Car ← SportsCar, Garage, Driver) whose
/// version 2 adds a sub-entity Bus that takes entity number 4 (Car and SportsCar are renumbered)
/// and moves `color` from Car up to Vehicle. The version-1 store is written by `ferry import
/// --layout coredata`, its objects added in Core Data's layout: sub-entity rows in the root's
/// table, a to-one into the hierarchy with its `Z3_` entity column, an ordered to-many's
/// `Z_FOK_` positions, a many-to-many join table, `Z_OPT` above 1 and a `Z_MAX` above the
/// highest key (deleted objects).
@Suite("ferry migrate and ferry check on Core Data stores with entity hierarchies", .serialized)
struct CoreDataHierarchyMigrateCLITests {
    static let header = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
        """
    static let driverAndGarage = """
            <entity name="Driver" representedClassName="Driver" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <relationship name="vehicles" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Vehicle" inverseName="drivers" inverseEntity="Vehicle"/>
            </entity>
            <entity name="Garage" representedClassName="Garage" syncable="YES">
                <attribute name="title" attributeType="String"/>
                <relationship name="favorite" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Vehicle" inverseName="favoriteOf" inverseEntity="Vehicle"/>
                <relationship name="vehicles" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Vehicle" inverseName="garage" inverseEntity="Vehicle"/>
            </entity>
            <entity name="SportsCar" representedClassName="SportsCar" parentEntity="Car" syncable="YES">
                <attribute name="topSpeed" optional="YES" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
            </entity>
        """
    static func vehicle(abstract: Bool = false, color: Bool) -> String {
        """
            <entity name="Vehicle" representedClassName="Vehicle"\(abstract ? " isAbstract=\"YES\"" : "") syncable="YES">
        \(color ? "        <attribute name=\"color\" optional=\"YES\" attributeType=\"String\"/>\n" : "")        <attribute name="name" attributeType="String"/>
                <attribute name="wheels" optional="YES" attributeType="Integer 16" defaultValueString="0" usesScalarValueType="YES"/>
                <relationship name="drivers" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Driver" inverseName="vehicles" inverseEntity="Driver"/>
                <relationship name="favoriteOf" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Garage" inverseName="favorite" inverseEntity="Garage"/>
                <relationship name="garage" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Garage" inverseName="vehicles" inverseEntity="Garage"/>
            </entity>
        """
    }
    static let version1 = """
        \(header)
            <entity name="Car" representedClassName="Car" parentEntity="Vehicle" syncable="YES">
                <attribute name="color" optional="YES" attributeType="String"/>
                <attribute name="seats" optional="YES" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
            </entity>
        \(driverAndGarage)
        \(vehicle(color: false))
        </model>
        """
    static func version2(abstractVehicle: Bool = false) -> String {
        """
        \(header)
            <entity name="Bus" representedClassName="Bus" parentEntity="Vehicle" syncable="YES">
                <attribute name="capacity" optional="YES" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
            </entity>
            <entity name="Car" representedClassName="Car" parentEntity="Vehicle" syncable="YES">
                <attribute name="seats" optional="YES" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
            </entity>
        \(driverAndGarage)
        \(vehicle(abstract: abstractVehicle, color: true))
        </model>
        """
    }

    /// Writes `contents` as version `version` of the model package `package` in `directory`.
    static func writeVersion(
        _ version: String, _ contents: String, package: String, in directory: TemporaryDirectory
    ) throws {
        try FileManager.default.createDirectory(
            atPath: directory.file("\(package)/\(version).xcdatamodel"), withIntermediateDirectories: true)
        _ = try directory.write("\(package)/\(version).xcdatamodel/contents", contents)
    }

    static func selectCurrent(_ version: String, in package: String) throws {
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0">
        <dict>
        \t<key>_XCCurrentVersionName</key>
        \t<string>\(version).xcdatamodel</string>
        </dict>
        </plist>

        """.write(toFile: package + "/.xccurrentversion", atomically: true, encoding: .utf8)
    }

    /// The Fleet package (versions `Fleet` and `Fleet 2`, current `Fleet 2`; `Fleet 3` with an
    /// abstract Vehicle when asked) and a version-1 store of it, in `directory`.
    /// Version 2 with SportsCar out of the hierarchy: a root entity declaring what it inherited.
    static let detachedSportsCar = version2().replacingOccurrences(
        of: """
                <entity name="SportsCar" representedClassName="SportsCar" parentEntity="Car" syncable="YES">
                    <attribute name="topSpeed" optional="YES" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                </entity>
            """,
        with: """
                <entity name="SportsCar" representedClassName="SportsCar" syncable="YES">
                    <attribute name="color" optional="YES" attributeType="String"/>
                    <attribute name="name" attributeType="String"/>
                    <attribute name="seats" optional="YES" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                    <attribute name="topSpeed" optional="YES" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                    <attribute name="wheels" optional="YES" attributeType="Integer 16" defaultValueString="0" usesScalarValueType="YES"/>
                </entity>
            """)

    /// The Fleet package (versions `Fleet` and `Fleet 2`, and `Fleet 3` = `third` when given,
    /// the last current) and a version-1 store of it, in `directory`.
    static func fleet(in directory: TemporaryDirectory, third: String) throws -> (package: String, store: String) {
        let (package, store) = try fleet(in: directory)
        try FileManager.default.createDirectory(
            atPath: "\(package)/Fleet 3.xcdatamodel", withIntermediateDirectories: true)
        _ = try directory.write("Fleet.xcdatamodeld/Fleet 3.xcdatamodel/contents", third)
        try selectCurrent("Fleet 3", in: package)
        return (package, store)
    }

    static func fleet(
        in directory: TemporaryDirectory, abstractVersion: Bool = false
    ) throws -> (package: String, store: String) {
        let package = directory.file("Fleet.xcdatamodeld")
        func write(_ version: String, _ contents: String) throws {
            try writeVersion(version, contents, package: "Fleet.xcdatamodeld", in: directory)
        }
        try write("Fleet", version1)
        try selectCurrent("Fleet", in: package)
        let store = directory.file("Fleet.sqlite")
        let drivers = try directory.write("drivers.csv", "name\nAnn\nBo\n")
        let created = try runFerry([
            "import", drivers, "--store", store, "--model", package, "--entity", "Driver", "--layout", "coredata",
            "--quiet",
        ])
        #expect(created.exitCode == 0, "\(created)")
        let connection = try Connection(path: store, create: false)
        try connection.executeScript(
            """
            INSERT INTO ZVEHICLE (Z_PK, Z_ENT, Z_OPT, ZNAME, ZWHEELS, ZGARAGE, Z_FOK_GARAGE, ZSEATS, ZCOLOR, ZTOPSPEED) VALUES
              (1, 3, 1, 'Cart', 2, 1, 2, NULL, NULL, NULL),
              (2, 4, 2, 'Polo', 4, 1, 1, 5, 'red', NULL),
              (3, 5, 3, 'Zonda', 4, 2, 1, 2, 'silver', 350.5),
              (4, 4, 1, 'Golf', 4, NULL, NULL, 5, NULL, NULL);
            INSERT INTO ZGARAGE (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZFAVORITE, Z3_FAVORITE) VALUES (1, 2, 1, 'North', 3, 5), (2, 2, 1, 'South', 1, 3);
            INSERT INTO Z_1VEHICLES (Z_1DRIVERS, Z_3VEHICLES) VALUES (1, 2), (1, 3), (2, 3);
            UPDATE Z_PRIMARYKEY SET Z_MAX = 6 WHERE Z_NAME = 'Vehicle';
            UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_NAME = 'Garage';
            """)
        try write("Fleet 2", version2())
        if abstractVersion { try write("Fleet 3", version2(abstractVehicle: true)) }
        try selectCurrent(abstractVersion ? "Fleet 3" : "Fleet 2", in: package)
        return (package, store)
    }

    static let vehicleRows =
        "SELECT Z_PK, Z_ENT, Z_OPT, ZNAME, ZWHEELS, ZSEATS, ZTOPSPEED, ZCOLOR, ZGARAGE, Z_FOK_GARAGE FROM ZVEHICLE ORDER BY Z_PK"

    @Test(
        "an inferred step with a new sub-entity and a property moved up: each object keeps its key, Z_OPT and values under its new Z_ENT; Z3_ and Z_FOK_ columns, the join table and Z_MAX kept; verify and export read it back"
    )
    func inferredStep() throws {
        let directory = TemporaryDirectory("ferry-cd-hierarchy")
        let (package, store) = try Self.fleet(in: directory)
        let result = try runFerry(["migrate", store, "--model", package, "--checksums", "--no-backup"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.contains("Car 2, Driver 2, Garage 2, SportsCar 1, Vehicle 1"),
            "each mapping reads its own entity's objects: \(result)")

        // Bus takes number 4: Car 4 → 5, SportsCar 5 → 6; Car's color is now Vehicle's, kept.
        #expect(
            try StoreSnapshot.texts(store, Self.vehicleRows) == [
                ["1", "3", "1", "Cart", "2", nil, nil, nil, "1", "2"],
                ["2", "5", "2", "Polo", "4", "5", nil, "red", "1", "1"],
                ["3", "6", "3", "Zonda", "4", "2", "350.5", "silver", "2", "1"],
                ["4", "5", "1", "Golf", "4", "5", nil, nil, nil, nil],
            ])
        // The favorite's entity column holds the linked object's new Z_ENT.
        #expect(
            try StoreSnapshot.texts(store, "SELECT Z_PK, ZTITLE, ZFAVORITE, Z3_FAVORITE FROM ZGARAGE ORDER BY Z_PK")
                == [["1", "North", "3", "6"], ["2", "South", "1", "3"]])
        #expect(
            try StoreSnapshot.texts(store, "SELECT Z_1DRIVERS, Z_3VEHICLES FROM Z_1VEHICLES ORDER BY 1, 2") == [
                ["1", "2"], ["1", "3"], ["2", "3"],
            ])
        #expect(
            try StoreSnapshot.texts(store, "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") == [
                ["1", "Driver", "0", "2"], ["2", "Garage", "0", "2"], ["3", "Vehicle", "0", "6"],
                ["4", "Bus", "3", "0"], ["5", "Car", "3", "0"], ["6", "SportsCar", "5", "0"],
            ])
        // One table per root, one join table (a sub-entity's inherited relationship has none of its own).
        #expect(
            try StoreSnapshot.texts(store, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map {
                $0[0] ?? ""
            }
                == ["ZDRIVER", "ZGARAGE", "ZVEHICLE", "Z_1VEHICLES", "Z_METADATA", "Z_MODELCACHE", "Z_PRIMARYKEY"])

        // ferry reads it back as version 2: counts include sub-entities, as Core Data counts them.
        let verify = try runFerry(["verify", store, "--model", package])
        #expect(verify.exitCode == 0, "\(verify)")
        for line in ["count Vehicle", "count Car", "count SportsCar", "count Bus"] {
            #expect(verify.stdout.contains(line), "\(verify)")
        }
        #expect(
            verify.stdout.range(of: #"count Car\s+Car\s+PASSED\s+count=3"#, options: .regularExpression) != nil,
            "\(verify)")
        let cars = try runFerry([
            "export", "--store", store, "--model", package, "--entity", "Car", "--format", "json", "--sort", "name",
            "--fields", "name,color,seats,garage", "--quiet",
        ])
        #expect(cars.exitCode == 0, "\(cars)")
        #expect(cars.stdout.contains(#"{"name":"Polo","color":"red","seats":5,"garage":1}"#), "\(cars)")
        #expect(cars.stdout.contains(#"{"name":"Zonda","color":"silver","seats":2,"garage":2}"#), "\(cars)")
        let garages = try runFerry([
            "export", "--store", store, "--model", package, "--entity", "Garage", "--format", "json", "--fields",
            "title,favorite.name", "--quiet",
        ])
        #expect(garages.stdout.contains(#"{"title":"North","favorite.name":"Zonda"}"#), "\(garages)")
    }

    @Test(
        "ferry check of a version-1 snapshot: migrated on a copy, counts per entity with sub-entities, records by key with inherited values; the snapshot untouched"
    )
    func checkSnapshot() throws {
        let directory = TemporaryDirectory("ferry-cd-hierarchy")
        let (package, store) = try Self.fleet(in: directory)
        let before = try FileFingerprint.of(store)
        let expectations = try directory.write(
            "fleet.yml",
            """
            checks: all
            counts: {Vehicle: 4, Car: 3, SportsCar: 1, Bus: 0, Garage: 2, Driver: 2}
            assertions:
              - {entity: Garage, where: "favorite.name == 'Zonda'", count: 1}
              - {entity: Car, where: "color == 'red' AND seats == 5", count: 1}
              - {entity: Vehicle, where: "drivers.@count == 2", count: 1}
            records:
              - entity: SportsCar
                key: {name: "Zonda"}
                expect: {color: "silver", topSpeed: 350.5, seats: 2, wheels: 4}

            """)
        let junit = directory.file("fleet.xml")
        let result = try runFerry(["check", store, "--model", package, "--expect", expectations, "--junit", junit])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("\(store): ok"), "\(result)")
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains("name=\"migrate Fleet → Fleet 2\""), "\(xml)")
        #expect(!xml.contains("<failure"), "\(xml)")
        #expect(try FileFingerprint.of(store) == before)

        // A wrong expectation about a sub-entity fails the snapshot (exit 3).
        let wrong = try directory.write("wrong.yml", "counts: {Car: 2}\n")
        let failed = try runFerry(["check", store, "--model", package, "--expect", wrong])
        #expect(failed.exitCode == 3, "\(failed)")
    }

    @Test(
        "a mapping file that makes new Car objects (distinct): their keys follow every key kept in the shared table; links into the hierarchy reach copied and new objects; Z_FOK_ filled after carried positions"
    )
    func newObjectsInSharedTable() throws {
        let directory = TemporaryDirectory("ferry-cd-hierarchy")
        let (package, store) = try Self.fleet(in: directory)
        // A second Polo (merged by distinct) in South, and South's favorite is that Polo; Cart
        // lost its position (Core Data would have one; ferry gives it the next).
        // Closed before the migration: a WAL store another connection has open is refused.
        do {
            let connection = try Connection(path: store, create: false)
            try connection.executeScript(
                """
                INSERT INTO ZVEHICLE (Z_PK, Z_ENT, Z_OPT, ZNAME, ZWHEELS, ZGARAGE, Z_FOK_GARAGE, ZSEATS) VALUES (5, 4, 1, 'Polo', 4, 2, 2, 3);
                INSERT INTO Z_1VEHICLES (Z_1DRIVERS, Z_3VEHICLES) VALUES (2, 5);
                UPDATE ZGARAGE SET ZFAVORITE = 5, Z3_FAVORITE = 4 WHERE Z_PK = 2;
                INSERT INTO ZGARAGE (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZFAVORITE, Z3_FAVORITE) VALUES (3, 2, 1, 'East', 1, 3);
                UPDATE ZVEHICLE SET Z_FOK_GARAGE = NULL WHERE Z_PK = 1;
                """)
        }
        try FileManager.default.createDirectory(atPath: directory.file("mappings"), withIntermediateDirectories: true)
        let mappings = try directory.write(
            "mappings/Fleet-to-Fleet 2.yml",
            """
            from: "Fleet"
            to: "Fleet 2"
            entities:
              Car:
                distinct: $source.name
                attributes:
                  name: $source.name
                relationships:
                  garage: {source: garage}

            """)
        let result = try runFerry([
            "migrate", store, "--model", package, "--mappings", (mappings as NSString).deletingLastPathComponent,
            "--no-backup",
        ])
        #expect(result.exitCode == 0, "\(result)")
        // Polo and Golf are new objects, keyed after the highest source key (5), whatever ran first.
        #expect(
            try StoreSnapshot.texts(
                store, "SELECT Z_PK, Z_ENT, ZNAME, ZGARAGE, Z_FOK_GARAGE FROM ZVEHICLE ORDER BY Z_PK") == [
                    ["1", "3", "Cart", "1", "2"], ["3", "6", "Zonda", "2", "1"], ["6", "5", "Polo", "1", "1"],
                    ["7", "5", "Golf", nil, nil],
                ])
        #expect(
            try StoreSnapshot.texts(store, "SELECT ZTITLE, ZFAVORITE, Z3_FAVORITE FROM ZGARAGE ORDER BY Z_PK") == [
                ["North", "3", "6"], ["South", "6", "5"], ["East", "1", "3"],
            ])
        #expect(
            try StoreSnapshot.texts(store, "SELECT Z_1DRIVERS, Z_3VEHICLES FROM Z_1VEHICLES ORDER BY 1, 2") == [
                ["1", "3"], ["1", "6"], ["2", "3"], ["2", "6"],
            ])
        #expect(try StoreSnapshot.integers(store, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Vehicle'") == [7])
        let verify = try runFerry(["verify", store, "--model", package])
        #expect(verify.exitCode == 0, "\(verify)")
    }

    @Test("objects of an entity that becomes abstract are refused, naming the mapping and the fix; the store unchanged")
    func abstractRefused() throws {
        let directory = TemporaryDirectory("ferry-cd-hierarchy")
        let (package, store) = try Self.fleet(in: directory, abstractVersion: true)
        let before = try FileFingerprint.of(store)
        let result = try runFerry(["migrate", store, "--model", package])
        #expect(result.exitCode != 0, "\(result)")
        #expect(result.stderr.contains("wrote 1 objects of Vehicle, which is abstract in the new version"), "\(result)")
        #expect(result.stderr.contains("nothing was changed"), "\(result)")
        #expect(try FileFingerprint.of(store) == before)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
                $0.contains("ferry-migrating") || $0.contains("backup")
            }.isEmpty)
    }

    @Test(
        "an entity moved out of its hierarchy (Fleet 2 → 3): its objects move into their own table with their keys and inherited values; links into the old hierarchy that reached them are dropped, the others kept"
    )
    func entityLeavesHierarchy() throws {
        let directory = TemporaryDirectory("ferry-cd-hierarchy")
        let (package, store) = try Self.fleet(in: directory, third: Self.detachedSportsCar)
        let result = try runFerry(["migrate", store, "--model", package, "--checksums", "--no-backup"])
        #expect(result.exitCode == 0, "\(result)")
        // Driver 1, Garage 2, SportsCar 3 (a root now), Vehicle 4, Bus 5, Car 6.
        #expect(
            try StoreSnapshot.texts(
                store, "SELECT Z_PK, Z_ENT, Z_OPT, ZNAME, ZWHEELS, ZSEATS, ZCOLOR, ZTOPSPEED FROM ZSPORTSCAR") == [
                    ["3", "3", "3", "Zonda", "4", "2", "silver", "350.5"]
                ])
        #expect(
            try StoreSnapshot.texts(store, "SELECT Z_PK, Z_ENT, ZNAME, ZCOLOR FROM ZVEHICLE ORDER BY Z_PK") == [
                ["1", "4", "Cart", nil], ["2", "6", "Polo", "red"], ["4", "6", "Golf", nil],
            ])
        // North's favorite was the SportsCar, which is no Vehicle any more; South's is the Cart.
        #expect(
            try StoreSnapshot.texts(store, "SELECT ZTITLE, ZFAVORITE, Z4_FAVORITE FROM ZGARAGE ORDER BY Z_PK") == [
                ["North", nil, nil], ["South", "1", "4"],
            ])
        #expect(
            try StoreSnapshot.texts(store, "SELECT Z_1DRIVERS, Z_4VEHICLES FROM Z_1VEHICLES ORDER BY 1, 2") == [
                ["1", "2"]
            ])
        #expect(
            try StoreSnapshot.texts(store, "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT") == [
                ["1", "Driver", "0"], ["2", "Garage", "0"], ["3", "SportsCar", "0"], ["4", "Vehicle", "0"],
                ["5", "Bus", "4"], ["6", "Car", "4"],
            ])
        // SportsCar's keys came from Vehicle's key space, whose high-water mark is 6 (keys 5 and 6
        // were deleted): a new SportsCar must not get one of them back, so its root keeps 6 too.
        #expect(
            try StoreSnapshot.integers(
                store, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME IN ('SportsCar', 'Vehicle') ORDER BY Z_ENT") == [
                    6, 6,
                ])
        // A new SportsCar saved after the migration (ferry's Core Data writer) gets key 7.
        let added = try directory.write("sportscars.csv", "name\nMiura\n")
        let imported = try runFerry([
            "import", added, "--store", store, "--model", package, "--entity", "SportsCar", "--quiet",
        ])
        #expect(imported.exitCode == 0, "\(imported)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT Z_PK, ZNAME FROM ZSPORTSCAR ORDER BY Z_PK") == [
                ["3", "Zonda"], ["7", "Miura"],
            ])
        #expect(try StoreSnapshot.integers(store, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'SportsCar'") == [7])
        let verify = try runFerry(["verify", store, "--model", package])
        #expect(verify.exitCode == 0, "\(verify)")
    }
}
