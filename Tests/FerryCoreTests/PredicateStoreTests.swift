import FerryCore
import FerryTestSupport
import Testing

/// One predicate, the entity it filters and the primary keys it must select.
struct PredicateCase: CustomTestStringConvertible, Sendable {
    var entity: String
    var format: String
    var arguments: [PredicateArgument] = []
    var expected: Set<Int64>
    var testDescription: String { "\(entity): \(format)" }

    init(_ entity: String, _ format: String, _ arguments: [PredicateArgument] = [], _ expected: Set<Int64>) {
        self.entity = entity
        self.format = format
        self.arguments = arguments
        self.expected = expected
    }
}

@Suite("Predicates on a real SQLite store")
struct PredicateStoreTests {
    static let all: Set<Int64> = [1, 2, 3, 4, 5]

    static let cases: [PredicateCase] = [
        // Comparisons on integers, with every operator spelling.
        .init("Customer", "age > 30", [], [1, 3]),
        .init("Customer", "age >= 34", [], [1, 3]),
        .init("Customer", "age => 52", [], [3]),
        .init("Customer", "age < 30", [], [2, 5]),
        .init("Customer", "age <= 19", [], [2]),
        .init("Customer", "age =< 27", [], [2, 5]),
        .init("Customer", "age == 34", [], [1]),
        .init("Customer", "age = 34", [], [1]),
        .init("Customer", "age != 34", [], [2, 3, 4, 5]),
        .init("Customer", "age <> 34", [], [2, 3, 4, 5]),
        .init("Customer", "NOT (age > 30)", [], [2, 4, 5]),
        .init("Customer", "!(age > 30) AND name != nil", [], [2, 5]),
        .init("Customer", "age BETWEEN {19, 34}", [], [1, 2, 5]),
        .init("Customer", "NOT age BETWEEN {19, 34}", [], [3, 4]),
        .init("Customer", "age IN {19, 52, 99}", [], [2, 3]),
        .init("Customer", "age IN {}", [], []),
        .init("Customer", "NOT age IN {}", [], all),
        .init("Customer", "name IN {nil, 'Ann'}", [], [1, 4]),
        .init("Customer", "NOT name IN {nil, 'Ann'}", [], [2, 3, 5]),
        .init("Customer", "name == nil", [], [4]),
        .init("Customer", "name = NULL", [], [4]),
        .init("Customer", "nil == name", [], [4]),
        .init("Customer", "name != nil", [], [1, 2, 3, 5]),
        // Booleans, decimals, doubles, numbers in every notation.
        .init("Customer", "vip == YES", [], [1, 3]),
        .init("Customer", "vip == NO", [], [2, 5]),
        .init("Customer", "vip = TRUE", [], [1, 3]),
        .init("Customer", "vip == 1", [], [1, 3]),
        .init("Customer", "vip != YES", [], [2, 4, 5]),
        .init("Customer", "balance > 100", [], [1, 3]),
        .init("Customer", "balance < 0", [], [2]),
        .init("Customer", "balance == 0.1", [], [5]),
        .init("Customer", "balance BETWEEN {0, 200}", [], [1, 5]),
        .init("Customer", "score >= 3.0", [], [1, 2]),
        .init("Customer", "score == -1.5", [], [5]),
        .init("Customer", "score > 1e0", [], [1, 2]),
        .init("Customer", "score < 0x10", [], [1, 2, 5]),
        .init("Customer", "NOT (score < 0)", [], [1, 2, 3, 4]),
        .init("Customer", "5 > score", [], [1, 2, 5]),
        // Dates: ISO strings and CAST, with Core Data's 2001 reference date for numbers.
        .init("Customer", "joined > '2024-01-01'", [], [2, 5]),
        .init("Customer", "joined < CAST('2022-01-01T00:00:00Z', 'NSDate')", [], [3]),
        .init("Customer", "joined >= CAST(725846400, 'NSDate')", [], [2, 5]),
        .init("Customer", "joined == '2021-12-31T23:59:59.999Z'", [], [3]),
        .init("Customer", "joined BETWEEN {'2023-01-01', '2024-01-31'}", [], [1, 2]),
        .init("Customer", "joined > %@", [.value(.date(1_704_067_200_000))], [2, 5]),
        // UUIDs given as strings, in any case.
        .init("Customer", "id == '6F1C2D3E-0000-4000-8000-000000000002'", [], [2]),
        .init(
            "Customer", "id IN {'6f1c2d3e-0000-4000-8000-000000000001', '6f1c2d3e-0000-4000-8000-000000000005'}", [],
            [1, 5]),
        .init("Customer", "id BEGINSWITH '6F1C'", [], [1, 2, 3, 5]),
        // Strings: operators and Unicode-correct options.
        .init("Customer", "name BEGINSWITH 'A'", [], [1]),
        .init("Customer", "name BEGINSWITH[c] 'a'", [], [1]),
        .init("Customer", "name ENDSWITH 'é'", [], [2]),
        .init("Customer", "name ENDSWITH[d] 'e'", [], [2, 3]),
        .init("Customer", "name CONTAINS 'ss'", [], []),
        .init("Customer", "name CONTAINS[c] 'SS'", [], [3]),
        .init("Customer", "name ==[c] 'STRASSE'", [], [3]),
        .init("Customer", "name ==[cd] 'resume'", [], [2]),
        .init("Customer", "name ==[cd] 'zoe'", [], [5]),
        .init("Customer", "name ==[c] 'zoë'", [], [5]),
        .init("Customer", "name == 'zoë'", [], []),
        .init("Customer", "name <[c] 'b'", [], [1]),
        .init("Customer", "name IN[c] {'ann', 'zoë'}", [], [1, 5]),
        .init("Customer", "name LIKE 'A*'", [], [1]),
        .init("Customer", "name LIKE '?nn'", [], [1]),
        .init("Customer", "name LIKE[cd] 'r*m?'", [], [2]),
        .init("Customer", "name LIKE '*'", [], [1, 2, 3, 5]),
        .init("Customer", "NOT name LIKE '*'", [], [4]),
        .init("Customer", "name MATCHES '[A-Z].*'", [], [1, 2, 5]),
        .init("Customer", "name MATCHES 'n'", [], []),
        .init("Customer", "name MATCHES[c] 'ann'", [], [1]),
        .init("Customer", "email MATCHES '.*@example\\\\.com'", [], [1, 2, 5]),
        .init("Customer", "'straße' ==[c] 'STRASSE'", [], all),
        // Logic and precedence.
        .init("Customer", "email ENDSWITH '.de' OR age < 20", [], [2, 3]),
        .init("Customer", "email ENDSWITH '.de' || age < 20", [], [2, 3]),
        .init("Customer", "vip == YES && age > 40", [], [3]),
        .init("Customer", "age < 20 OR age > 50 AND vip == NO", [], [2]),
        .init("Customer", "(age < 20 OR age > 50) AND vip == YES", [], [3]),
        .init("Customer", "NOT age < 20 AND NOT age > 50", [], [1, 4, 5]),
        .init("Customer", "TRUEPREDICATE", [], all),
        .init("Customer", "FALSEPREDICATE", [], []),
        .init("Customer", "NOT FALSEPREDICATE", [], all),
        // Placeholders, variables, escaped keys.
        .init("Customer", "%K == %@", [.keyPath("name"), "Ann"], [1]),
        .init("Customer", "age > %d", [30], [1, 3]),
        .init("Customer", "name IN %@", [.list([.string("Ann"), .string("ZOË")])], [1, 5]),
        .init("Customer", "#name == 'Ann'", [], [1]),
        .init("Customer", "avatar == nil", [], [2, 3, 4]),
        .init("Customer", "avatar != nil", [], [1, 5]),
        .init("Customer", "avatar == %@", [.value(.binary([9]))], [5]),
        // To-one relationships, including the non-owning side of a one-to-one.
        .init("Customer", "profile.bio == 'Loves coffee'", [], [1]),
        .init("Customer", "profile.bio == nil", [], [2, 3, 4, 5]),
        .init("Customer", "profile == nil", [], [2, 4, 5]),
        .init("Customer", "profile != nil", [], [1, 3]),
        .init("Profile", "customer.name == 'Ann'", [], [1]),
        .init("Profile", "customer == nil", [], []),
        .init("Order", "customer.name == 'Ann'", [], [10, 11]),
        .init("Order", "customer.name ==[cd] 'resume'", [], [12]),
        .init("Order", "customer == nil", [], [13]),
        .init("Order", "customer.profile.bio CONTAINS 'coffee'", [], [10, 11]),
        .init("Order", "customer.age > 20", [], [10, 11, 14]),
        .init("Order", "NOT customer.age > 20", [], [12, 13]),
        .init("Order", "total > 50 AND customer.vip == YES", [], [10, 11]),
        .init("Order", "placed < '2024-01-01' OR total == nil", [], [12, 13]),
        .init("Order", "status LIKE[c] 'p*'", [], [10, 14]),
        .init("Item", "order.customer.name == 'Ann'", [], [100, 101, 102]),
        .init("Item", "order == nil", [], [105]),
        // To-many: ANY, ALL, NONE, SOME, implicit ANY, IN over a to-many key path.
        .init("Customer", "ANY orders.status == 'paid'", [], [1]),
        .init("Customer", "ANY orders.status ==[c] 'paid'", [], [1, 3]),
        .init("Customer", "orders.status == 'shipped'", [], [1]),
        .init("Customer", "ALL orders.total > 50", [], [1, 4, 5]),
        .init("Customer", "NOT ALL orders.total > 50", [], [2, 3]),
        .init("Customer", "NONE orders.status == 'cancelled'", [], [1, 3, 4, 5]),
        .init("Customer", "SOME orders.number > 1003", [], [3]),
        .init("Customer", "NOT ANY orders.status == 'paid'", [], [2, 3, 4, 5]),
        .init("Customer", "ANY orders.items.sku BEGINSWITH[c] 'ab'", [], [1]),
        .init("Customer", "ANY orders.tags.name == 'rush'", [], [1]),
        .init("Customer", "ANY orders.tags.name ==[cd] 'cafe'", [], [3]),
        .init("Customer", "'rush' IN orders.tags.name", [], [1]),
        .init("Order", "ANY items.sku == nil", [], [12]),
        .init("Order", "ANY tags.name IN {'gift', 'Café'}", [], [10, 14]),
        .init("Order", "ALL items.quantity >= 2", [], [11, 13, 14]),
        .init("Item", "ANY order.tags.name == 'rush'", [], [100, 101, 102]),
        .init("Tag", "ANY orders.customer.name == 'Ann'", [], [200, 201]),
        // Collection operators.
        .init("Customer", "orders.@count == 0", [], [4, 5]),
        .init("Customer", "orders.@count >= 2", [], [1]),
        .init("Customer", "orders.@sum.total > 300", [], [1]),
        .init("Customer", "orders.total.@sum > 300", [], [1]),
        .init("Customer", "orders.@avg.total < 20", [], [2, 3]),
        .init("Customer", "orders.@max.placed > '2024-06-01'", [], [3]),
        .init("Customer", "orders.@min.number == 1001", [], [1]),
        .init("Customer", "orders.items.@count > 1", [], [1]),
        .init("Customer", "orders.items.@sum.quantity >= 2", [], [1, 3]),
        .init("Order", "items.@count == 0", [], [13]),
        .init("Order", "tags.@count >= 2", [], [10]),
        .init("Order", "items.@max.price >= 50", [], [11]),
        .init("Order", "items.@avg.price < 10", [], [14]),
        .init("Order", "customer.orders.@count > 1", [], [10, 11]),
        .init("Item", "order.tags.@count > 0", [], [100, 101, 102, 104]),
        .init("Tag", "orders.@count > 1", [], [201]),
        // SUBQUERY, nested, with outer key paths.
        .init("Customer", "SUBQUERY(orders, $o, $o.total > 50).@count > 0", [], [1]),
        .init("Customer", "SUBQUERY(orders, $o, $o.status ==[c] 'paid' AND $o.total < 10).@count == 1", [], [3]),
        .init("Customer", "SUBQUERY(orders, $o, ANY $o.items.quantity > 2).@count >= 1", [], [1]),
        .init("Customer", "SUBQUERY(orders, $o, SUBQUERY($o.items, $i, $i.price > 20).@count > 0).@count > 0", [], [1]),
        .init("Customer", "SUBQUERY(orders, $o, $o.number > 1000 AND age > 30).@count == 2", [], [1]),
        .init("Customer", "SUBQUERY(orders, $o, $o.total > 1).@sum.total > 100", [], [1]),
        .init("Customer", "SUBQUERY(orders, $o, $o.total > 1000).@count == 0", [], all),
    ]

    @Test("compiled SQL selects the same rows as in-memory evaluation, and the expected ones", arguments: cases)
    func sqlMatchesMemory(_ testCase: PredicateCase) throws {
        let directory = TemporaryDirectory()
        let connection = try PredicateTestModel.makeStore(at: directory.file("shop.sqlite"))
        let predicate = try Predicate(format: testCase.format, arguments: testCase.arguments)
        let inMemory = try PredicateTestModel.memoryMatches(predicate, entity: testCase.entity)
        let inSQL = try PredicateTestModel.sqlMatches(predicate, entity: testCase.entity, connection: connection)
        #expect(inMemory == testCase.expected)
        #expect(inSQL == testCase.expected)
    }

    @Test("$NAME variables are substituted before compiling")
    func substitution() throws {
        let directory = TemporaryDirectory()
        let connection = try PredicateTestModel.makeStore(at: directory.file("shop.sqlite"))
        let predicate = try Predicate(format: "$minimum < age AND name IN $names")
            .substituting(["minimum": 20, "names": .list([.string("Ann"), .string("straße"), .string("Résumé")])])
        #expect(try PredicateTestModel.sqlMatches(predicate, entity: "Customer", connection: connection) == [1, 3])
        #expect(try PredicateTestModel.memoryMatches(predicate, entity: "Customer") == [1, 3])
    }

    @Test("every literal is a bound parameter, never spliced into the SQL")
    func literalsAreParameters() throws {
        let predicate = try Predicate(
            format: "name == \"x'); DROP TABLE Customer; --\" AND age > 3 AND joined < '2024-01-01'")
        let compiled = try predicate.sql(
            for: PredicateTestModel.entity("Customer"), model: PredicateTestModel.model, layout: FerryLayout())
        // A date compares without its closing Z, in the instants' order (FerryValueCoding.orderedDate).
        #expect(compiled.sql == #"(t0."name" = ? AND t0."age" > ? AND rtrim(t0."joined", 'Z') < rtrim(?, 'Z'))"#)
        #expect(
            compiled.arguments == [
                .text("x'); DROP TABLE Customer; --"), .integer(3), .text("2024-01-01T00:00:00.000Z"),
            ])
        #expect(compiled.from == #""Customer" AS t0"#)
    }

    @Test("to-one key paths compile to correlated subqueries, to-many to EXISTS")
    func relationshipSQL() throws {
        let order = PredicateTestModel.entity("Order")
        let toOne = try Predicate(format: "customer.email ENDSWITH[c] '.de'").sql(
            for: order, model: PredicateTestModel.model, layout: FerryLayout())
        #expect(
            toOne.sql
                == #"ferry_endswith((SELECT t1."email" FROM "Customer" AS t1 WHERE t1."ferry_pk" = t0."customer" LIMIT 1), ?, 1)"#
        )
        let toMany = try Predicate(format: "ANY tags.name == 'rush'").sql(
            for: order, model: PredicateTestModel.model, layout: FerryLayout())
        #expect(
            toMany.sql
                == #"EXISTS (SELECT 1 FROM "ferry_link_Order_tags" AS l2 JOIN "Tag" AS t1 ON t1."ferry_pk" = l2."ferry_target" WHERE l2."ferry_source" = t0."ferry_pk" AND t1."name" = ?)"#
        )
    }

    @Test("the SQL functions fold Unicode as Foundation does")
    func functions() throws {
        let fold = try #require(PredicateFunctions.all.first { $0.name == "ferry_fold" })
        #expect(fold.body([.text("Straße"), .integer(1)]) == .text("strasse"))
        #expect(fold.body([.text("Résumé"), .integer(3)]) == .text("resume"))
        #expect(fold.body([.null, .integer(3)]) == .null)
        let like = try #require(PredicateFunctions.all.first { $0.name == "ferry_like" })
        #expect(like.body([.text("a*b"), .text("a\\*b"), .integer(0)]) == .integer(1))
        #expect(like.body([.text("axb"), .text("a\\*b"), .integer(0)]) == .integer(0))
        #expect(like.body([.null, .text("*"), .integer(0)]) == .integer(0))
        let matches = try #require(PredicateFunctions.all.first { $0.name == "ferry_matches" })
        #expect(matches.body([.text("ab"), .text("a|ab"), .integer(0)]) == .integer(1))
        #expect(matches.body([.text("ab\n"), .text("ab"), .integer(0)]) == .integer(0))
        #expect(matches.body([.text("x"), .text("("), .integer(0)]) == .integer(0))
        #expect(Set(PredicateFunctions.all.map(\.name)).count == 6)
    }
}
