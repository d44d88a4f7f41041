import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// Core Data's lightweight-migration verdicts on the real Xcode models in
/// ../shared/data/coredata: every consecutive version pair of every package, with the verdicts
/// read off the versions (COREDATA.md §5 classifies the wibosco steps), and the Sync models that
/// are variants of one another.
@Suite(
    "Core Data's lightweight verdicts on the real Xcode models",
    .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
struct XcodeLightweightVerdictTests {
    static func package(_ app: String) -> String {
        CoreDataSamples.root.appendingPathComponent(
            "\(app)/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"
        ).path
    }
    static func sync(_ name: String) -> String {
        CoreDataSamples.root.appendingPathComponent("3lvis-Sync/Tests/Sync/Models/\(name).xcdatamodeld").path
    }
    static let labels = [
        "CoreDataMigration_Example", "CoreDataMigration_Example 2", "CoreDataMigration_Example 3",
        "CoreDataMigration_Example 4",
    ]

    /// The verdict of one step: the subjects of its refused changes.
    static func refused(_ diff: ModelDiff) -> [String] { diff.refusals.map { "\($0.subject) \($0.kind.rawValue)" } }

    @Test("every consecutive version pair of every package: Core Data's rules, no crash, under a second each")
    func everyConsecutivePair() throws {
        var pairs = 0
        for path in try CoreDataSamples.models() where path.hasSuffix(".xcdatamodeld") {
            let bundle = try ModelLoader().load(path: path)
            #expect(bundle.versions.allSatisfy { $0.origin == .xcode }, "\(path)")
            for (old, new) in zip(bundle.versions, bundle.versions.dropFirst()) {
                let start = Date()
                let diff = ModelDiff(from: old, to: new)
                _ = diff.bestEffortMapping()
                if diff.isInferable { _ = try diff.inferredMapping() }
                #expect(Date().timeIntervalSince(start) < 1, "\(path): \(old.version) → \(new.version)")
                #expect(diff.rules == .coreData)
                pairs += 1
            }
            // A version against itself: nothing changes.
            let same = ModelDiff(from: bundle.current, to: bundle.current)
            #expect(same.isEmpty, "\(path): \(same.changes.map(\.subject))")
        }
        #expect(pairs == 6)
    }

    @Test(
        "the original wibosco app: 1→2 drops color for hexColor (no Renaming ID), 2→3 needs its mapping model, 3→4 adds an optional Bool"
    )
    func originalApp() throws {
        let steps = try ModelDiff.steps(
            in: ModelLoader().load(path: Self.package("wibosco-CoreDataMigration-Example")), from: Self.labels[0],
            to: Self.labels[3])
        #expect(steps.count == 3)
        #expect(steps[0].isInferable)
        #expect(steps[0].changes.map(\.kind) == [.attributeAdded, .attributeRemoved])
        #expect(Self.refused(steps[1]) == ["Post.color relationship_added"])
        let fix = try #require(steps[1].refusals.first?.fix)
        #expect(fix.contains("a mapping model (.xcmappingmodel) or the ferry mapping file"), "\(fix)")
        #expect(steps[2].isInferable)
        #expect(steps[2].changes.map { "\($0.subject) \($0.kind.rawValue)" } == ["Post.hide attribute_added"])
    }

    @Test(
        "the revised wibosco app: 1→2 renames color through its Renaming ID, 2→3 needs its mapping model, 3→4 adds a non-optional Bool with a default"
    )
    func revisedApp() throws {
        let steps = try ModelDiff.steps(
            in: ModelLoader().load(path: Self.package("wibosco-CoreDataMigrationRevised")), from: Self.labels[0],
            to: Self.labels[3])
        #expect(steps[0].isInferable)
        #expect(steps[0].changes.map { "\($0.subject) \($0.kind.rawValue)" } == ["Post.hexColor attribute_renamed"])
        #expect(try steps[0].inferredMapping().entity(named: "Post")?.attribute(named: "hexColor")?.source == "color")
        #expect(Self.refused(steps[1]) == ["Post.sections relationship_added"])
        #expect(steps[2].isInferable)
        let mapping = try steps[2].inferredMapping()
        #expect(mapping.entity(named: "Post")?.attribute(named: "softDeleted")?.valueIfNil == .bool(false))
    }

    @Test("Sync's variants: to-many ↔ to-one, unordered ↔ ordered and added or removed relationships are inferred")
    func syncVariants() throws {
        func diff(_ old: String, _ new: String) throws -> ModelDiff {
            ModelDiff(
                from: try ModelLoader().load(path: Self.sync(old)).current,
                to: try ModelLoader().load(path: Self.sync(new)).current)
        }
        // 375: Speech.series (to-many) is replaced by Speech.serie (to-one).
        let toOne = try diff("375", "375-to-one")
        #expect(toOne.rules == .coreData)
        #expect(toOne.isInferable, "\(Self.refused(toOne))")
        // 151: the same Note ↔ Tag many-to-many, unordered then ordered, and back.
        let ordered = try diff("151-many-to-many", "151-ordered-many-to-many")
        #expect(ordered.isInferable, "\(Self.refused(ordered))")
        #expect(ordered.changes.filter { $0.kind == .relationshipOrderingChanged }.count == 2)
        let unordered = try diff("151-ordered-many-to-many", "151-many-to-many")
        #expect(unordered.isInferable, "\(Self.refused(unordered))")
        // 151 to-many → ordered to-many: User.notes becomes ordered.
        let orderedToMany = try diff("151-to-many", "151-ordered-to-many")
        #expect(orderedToMany.isInferable, "\(Self.refused(orderedToMany))")
    }
}
