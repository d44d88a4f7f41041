import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@Suite("ModelLoader")
struct ModelLoaderTests {
    func errors(_ fixture: String) -> [String]? {
        renderedErrors { _ = try ModelLoader().load(path: Fixtures.path("models/" + fixture)) }
    }

    // MARK: - Good models

    @Test("a bundle folder loads every version in order, keeping YAML order")
    func bundle() throws {
        let bundle = try ModelLoader().load(path: Fixtures.path("models/Shop"))
        #expect(bundle.name == "Shop")
        #expect(bundle.versions.map(\.version) == ["1", "2"])
        #expect(bundle.currentVersion == "2")
        let model = bundle.current
        #expect(model.name == "Shop")
        #expect(model.entityNames == ["Customer", "Order"])
        let customer = try #require(model.entity(named: "Customer"))
        #expect(customer.attributes.map(\.name) == ["id", "email", "name", "age", "balance", "created_at", "active"])
        #expect(customer.uniquenessConstraints == [["id"], ["email"], ["name", "created_at"]])
        #expect(customer.indexes.map(\.attributes) == [["age"], ["name", "age"]])
        #expect(customer.indexes.map(\.name) == [nil, "by_name_age"])
        let file = Fixtures.path("models/Shop/v2.yml")
        #expect(customer.location == InputLocation(file: file, line: 3, column: 3))
        let email = try #require(customer.attribute(named: "email"))
        #expect(email.location == InputLocation(file: file, line: 6, column: 7))
        #expect(email.isOptional == false)
        #expect(email.validation.maxLength == 254)
        #expect(email.validation.pattern == "[^@ ]+@[^@ ]+")
        #expect(customer.attribute(named: "name")?.type == .string)
        #expect(customer.attribute(named: "name")?.isOptional == true)
        #expect(customer.attribute(named: "age")?.validation.minValue == .integer(0))
        #expect(customer.attribute(named: "age")?.validation.maxValue == .integer(150))
        #expect(customer.attribute(named: "balance")?.defaultValue == .decimal("0"))
        #expect(customer.attribute(named: "active")?.type == .bool)
        #expect(customer.attribute(named: "active")?.defaultValue == .bool(true))
        let orders = try #require(customer.relationship(named: "orders"))
        #expect(orders.destination == "Order")
        #expect(orders.isToMany)
        #expect(orders.inverse == "customer")
        #expect(orders.deleteRule == .cascade)
        #expect(orders.location == InputLocation(file: file, line: 13, column: 7))
        let order = try #require(model.entity(named: "Order"))
        #expect(order.renamedFrom == "Purchase")
        #expect(order.attribute(named: "placed_at")?.validation.minValue == .date(946_684_800_000))
        #expect(order.relationship(named: "customer")?.isOptional == false)
        #expect(bundle.version("1")?.entityNames == ["Customer", "Purchase"])
    }

    @Test("the index file itself loads the same bundle")
    func indexFile() throws {
        let fromFolder = try ModelLoader().load(path: Fixtures.path("models/Shop"))
        let fromIndex = try ModelLoader().load(path: Fixtures.path("models/Shop/model.yml"))
        #expect(fromFolder == fromIndex)
    }

    @Test("a single model file is a bundle of one version named after the file")
    func singleFile() throws {
        let bundle = try ModelLoader().load(path: Fixtures.path("models/single.yml"))
        #expect(bundle.name == "single")
        #expect(bundle.versions.count == 1)
        #expect(bundle.currentVersion == "1")
        let note = try #require(bundle.current.entity(named: "Note"))
        #expect(note.attributes.map(\.type) == [.uuid, .string, .binary])
        #expect(note.attribute(named: "data")?.defaultValue == .binary(Array("hello".utf8)))
        #expect(note.uniquenessConstraints == [["id"]])
    }

    @Test("a version file of a bundle loads on its own")
    func versionFileAlone() throws {
        let bundle = try ModelLoader().load(path: Fixtures.path("models/Shop/v1.yml"))
        #expect(bundle.name == "v1")
        #expect(bundle.currentVersion == "1")
        #expect(bundle.current.entityNames == ["Customer", "Purchase"])
    }

    // MARK: - Syntax and shape

    @Test("a YAML syntax error is located, with the line and a caret")
    func syntaxError() {
        let file = Fixtures.path("models/broken/syntax.yml")
        #expect(
            errors("broken/syntax.yml") == [
                "\(file):5:11: error: did not find expected ',' or '}' (while parsing a flow mapping at line 4, column 11)\n        name: string\n            ^"
            ])
    }

    @Test("unknown keys are reported with a suggestion")
    func unknownKeys() {
        let file = Fixtures.path("models/broken/unknown-key.yml")
        #expect(
            errors("broken/unknown-key.yml") == [
                "\(file):4:25: error: unknown key 'optinal' in attribute 'id'; did you mean 'optional'?",
                "\(file):5:5: error: unknown key 'relationship' in entity 'Customer'; did you mean 'relationships'?",
            ])
    }

    @Test("wrong scalar types, unknown types and bad values are all reported")
    func wrongTypes() {
        let file = Fixtures.path("models/broken/wrong-types.yml")
        #expect(
            errors("broken/wrong-types.yml") == [
                "\(file):4:35: error: expected a boolean for 'optional' but found 'maybe'",
                "\(file):5:13: error: unknown type 'strng' for attribute 'name'; did you mean 'string'?\n  types: int16, int32, int64, decimal, double, float, string, bool, date, binary, uuid, uri, json, transformable, object_id, undefined",
                "\(file):6:35: error: invalid 'default' for attribute 'age': 'abc' is not an integer",
                "\(file):6:40: error: 'max_length' applies only to string, uri and binary attributes, not to int16 attribute 'age'",
                "\(file):7:13: error: expected a type or a mapping for 'tags' but found a list",
                "\(file):9:65: error: 'min_count' must be at least 0, not -1",
                "\(file):9:82: error: 'cascde' is not a valid 'delete_rule' (one of nullify, cascade, deny, no_action); did you mean 'cascade'?",
            ])
    }

    @Test("empty, missing and shapeless model files")
    func emptyAndMissing() throws {
        let directory = TemporaryDirectory()
        let empty = try directory.write("empty.yml", "# nothing\n")
        #expect(
            renderedErrors { _ = try ModelLoader().load(path: empty) } == [
                "\(empty):1:1: error: the model file is empty"
            ])
        let list = try directory.write("list.yml", "- a\n- b\n")
        #expect(
            renderedErrors { _ = try ModelLoader().load(path: list) } == [
                "\(list):1:1: error: expected a mapping for 'the model file' but found a list"
            ])
        let other = try directory.write("other.yml", "name: X\n")
        #expect(
            renderedErrors { _ = try ModelLoader().load(path: other) } == [
                "\(other):1:1: error: expected 'entities' (a model) or 'versions' (a model bundle index)"
            ])
        let missing = directory.file("nope.yml")
        #expect(
            renderedErrors { _ = try ModelLoader().load(path: missing) } == [
                "\(missing): error: no model at '\(missing)': No such file or directory"
            ])
        #expect(
            renderedErrors { _ = try ModelLoader().load(path: directory.path) } == [
                "\(directory.path): error: '\(directory.path)' is a folder without a model.yml index"
            ])
        let duplicate = try directory.write(
            "dup.yml", "entities:\n  A:\n    attributes:\n      x: int\n      x: string\n")
        #expect(
            renderedErrors { _ = try ModelLoader().load(path: duplicate) } == [
                "\(duplicate):4:7: error: duplicate key 'x' in a mapping"
            ])
    }

    @Test("a bundle naming a missing version file and an unknown current version")
    func badBundle() {
        let file = Fixtures.path("models/BadBundle/model.yml")
        #expect(
            errors("BadBundle") == [
                "\(file):1:10: error: current version '4' is not one of the versions (1)",
                "\(file):4:5: error: model version file 'v9.yml' does not exist",
            ])
    }

    // MARK: - Semantic checks run on every version

    @Test("invalid, reserved and duplicate names")
    func names() {
        let file = Fixtures.path("models/broken/names.yml")
        #expect(
            errors("broken/names.yml") == [
                "\(file):2:3: error: invalid entity name '2nd': use letters, digits and '_', not starting with a digit",
                "\(file):4:7: error: invalid attribute name 'first-name': use letters, digits and '_', not starting with a digit",
                "\(file):5:3: error: entity name 'Ferry_Log' begins with the reserved prefix 'ferry_'",
                "\(file):7:7: error: attribute name 'sqlite_x' begins with the reserved prefix 'sqlite_'",
                "\(file):12:7: error: duplicate property name 'Email' in 'Customer' (already declared as 'email' at \(file):10:7)",
                "\(file):13:3: error: duplicate entity name 'customer' (already declared as 'Customer' at \(file):8:3)",
            ])
    }

    @Test("destinations and inverses")
    func relationships() {
        let file = Fixtures.path("models/broken/relationships.yml")
        #expect(
            errors("broken/relationships.yml") == [
                "\(file):6:7: error: unknown destination 'Ordr' for relationship 'Customer.orders'; did you mean 'Order'?",
                "\(file):7:7: error: inverse 'custmer' of 'Customer.invoices' is not a relationship of 'Invoice'; did you mean 'customer'?",
                "\(file):8:7: error: inverse 'Payment.customer' of 'Customer.payments' has destination 'Invoice', not 'Customer'",
                "\(file):9:7: error: inverse 'Note.customer' of 'Customer.notes' does not point back (its inverse is 'payments'; expected 'notes')",
                "\(file):10:7: error: min_count and max_count apply only to to-many relationships; 'Customer.owner' is to-one",
                "\(file):16:7: error: inverse 'Customer.invoices' of 'Invoice.customer' does not point back (its inverse is 'custmer'; expected 'customer')",
                "\(file):19:7: error: inverse 'invoices' of 'Payment.customer' is not a relationship of 'Invoice'",
                "\(file):22:7: error: inverse 'Customer.payments' of 'Note.customer' has destination 'Payment', not 'Note'",
            ])
    }

    @Test("bounds, defaults, patterns, constraints, indexes and required relationships")
    func rules() {
        let file = Fixtures.path("models/broken/rules.yml")
        #expect(
            errors("broken/rules.yml") == [
                "\(file):4:7: error: min 10 is greater than max 5 for 'Customer.age'",
                "\(file):5:7: error: min_length 5 is greater than max_length 2 for 'Customer.code'",
                "\(file):6:7: error: default value of 'Customer.score' breaks its own rules: score 200 is greater than the maximum 100",
                "\(file):7:7: error: invalid pattern '[a-' for 'Customer.email'",
                "\(file):9:7: error: min_count 3 is greater than max_count 1 for 'Customer.orders'",
                "\(file):10:7: error: 'Customer.tags' is not optional but its min_count is 0",
                "\(file):12:9: error: uniqueness constraint of 'Customer' names unknown attribute 'emial'; did you mean 'email'?",
                "\(file):13:9: error: uniqueness constraint of 'Customer' names to-many relationship 'orders'; only attributes and to-one relationships can be unique",
                "\(file):15:9: error: index of 'Customer' names unknown attribute 'agee'; did you mean 'age'?",
                "\(file):21:7: error: 'Passport.person' and its inverse 'Person.passport' are both required to-one relationships: neither object could be inserted first; make one side optional",
            ])
    }

    @Test("errors carry the invalidModel code")
    func code() {
        do {
            _ = try ModelLoader().load(path: Fixtures.path("models/broken/rules.yml"))
            Issue.record("expected errors")
        } catch let errors as FerryErrors {
            #expect(errors.code == .invalidModel)
            #expect(errors.errors.allSatisfy { $0.code == .invalidModel })
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
