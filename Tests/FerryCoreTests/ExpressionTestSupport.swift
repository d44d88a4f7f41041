import FerryCore

/// A source model for expression tests: a customer with every attribute type, a to-one profile
/// and a to-many list of orders.
enum ExpressionTestModel {
    static let customer = EntityDescription(
        name: "Customer",
        attributes: [
            AttributeDescription(name: "name", type: .string, isOptional: false),
            AttributeDescription(name: "first", type: .string),
            AttributeDescription(name: "last", type: .string),
            AttributeDescription(name: "email", type: .string),
            AttributeDescription(name: "code", type: .string),
            AttributeDescription(name: "age", type: .int32),
            AttributeDescription(name: "visits", type: .int64, isOptional: false),
            AttributeDescription(name: "balance", type: .decimal),
            AttributeDescription(name: "score", type: .double),
            AttributeDescription(name: "joined", type: .date),
            AttributeDescription(name: "id", type: .uuid),
            AttributeDescription(name: "vip", type: .bool),
            AttributeDescription(name: "avatar", type: .binary),
        ],
        relationships: [
            RelationshipDescription(name: "profile", destination: "Profile", inverse: "customer"),
            RelationshipDescription(name: "orders", destination: "Order", isToMany: true, inverse: "customer"),
        ])

    static let model = ObjectModel(
        name: "Shop", version: "2",
        entities: [
            customer,
            EntityDescription(
                name: "Profile",
                attributes: [
                    AttributeDescription(name: "city", type: .string),
                    AttributeDescription(name: "bio", type: .string),
                ],
                relationships: [
                    RelationshipDescription(name: "customer", destination: "Customer", inverse: "profile")
                ]),
            EntityDescription(
                name: "Order",
                attributes: [
                    AttributeDescription(name: "total", type: .decimal)
                ],
                relationships: [
                    RelationshipDescription(name: "customer", destination: "Customer", inverse: "orders")
                ]),
        ])

    /// Where test expressions start in their (imaginary) mapping file: byte offset k is column 15 + k.
    static let base = InputLocation(file: "2-to-3.yml", line: 7, column: 15)
    static let now: Int64 = 1_700_000_000_123

    static func bind(_ text: String, parameters: [String: Value] = [:]) throws -> BoundExpression {
        try Expression.parse(text, location: base).bind(
            source: customer, model: model, parameters: parameters, now: now)
    }

    static func evaluate(
        _ text: String, _ values: [String: Value] = [:], parameters: [String: Value] = [:]
    ) throws -> Value {
        let bound = try bind(text, parameters: parameters)
        return try bound.evaluate(on: DictionaryExpressionContext(values, for: bound, objectDescription: "Customer 42"))
    }

    /// The full text of the error parsing, binding or evaluating `text` throws, or nil.
    static func failure(_ text: String, _ values: [String: Value] = [:], parameters: [String: Value] = [:]) -> String? {
        do {
            _ = try evaluate(text, values, parameters: parameters)
            return nil
        } catch {
            return "\(error)"
        }
    }
}
