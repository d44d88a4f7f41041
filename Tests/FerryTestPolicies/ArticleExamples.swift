import FerryCore

// The examples of the DocC article "Writing migration policies"
// (docs/migration-policies.md), compiled here so that they cannot
// stop compiling unnoticed: PolicyArticleTests requires every Swift block of the article to
// appear in this file or in the samples' sources, which CI builds.

/// One Category per distinct `category` text of the source products (find-or-create): each
/// Product links to the Category of its name, made the first time the name is seen.
final class CategoryPerNamePolicy: EntityMigrationPolicy {
    /// Categories made so far, by name (one policy instance serves the whole entity mapping).
    private var categories: [String: Int64] = [:]

    init() {}

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        let product = try manager.insertDestinationInstance(
            manager.mappedValues(forSource: source, mapping: mapping), forSource: source, mapping: mapping)
        guard case .string(let name) = source["category"] else { return }
        let category: Int64
        if let known = categories[name] {
            category = known
        } else {
            category =
                try manager.insertDestinationInstance(
                    ["name": .string(name)], forSource: nil, mappingNamed: "Category"
                ).primaryKey
            categories[name] = category
        }
        try manager.setRelationship("category", of: product, to: category)
    }
}

/// Links each migrated Order to the Customer that the mapping `Customer` made from the order's
/// old customer (whose source key the mapping kept in `legacyCustomerKey`): a relationship to
/// objects another mapping made, set once every mapping made its objects.
final class OrderCustomerPolicy: EntityMigrationPolicy {
    init() {}

    func createRelationships(
        forDestination destination: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        guard case .integer(let oldCustomer) = destination["legacyCustomerKey"] else { return }
        let made = try manager.destinationInstances(forMapping: "Customer", sourceInstances: [oldCustomer])
        try manager.setRelationship("customer", of: destination, to: made.first)
    }
}
