import FerryTestSupport
import Foundation
import Testing

@Suite(
    "ferry model show, diff and convert on Xcode models, through the real binary", .serialized,
    .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
struct XcodeModelCLITests {
    static func sample(_ relative: String) -> String { CoreDataSamples.root.appendingPathComponent(relative).path }
    static let migration = sample(
        "wibosco-CoreDataMigrationRevised/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"
    )
    static let inheritance = sample("3lvis-Sync/Tests/Sync/Models/239.xcdatamodeld")

    @Test("model show lists a package's versions in natural order, the current one, sub-entities and user info")
    func show() throws {
        let result = try runFerry(["model", "show", Self.migration])
        #expect(result.exitCode == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "model CoreDataMigration_Example (current version CoreDataMigration_Example 4)")
        let versions = lines.filter { $0.hasPrefix("version ") }.map {
            $0.components(separatedBy: "  hash").first ?? ""
        }
        #expect(
            versions == [
                "version CoreDataMigration_Example", "version CoreDataMigration_Example 2",
                "version CoreDataMigration_Example 3",
                "version CoreDataMigration_Example 4 (current)",
            ])
        #expect(result.stdout.contains("    softDeleted: bool\n"))

        let sync = try runFerry(["model", "show", Self.inheritance])
        #expect(sync.exitCode == 0, "\(sync)")
        #expect(sync.stdout.contains("  Racecar : Car  hash "))
        #expect(sync.stdout.contains("    remoteID: int64? {sync.isPrimaryKey = YES}"))

        let json = try runFerry(["model", "show", "--json", Self.sample("ZeeQL3/data/Contacts.xcdatamodel")])
        #expect(json.exitCode == 0, "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["current"] as? String == "Contacts")
        let version = try #require((object["versions"] as? [[String: Any]])?.first)
        #expect(
            version["fetch_requests"] as? [String] == ["fetchTheDucks: Person where lastName LIKE \"Duck*\" limit 220"])
        let person = try #require(
            (version["entities"] as? [[String: Any]])?.first { $0["name"] as? String == "Person" })
        #expect(person["relationships"] as? [String] == ["addresses: [Address]? ordered {extraInfo = doIt}"])
    }

    @Test("model diff compares a package's versions, and two version folders")
    func diff() throws {
        let steps = try runFerry([
            "model", "diff", Self.migration, "--from", "CoreDataMigration_Example", "--to",
            "CoreDataMigration_Example 2",
        ])
        #expect(steps.exitCode == 0, "\(steps)")
        #expect(steps.stdout.contains("✓ attribute hexColor: renamed from color"))
        let refused = try runFerry([
            "model", "diff", Self.migration, "--from", "CoreDataMigration_Example 2", "--to",
            "CoreDataMigration_Example 3",
        ])
        #expect(refused.exitCode == 65, "\(refused)")
        #expect(refused.stdout.contains("✗ relationship sections: added (to-many Section, non-optional, starts empty)"))
        let folders = try runFerry([
            "model", "diff", Self.migration + "/CoreDataMigration_Example 3.xcdatamodel",
            Self.migration + "/CoreDataMigration_Example 4.xcdatamodel",
        ])
        #expect(folders.exitCode == 0, "\(folders)")
        #expect(folders.stdout.contains("✓ relationship sections: delete rule cascade → nullify"))
    }

    @Test(
        "model convert round-trips every Core Data sample: xcdatamodeld → YAML bundle → xcdatamodeld shows the same model"
    )
    func convertEverySample() throws {
        let directory = TemporaryDirectory()
        let models = try CoreDataSamples.models()
        #expect(models.count >= 67)
        for (number, path) in models.enumerated() {
            let name = (path as NSString).lastPathComponent
            let yaml = directory.file("\(number)-yaml")
            let back = directory.file("\(number)/\(name)")
            try FileManager.default.createDirectory(
                atPath: directory.file("\(number)"), withIntermediateDirectories: true)
            let toYAML = try runFerry(["model", "convert", path, yaml])
            #expect(toYAML.exitCode == 0, "\(path): \(toYAML)")
            let toXcode = try runFerry(["model", "convert", yaml, back])
            #expect(toXcode.exitCode == 0, "\(path): \(toXcode)")
            let original = try runFerry(["model", "show", "--json", path])
            let converted = try runFerry(["model", "show", "--json", back])
            #expect(converted.exitCode == 0, "\(path): \(converted)")
            #expect(try Self.normalizedShow(converted.stdout) == Self.normalizedShow(original.stdout), "\(path)")
        }
    }

    /// `model show --json` with entities, attributes and relationships sorted (Xcode sorts them
    /// its own way when it writes).
    static func normalizedShow(_ text: String) throws -> String {
        guard var object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let versions = object["versions"] as? [[String: Any]]
        else { return text }
        object["versions"] = versions.map { version in
            var version = version
            let entities = (version["entities"] as? [[String: Any]]) ?? []
            version["entities"] = entities.sorted { ($0["name"] as? String ?? "") < ($1["name"] as? String ?? "") }.map
            { entity in
                var entity = entity
                for key in ["attributes", "relationships"] { entity[key] = (entity[key] as? [String])?.sorted() }
                return entity
            }
            return version
        }
        return String(
            decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test(
        "model convert writes YAML that ferry loads and an .xcdatamodeld with the current version, and never overwrites"
    )
    func convertOutputs() throws {
        let directory = TemporaryDirectory()
        let yaml = directory.file("Migration")
        let result = try runFerry(["model", "convert", Self.migration, yaml])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout
                == "wrote model CoreDataMigration_Example (4 versions, current CoreDataMigration_Example 4) to \(yaml)\n"
        )
        let index = try String(contentsOfFile: yaml + "/model.yml", encoding: .utf8)
        #expect(index.contains("current: CoreDataMigration_Example 4"))
        #expect(index.contains("- CoreDataMigration_Example 2.yml"))
        let version = try String(contentsOfFile: yaml + "/CoreDataMigration_Example 2.yml", encoding: .utf8)
        #expect(version.contains("renamed_from: color"))

        let package = directory.file("Shop.xcdatamodeld")
        let shop = try runFerry([
            "model", "convert", TestPaths.packageRoot.appendingPathComponent("samples/models/Shop").path, package,
        ])
        #expect(shop.exitCode == 0, "\(shop)")
        let current = try String(contentsOfFile: package + "/.xccurrentversion", encoding: .utf8)
        #expect(current.contains("<string>3.xcdatamodel</string>"))
        let shown = try runFerry(["model", "show", package])
        #expect(shown.exitCode == 0, "\(shown)")
        #expect(shown.stdout.hasPrefix("model Shop (current version 3)"))

        let again = try runFerry(["model", "convert", Self.migration, yaml])
        #expect(again.exitCode == 64, "\(again)")
        #expect(again.stderr.contains("'\(yaml)' already exists; ferry does not overwrite it"))
        #expect(try String(contentsOfFile: yaml + "/model.yml", encoding: .utf8) == index)
    }

    @Test("a malformed contents file is reported at file:line:column, exit 64, by every command that reads models")
    func malformed() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(
            atPath: directory.file("Bad.xcdatamodeld/Bad.xcdatamodel"), withIntermediateDirectories: true)
        let contents = try directory.write(
            "Bad.xcdatamodeld/Bad.xcdatamodel/contents",
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Car" syncable="YES">
                    <attribute name="name" attributeType="String"/>
                </entty>
            </model>
            """)
        for arguments in [
            ["model", "show", directory.file("Bad.xcdatamodeld")],
            ["model", "convert", directory.file("Bad.xcdatamodeld"), directory.file("out")],
            [
                "import", directory.file("cars.csv"), "--store", directory.file("cars.sqlite"), "--model",
                directory.file("Bad.xcdatamodeld"), "--entity", "Car",
            ],
        ] {
            let result = try runFerry(arguments)
            #expect(result.exitCode == 64, "\(arguments): \(result)")
            #expect(result.stderr.hasPrefix("\(contents):5:"), "\(result)")
            #expect(result.stderr.contains("error: malformed XML"), "\(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("out")))
        #expect(!FileManager.default.fileExists(atPath: directory.file("cars.sqlite")))
    }

    @Test("importing with a model that uses inheritance is refused, naming the entity and the feature")
    func storeRefusesInheritance() throws {
        let directory = TemporaryDirectory()
        let csv = try directory.write("passengers.csv", "name,remoteID\nAda,1\n")
        let result = try runFerry([
            "import", csv, "--store", directory.file("cars.sqlite"), "--model", Self.inheritance, "--entity",
            "Passenger",
        ])
        #expect(result.exitCode == 64, "\(result)")
        #expect(
            result.stderr.contains(
                "a ferry store cannot hold entity inheritance: entity 'Racecar' has parent entity 'Car' yet"),
            "\(result)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("cars.sqlite")))

        let job = try directory.write(
            "job.yml",
            """
            store: cars.sqlite
            model: \(Self.inheritance)
            steps:
              - import: {entity: Passenger, source: passengers.csv}
            """)
        let validated = try runFerry(["validate", job])
        #expect(validated.exitCode == 64, "\(validated)")
        #expect(validated.stderr.contains("239.xcdatamodel/contents:"), "\(validated)")
        #expect(validated.stderr.contains("entity 'Sedan' has parent entity 'Car'"), "\(validated)")
    }

    @Test("export --fetch NAME runs a fetch request stored in the model: its entity, predicate and limit")
    func exportStoredFetchRequest() throws {
        let directory = TemporaryDirectory()
        let model = try directory.write(
            "people.yml",
            """
            entities:
              Person:
                attributes:
                  name: {type: string, optional: false}
                  lastName: string
                unique: [name]
            fetch_requests:
              ducks: {entity: Person, predicate: 'lastName LIKE "Duck*"', limit: 2}
              broken: {entity: Person, predicate: "lastName ==="}
            """)
        let csv = try directory.write(
            "people.csv", "name,lastName\nDonald,Duck\nDaisy,Duck\nDewey,Duckling\nMickey,Mouse\n")
        let store = directory.file("people.sqlite")
        let imported = try runFerry([
            "import", csv, "--store", store, "--model", model, "--entity", "Person", "--quiet",
        ])
        #expect(imported.exitCode == 0, "\(imported)")

        let ducks = try runFerry([
            "export", "--store", store, "--fetch", "ducks", "--format", "csv", "--sort", "name", "--quiet",
        ])
        #expect(ducks.exitCode == 0, "\(ducks)")
        #expect(ducks.stdout == "name,lastName\r\nDaisy,Duck\r\nDewey,Duckling\r\n")
        let narrowed = try runFerry([
            "export", "--store", store, "--model", model, "--fetch", "ducks", "--where", "name BEGINSWITH 'Do'",
            "--limit", "10", "--format", "ndjson", "--quiet",
        ])
        #expect(narrowed.exitCode == 0, "\(narrowed)")
        #expect(narrowed.stdout == "{\"name\":\"Donald\",\"lastName\":\"Duck\"}\n")

        let unknown = try runFerry(["export", "--store", store, "--fetch", "duck", "--format", "csv"])
        #expect(unknown.exitCode == 64, "\(unknown)")
        #expect(
            unknown.stderr.contains("has no fetch request 'duck' (it has ducks, broken); did you mean 'ducks'?"),
            "\(unknown)")
        let broken = try runFerry([
            "export", "--store", store, "--model", model, "--fetch", "broken", "--format", "csv",
        ])
        #expect(broken.exitCode == 64, "\(broken)")
        #expect(broken.stderr.hasPrefix("\(model):9:"), "\(broken)")
        let neither = try runFerry(["export", "--store", store, "--format", "csv"])
        #expect(neither.exitCode == 64, "\(neither)")
        #expect(neither.stderr.contains("pass --entity (the entity to export) or --fetch"), "\(neither)")
    }

    @Test(
        "a job that maps a field to a transient attribute is refused at that field; without the mapping the column is not stored"
    )
    func transientAttributes() throws {
        let directory = TemporaryDirectory()
        try directory.write(
            "m.yml",
            """
            entities:
              Sensor:
                attributes:
                  id: {type: int64, optional: false}
                  reading: double
                  smoothed: {type: double, transient: true}
                unique: [id]
            """)
        try directory.write("s.csv", "id,reading,smoothed\n1,2.5,3\n")
        let job = try directory.write(
            "job.yml",
            """
            store: j.sqlite
            model: m.yml
            steps:
              - import:
                  entity: Sensor
                  source: s.csv
                  fields:
                    id: id
                    smoothed: smoothed
            """)
        let refused = try runFerry(["run", job])
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(
            refused.stderr.contains("\(job):9:9: error: 'Sensor.smoothed' is transient: it has no storage"),
            "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("j.sqlite")))

        let imported = try runFerry([
            "import", directory.file("s.csv"), "--store", directory.file("s.sqlite"), "--model",
            directory.file("m.yml"), "--entity", "Sensor", "--quiet",
        ])
        #expect(imported.exitCode == 0, "\(imported)")
        let exported = try runFerry([
            "export", "--store", directory.file("s.sqlite"), "--entity", "Sensor", "--format", "ndjson", "--quiet",
        ])
        #expect(exported.stdout == "{\"id\":1,\"reading\":2.5}\n", "\(exported)")
    }
}
