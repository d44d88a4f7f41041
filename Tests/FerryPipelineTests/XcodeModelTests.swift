import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@Suite("Xcode models", .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
struct XcodeModelTests {
    static func fixture(_ name: String) -> String { Fixtures.path("xcode/" + name) }

    // MARK: - Reading

    @Test("a package loads every version in natural order, with the current one from .xccurrentversion")
    func package() throws {
        let bundle = try ModelLoader().load(path: Self.fixture("Migration.xcdatamodeld"))
        #expect(bundle.name == "Migration")
        #expect(
            bundle.versions.map(\.version) == [
                "CoreDataMigration_Example", "CoreDataMigration_Example 2", "CoreDataMigration_Example 3",
                "CoreDataMigration_Example 4",
            ])
        #expect(bundle.currentVersion == "CoreDataMigration_Example 4")
        let post = try #require(bundle.version("CoreDataMigration_Example 2")?.entity(named: "Post"))
        #expect(post.attribute(named: "hexColor")?.renamedFrom == "color")
        #expect(post.attribute(named: "content")?.isOptional == true)
        let v4 = try #require(bundle.version("CoreDataMigration_Example 4")?.entity(named: "Post"))
        let softDeleted = try #require(v4.attribute(named: "softDeleted"))
        #expect(softDeleted.type == .bool)
        #expect(softDeleted.isOptional == false)
        #expect(softDeleted.defaultValue == .bool(false))
        let contents = Self.fixture("Migration.xcdatamodeld/CoreDataMigration_Example 4.xcdatamodel/contents")
        #expect(v4.location?.file == contents)
        #expect((v4.location?.line ?? 0) > 1)
    }

    @Test("a stand-alone .xcdatamodel: ordered to-many with maxCount, user info, a stored fetch request")
    func standAloneVersion() throws {
        let bundle = try ModelLoader().load(path: Self.fixture("Contacts.xcdatamodel"))
        #expect(bundle.versions.count == 1)
        #expect(bundle.currentVersion == "Contacts")
        let model = bundle.current
        let person = try #require(model.entity(named: "Person"))
        #expect(person.className == "Person")
        #expect(person.attribute(named: "lastname")?.isOptional == false)
        let addresses = try #require(person.relationship(named: "addresses"))
        #expect(addresses.isToMany && addresses.isOrdered)
        #expect(addresses.maxCount == 20)
        #expect(addresses.inverse == "person")
        #expect(addresses.userInfo == ["extraInfo": "doIt"])
        #expect(model.entity(named: "Address")?.attribute(named: "street")?.userInfo == ["columnName": "street"])
        let request = try #require(model.fetchRequest(named: "fetchTheDucks"))
        #expect(request.entity == "Person")
        #expect(request.predicate == "lastName LIKE \"Duck*\"")
        #expect(request.limit == 220)
        #expect(request.batchSize == 20)
        #expect(request.options["returnDistinctResults"] == "YES")
        // The same folder's contents file names the same model.
        let viaContents = try ModelLoader().load(path: Self.fixture("Contacts.xcdatamodel/contents"))
        #expect(ModelComparison.equal(viaContents, bundle))
    }

    @Test("parent entities: sub-entities inherit, and the store refuses to hold them yet")
    func inheritance() throws {
        let model = try ModelLoader().load(path: Self.fixture("Inheritance.xcdatamodeld")).current
        let racecar = try #require(model.entity(named: "Racecar"))
        #expect(racecar.parent == "Car")
        #expect(model.ancestors(of: racecar).map(\.name) == ["Car"])
        #expect(model.subentities(of: "Car").map(\.name) == ["Racecar", "Sedan"])
        #expect(model.relationship(named: "passengers", in: racecar)?.destination == "Passenger")
        #expect(model.isKind("Sedan", of: "Car"))
        #expect(!model.isKind("Car", of: "Sedan"))
        let passenger = try #require(model.entity(named: "Passenger"))
        #expect(passenger.attribute(named: "remoteID")?.userInfo == ["sync.isPrimaryKey": "YES"])
        #expect(passenger.attribute(named: "remoteID")?.defaultValue == .integer(0))

        let directory = TemporaryDirectory()
        let errors = renderedErrors { _ = try Store.open(at: directory.file("store.sqlite"), model: model) }
        #expect(
            errors?.contains { $0.contains("entity inheritance: entity 'Racecar' has parent entity 'Car'") } == true)
        #expect(errors?.contains { $0.contains("entity 'Sedan'") } == true)
        #expect(!FileManager.default.fileExists(atPath: directory.file("store.sqlite")))
    }

    @Test("every Core Data type: Transformable and URI and UUID and Float")
    func types() throws {
        let model = try ModelLoader().load(path: Self.fixture("Types.xcdatamodeld")).current
        let entity = try #require(model.entities.first { $0.attribute(named: "transformable") != nil })
        let transformable = try #require(entity.attribute(named: "transformable"))
        #expect(transformable.type == .binary)
        #expect(transformable.coreDataKind == .transformable(transformer: nil, valueClass: nil))
        #expect(entity.attribute(named: "uri")?.type == .uri)
        #expect(entity.attribute(named: "uuid")?.type == .uuid)
        #expect(entity.attribute(named: "floatValue")?.type == .float)
        #expect(entity.attribute(named: "floatValue")?.defaultValue == .double(0))
        #expect(entity.attribute(named: "decimal")?.defaultValue == .decimal("0"))
        #expect(entity.attribute(named: "integerString")?.type == .int16)
        #expect(entity.attribute(named: "binaryData")?.type == .binary)
        #expect(entity.attribute(named: "binaryData")?.coreDataKind == nil)
    }

    // MARK: - Every real model

    @Test("every model package of the Core Data samples loads, and every version folder alone")
    func everySample() throws {
        let models = try CoreDataSamples.models()
        #expect(models.count >= 67)
        var failures: [String] = []
        var versions = 0
        for path in models {
            do {
                versions += try ModelLoader().load(path: path).versions.count
            } catch {
                failures.append("\(path): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        let folders = try CoreDataSamples.versionFolders()
        #expect(folders.count == versions)
        for folder in folders {
            #expect(throws: Never.self, "\(folder)") { _ = try ModelLoader().load(path: folder) }
        }
    }

    @Test("every sample round-trips: xcdatamodeld → YAML bundle → xcdatamodeld, and the models are equal")
    func everySampleRoundTrips() throws {
        let directory = TemporaryDirectory()
        for (number, path) in try CoreDataSamples.models().enumerated() {
            let original = try ModelLoader().load(path: path)
            let yaml = directory.file("\(number)-yaml")
            let xcode = directory.file("\(number).xcdatamodeld")
            try ModelConverter.write(original, to: yaml)
            let fromYAML = try ModelLoader().load(path: yaml)
            try ModelConverter.write(fromYAML, to: xcode)
            var back = try ModelLoader().load(path: xcode)
            back.name = original.name
            for index in back.versions.indices { back.versions[index].name = original.name }
            let toYAML = ModelComparison.difference(fromYAML, original)
            #expect(toYAML == nil, "\(path) → YAML")
            let toXcode = ModelComparison.difference(back, original)
            #expect(toXcode == nil, "\(path) → YAML → xcdatamodeld")
            #expect(back.versions.map(\.versionHash) == original.versions.map(\.versionHash), "\(path)")
        }
    }

    // MARK: - Version order

    @Test(
        "versions sort naturally (Model 9 before Model 10), by version identifiers when all have one, or as a model.yml lists them"
    )
    func versionOrder() throws {
        let directory = TemporaryDirectory()
        let labels = ["Model 10", "Model", "Model 2", "Model 9"]
        let package = directory.file("Model.xcdatamodeld")
        for label in labels {
            try XcodeTestModels.writeVersion(label: label, identifier: "", in: package)
        }
        try XcodeTestModels.writeCurrent("Model 9", in: package)
        let bundle = try ModelLoader().load(path: package)
        #expect(bundle.versions.map(\.version) == ["Model", "Model 2", "Model 9", "Model 10"])
        #expect(bundle.currentVersion == "Model 9")

        let identified = directory.file("Identified.xcdatamodeld")
        for (label, identifier) in [("first", "3"), ("second", "1"), ("third", "2")] {
            try XcodeTestModels.writeVersion(label: label, identifier: identifier, in: identified)
        }
        try XcodeTestModels.writeCurrent("first", in: identified)
        #expect(try ModelLoader().load(path: identified).versions.map(\.version) == ["second", "third", "first"])

        let index = try directory.write(
            "model.yml",
            """
            name: Listed
            current: Model 2
            versions:
              - Model.xcdatamodeld/Model 10.xcdatamodel
              - Model.xcdatamodeld/Model 2.xcdatamodel
            """)
        let listed = try ModelLoader().load(path: index)
        #expect(listed.versions.map(\.version) == ["Model 10", "Model 2"])
        #expect(listed.name == "Listed")
        #expect(listed.currentVersion == "Model 2")
    }

    @Test("a synthetic 120-version package loads in order")
    func manyVersions() throws {
        let directory = TemporaryDirectory()
        let package = directory.file("Big.xcdatamodeld")
        for number in 1...120 {
            try XcodeTestModels.writeVersion(
                label: number == 1 ? "Big" : "Big \(number)", identifier: "", in: package, entities: 40)
        }
        try XcodeTestModels.writeCurrent("Big 120", in: package)
        let bundle = try ModelLoader().load(path: package)
        #expect(bundle.versions.count == 120)
        #expect(bundle.versions.first?.version == "Big")
        #expect(bundle.versions.last?.version == "Big 120")
        #expect(bundle.versions[9].version == "Big 10")
        #expect(bundle.current.entities.count == 40)
    }

    // MARK: - Bad input

    @Test("malformed contents XML is reported at file:line:column")
    func malformedXML() throws {
        let directory = TemporaryDirectory()
        let folder = directory.file("Bad.xcdatamodel")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let contents = try directory.write(
            "Bad.xcdatamodel/contents",
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Car" syncable="YES">
                    <attribute name="name" attributeType="String"
                </entity>
            </model>
            """)
        let errors = try #require(renderedErrors { _ = try ModelLoader().load(path: folder) })
        #expect(errors.count == 1)
        #expect(errors[0].hasPrefix("\(contents):5:"), "\(errors)")
        #expect(errors[0].contains("error: malformed XML"), "\(errors)")
    }

    @Test("unknown and invalid attribute values are reported at their element, every one")
    func invalidValues() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(
            atPath: directory.file("Bad.xcdatamodel"), withIntermediateDirectories: true)
        let contents = try directory.write(
            "Bad.xcdatamodel/contents",
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Car" syncable="YES">
                    <attribute name="name" attributeType="Strnig"/>
                    <attribute name="fast" optional="MAYBE" attributeType="Boolean"/>
                    <attribute name="wheels" attributeType="Integer 16" defaultValueString="many"/>
                    <relationship name="owner" maxCount="1" deletionRule="Explode" destinationEntity="Car"/>
                    <wheel name="front"/>
                </entity>
            </model>
            """)
        let errors = try #require(
            renderedErrors { _ = try ModelLoader().load(path: directory.file("Bad.xcdatamodel")) })
        #expect(
            errors.contains {
                $0.hasPrefix("\(contents):4:")
                    && $0.contains("unknown attributeType 'Strnig' for attribute 'Car.name'; did you mean 'String'?")
            }, "\(errors)")
        #expect(
            errors.contains { $0.hasPrefix("\(contents):5:") && $0.contains("invalid value 'MAYBE' for 'optional'") },
            "\(errors)")
        #expect(
            errors.contains { $0.hasPrefix("\(contents):6:") && $0.contains("invalid defaultValueString 'many'") },
            "\(errors)")
        #expect(
            errors.contains { $0.hasPrefix("\(contents):7:") && $0.contains("unknown deletionRule 'Explode'") },
            "\(errors)")
        #expect(
            errors.contains { $0.hasPrefix("\(contents):8:") && $0.contains("unknown element <wheel>") }, "\(errors)")
    }

    @Test("package problems: no versions, a missing contents, a current version that does not exist, an unknown parent")
    func packageProblems() throws {
        let directory = TemporaryDirectory()
        let empty = directory.file("Empty.xcdatamodeld")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        #expect(
            renderedErrors { _ = try ModelLoader().load(path: empty) }?.first?.contains(
                "holds no .xcdatamodel version folder") == true)

        let hollow = directory.file("Hollow.xcdatamodeld/Hollow.xcdatamodel")
        try FileManager.default.createDirectory(atPath: hollow, withIntermediateDirectories: true)
        #expect(
            renderedErrors { _ = try ModelLoader().load(path: directory.file("Hollow.xcdatamodeld")) }?.first?.contains(
                "has no readable 'contents' file") == true)

        let package = directory.file("Wrong.xcdatamodeld")
        try XcodeTestModels.writeVersion(label: "Wrong", identifier: "", in: package)
        try XcodeTestModels.writeVersion(label: "Wrong 2", identifier: "", in: package)
        try XcodeTestModels.writeCurrent("Wrnog 2", in: package)
        let errors = try #require(renderedErrors { _ = try ModelLoader().load(path: package) })
        #expect(
            errors.first?.contains(
                ".xccurrentversion:1:1: error: .xccurrentversion names 'Wrnog 2.xcdatamodel', which is not a version")
                == true, "\(errors)")

        try FileManager.default.createDirectory(
            atPath: directory.file("Orphan.xcdatamodel"), withIntermediateDirectories: true)
        try directory.write(
            "Orphan.xcdatamodel/contents",
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Car" parentEntity="Vehicle" syncable="YES"/>
                <entity name="Loop" parentEntity="Loop2" syncable="YES"/>
                <entity name="Loop2" parentEntity="Loop" syncable="YES"/>
            </model>
            """)
        let orphan = try #require(
            renderedErrors { _ = try ModelLoader().load(path: directory.file("Orphan.xcdatamodel")) })
        #expect(
            orphan.contains { $0.contains(":3:") && $0.contains("unknown parent entity 'Vehicle' of 'Car'") },
            "\(orphan)")
        #expect(orphan.contains { $0.contains("entity 'Loop' inherits from itself") }, "\(orphan)")
    }

    @Test("convert never overwrites, and warns when an .xcdatamodeld cannot keep the version order")
    func convertSafety() throws {
        let directory = TemporaryDirectory()
        let bundle = try ModelLoader().load(path: Fixtures.path("models/Shop"))
        let existing = try directory.write("taken.xcdatamodeld", "mine")
        let errors = renderedErrors { try ModelConverter.write(bundle, to: existing) }
        #expect(errors?.first?.contains("already exists; ferry does not overwrite it") == true)
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "mine")

        var reordered = bundle
        for index in reordered.versions.indices { reordered.versions[index].version = ["b", "a"][index] }
        reordered.currentVersion = "a"
        let warnings = try ModelConverter.write(reordered, to: directory.file("Shop.xcdatamodeld"))
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("read back, they sort as a, b instead of b, a") == true)
        #expect(ModelConverter.format(of: "x.yml") == .yamlFile)
        #expect(ModelConverter.format(of: "x.xcdatamodel") == .xcodeVersion)
        #expect(ModelConverter.format(of: "out/folder") == .yamlBundle)
    }
}

/// Small generated Xcode models for tests.
enum XcodeTestModels {
    /// Writes `<package>/<label>.xcdatamodel/contents` with `entities` entities of 12 attributes.
    static func writeVersion(label: String, identifier: String, in package: String, entities: Int = 2) throws {
        let folder = (package as NSString).appendingPathComponent("\(label).xcdatamodel")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="\(identifier)">

            """
        for number in 0..<entities {
            xml += "    <entity name=\"Entity\(number)\" representedClassName=\"Entity\(number)\" syncable=\"YES\">\n"
            for attribute in 0..<12 {
                xml +=
                    "        <attribute name=\"field\(attribute)\" optional=\"YES\" attributeType=\"\(["String", "Integer 64", "Date", "Boolean"][attribute % 4])\"/>\n"
            }
            xml +=
                "        <relationship name=\"next\" optional=\"YES\" maxCount=\"1\" deletionRule=\"Nullify\" destinationEntity=\"Entity\(number)\" inverseName=\"previous\" inverseEntity=\"Entity\(number)\"/>\n"
            xml +=
                "        <relationship name=\"previous\" optional=\"YES\" maxCount=\"1\" deletionRule=\"Nullify\" destinationEntity=\"Entity\(number)\" inverseName=\"next\" inverseEntity=\"Entity\(number)\"/>\n"
            xml += "    </entity>\n"
        }
        xml += "</model>"
        try xml.write(
            toFile: (folder as NSString).appendingPathComponent("contents"), atomically: true, encoding: .utf8)
    }

    static func writeCurrent(_ label: String, in package: String) throws {
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>_XCCurrentVersionName</key>
        \t<string>\(label).xcdatamodel</string>
        </dict>
        </plist>
        """.write(
            toFile: (package as NSString).appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8
        )
    }
}
