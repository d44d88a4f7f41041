import FerryCore
import Testing

@Suite("Predicate binding and in-memory evaluation")
struct PredicateBindingTests {
    static let base = InputLocation(file: "--where", line: 1, column: 1)

    static let errors: [(String, String, String)] = [
        ("Customer", "emial == 'x'", "--where:1:1: error: Customer has no attribute 'emial'; did you mean 'email'?"),
        (
            "Customer", "age > 1 AND nmae == 'x'",
            "--where:1:13: error: Customer has no attribute 'nmae'; did you mean 'name'?"
        ),
        ("Customer", "zzzzzz == 'x'", "--where:1:1: error: Customer has no attribute 'zzzzzz'"),
        (
            "Customer", "ordrs.total > 1",
            "--where:1:1: error: Customer has no relationship 'ordrs'; did you mean 'orders'?"
        ),
        (
            "Order", "customer.emial == 'x'",
            "--where:1:10: error: Customer has no attribute 'emial'; did you mean 'email'?"
        ),
        (
            "Customer", "email.domain == 'x'",
            "--where:1:7: error: 'email' of Customer is an attribute, not a relationship, so 'domain' cannot follow it"
        ),
        (
            "Customer", "age == 'old'",
            "--where:1:8: error: 'age' of Customer is int32 and cannot be compared with the string \"old\""
        ),
        (
            "Customer", "name > 3",
            "--where:1:8: error: 'name' of Customer is string and cannot be compared with the number 3"
        ),
        (
            "Customer", "joined > 'yesterday'",
            "--where:1:10: error: 'yesterday' is not an ISO-8601 date ('joined' of Customer is date)"
        ),
        (
            "Customer", "joined > 5",
            "--where:1:10: error: 'joined' of Customer is date and cannot be compared with the number 5"
        ),
        ("Customer", "id == 'abc'", "--where:1:7: error: 'abc' is not a UUID ('id' of Customer is uuid)"),
        (
            "Customer", "age IN {1, 'two'}",
            "--where:1:8: error: 'age' of Customer is int32 and cannot be compared with the string \"two\""
        ),
        ("Customer", "age CONTAINS '3'", "--where:1:1: error: CONTAINS needs text, but 'age' of Customer is int32"),
        ("Customer", "name BEGINSWITH 3", "--where:1:17: error: BEGINSWITH needs text, but found the number 3"),
        ("Customer", "name MATCHES '('", "--where:1:14: error: invalid regular expression '('"),
        ("Customer", "ANY name == 'x'", "--where:1:5: error: ANY needs a to-many key path on the left of '=='"),
        (
            "Customer", "'x' == orders.status",
            "--where:1:8: error: a to-many key path must be on the left of '==' (use ANY, ALL or NONE)"
        ),
        ("Customer", "orders.@sum > 1", "--where:1:1: error: @sum needs an attribute, as in items.@sum.quantity"),
        (
            "Customer", "orders.@sum.status > 1",
            "--where:1:1: error: @sum needs a number attribute, but 'status' is string"
        ),
        (
            "Customer", "orders.@sum.totl > 1",
            "--where:1:1: error: Order has no attribute 'totl'; did you mean 'total'?"
        ),
        ("Customer", "name.@count > 1", "--where:1:1: error: @count needs a to-many key path, but 'name' is not one"),
        (
            "Customer", "profile == 'x'",
            "--where:1:9: error: 'profile' of Customer is a relationship; it can only be compared with nil"
        ),
        (
            "Customer", "profile < nil",
            "--where:1:9: error: 'profile' of Customer is a relationship; it can only be compared with nil using == or !="
        ),
        ("Customer", "name == $who", "--where:1:9: error: variable '$who' has no value; substitute it before binding"),
        (
            "Customer", "age IN 'x'",
            "--where:1:8: error: IN needs a list such as {1, 2} or a to-many key path on its right"
        ),
        ("Customer", "age == {1, 2}", "--where:1:8: error: a list can only follow IN or BETWEEN"),
        (
            "Customer", "SUBQUERY(orders, $o, $o.total > 1) == nil",
            "--where:1:1: error: SUBQUERY(…, $o, …) must be followed by a collection operator such as @count"
        ),
        (
            "Customer", "SUBQUERY(orders, $o, $o.totl > 1).@count > 0",
            "--where:1:25: error: Order has no attribute 'totl'; did you mean 'total'?"
        ),
        (
            "Customer", "SUBQUERY(profile, $p, $p.bio == nil).@count > 0",
            "--where:1:10: error: SUBQUERY needs a to-many relationship, but 'profile' is not one"
        ),
        (
            "Customer", "score < avatar",
            "--where:1:7: error: 'score' of Customer (double) cannot be compared with 'avatar' of Customer (binary)"
                .replacing(
                    "'score' of Customer (double) cannot be compared with 'avatar' of Customer (binary)",
                    with: "cannot compare 'score' of Customer (double) with 'avatar' of Customer (binary)")
        ),
        (
            "Customer", "avatar > %@",
            "--where:1:10: error: 'avatar' of Customer is binary; it can only be compared with == or !="
        ),
    ]

    @Test("binding errors name the entity and key, suggest the closest name, and point at the token", arguments: errors)
    func bindingErrors(_ entity: String, _ format: String, _ message: String) throws {
        let arguments: [PredicateArgument] = format.contains("%@") ? [.value(.binary([1]))] : []
        let predicate = try Predicate(format: format, arguments: arguments, location: Self.base)
        do {
            _ = try predicate.bound(to: PredicateTestModel.entity(entity), model: PredicateTestModel.model)
            Issue.record("no error for \(format)")
        } catch {
            #expect(error.description == message)
            #expect(error.code == .invalidPredicate)
        }
        #expect(throws: FerryError.self) {
            try predicate.sql(
                for: PredicateTestModel.entity(entity), model: PredicateTestModel.model, layout: FerryLayout())
        }
    }

    @Test("binding converts literals to the attribute types")
    func coercion() throws {
        let customer = PredicateTestModel.entity("Customer")
        let bound = try Predicate(
            format: "joined > '2024-01-01' AND id == '6F1C2D3E-0000-4000-8000-000000000002' AND vip == YES"
        )
        .bound(to: customer, model: PredicateTestModel.model)
        let expected = try Predicate(
            format: "joined > %@ AND id == %@ AND vip == 1",
            arguments: [
                .value(.date(1_704_067_200_000)), .value(.uuid("6f1c2d3e-0000-4000-8000-000000000002")),
            ])
        #expect(bound == expected)
    }

    @Test("dictionary records evaluate every construct")
    func dictionaryRecords() throws {
        let tag = PredicateRecord(values: ["name": .string("Café")])
        let item1 = PredicateRecord(values: ["quantity": .integer(3), "price": .double(2.5)])
        let item2 = PredicateRecord(values: ["quantity": .integer(1), "price": .double(10)])
        let customer = PredicateRecord(values: ["email": .string("ANN@example.com")])
        let order = PredicateRecord([
            "number": .value(.integer(7)), "total": .value(.decimal("12.50")), "status": .value(.string("Straße")),
            "placed": .value(.date(1_704_067_200_000)), "customer": .toOne(customer), "items": .toMany([item1, item2]),
            "tags": .toMany([tag]), "note": .value(.null),
        ])
        let holds: [String] = [
            "number == 7", "total == 12.5", "total > 12", "status ==[c] 'STRASSE'", "status BEGINSWITH 'Str'",
            "placed == '2024-01-01T00:00:00Z'", "placed == CAST(725760000, 'NSDate')",
            "customer.email ENDSWITH[c] '@EXAMPLE.COM'",
            "ANY items.quantity > 2", "NOT ALL items.quantity > 2", "NONE items.price > 100", "items.@count == 2",
            "items.@sum.quantity == 4", "items.@avg.price == 6.25", "items.@max.price == 10",
            "items.quantity.@min == 1",
            "SUBQUERY(items, $i, $i.price < 5 AND $i.quantity > 1).@count == 1", "ANY tags.name ==[cd] 'cafe'",
            "'Café' IN tags.name", "note == nil", "note != 'x'", "NOT note < 3", "missing == nil", "customer != nil",
            "customer.missing.deeper == nil", "TRUEPREDICATE",
        ]
        for format in holds {
            #expect(try Predicate(format: format).evaluate(on: order), "\(format)")
        }
        let fails: [String] = [
            "note < 3", "note == 'x'", "status == 'strasse'", "FALSEPREDICATE", "ANY tags.name == 'cafe'",
            "items.@count > 2", "customer == nil",
        ]
        for format in fails {
            #expect(try !Predicate(format: format).evaluate(on: order), "\(format)")
        }
    }

    @Test("an unsubstituted variable is an error in memory too")
    func unknownVariable() throws {
        let predicate = try Predicate(format: "a == 1 OR $limit.x > 2", location: Self.base)
        #expect(try predicate.evaluate(on: PredicateRecord(values: ["a": .integer(1)])))
        do {
            _ = try predicate.evaluate(on: PredicateRecord(values: ["a": .integer(2)]))
            Issue.record("no error")
        } catch {
            #expect(
                error.description
                    == "--where:1:11: error: variable '$limit' has no value; substitute it before evaluating")
        }
    }

    @Test("Unicode folding follows Foundation: résumé and straße")
    func unicode() throws {
        let resume = PredicateRecord(values: ["name": .string("Résumé")])
        #expect(try Predicate(format: "name ==[cd] 'resume'").evaluate(on: resume))
        #expect(try !Predicate(format: "name ==[c] 'resume'").evaluate(on: resume))
        #expect(try Predicate(format: "name ==[c] 'RÉSUMÉ'").evaluate(on: resume))
        // Decomposed accents compare equal to precomposed ones under any option.
        #expect(try Predicate(format: "name ==[c] 'Re\\u0301sume\\u0301'").evaluate(on: resume))
        #expect(try Predicate(format: "'straße' ==[c] 'STRASSE'").evaluate(on: PredicateRecord()))
        #expect(try !Predicate(format: "'straße' == 'STRASSE'").evaluate(on: PredicateRecord()))
    }
}
