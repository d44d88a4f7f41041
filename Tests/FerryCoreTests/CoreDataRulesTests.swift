import FerryCore
import FerryTestSupport
import Testing

/// The verdicts of Core Data's lightweight-migration rules (Xcode models) where they differ from
/// ferry's (ferry model files): the same two versions judged under both origins.
@Suite("Core Data's lightweight rules for Xcode models")
struct CoreDataRulesTests {
    /// The two versions, both marked as read from `origin`.
    static func pair(_ origin: ModelOrigin, _ edit: (inout ObjectModel) -> Void) -> (ObjectModel, ObjectModel) {
        var old = DiffModels.base()
        old.origin = origin
        var new = DiffModels.edited(from: old, edit)
        new.origin = origin
        return (old, new)
    }

    /// Customer.orders (to-many) becomes `latestOrder` (to-one), Order.customer's inverse follows.
    static func toManyBecomesToOne(_ model: inout ObjectModel) {
        model.entities[0].relationships[0].isToMany = false
    }

    @Test("the rule set follows the models' origin; either side from Xcode means Core Data's rules")
    func ruleSetByOrigin() {
        let (ferryOld, ferryNew) = Self.pair(.ferry) { _ in }
        #expect(ModelDiff(from: ferryOld, to: ferryNew).rules == .ferry)
        let (xcodeOld, xcodeNew) = Self.pair(.xcode) { _ in }
        #expect(ModelDiff(from: xcodeOld, to: xcodeNew).rules == .coreData)
        #expect(ModelDiff(from: ferryOld, to: xcodeNew).rules == .coreData)
        #expect(ModelDiff(from: xcodeOld, to: ferryNew).rules == .coreData)
        #expect(DiffModels.base().origin == .ferry)
    }

    @Test("to-many → to-one: Core Data infers it, ferry's rules refuse it")
    func toManyToOne() throws {
        let (xcodeOld, xcodeNew) = Self.pair(.xcode, Self.toManyBecomesToOne)
        let coreData = ModelDiff(from: xcodeOld, to: xcodeNew)
        let change = try #require(coreData.changes.first { $0.kind == .relationshipCardinalityChanged })
        #expect(change.isInferable)
        #expect(change.detail.contains("lowest primary key"), "\(change.detail)")
        #expect(coreData.isInferable)
        let mapping = try coreData.inferredMapping()
        #expect(mapping.entity(named: "Customer")?.relationship(named: "orders")?.source == "orders")

        let (ferryOld, ferryNew) = Self.pair(.ferry, Self.toManyBecomesToOne)
        let ferry = ModelDiff(from: ferryOld, to: ferryNew)
        #expect(!ferry.isInferable)
        #expect(ferry.refusals.map(\.kind) == [.relationshipCardinalityChanged])
        #expect(ferry.refusals.first?.fix?.contains("mappings/1-to-2.yml") == true)
    }

    @Test("a refused change names a mapping model or a ferry mapping file, and Xcode's own terms")
    func refusalWording() throws {
        let (old, new) = Self.pair(.xcode) { model in
            model.entities[0].attributes.append(AttributeDescription(name: "score", type: .int32, isOptional: false))
            model.entities[1].attributes[1].type = .double
        }
        let diff = ModelDiff(from: old, to: new)
        #expect(diff.rules == .coreData)
        let added = try #require(diff.refusals.first { $0.kind == .attributeAdded })
        #expect(
            added.fix?.contains("set a Default Value for Customer.score in version 2 of the Xcode model") == true,
            "\(added.fix ?? "")")
        let type = try #require(diff.refusals.first { $0.kind == .attributeTypeChanged && $0.property == "total" })
        #expect(type.reason?.contains("lists no type changes") == true, "\(type.reason ?? "")")
        #expect(type.reason?.contains("ferry's extension") == true)
        #expect(
            type.fix?.contains("a mapping model (.xcmappingmodel) or the ferry mapping file mappings/1-to-2.yml")
                == true, "\(type.fix ?? "")")
        // decimal → double is not a lossless widening.
        #expect(diff.refusals.count == 2, "\(diff.refusals.map(\.subject))")
        #expect(throws: FerryError.self) { try diff.inferredMapping() }
    }

    @Test("widenings stay inferred under Core Data's rules, as ferry's extension")
    func widening() throws {
        let (old, new) = Self.pair(.xcode) { $0.entities[0].attributes[3].type = .int64 }
        let diff = ModelDiff(from: old, to: new)
        #expect(diff.isInferable)
        let mapping = try diff.inferredMapping()
        #expect(
            mapping.entity(named: "Customer")?.attribute(named: "age")?.conversion
                == TypeConversion(from: .int16, to: .int64))
    }

    @Test("renaming hints name the Renaming ID for Xcode models")
    func renameHint() throws {
        let (old, new) = Self.pair(.xcode) { $0.entities[0].attributes[4].name = "tiers" }
        let diff = ModelDiff(from: old, to: new)
        let added = try #require(diff.changes.first { $0.kind == .attributeAdded })
        #expect(
            added.warning?.contains("set the Renaming ID of Customer.tiers to tier") == true, "\(added.warning ?? "")")
    }

    /// Version 1 has two hierarchies' roots, Customer and Order; version 2 gives both a new parent.
    static func mergeHierarchies(_ model: inout ObjectModel) {
        var record = EntityDescription(name: "Record", attributes: [AttributeDescription(name: "created", type: .date)])
        record.isAbstract = true
        model.entities.append(record)
        model.entities[0].parent = "Record"
        model.entities[1].parent = "Record"
    }

    @Test("merging two hierarchies under a new parent: Core Data refuses, ferry's rules infer it")
    func mergedHierarchies() throws {
        let (xcodeOld, xcodeNew) = Self.pair(.xcode, Self.mergeHierarchies)
        let diff = ModelDiff(from: xcodeOld, to: xcodeNew)
        let merge = try #require(diff.refusals.first)
        #expect(diff.refusals.count == 1)
        #expect(merge.entity == "Record")
        #expect(
            merge.reason?.contains(
                "Core Data cannot merge entity hierarchies: Customer, Order have no common parent in version 1")
                == true, "\(merge.reason ?? "")")
        #expect(merge.fix?.contains(".xcmappingmodel") == true)

        let (ferryOld, ferryNew) = Self.pair(.ferry, Self.mergeHierarchies)
        #expect(ModelDiff(from: ferryOld, to: ferryNew).isInferable)
    }

    /// A Fleet model version read from an Xcode model.
    static func hierarchy(_ version: String, _ entities: [EntityDescription]) -> ObjectModel {
        var model = ObjectModel(name: "Fleet", version: version, entities: entities)
        model.origin = .xcode
        return model
    }

    @Test(
        "entities are compared with the properties they inherit: an attribute moved up stays the sub-entity's, an entity leaving its hierarchy keeps what it inherited"
    )
    func inheritedProperties() throws {
        var vehicle = EntityDescription(
            name: "Vehicle", attributes: [AttributeDescription(name: "name", type: .string, isOptional: false)])
        var car = EntityDescription(name: "Car", attributes: [AttributeDescription(name: "color", type: .string)])
        car.parent = "Vehicle"
        let v1 = Self.hierarchy("1", [car, vehicle])
        vehicle.attributes.append(AttributeDescription(name: "color", type: .string))
        car.attributes = []
        let v2 = Self.hierarchy("2", [car, vehicle])
        let movedUp = ModelDiff(from: v1, to: v2)
        #expect(movedUp.isInferable, "\(movedUp.refusals.map(\.subject))")
        #expect(!movedUp.changes.contains { $0.entity == "Car" }, "\(movedUp.changes.map(\.subject))")
        #expect(
            movedUp.changes.contains { $0.entity == "Vehicle" && $0.property == "color" && $0.kind == .attributeAdded })
        let mapping = try movedUp.inferredMapping()
        let carMapping = try #require(mapping.entity(named: "Car"))
        #expect(carMapping.source == "Car")
        #expect(
            carMapping.attributes.contains { $0.destination == "color" && $0.source == "color" },
            "\(carMapping.attributes)")
        #expect(
            carMapping.attributes.contains { $0.destination == "name" && $0.source == "name" },
            "\(carMapping.attributes)")

        // Car leaves the hierarchy declaring what it inherited: nothing of it is new.
        let detached = Self.hierarchy(
            "3",
            [
                EntityDescription(
                    name: "Car",
                    attributes: [
                        AttributeDescription(name: "color", type: .string),
                        AttributeDescription(name: "name", type: .string, isOptional: false),
                    ]),
                vehicle,
            ])
        let leaving = ModelDiff(from: v2, to: detached)
        #expect(leaving.isInferable, "\(leaving.refusals.map(\.subject))")
        #expect(
            leaving.changes.filter { $0.entity == "Car" }.map(\.kind) == [.entityParentChanged],
            "\(leaving.changes.map(\.subject))")

        // ferry's own rules compare what each entity declares: the non-optional name is new to Car.
        var ferryV2 = v2
        var ferryDetached = detached
        ferryV2.origin = .ferry
        ferryDetached.origin = .ferry
        #expect(!ModelDiff(from: ferryV2, to: ferryDetached).isInferable)
    }

    @Test("a new parent over one existing entity, and moving an entity out of a hierarchy, stay inferred")
    func hierarchyMovesInferred() throws {
        let (old, new) = Self.pair(.xcode) { model in
            var party = EntityDescription(name: "Party")
            party.isAbstract = true
            model.entities.append(party)
            model.entities[0].parent = "Party"
        }
        let added = ModelDiff(from: old, to: new)
        #expect(added.isInferable, "\(added.refusals.map(\.subject))")
        #expect(added.changes.contains { $0.kind == .entityParentChanged && $0.entity == "Customer" })

        let back = ModelDiff(from: new, to: old)
        #expect(back.isInferable, "\(back.refusals.map(\.subject))")
        #expect(back.changes.contains { $0.kind == .entityParentChanged && $0.entity == "Customer" })
    }

    @Test("numeric narrowings: checked and inferred for Xcode models, refused for ferry model files")
    func narrowingVerdicts() throws {
        let (xcodeOld, xcodeNew) = Self.pair(.xcode) { $0.entities[0].attributes[0].type = .int32 }
        let diff = ModelDiff(from: xcodeOld, to: xcodeNew)
        #expect(diff.isInferable, "\(diff.refusals.map(\.subject))")
        let change = try #require(diff.changes.first { $0.kind == .attributeTypeChanged })
        #expect(change.detail.contains("checked narrowing"), "\(change.detail)")
        #expect(change.warning?.contains("does not fit int32") == true)
        let conversion = try #require(
            try diff.inferredMapping().entity(named: "Customer")?.attribute(named: "id")?.conversion)
        #expect(conversion.isChecked)

        let (ferryOld, ferryNew) = Self.pair(.ferry) { $0.entities[0].attributes[0].type = .int32 }
        #expect(ModelDiff(from: ferryOld, to: ferryNew).refusals.map(\.kind) == [.attributeTypeChanged])
        // Not numeric: still refused under Core Data's rules.
        let (dateOld, dateNew) = Self.pair(.xcode) { $0.entities[0].attributes[0].type = .date }
        #expect(ModelDiff(from: dateOld, to: dateNew).refusals.map(\.kind) == [.attributeTypeChanged])
    }

    @Test("a checked narrowing converts a value only when it fits exactly")
    func checkedConversions() throws {
        #expect(TypeConversion(from: .int64, to: .int16, rules: .ferry) == nil)
        #expect(TypeConversion(from: .int16, to: .int64, rules: .coreData)?.isChecked == false)
        let toInt16 = try #require(TypeConversion(from: .int64, to: .int16, rules: .coreData))
        #expect(toInt16.convertedIfFits(.integer(32767)) == .integer(32767))
        #expect(toInt16.convertedIfFits(.integer(-32768)) == .integer(-32768))
        #expect(toInt16.convertedIfFits(.integer(32768)) == nil)
        #expect(toInt16.convertedIfFits(.integer(-32769)) == nil)
        #expect(toInt16.convertedIfFits(.null) == .null)

        let toDouble = try #require(TypeConversion(from: .int64, to: .double, rules: .coreData))
        #expect(toDouble.convertedIfFits(.integer(1 << 53)) == .double(9_007_199_254_740_992))
        #expect(toDouble.convertedIfFits(.integer((1 << 53) + 1)) == nil)
        #expect(toDouble.convertedIfFits(.integer(Int64.max)) == nil)

        let doubleToInt = try #require(TypeConversion(from: .double, to: .int32, rules: .coreData))
        #expect(doubleToInt.convertedIfFits(.double(42)) == .integer(42))
        #expect(doubleToInt.convertedIfFits(.double(-0.0)) == .integer(0))
        #expect(doubleToInt.convertedIfFits(.double(1.5)) == nil)
        #expect(doubleToInt.convertedIfFits(.double(3e9)) == nil)
        #expect(doubleToInt.convertedIfFits(.double(.nan)) == nil)
        #expect(doubleToInt.convertedIfFits(.double(.infinity)) == nil)

        let decimalToInt = try #require(TypeConversion(from: .decimal, to: .int64, rules: .coreData))
        #expect(decimalToInt.convertedIfFits(.decimal("-12")) == .integer(-12))
        #expect(decimalToInt.convertedIfFits(.decimal("12.5")) == nil)
        #expect(decimalToInt.convertedIfFits(.decimal("9223372036854775808")) == nil)
        // Not a narrowing Core Data's rules infer.
        #expect(TypeConversion(from: .double, to: .float, rules: .coreData) == nil)
        #expect(TypeConversion(from: .string, to: .int64, rules: .coreData) == nil)
    }
}
