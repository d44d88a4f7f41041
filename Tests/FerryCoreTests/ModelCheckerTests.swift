import FerryCore
import Testing

@Suite("ModelChecker")
struct ModelCheckerTests {
    static func at(_ line: Int, _ column: Int = 3) -> InputLocation {
        InputLocation(file: "m.yml", line: line, column: column)
    }

    static func check(_ entities: [EntityDescription]) -> [String] {
        ModelChecker.check(
            ObjectModel(name: "M", version: "1", entities: entities, location: InputLocation(file: "m.yml"))
        ).map(\.description)
    }

    @Test("a sound model has no problems")
    func sound() {
        let customer = EntityDescription(
            name: "Customer",
            attributes: [
                AttributeDescription(name: "id", type: .int64, isOptional: false),
                AttributeDescription(
                    name: "age", type: .int16, defaultValue: .integer(3),
                    validation: ValidationRules(minValue: .integer(0), maxValue: .integer(150))),
            ],
            relationships: [
                RelationshipDescription(
                    name: "orders", destination: "Order", isToMany: true, inverse: "customer", minCount: 0, maxCount: 5)
            ],
            uniquenessConstraints: [["id"]],
            indexes: [IndexDescription(attributes: ["age", "id"])]
        )
        let order = EntityDescription(
            name: "Order",
            relationships: [
                RelationshipDescription(name: "customer", destination: "Customer", inverse: "orders", isOptional: false)
            ],
            uniquenessConstraints: [["customer"]]
        )
        #expect(Self.check([customer, order]) == [])
    }

    @Test("identifiers")
    func identifiers() {
        #expect(ModelChecker.isIdentifier("_a1"))
        #expect(ModelChecker.isIdentifier("Customer"))
        #expect(!ModelChecker.isIdentifier(""))
        #expect(!ModelChecker.isIdentifier("1a"))
        #expect(!ModelChecker.isIdentifier("a b"))
        #expect(!ModelChecker.isIdentifier("é"))
    }

    @Test("names: invalid, reserved (any case) and duplicated (any case)")
    func names() {
        let entities = [
            EntityDescription(name: "SQLITE_stat", location: Self.at(1)),
            EntityDescription(
                name: "A",
                attributes: [
                    AttributeDescription(name: "x", type: .int64, location: Self.at(3, 5)),
                    AttributeDescription(name: "a b", type: .string, location: Self.at(4, 5)),
                ],
                relationships: [RelationshipDescription(name: "X", destination: "A", location: Self.at(5, 5))],
                location: Self.at(2)),
            EntityDescription(name: "a", location: Self.at(6)),
        ]
        #expect(
            Self.check(entities) == [
                "m.yml:1:3: error: entity name 'SQLITE_stat' begins with the reserved prefix 'sqlite_'",
                "m.yml:4:5: error: invalid attribute name 'a b': use letters, digits and '_', not starting with a digit",
                "m.yml:5:5: error: duplicate property name 'X' in 'A' (already declared as 'x' at m.yml:3:5)",
                "m.yml:6:3: error: duplicate entity name 'a' (already declared as 'A' at m.yml:2:3)",
            ])
    }

    @Test("a missing inverse side and a missing location falls back to the model's")
    func inverseWithoutBack() {
        let entities = [
            EntityDescription(
                name: "A",
                relationships: [RelationshipDescription(name: "bs", destination: "B", isToMany: true, inverse: "a")]),
            EntityDescription(name: "B", relationships: [RelationshipDescription(name: "a", destination: "A")]),
        ]
        #expect(
            Self.check(entities) == [
                "m.yml: error: inverse 'B.a' of 'A.bs' does not point back (it has no inverse; expected 'bs')"
            ])
    }

    @Test("defaults are checked against the attribute's own rules, patterns are compiled")
    func rules() {
        let attributes = [
            AttributeDescription(
                name: "code", type: .string, defaultValue: .string("abc"),
                validation: ValidationRules(pattern: "[0-9]+"), location: Self.at(2)),
            AttributeDescription(
                name: "name", type: .string, validation: ValidationRules(pattern: "(unclosed"), location: Self.at(3)),
            AttributeDescription(
                name: "when", type: .date, validation: ValidationRules(minValue: .date(10), maxValue: .date(5)),
                location: Self.at(4)),
        ]
        #expect(
            Self.check([EntityDescription(name: "E", attributes: attributes)]) == [
                "m.yml:2:3: error: default value of 'E.code' breaks its own rules: code does not match the pattern [0-9]+",
                "m.yml:3:3: error: invalid pattern '(unclosed' for 'E.name'",
                "m.yml:4:3: error: min 1970-01-01T00:00:00.010Z is greater than max 1970-01-01T00:00:00.005Z for 'E.when'",
            ])
    }
}
