import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `ferry migrate` of Core Data stores whose new version has a one-to-one that the step writes
/// on one side only, through the real binary: Core Data stores a one-to-one on both sides
/// (`ZUSER.ZPET` and `ZPET.ZOWNER`), so after the step both columns must agree row by row and
/// `ferry verify` must pass. The version-1 stores are written by `ferry import --layout
/// coredata`, their objects added in Core Data's layout.
@Suite("ferry migrate writes both sides of a Core Data one-to-one", .serialized)
struct CoreDataOneToOneMigrateCLITests {
    static func model(user: String, pet: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Pet" representedClassName="Pet" syncable="YES">
                <attribute name="name" attributeType="String"/>
        \(pet)    </entity>
            <entity name="User" representedClassName="User" syncable="YES">
                <attribute name="name" attributeType="String"/>
        \(user)    </entity>
        </model>
        """
    }

    static func toOne(_ name: String, to destination: String, inverse: String?) -> String {
        let inverseText = inverse.map { " inverseName=\"\($0)\" inverseEntity=\"\(destination)\"" } ?? ""
        return
            "        <relationship name=\"\(name)\" optional=\"YES\" maxCount=\"1\" deletionRule=\"Nullify\" destinationEntity=\"\(destination)\"\(inverseText)/>\n"
    }

    /// The package `NAME.xcdatamodeld` with versions `NAME` (`version1`) and `NAME 2` (`version2`,
    /// current once the store is written), and a version-1 Core Data store `NAME.sqlite`: the
    /// objects of `entity` named Ann, Bo and Cy imported, then `script` run on it.
    static func store(
        _ name: String, in directory: TemporaryDirectory, version1: String, version2: String, entity: String,
        script: String
    ) throws -> (package: String, store: String) {
        typealias Fleet = CoreDataHierarchyMigrateCLITests
        let package = directory.file("\(name).xcdatamodeld")
        try Fleet.writeVersion(name, version1, package: "\(name).xcdatamodeld", in: directory)
        try Fleet.selectCurrent(name, in: package)
        let store = directory.file("\(name).sqlite")
        let names = try directory.write("names.csv", "name\nAnn\nBo\nCy\n")
        let created = try runFerry([
            "import", names, "--store", store, "--model", package, "--entity", entity, "--layout", "coredata",
            "--quiet",
        ])
        #expect(created.exitCode == 0, "\(created)")
        try Connection(path: store, create: false).executeScript(script)
        try Fleet.writeVersion("\(name) 2", version2, package: "\(name).xcdatamodeld", in: directory)
        try Fleet.selectCurrent("\(name) 2", in: package)
        return (package, store)
    }

    /// The Pets package and a version-1 store (``store(_:in:version1:version2:entity:script:)``):
    /// three users, four pets, Ann with pet 2, Bo with pet 3, Cy without one. `bothSides` writes
    /// the version-1 inverse `ZPET.ZOWNER` too.
    static func pets(
        in directory: TemporaryDirectory, version1: String, version2: String, bothSides: Bool
    ) throws -> (package: String, store: String) {
        try store(
            "Pets", in: directory, version1: version1, version2: version2, entity: "User",
            script: """
                INSERT INTO ZPET (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (1, 1, 1, 'Rex'), (2, 1, 1, 'Tom'), (3, 1, 1, 'Kit'), (4, 1, 1, 'Ace');
                UPDATE ZUSER SET ZPET = CASE ZNAME WHEN 'Ann' THEN 2 WHEN 'Bo' THEN 3 END;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 4 WHERE Z_NAME = 'Pet';
                \(bothSides ? "UPDATE ZPET SET ZOWNER = (SELECT Z_PK FROM ZUSER WHERE ZUSER.ZPET = ZPET.Z_PK);" : "")
                """)
    }

    /// Migrates `store` to version 2 (with `arguments`), then checks both sides of the
    /// one-to-one (`pet`, its inverse `owner`: their columns), row by row, and `ferry verify`.
    static func migrateAndCheck(
        _ store: String, package: String, arguments: [String] = [], pet: String, owner: String
    ) throws {
        let result = try runFerry(["migrate", store, "--model", package, "--no-backup"] + arguments)
        #expect(result.exitCode == 0, "\(result)")
        let users = try StoreSnapshot.texts(
            store, "SELECT u.ZNAME, p.ZNAME FROM ZUSER AS u LEFT JOIN ZPET AS p ON p.Z_PK = u.\(pet) ORDER BY u.Z_PK")
        let pets = try StoreSnapshot.texts(
            store, "SELECT p.ZNAME, u.ZNAME FROM ZPET AS p LEFT JOIN ZUSER AS u ON u.Z_PK = p.\(owner) ORDER BY p.Z_PK")
        #expect(users == [["Ann", "Tom"], ["Bo", "Kit"], ["Cy", nil]])
        #expect(
            pets == [["Rex", nil], ["Tom", "Ann"], ["Kit", "Bo"], ["Ace", nil]], "each pet points back to its user")
        let verify = try runFerry(["verify", store, "--model", package])
        #expect(verify.exitCode == 0, "\(verify)")
        #expect(verify.stdout.contains("each linked back"), "\(verify)")
    }

    @Test(
        "an inferred step that adds the inverse of a to-one: the new ZPET.ZOWNER is written from ZUSER.ZPET, and verify passes"
    )
    func inferredNewInverse() throws {
        let directory = TemporaryDirectory("ferry-cd-one-to-one")
        let (package, store) = try Self.pets(
            in: directory,
            version1: Self.model(user: Self.toOne("pet", to: "Pet", inverse: nil), pet: ""),
            version2: Self.model(
                user: Self.toOne("pet", to: "Pet", inverse: "owner"),
                pet: Self.toOne("owner", to: "User", inverse: "pet")),
            bothSides: false)
        try Self.migrateAndCheck(store, package: package, pet: "ZPET", owner: "ZOWNER")
    }

    @Test(
        "a mapping file that re-maps a one-to-one (pet/owner renamed companion/keeper, only companion given): ZPET.ZKEEPER is written from ZUSER.ZCOMPANION, and verify passes"
    )
    func mappedOneToOne() throws {
        let directory = TemporaryDirectory("ferry-cd-one-to-one-mapped")
        let (package, store) = try Self.pets(
            in: directory,
            version1: Self.model(
                user: Self.toOne("pet", to: "Pet", inverse: "owner"),
                pet: Self.toOne("owner", to: "User", inverse: "pet")),
            version2: Self.model(
                user: Self.toOne("companion", to: "Pet", inverse: "keeper"),
                pet: Self.toOne("keeper", to: "User", inverse: "companion")),
            bothSides: true)
        let mappings = directory.file("mappings")
        try FileManager.default.createDirectory(atPath: mappings, withIntermediateDirectories: true)
        _ = try directory.write(
            "mappings/Pets-to-Pets 2.yml",
            """
            entities:
              User:
                relationships:
                  companion: {source: pet}

            """)
        try Self.migrateAndCheck(
            store, package: package, arguments: ["--mappings", mappings], pet: "ZCOMPANION", owner: "ZKEEPER")
    }

    @Test(
        "into a hierarchy: Driver.champion (to Car, whose sub-entity is SportsCar) gets the inverse Car.championOf; the sub-entities' rows point back, the Vehicle does not, and verify passes"
    )
    func inverseIntoHierarchy() throws {
        let directory = TemporaryDirectory("ferry-cd-one-to-one-hierarchy")
        typealias Fleet = CoreDataHierarchyMigrateCLITests
        let vehicles =
            "        <relationship name=\"vehicles\" optional=\"YES\" toMany=\"YES\" deletionRule=\"Nullify\" destinationEntity=\"Vehicle\" inverseName=\"drivers\" inverseEntity=\"Vehicle\"/>\n"
        func champion(inverse: String) -> String {
            vehicles + Self.toOne("champion", to: "Car", inverse: inverse.isEmpty ? nil : inverse)
        }
        let seats =
            "        <attribute name=\"seats\" optional=\"YES\" attributeType=\"Integer 32\" defaultValueString=\"0\" usesScalarValueType=\"YES\"/>\n"
        let version1 = Fleet.version1.replacingOccurrences(of: vehicles, with: champion(inverse: ""))
        let version2 = Fleet.version2().replacingOccurrences(of: vehicles, with: champion(inverse: "championOf"))
            .replacingOccurrences(of: seats, with: seats + Self.toOne("championOf", to: "Driver", inverse: "champion"))
        #expect(version1 != Fleet.version1 && version2.contains("championOf"))
        // Version 1 numbers Car 4 and SportsCar 5: Ann's champion is the SportsCar, Bo's the Car.
        let (package, store) = try Self.store(
            "Fleet", in: directory, version1: version1, version2: version2, entity: "Driver",
            script: """
                INSERT INTO ZVEHICLE (Z_PK, Z_ENT, Z_OPT, ZNAME, ZWHEELS) VALUES (1, 3, 1, 'Cart', 2), (2, 4, 1, 'Polo', 4), (3, 5, 1, 'Zonda', 4);
                UPDATE ZDRIVER SET ZCHAMPION = 3, Z4_CHAMPION = 5 WHERE ZNAME = 'Ann';
                UPDATE ZDRIVER SET ZCHAMPION = 2, Z4_CHAMPION = 4 WHERE ZNAME = 'Bo';
                """)
        let result = try runFerry(["migrate", store, "--model", package, "--no-backup"])
        #expect(result.exitCode == 0, "\(result)")
        // Version 2 numbers Car 5 and SportsCar 6 (Bus is 4).
        #expect(
            try StoreSnapshot.texts(
                store,
                "SELECT v.ZNAME, v.Z_ENT, d.ZNAME FROM ZVEHICLE AS v LEFT JOIN ZDRIVER AS d ON d.Z_PK = v.ZCHAMPIONOF ORDER BY v.Z_PK"
            ) == [["Cart", "3", nil], ["Polo", "5", "Bo"], ["Zonda", "6", "Ann"]])
        #expect(
            try StoreSnapshot.texts(store, "SELECT ZNAME, ZCHAMPION, Z5_CHAMPION FROM ZDRIVER ORDER BY Z_PK") == [
                ["Ann", "3", "6"], ["Bo", "2", "5"], ["Cy", nil, nil],
            ])
        let verify = try runFerry(["verify", store, "--model", package])
        #expect(verify.exitCode == 0, "\(verify)")
    }
}
