import FerryCore

/// The Revised app's `Post2ToPost3MigrationPolicy` (its mapping model
/// `Migration2to3ModelMapping` names it by class name): for every Post, one Section with the
/// post's content as its body, the first 4 characters of it and "..." as its title, and index 0.
///
/// Also built into ferry's test binary `ferry-test-policies` (Tests/FerryTestPolicies links
/// this file), so the sample and the tests run the same policy.
final class SectionPerPostPolicy: EntityMigrationPolicy {
    init() {}

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        let post = try manager.insertDestinationInstance(
            manager.mappedValues(forSource: source, mapping: mapping), forSource: source, mapping: mapping)
        var section: [String: Value] = ["body": source["content"], "index": .integer(0)]
        if case .string(let content) = source["content"] {
            section["title"] = .string(String(content.prefix(4)) + "...")
        }
        let made = try manager.insertDestinationInstance(section, forSource: source, mappingNamed: "Section")
        try manager.setRelationship("post", of: made, to: post.primaryKey)
    }
}
