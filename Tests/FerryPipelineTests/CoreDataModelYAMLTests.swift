import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@Suite("YAML models: inheritance, ordered to-many and the other Core Data concepts")
struct CoreDataModelYAMLTests {
    static let model = """
        name: Garage
        version: "1"
        version_identifier: v1
        entities:
          Vehicle:
            abstract: true
            class_name: MyApp.Vehicle
            user_info: {sync.remoteKey: vehicle, note: ""}
            attributes:
              plate: {type: string, optional: false}
              speed: {type: double, transient: true}
              photo: {type: transformable, transformer: NSSecureUnarchiveFromData, value_class: UIImage}
              link: object_id
              wheels: {type: int16, derived: "parts.@count"}
            relationships:
              parts: {destination: Part, to_many: true, ordered: true, inverse: vehicle, user_info: {kind: composition}}
            indexes:
              - {name: byPlate, attributes: [plate, wheels], descending: [wheels]}
            fetched_properties:
              heavyParts: {entity: Part, predicate: "weight > 10"}
          Car:
            parent: Vehicle
            attributes:
              seats: int16
            unique: [[plate, seats]]
          Part:
            attributes:
              weight: double
            relationships:
              vehicle: {destination: Vehicle, inverse: parts}
        fetch_requests:
          heavy: {entity: Part, predicate: "weight > 100", limit: 5, batch_size: 20, options: {returnsDistinctResults: "YES"}}
        configurations:
          Cloud: {entities: [Car, Part], cloudkit: true}
        """

    @Test("every new key loads")
    func loads() throws {
        let directory = TemporaryDirectory()
        let bundle = try ModelLoader().load(path: try directory.write("garage.yml", Self.model))
        let model = bundle.current
        #expect(model.versionIdentifier == "v1")
        let vehicle = try #require(model.entity(named: "Vehicle"))
        #expect(vehicle.isAbstract)
        #expect(vehicle.className == "MyApp.Vehicle")
        #expect(vehicle.userInfo == ["sync.remoteKey": "vehicle", "note": ""])
        #expect(vehicle.attribute(named: "speed")?.isTransient == true)
        #expect(vehicle.attribute(named: "speed")?.isStored == false)
        #expect(vehicle.attribute(named: "photo")?.type == .binary)
        #expect(
            vehicle.attribute(named: "photo")?.coreDataKind
                == .transformable(transformer: "NSSecureUnarchiveFromData", valueClass: "UIImage"))
        #expect(vehicle.attribute(named: "link")?.type == .uri)
        #expect(vehicle.attribute(named: "link")?.coreDataKind == .objectID)
        #expect(vehicle.attribute(named: "wheels")?.derivation == "parts.@count")
        #expect(vehicle.relationship(named: "parts")?.isOrdered == true)
        #expect(vehicle.relationship(named: "parts")?.userInfo == ["kind": "composition"])
        #expect(vehicle.indexes.first?.descending == ["wheels"])
        #expect(
            vehicle.fetchedProperties == [
                FetchedPropertyDescription(
                    name: "heavyParts", entity: "Part", predicate: "weight > 10",
                    location: vehicle.fetchedProperties.first?.location)
            ])
        let car = try #require(model.entity(named: "Car"))
        #expect(car.parent == "Vehicle")
        #expect(model.attribute(named: "plate", in: car)?.isOptional == false)
        let request = try #require(model.fetchRequest(named: "heavy"))
        #expect(
            request.entity == "Part" && request.predicate == "weight > 100" && request.limit == 5
                && request.batchSize == 20)
        #expect(request.options == ["returnsDistinctResults": "YES"])
        #expect(
            model.configurations == [
                ModelConfiguration(name: "Cloud", entities: ["Car", "Part"], usedWithCloudKit: true)
            ])
    }

    @Test("a YAML model with every concept survives YAML → xcdatamodeld → YAML")
    func roundTrip() throws {
        let directory = TemporaryDirectory()
        let original = try ModelLoader().load(path: try directory.write("garage.yml", Self.model))
        try ModelConverter.write(original, to: directory.file("Garage.xcdatamodeld"))
        let xcode = try ModelLoader().load(path: directory.file("Garage.xcdatamodeld"))
        try ModelConverter.write(xcode, to: directory.file("again"))
        let yaml = try ModelLoader().load(path: directory.file("again"))
        var named = xcode
        named.name = original.name
        for index in named.versions.indices { named.versions[index].name = original.name }
        #expect(ModelComparison.difference(named, original) == nil)
        #expect(ModelComparison.difference(yaml, xcode) == nil)
        #expect(xcode.current.versionHash == original.current.versionHash)
        let contents = try String(
            contentsOfFile: directory.file("Garage.xcdatamodeld/1.xcdatamodel/contents"), encoding: .utf8)
        #expect(contents.contains("<entity name=\"Car\" parentEntity=\"Vehicle\" syncable=\"YES\">"))
        #expect(
            contents.contains(
                "attributeType=\"Transformable\" valueTransformerName=\"NSSecureUnarchiveFromData\" customClassName=\"UIImage\""
            ))
        #expect(
            contents.contains("<attribute name=\"speed\" optional=\"YES\" transient=\"YES\" attributeType=\"Double\""))
        #expect(contents.contains("toMany=\"YES\" deletionRule=\"Nullify\" ordered=\"YES\" destinationEntity=\"Part\""))
        #expect(contents.contains("<fetchIndexElement property=\"wheels\" type=\"Binary\" order=\"descending\"/>"))
    }

    @Test("bad uses of the new keys are located errors")
    func errors() throws {
        let directory = TemporaryDirectory()
        let file = try directory.write(
            "bad.yml",
            """
            entities:
              Car:
                attributes:
                  photo: {type: binary, transformer: NSSecureUnarchiveFromData}
              Person:
                fetched_properties:
                  cars: {predicate: "x > 1"}
            fetch_requests:
              all: {entity: Car, limit: many}
            """)
        let errors = try #require(renderedErrors { _ = try ModelLoader().load(path: file) })
        #expect(
            errors.contains {
                $0.hasPrefix("\(file):4:") && $0.contains("'transformer' applies only to transformable attributes")
            }, "\(errors)")
        #expect(
            errors.contains { $0.hasPrefix("\(file):7:") && $0.contains("fetched property 'cars' needs an 'entity'") },
            "\(errors)")
        #expect(
            errors.contains {
                $0.hasPrefix("\(file):9:") && $0.contains("expected a whole number for 'limit' but found 'many'")
            }, "\(errors)")
        let checked = try #require(
            renderedErrors {
                _ = try ModelLoader().load(
                    path: try directory.write(
                        "checked.yml",
                        """
                        entities:
                          Car:
                            parent: Vehicel
                            attributes:
                              blob: undefined
                              both: {type: int64, transient: true, derived: "a.@count"}
                            relationships:
                              owner: {destination: Person, ordered: true}
                          Loop:
                            parent: Loop
                          Vehicle:
                            attributes:
                              plate: string
                          Person: {}
                        fetch_requests:
                          all: {entity: Truck}
                        """))
            })
        #expect(
            checked.contains {
                $0.contains(":2:3:") && $0.contains("unknown parent entity 'Vehicel' of 'Car'; did you mean 'Vehicle'?")
            }, "\(checked)")
        #expect(checked.contains { $0.contains("undefined attribute 'Car.blob' must be transient") }, "\(checked)")
        #expect(checked.contains { $0.contains("'Car.both' cannot be both transient and derived") }, "\(checked)")
        #expect(
            checked.contains { $0.contains("only to-many relationships can be ordered; 'Car.owner' is to-one") },
            "\(checked)")
        #expect(checked.contains { $0.contains("entity 'Loop' inherits from itself") }, "\(checked)")
        #expect(checked.contains { $0.contains("fetch request 'all' names unknown entity 'Truck'") }, "\(checked)")
    }

    @Test(
        "a store keeps transient attributes out of its tables and refuses ordered to-many and derived attributes, naming each"
    )
    func storeLayout() throws {
        let directory = TemporaryDirectory()
        let refused = try ModelLoader().load(path: try directory.write("garage.yml", Self.model)).current
        let errors = try #require(
            renderedErrors { _ = try Store.open(at: directory.file("garage.sqlite"), model: refused) })
        #expect(
            errors.contains {
                $0.contains("a ferry store cannot hold abstract entities: entity 'Vehicle' is abstract yet")
            }, "\(errors)")
        #expect(
            errors.contains { $0.contains("entity inheritance: entity 'Car' has parent entity 'Vehicle'") }, "\(errors)"
        )
        #expect(
            errors.contains { $0.contains("ordered to-many relationships: 'Vehicle.parts' is ordered") }, "\(errors)")
        #expect(
            errors.contains { $0.contains("derived attributes: 'Vehicle.wheels' is derived from 'parts.@count'") },
            "\(errors)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("garage.sqlite")))

        let plain = try ModelLoader().load(
            path: try directory.write(
                "plain.yml",
                """
                entities:
                  Sensor:
                    attributes:
                      id: {type: int64, optional: false}
                      reading: double
                      smoothed: {type: double, transient: true}
                      scratch: {type: undefined, transient: true}
                      payload: {type: transformable, transformer: ColorTransformer}
                    unique: [[id]]
                """)
        ).current
        let store = try Store.open(at: directory.file("plain.sqlite"), model: plain)
        let columns = try store.read { connection in
            try connection.rows("SELECT name FROM pragma_table_info('Sensor') ORDER BY cid").map { $0[0].text ?? "" }
        }
        #expect(columns == ["ferry_pk", "id", "reading", "payload"])
        #expect(store.model.entity(named: "Sensor")?.attribute(named: "smoothed") == nil)
        // Transient attributes do not change the version hash; stored kinds do.
        var withoutTransient = plain
        withoutTransient.entities[0].attributes.removeAll { $0.isTransient }
        #expect(withoutTransient.versionHash == plain.versionHash)
        var asBinary = withoutTransient
        asBinary.entities[0].attributes[2].coreDataKind = nil
        #expect(asBinary.versionHash != withoutTransient.versionHash)
    }

    @Test("models recorded in stores before the new properties existed still decode")
    func oldModelJSON() throws {
        let json = """
            {"name":"Shop","version":"1","entities":[{"name":"Customer","attributes":[{"name":"id","type":"int64","isOptional":false,\
            "validation":{}}],"relationships":[{"name":"orders","destination":"Order","isToMany":true,"deleteRule":"nullify","isOptional":true}],\
            "uniquenessConstraints":[["id"]],"indexes":[{"attributes":["id"]}],"uniquenessConstraintLocations":[]}]}
            """
        let model = try JSONDecoder().decode(ObjectModel.self, from: Data(json.utf8))
        let customer = try #require(model.entity(named: "Customer"))
        #expect(customer.isAbstract == false && customer.userInfo.isEmpty && customer.fetchedProperties.isEmpty)
        #expect(customer.attributes[0].isTransient == false)
        #expect(customer.relationships[0].isOrdered == false)
        #expect(customer.indexes[0].descending.isEmpty)
        #expect(model.fetchRequests.isEmpty && model.configurations.isEmpty)
    }
}
