import FerryCore

/// Small models built in code for core tests (the YAML loader has its own fixtures).
public enum SampleModels {
    /// Customer (id unique, email unique, name, age, balance default 0, active default true)
    /// and Order (number unique, total, customer to-one, non-optional) with inverse `orders`.
    public static func shop(version: String = "1") -> ObjectModel {
        ObjectModel(
            name: "Shop", version: version,
            entities: [
                EntityDescription(
                    name: "Customer",
                    attributes: [
                        AttributeDescription(name: "id", type: .int64, isOptional: false),
                        AttributeDescription(
                            name: "email", type: .string, isOptional: false,
                            validation: ValidationRules(maxLength: 40, pattern: "[^@ ]+@[^@ ]+")),
                        AttributeDescription(name: "name", type: .string),
                        AttributeDescription(
                            name: "age", type: .int16,
                            validation: ValidationRules(minValue: .integer(0), maxValue: .integer(150))),
                        AttributeDescription(name: "balance", type: .decimal, defaultValue: .decimal("0")),
                        AttributeDescription(name: "active", type: .bool, defaultValue: .bool(true)),
                        AttributeDescription(name: "joined", type: .date),
                    ],
                    relationships: [
                        RelationshipDescription(
                            name: "orders", destination: "Order", isToMany: true, inverse: "customer",
                            deleteRule: .cascade)
                    ],
                    uniquenessConstraints: [["id"], ["email"]]
                ),
                EntityDescription(
                    name: "Order",
                    attributes: [
                        AttributeDescription(name: "number", type: .string, isOptional: false),
                        AttributeDescription(name: "total", type: .decimal),
                    ],
                    relationships: [
                        RelationshipDescription(
                            name: "customer", destination: "Customer", inverse: "orders", isOptional: false)
                    ],
                    uniquenessConstraints: [["number"]]
                ),
            ])
    }
}
