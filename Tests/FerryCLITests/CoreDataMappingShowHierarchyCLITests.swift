import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `ferry mapping show` on an Xcode mapping model over an entity hierarchy, through the real
/// binary: Xcode lists, under each sub-entity's entity mapping, every property the sub-entity
/// has, inherited ones included. The Fleet model of ``CoreDataHierarchyMigrateCLITests`` (Vehicle
/// ← Car ← SportsCar) with a mapping model `Fleet` → `Fleet 2` written as Xcode writes one: what
/// `mapping show` prints must load as a mapping file and migrate the store to the same rows as
/// the mapping model itself.
@Suite("ferry mapping show on a mapping model whose entities inherit properties", .serialized)
struct CoreDataMappingShowHierarchyCLITests {
    /// An `xcmapping.xml` mapping each entity of `Fleet` to the same entity of `Fleet 2`, as Xcode
    /// writes one: each entity mapping lists every property the entity has, inherited ones first,
    /// without an expression (Xcode's implicit `$source.<name>`); the garage of each vehicle
    /// with Xcode's `sourcekeypath`/`sourcemappingname` fields.
    static func mappingDocument() -> String {
        let vehicle: [XcodeMappingDocument.Relationship] = [
            ("drivers", nil, nil), ("favoriteOf", nil, nil), ("garage", "$source.garage", "GarageToGarage"),
        ]
        return XcodeMappingDocument.xml(
            source: "Fleet.xcdatamodeld/Fleet.xcdatamodel", destination: "Fleet.xcdatamodeld/Fleet 2.xcdatamodel",
            entities: [
                ("Car", "Car", ["name", "wheels", "color", "seats"], vehicle),
                ("Driver", "Driver", ["name"], [("vehicles", nil, nil)]),
                ("Garage", "Garage", ["title"], [("favorite", nil, nil), ("vehicles", nil, nil)]),
                ("SportsCar", "SportsCar", ["name", "wheels", "color", "seats", "topSpeed"], vehicle),
                ("Vehicle", "Vehicle", ["name", "wheels"], vehicle),
            ])
    }

    /// Every table of a Core Data store ferry migrates, each in key order.
    static let tables = [
        "SELECT * FROM ZVEHICLE ORDER BY Z_PK", "SELECT * FROM ZGARAGE ORDER BY Z_PK",
        "SELECT * FROM ZDRIVER ORDER BY Z_PK", "SELECT * FROM Z_1VEHICLES ORDER BY 1, 2",
        "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT",
    ]

    @Test(
        "mapping show prints a mapping model whose sub-entity mappings list inherited properties; the printed file migrates to the same rows"
    )
    func printedMappingMigratesTheSame() throws {
        let directory = TemporaryDirectory("ferry-mapping-show-hierarchy")
        let (package, store) = try CoreDataHierarchyMigrateCLITests.fleet(in: directory)
        let copy = directory.file("Fleet-yaml.sqlite")
        try FileManager.default.copyItem(atPath: store, toPath: copy)
        try FileManager.default.createDirectory(
            atPath: directory.file("xcode/Fleet.xcmappingmodel"), withIntermediateDirectories: true)
        _ = try directory.write("xcode/Fleet.xcmappingmodel/xcmapping.xml", Self.mappingDocument())

        // Through a ./-relative path, from the folder that holds it.
        let shown = try runFerry(
            ["mapping", "show", "./xcode/Fleet.xcmappingmodel"], cwd: directory.url.path)
        #expect(shown.exitCode == 0, "\(shown)")
        #expect(shown.stdout.contains("SportsCar:"), "\(shown.stdout)")
        try FileManager.default.createDirectory(atPath: directory.file("yaml"), withIntermediateDirectories: true)
        _ = try directory.write("yaml/Fleet-to-Fleet 2.yml", shown.stdout)

        let byModel = try runFerry([
            "migrate", store, "--model", package, "--mappings", directory.file("xcode"), "--no-backup",
        ])
        #expect(byModel.exitCode == 0, "\(byModel)")
        #expect(byModel.stdout.contains("Fleet.xcmappingmodel"), "the mapping model was used: \(byModel)")
        let byFile = try runFerry([
            "migrate", copy, "--model", package, "--mappings", directory.file("yaml"), "--no-backup",
        ])
        #expect(byFile.exitCode == 0, "\(byFile)")
        #expect(byFile.stdout.contains("Fleet-to-Fleet 2.yml"), "the printed file was used: \(byFile)")
        for table in Self.tables {
            let expected = try StoreSnapshot.texts(store, table)
            #expect(!expected.isEmpty, "\(table)")
            #expect(try StoreSnapshot.texts(copy, table) == expected, "\(table)")
        }
        for migrated in [store, copy] {
            let verify = try runFerry(["verify", migrated, "--model", package])
            #expect(verify.exitCode == 0, "\(verify)")
        }
    }
}
