import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// Relationship mappings through several relationships, as objcio's Moody 2 → 3 mapping model
/// has them (COREDATA.md §4.4): `Mood.continent = $source.country.continent` and
/// `Continent.moods = $source.countries.@distinctUnionOfSets.moods`, stored as
/// `sourcekeypath` + `sourcemappingname`. A Moody-like package is written, a store of its
/// version 2 is filled, and the step runs through the mapping model.
@Suite("Xcode mapping models: key paths through several relationships")
struct XcodeMappingKeyPathTests {
    static let version2 = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="">
            <entity name="Continent" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="countries" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Country" inverseName="continent" inverseEntity="Country"/>
            </entity>
            <entity name="Country" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="continent" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Continent" inverseName="countries" inverseEntity="Continent"/>
                <relationship name="moods" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Mood" inverseName="country" inverseEntity="Mood"/>
            </entity>
            <entity name="Mood" syncable="YES">
                <attribute name="colors" optional="YES" attributeType="String"/>
                <relationship name="country" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Country" inverseName="moods" inverseEntity="Country"/>
            </entity>
        </model>
        """

    /// Version 3: Continent.moods and its inverse Mood.continent are new.
    static let version3 =
        version2
        .replacingOccurrences(
            of: "inverseName=\"continent\" inverseEntity=\"Country\"/>\n",
            with:
                "inverseName=\"continent\" inverseEntity=\"Country\"/>\n        <relationship name=\"moods\" optional=\"YES\" toMany=\"YES\" deletionRule=\"Nullify\" destinationEntity=\"Mood\" inverseName=\"continent\" inverseEntity=\"Mood\"/>\n"
        )
        .replacingOccurrences(
            of: "<attribute name=\"colors\" optional=\"YES\" attributeType=\"String\"/>\n",
            with:
                "<attribute name=\"colors\" optional=\"YES\" attributeType=\"String\"/>\n        <relationship name=\"continent\" optional=\"YES\" maxCount=\"1\" deletionRule=\"Nullify\" destinationEntity=\"Continent\" inverseName=\"moods\" inverseEntity=\"Continent\"/>\n"
        )

    /// An `xcmapping.xml` of the Moody 2 → 3 step with one entity mapping per entry.
    static func mappingXML(_ entities: [XcodeMappingDocument.Entity]) -> String {
        XcodeMappingDocument.xml(
            source: "Moody/Moody.xcdatamodeld/Moody 2.xcdatamodel",
            destination: "Moody/Moody.xcdatamodeld/Moody 3.xcdatamodel", entities: entities)
    }

    static let objcioMapping = mappingXML([
        (
            "Mood", "Mood", ["colors"],
            [
                ("continent", "$source.country.continent", "ContinentToContinent"),
                ("country", "$source.country", "CountryToCountry"),
            ]
        ),
        ("Country", "Country", ["name"], [("continent", nil, nil), ("moods", nil, nil)]),
        (
            "Continent", "Continent", ["name"],
            [("countries", nil, nil), ("moods", "$source.countries.@distinctUnionOfSets.moods", "MoodToMood")]
        ),
    ])

    /// The Moody-like project in `directory`: `Moody/Moody.xcdatamodeld` and `Moody 2-Moody 3.xcmappingmodel`.
    static func project(in directory: TemporaryDirectory, mapping: String) throws -> (package: String, mappings: String)
    {
        let package = directory.file("Moody/Moody.xcdatamodeld")
        for (label, contents) in [("Moody 2", version2), ("Moody 3", version3)] {
            try FileManager.default.createDirectory(
                atPath: "\(package)/\(label).xcdatamodel", withIntermediateDirectories: true)
            _ = try directory.write("Moody/Moody.xcdatamodeld/\(label).xcdatamodel/contents", contents)
        }
        _ = try directory.write(
            "Moody/Moody.xcdatamodeld/.xccurrentversion",
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict><key>_XCCurrentVersionName</key><string>Moody 3.xcdatamodel</string></dict></plist>\n"
        )
        let mappings = directory.file("Migrations")
        try FileManager.default.createDirectory(
            atPath: mappings + "/Moody 2-Moody 3.xcmappingmodel", withIntermediateDirectories: true)
        _ = try directory.write("Migrations/Moody 2-Moody 3.xcmappingmodel/xcmapping.xml", mapping)
        return (package, mappings)
    }

    @Test("the translation: a to-one chain is a key path; the to-many side is written through its inverse")
    func translation() throws {
        let directory = TemporaryDirectory()
        let (package, mappings) = try Self.project(in: directory, mapping: Self.objcioMapping)
        let bundle = try ModelLoader().load(path: package)
        #expect(bundle.versions[1].entity(named: "Mood")?.relationship(named: "continent") != nil)
        #expect(bundle.versions[1].entity(named: "Continent")?.relationship(named: "moods")?.isToMany == true)
        let mapping = try #require(
            try XcodeMappingSearch(folders: [mappings]).mapping(
                from: bundle.versions[0], to: bundle.versions[1], in: bundle))
        #expect(
            mapping.entity(named: "Mood")?.relationship(named: "continent")?.value
                == .keyPath(["country", "continent"]))
        #expect(mapping.entity(named: "Mood")?.relationship(named: "country")?.value == .carry(source: "country"))
        #expect(
            mapping.entity(named: "ContinentToContinent")?.relationship(named: "moods")?.value
                == MappingModel.RelationshipValue.none)
        let yaml = try MappingYAMLWriter.text(of: mapping)
        #expect(yaml.contains("      continent:\n        source: country.continent\n"), "\(yaml)")
    }

    @Test("the step runs: every mood's continent is its country's continent")
    func migration() throws {
        let directory = TemporaryDirectory()
        let (package, mappings) = try Self.project(in: directory, mapping: Self.objcioMapping)
        let bundle = try ModelLoader().load(path: package)
        let path = directory.file("moody.sqlite")
        _ = try Store.open(at: path, model: bundle.versions[0])
        let connection = try Connection(path: path)
        try connection.execute("INSERT INTO Continent (ferry_pk, name) VALUES (1, 'Europe'), (2, 'Oceania')")
        try connection.execute(
            "INSERT INTO Country (ferry_pk, name, continent) VALUES (1, 'France', 1), (2, 'New Zealand', 2), (3, 'Nowhere', NULL)"
        )
        try connection.execute(
            "INSERT INTO Mood (ferry_pk, colors, country) VALUES (1, 'red', 1), (2, 'blue', 2), (3, 'green', 2), (4, 'grey', 3), (5, 'black', NULL)"
        )
        let migrator = Migrator(
            storePath: path, bundle: bundle, options: MigrationOptions(backup: false),
            mappingProvider: MigrationMappings.provider(for: bundle, folders: [mappings]))
        let report = try migrator.run()
        #expect(report.steps.first?.mappingFile?.hasSuffix("Moody 2-Moody 3.xcmappingmodel/xcmapping.xml") == true)
        let moods = try Connection(path: path).rows("SELECT colors, country, continent FROM Mood ORDER BY ferry_pk").map
        { $0.map(\.description) }
        #expect(
            moods == [
                ["red", "1", "1"], ["blue", "2", "2"], ["green", "2", "2"], ["grey", "3", "NULL"],
                ["black", "NULL", "NULL"],
            ])
    }

    @Test(
        "a ferry mapping file says the same with {source: country.continent}; a key path through a to-many or into a to-many is an error"
    )
    func mappingFileKeyPath() throws {
        let directory = TemporaryDirectory()
        let (package, _) = try Self.project(in: directory, mapping: Self.objcioMapping)
        let bundle = try ModelLoader().load(path: package)
        let good = try directory.write(
            "Moody 2-to-Moody 3.yml",
            "entities:\n  Mood:\n    relationships:\n      continent: {source: country.continent}\n")
        let mapping = try MappingLoader().load(path: good, source: bundle.versions[0], destination: bundle.versions[1])
        #expect(
            mapping.entity(named: "Mood")?.relationship(named: "continent")?.value
                == .keyPath(["country", "continent"]))

        try FileManager.default.createDirectory(atPath: directory.file("bad"), withIntermediateDirectories: true)
        let bad = try directory.write(
            "bad/Moody 2-to-Moody 3.yml",
            "entities:\n  Mood:\n    relationships:\n      continent: {source: country.moods}\n  Continent:\n    relationships:\n      moods: {source: countries.moods}\n"
        )
        do {
            _ = try MappingLoader().load(path: bad, source: bundle.versions[0], destination: bundle.versions[1])
            Issue.record("key paths through to-many relationships were accepted")
        } catch let errors as FerryErrors {
            #expect(errors.description.contains("bad/Moody 2-to-Moody 3.yml:4:"), "\(errors)")
            #expect(
                errors.description.contains(
                    "'country.moods': Country.moods is to-many; a key path follows to-one relationships"), "\(errors)")
            #expect(errors.description.contains("'countries.moods': Continent.countries is to-many"), "\(errors)")
        }
    }

    @Test("refused: a to-one through a to-many, a many-side key path whose inverse no mapping sets, an unknown hop")
    func refusals() throws {
        let cases: [(mapping: String, message: String)] = [
            (
                Self.mappingXML([
                    (
                        "Mood", "Mood", ["colors"],
                        [
                            ("continent", "$source.country.moods.country.continent", "ContinentToContinent"),
                            ("country", "$source.country", "CountryToCountry"),
                        ]
                    ),
                    ("Country", "Country", ["name"], []), ("Continent", "Continent", ["name"], []),
                ]),
                "MoodToMood gives Mood.continent the value expression FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"ContinentToContinent\", $source.country.moods.country.continent), which ferry cannot translate: Mood.continent links one object, but the key path 'country.moods.country.continent' goes through to-many relationships"
            ),
            (
                Self.mappingXML([
                    ("Mood", "Mood", ["colors"], [("continent", nil, nil), ("country", nil, nil)]),
                    ("Country", "Country", ["name"], []),
                    (
                        "Continent", "Continent", ["name"],
                        [("moods", "$source.countries.@distinctUnionOfSets.moods", "MoodToMood")]
                    ),
                ]),
                "which ferry cannot translate: ferry writes Continent.moods through its inverse Mood.continent, which no entity mapping sets"
            ),
            (
                Self.mappingXML([
                    ("Mood", "Mood", ["colors"], [("continent", "$source.nation.continent", "ContinentToContinent")]),
                    ("Country", "Country", ["name"], []), ("Continent", "Continent", ["name"], []),
                ]),
                "but Mood has no relationship 'nation'"
            ),
        ]
        for (number, item) in cases.enumerated() {
            let directory = TemporaryDirectory()
            let (package, mappings) = try Self.project(in: directory, mapping: item.mapping)
            let bundle = try ModelLoader().load(path: package)
            do {
                _ = try XcodeMappingSearch(folders: [mappings]).mapping(
                    from: bundle.versions[0], to: bundle.versions[1], in: bundle)
                Issue.record("case \(number) was accepted")
            } catch let errors as FerryErrors {
                #expect(errors.description.contains(item.message), "case \(number): \(errors)")
                #expect(
                    errors.description.contains("Moody 2-Moody 3.xcmappingmodel/xcmapping.xml:"),
                    "case \(number): \(errors)")
            }
        }
    }
}
