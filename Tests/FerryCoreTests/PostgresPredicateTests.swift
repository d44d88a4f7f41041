import FerryCore
import FerryPostgresStore
import FerryTestSupport
import Foundation
import Testing

/// The predicate conformance cases (``PredicateStoreTests/cases``) on real ferry stores of both
/// backends holding the same objects: every case on PostgreSQL gives SQLite's rows in SQLite's
/// order, and the expected objects.
@Suite(
    "Predicates on a PostgreSQL store agree with SQLite",
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresPredicateTests {
    /// Stores of `PredicateTestModel` filled with its rows: each object's own key, to-one keys
    /// and join-table pairs, written in each store's own value coding.
    static func fill(_ store: Store, layout: FerryLayout) throws {
        let model = PredicateTestModel.model
        let coding = layout.valueCoding
        try store.withDatabase { database in
            try database.writeTransaction {
                try database.execute(layout.dialect.deferForeignKeysStatement)
                for entity in model.entities {
                    for (pk, values) in (PredicateTestModel.rows[entity.name] ?? [:]).sorted(by: { $0.key < $1.key }) {
                        var names = [FerryLayout.primaryKey]
                        var arguments: [DatabaseValue] = [.integer(pk)]
                        for attribute in entity.attributes {
                            names.append(SQL.quote(attribute.name))
                            arguments.append(coding.encode(values[attribute.name] ?? .null))
                        }
                        for relationship in entity.relationships
                        where layout.ownsForeignKey(relationship, in: entity, model: model) {
                            guard
                                case .foreignKey(let column) = layout.storage(
                                    of: relationship, in: entity, model: model)
                            else { continue }
                            names.append(SQL.quote(column))
                            arguments.append(values[relationship.name].map { coding.encode($0) } ?? .null)
                        }
                        let marks = Array(repeating: "?", count: names.count).joined(separator: ", ")
                        try database.execute(
                            "INSERT INTO \(SQL.quote(entity.name)) (\(names.joined(separator: ", "))) VALUES (\(marks))",
                            arguments)
                    }
                }
                let order = PredicateTestModel.entity("Order")
                guard let tags = order.relationship(named: "tags"),
                    case .joinTable(let table, let source, let target) = layout.storage(
                        of: tags, in: order, model: model)
                else { throw FerryError(.internal, "Order.tags is not a join table") }
                for pair in PredicateTestModel.orderTags {
                    try database.execute(
                        "INSERT INTO \(SQL.quote(table)) (\(SQL.quote(source)), \(SQL.quote(target))) VALUES (?, ?)",
                        [.integer(pair.order), .integer(pair.tag)])
                }
            }
        }
    }

    static func rows(_ store: Store, _ request: FetchRequest) throws -> [[Value]] {
        try store.fetch(request) { cursor in
            var rows: [[Value]] = []
            while let row = try cursor.next() { rows.append(row) }
            return rows
        }
    }

    /// The attribute values of the objects `keys` of `entity`, in key order.
    static func expectedRows(_ entity: String, _ keys: Set<Int64>) -> [[Value]] {
        let attributes = PredicateTestModel.entity(entity).attributes.map(\.name)
        return keys.sorted().map { key in attributes.map { PredicateTestModel.rows[entity]?[key]?[$0] ?? .null } }
    }

    @Test("every conformance case gives SQLite's rows in SQLite's order, sorted, limited and offset too")
    func conformance() throws {
        let directory = TemporaryDirectory()
        let sqlite = try Store.open(at: directory.file("shop.sqlite"), model: PredicateTestModel.model)
        let scratch = try PostgresStoreScratch()
        let postgres = try Store.open(at: scratch.url, model: PredicateTestModel.model)
        try Self.fill(sqlite, layout: FerryLayout())
        try Self.fill(postgres, layout: FerryLayout.postgreSQL)

        var checked = 0
        for testCase in PredicateStoreTests.cases {
            let predicate = try Predicate(format: testCase.format, arguments: testCase.arguments)
            let description = PredicateTestModel.entity(testCase.entity)
            let sortKey = description.attributes.first { $0.type == .string }?.name ?? description.attributes[0].name
            let requests = [
                FetchRequest(entity: testCase.entity, predicate: predicate),
                FetchRequest(
                    entity: testCase.entity, predicate: predicate,
                    sortDescriptors: [SortDescriptor(sortKey, ascending: false)]),
                FetchRequest(
                    entity: testCase.entity, predicate: predicate, sortDescriptors: [SortDescriptor(sortKey)], limit: 2,
                    offset: 1),
            ]
            for (index, request) in requests.enumerated() {
                let expected = try Self.rows(sqlite, request)
                let actual = try Self.rows(postgres, request)
                #expect(actual == expected, "\(testCase.testDescription) (request \(index))")
                checked += 1
            }
            var attributes = requests[0]
            attributes.properties = description.attributes.map { FetchProperty($0.name) }
            #expect(
                try Self.rows(postgres, attributes) == Self.expectedRows(testCase.entity, testCase.expected),
                "\(testCase.testDescription)")
        }
        #expect(checked == PredicateStoreTests.cases.count * 3)
    }

    @Test(
        "what PostgreSQL computes exactly is the whole filter; the rest is left to ferry, and the server's filter is a superset"
    )
    func pushdown() throws {
        let model = PredicateTestModel.model
        let layout = FerryLayout.postgreSQL
        func filter(_ entity: String, _ format: String) throws -> PredicateFilter {
            try Predicate(format: format).postgresFilter(
                for: PredicateTestModel.entity(entity), model: model, layout: layout)
        }
        let exact = try filter("Order", "customer.age > 20 AND ANY tags.name == 'rush' AND items.@avg.price < 10")
        #expect(exact.isExact)
        #expect(PredicateFunctions.all.allSatisfy { !exact.sql.sql.contains($0.name + "(") })
        let text = try filter("Customer", "name < 'b' AND email ENDSWITH '.de'")
        #expect(text.isExact)
        #expect(
            text.sql.sql
                == #"(t0."name" COLLATE "C" < ? AND right(t0."email", char_length(CAST(? AS text))) = CAST(? AS text))"#
        )
        #expect(text.sql.arguments == [.text("b"), .text(".de"), .text(".de")])

        let mixed = try filter("Customer", "name ==[c] 'ann' AND age > 30")
        #expect(!mixed.isExact)
        #expect(mixed.sql.sql == #"t0."age" > ?"#)
        #expect(mixed.sql.arguments == [.integer(30)])
        let alternative = try filter("Customer", "name LIKE 'A*' OR age > 30")
        #expect(!alternative.isExact)
        #expect(alternative.sql.sql == "TRUE")
        #expect(alternative.sql.arguments.isEmpty)
        let negated = try filter("Customer", "NOT (name MATCHES 'A.*' OR age > 30)")
        #expect(!negated.isExact)
        #expect(negated.sql.sql == #"(t0."age" > ?) IS NOT TRUE"#)
        let nested = try filter("Customer", "SUBQUERY(orders, $o, $o.status ==[c] 'paid').@count == 1 AND vip == YES")
        #expect(!nested.isExact)
        #expect(nested.sql.sql == #"t0."vip" = ?"#)
    }

    @Test("a predicate PostgreSQL cannot compute is refused by the SQL compiler itself, naming why")
    func sqlRefusesWhatIsNotExact() throws {
        let layout = FerryLayout.postgreSQL
        let error = try #require(throws: FerryError.self) {
            try Predicate(format: "name LIKE[c] 'a*'").sql(
                for: PredicateTestModel.entity("Customer"), model: PredicateTestModel.model, layout: layout)
        }
        #expect(error.message.contains("cannot be compiled to PostgreSQL SQL"))
        #expect(error.message.contains("[c] and [d]"))
    }
}
