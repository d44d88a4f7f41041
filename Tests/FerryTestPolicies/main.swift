// ferry-test-policies: ferry's command line with the wibosco sample apps' migration policies,
// registered by class name, for the CLI tests of Xcode mapping models (FerryCLITests).
//
// Both apps name their policy `CoreDataMigration_Example.Post2ToPost3MigrationPolicy`, so
// FERRY_TEST_POLICY_SET chooses which app's policy this process has (`revised`, the default:
// one Section per Post; `original`: one Color per Post), and FERRY_TEST_POLICY_NAME the name it
// is registered under (default `Post2ToPost3MigrationPolicy`, without the module prefix).
import FerryCommandLine
import FerryCore
import Foundation

// SectionPerPostPolicy (the Revised app's): SectionPerPostPolicy.swift, the file of
// samples/coredata-migration, linked here so that the sample and the tests share one policy.

/// CoreDataMigration-Example: for every Post, one Color with a new UUID string as `colorID` and
/// the post's `hexColor` as `hex`, set as the post's (non-optional) color.
final class ColorPerPostPolicy: EntityMigrationPolicy {
    init() {}

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        let post = try manager.insertDestinationInstance(
            manager.mappedValues(forSource: source, mapping: mapping), forSource: source, mapping: mapping)
        let color = try manager.insertDestinationInstance(
            ["colorID": .string(UUID().uuidString), "hex": source["hexColor"]], forSource: source, mappingNamed: "Color"
        )
        try manager.setRelationship("color", of: post, to: color.primaryKey)
        try manager.setRelationship("post", of: color, to: post.primaryKey)
    }
}

/// PeopleSteps 1 → 2 (the policy kill trial of MigrationCrashTests): every Person through Swift,
/// its new `city` the domain of its e-mail address.
final class CityFromEmailPolicy: EntityMigrationPolicy {
    init() {}

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        var values = try manager.mappedValues(forSource: source, mapping: mapping)
        if case .string(let email) = source["email"], let at = email.firstIndex(of: "@") {
            values["city"] = .string(String(email[email.index(after: at)...]))
        }
        _ = try manager.insertDestinationInstance(values, forSource: source, mapping: mapping)
    }
}

let environment = ProcessInfo.processInfo.environment
let name = environment["FERRY_TEST_POLICY_NAME"] ?? "Post2ToPost3MigrationPolicy"
let registry = PolicyRegistry()
if environment["FERRY_TEST_POLICY_SET"] == "original" {
    registry.register(name) { ColorPerPostPolicy() }
} else {
    registry.register(name) { SectionPerPostPolicy() }
}
registry.register("CityFromEmailPolicy") { CityFromEmailPolicy() }
registry.register("CategoryPerNamePolicy") { CategoryPerNamePolicy() }
registry.register("OrderCustomerPolicy") { OrderCustomerPolicy() }
FerryCommandLine.main(registry: registry)
