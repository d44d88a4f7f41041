// ferry-test-policies: ferry's command line with the wibosco sample apps' migration policies,
// registered by class name, for the CLI tests of Xcode mapping models (FerryCLITests).
//
// Both apps name their policy `CoreDataMigration_Example.Post2ToPost3MigrationPolicy`, so
// FERRY_TEST_POLICY_SET chooses which app's policy this process has (`revised`, the default:
// one Section per Post; `revised-rows`: the same through the by-position row API; `original`:
// one Color per Post), and FERRY_TEST_POLICY_NAME the name it
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

/// CityFromEmailPolicy through the by-position row API (values read and written by position,
/// the positions resolved once per mapping): it must give the store the dictionary API gives
/// (EngineConformanceTests' policy cell, on every engine).
final class CityFromEmailRowPolicy: EntityMigrationPolicy {
    private var email: Int?
    private var city: Int?

    init() {}

    func begin(mapping: MappingContext, manager: MigrationManager) throws {
        email = mapping.sourceColumns.position(of: "email")
        city = mapping.destinationColumns.position(of: "city")
    }

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        var row = try manager.mappedRow(forSource: source, mapping: mapping)
        if let email, let city, let address = source.row.string(at: email), let at = address.firstIndex(of: "@") {
            row[city] = .string(String(address[address.index(after: at)...]))
        }
        try manager.insertDestinationRow(row, forSource: source, mapping: mapping)
    }
}

/// SectionPerPostPolicy (the Revised app's) through the by-position row API, the Section made
/// from an empty row of its mapping: it must give the store the dictionary API gives
/// (CoreDataMigrateCLITests, FERRY_TEST_POLICY_SET=revised-rows).
final class SectionPerPostRowPolicy: EntityMigrationPolicy {
    private var content: Int?
    /// The Section mapping's positions of body, title and index, resolved with its first row.
    private var section: (body: Int, title: Int, index: Int)?

    init() {}

    func begin(mapping: MappingContext, manager: MigrationManager) throws {
        content = mapping.sourceColumns.position(of: "content")
    }

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        let post = try manager.insertDestinationRow(
            manager.mappedRow(forSource: source, mapping: mapping), forSource: source, mapping: mapping)
        var row = try manager.emptyRow(forMappingNamed: "Section")
        let at = try section ?? sectionPositions(row.columns)
        section = at
        let body = content.map { source.row[$0] } ?? .null
        row[at.body] = body
        row[at.index] = .integer(0)
        if case .string(let text) = body {
            row[at.title] = .string(String(text.prefix(4)) + "...")
        }
        let made = try manager.insertDestinationRow(row, forSource: source, mappingNamed: "Section")
        try manager.setRelationship("post", of: made, to: post.primaryKey)
    }

    private func sectionPositions(_ columns: MigrationColumns) throws -> (body: Int, title: Int, index: Int) {
        guard let body = columns.position(of: "body"), let title = columns.position(of: "title"),
            let index = columns.position(of: "index")
        else {
            throw FerryError(.migration, "Section has no body, title or index (columns: \(columns))")
        }
        return (body, title, index)
    }
}

let environment = ProcessInfo.processInfo.environment
let name = environment["FERRY_TEST_POLICY_NAME"] ?? "Post2ToPost3MigrationPolicy"
let registry = PolicyRegistry()
switch environment["FERRY_TEST_POLICY_SET"] {
case "original": registry.register(name) { ColorPerPostPolicy() }
case "revised-rows": registry.register(name) { SectionPerPostRowPolicy() }
default: registry.register(name) { SectionPerPostPolicy() }
}
registry.register("CityFromEmailPolicy") { CityFromEmailPolicy() }
registry.register("CityFromEmailRowPolicy") { CityFromEmailRowPolicy() }
registry.register("CategoryPerNamePolicy") { CategoryPerNamePolicy() }
registry.register("OrderCustomerPolicy") { OrderCustomerPolicy() }
FerryCommandLine.main(registry: registry)
