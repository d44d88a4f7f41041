import FerryCore
import FerryTestSupport
import Foundation
import Testing

@Suite("Fetch requests on a real store")
struct FetchRequestTests {
    /// Customer (code unique), Order (number unique, total decimal, placed date, customer to-one,
    /// note to-one to Note, which has no unique key), Note (text).
    static let model = ObjectModel(
        name: "Fetch", version: "1",
        entities: [
            EntityDescription(
                name: "Customer",
                attributes: [
                    AttributeDescription(name: "code", type: .string),
                    AttributeDescription(name: "email", type: .string),
                    AttributeDescription(name: "age", type: .int32),
                ],
                relationships: [
                    RelationshipDescription(name: "orders", destination: "Order", isToMany: true, inverse: "customer")
                ],
                uniquenessConstraints: [["code"]]),
            EntityDescription(
                name: "Order",
                attributes: [
                    AttributeDescription(name: "number", type: .string),
                    AttributeDescription(name: "total", type: .decimal),
                    AttributeDescription(name: "placed", type: .date),
                ],
                relationships: [
                    RelationshipDescription(name: "customer", destination: "Customer", inverse: "orders"),
                    RelationshipDescription(name: "note", destination: "Note"),
                ],
                uniquenessConstraints: [["number"]]),
            EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)]),
        ])

    /// A store with 3 customers, 8 orders and 2 notes.
    static func makeStore(_ directory: TemporaryDirectory) throws -> Store {
        let store = try Store.open(at: directory.file("fetch.sqlite"), model: model)
        try store.write { connection in
            try connection.executeScript(
                """
                INSERT INTO "Customer"(ferry_pk, code, email, age) VALUES (1, 'C1', 'zoe@example.com', 41), (2, 'C2', 'ann@example.org', 30), (3, 'C3', NULL, 52);
                INSERT INTO "Note"(ferry_pk, text) VALUES (1, 'fragile'), (2, 'gift');
                INSERT INTO "Order"(ferry_pk, number, total, placed, customer, note) VALUES
                  (1, 'A-1', '9.5', '2024-01-02T00:00:00.000Z', 1, 1),
                  (2, 'A-2', '10', '1969-12-31T23:59:59.999Z', 2, NULL),
                  (3, 'A-3', '-2', '2024-01-01T00:00:00.000Z', 1, 2),
                  (4, 'A-4', '100.25', NULL, 2, NULL),
                  (5, 'A-5', '12345678901234567890.1', '2023-06-01T12:00:00.500Z', NULL, NULL),
                  (6, 'A-6', '12345678901234567890.05', '2023-06-01T12:00:00.250Z', 3, NULL),
                  (7, 'A-7', '99999999999999999.5', '2000-01-01T00:00:00.000Z', 3, NULL),
                  (8, 'A-8', '100000000000000000', '2000-01-01T00:00:00.000Z', 1, NULL);
                """)
        }
        return store
    }

    static func rows(_ store: Store, _ request: FetchRequest) throws -> [[Value]] {
        try store.fetch(request) { cursor in
            var rows: [[Value]] = []
            while let row = try cursor.next() { rows.append(row) }
            #expect(try cursor.next() == nil)
            return rows
        }
    }

    static func numbers(_ store: Store, _ request: FetchRequest) throws -> [String] {
        var request = request
        request.properties = ["number"]
        return try rows(store, request).map { $0[0].description }
    }

    @Test("without sort descriptors rows come in primary-key order, every attribute then to-one keys")
    func defaults() throws {
        let directory = TemporaryDirectory()
        let store = try Self.makeStore(directory)
        let rows = try Self.rows(store, FetchRequest(entity: "Order"))
        try store.fetch(FetchRequest(entity: "Order")) { cursor in
            #expect(cursor.columns.map(\.name) == ["number", "total", "placed", "customer", "note"])
            #expect(cursor.columns.map(\.type) == [.string, .decimal, .date, .string, .int64])
            #expect(cursor.columns.map(\.isRelationshipKey) == [false, false, false, true, true])
            #expect(cursor.columns[3].keyAttribute == "code")
        }
        #expect(rows.count == 8)
        #expect(rows[0] == [.string("A-1"), .decimal("9.5"), .date(1_704_153_600_000), .string("C1"), .integer(1)])
        #expect(rows[1] == [.string("A-2"), .decimal("10"), .date(-1), .string("C2"), .null])
        #expect(rows[4][3] == .null)
    }

    @Test("decimals sort numerically and exactly, beyond Double's precision")
    func decimalOrder() throws {
        let directory = TemporaryDirectory()
        let store = try Self.makeStore(directory)
        #expect(
            try Self.numbers(store, FetchRequest(entity: "Order", sortDescriptors: [SortDescriptor("total")]))
                == ["A-3", "A-1", "A-2", "A-4", "A-7", "A-8", "A-6", "A-5"])
        #expect(
            try Self.numbers(
                store, FetchRequest(entity: "Order", sortDescriptors: [SortDescriptor("total", ascending: false)]))
                == ["A-5", "A-6", "A-8", "A-7", "A-4", "A-2", "A-1", "A-3"])
    }

    @Test("several keys, descending, through a to-one relationship; nil sorts first ascending")
    func severalKeys() throws {
        let directory = TemporaryDirectory()
        let store = try Self.makeStore(directory)
        let request = FetchRequest(
            entity: "Order",
            sortDescriptors: [SortDescriptor("customer.email"), SortDescriptor("placed", ascending: false)])
        // A-5 has no customer and C3 has no email: a nil email sorts first, then by date, latest
        // first (a nil date sorts last descending); then ann's orders, then zoe's.
        #expect(try Self.numbers(store, request) == ["A-5", "A-6", "A-7", "A-2", "A-4", "A-1", "A-3", "A-8"])
        let byCustomerAge = FetchRequest(
            entity: "Order",
            sortDescriptors: [SortDescriptor("customer.age", ascending: false), SortDescriptor("number")])
        #expect(try Self.numbers(store, byCustomerAge) == ["A-6", "A-7", "A-1", "A-3", "A-8", "A-2", "A-4", "A-5"])
    }

    @Test("dates sort chronologically, before 1970 and by milliseconds")
    func dateOrder() throws {
        let directory = TemporaryDirectory()
        let store = try Self.makeStore(directory)
        let request = FetchRequest(
            entity: "Order", predicate: try Predicate(format: "placed != nil"),
            sortDescriptors: [SortDescriptor("placed")])
        #expect(try Self.numbers(store, request) == ["A-2", "A-7", "A-8", "A-6", "A-5", "A-3", "A-1"])
    }

    @Test("limit and offset page through a stable order")
    func paging() throws {
        let directory = TemporaryDirectory()
        let store = try Self.makeStore(directory)
        var request = FetchRequest(entity: "Order", sortDescriptors: [SortDescriptor("customer")])
        let all = try Self.numbers(store, request)
        #expect(all == ["A-5", "A-1", "A-3", "A-8", "A-2", "A-4", "A-6", "A-7"])
        request.limit = 3
        #expect(try Self.numbers(store, request) == ["A-5", "A-1", "A-3"])
        request.offset = 3
        #expect(try Self.numbers(store, request) == ["A-8", "A-2", "A-4"])
        request.offset = 6
        #expect(try Self.numbers(store, request) == ["A-6", "A-7"])
        request.limit = 0
        #expect(try Self.numbers(store, request) == [])
        request.limit = nil
        request.offset = 7
        #expect(try Self.numbers(store, request) == ["A-7"])
    }

    @Test("predicates filter, through relationships and with string operators")
    func predicates() throws {
        let directory = TemporaryDirectory()
        let store = try Self.makeStore(directory)
        func numbers(_ format: String) throws -> [String] {
            try Self.numbers(store, FetchRequest(entity: "Order", predicate: try Predicate(format: format)))
        }
        #expect(try numbers("total > 10") == ["A-4", "A-5", "A-6", "A-7", "A-8"])
        #expect(try numbers("customer.email ENDSWITH \"example.com\"") == ["A-1", "A-3", "A-8"])
        #expect(try numbers("customer.age > 40 AND total < 100") == ["A-1", "A-3"])
        #expect(try numbers("customer == nil") == ["A-5"])
        #expect(try numbers("note.text BEGINSWITH[c] \"FRA\"") == ["A-1"])
    }

    @Test("the properties to fetch: attributes, to-one key paths, relationship keys")
    func properties() throws {
        let directory = TemporaryDirectory()
        let store = try Self.makeStore(directory)
        let request = FetchRequest(
            entity: "Order", predicate: try Predicate(format: "number IN {'A-1', 'A-5'}"),
            properties: ["customer.email", "number", "customer", "note", "note.text", "customer.age"])
        #expect(
            try Self.rows(store, request) == [
                [
                    .string("zoe@example.com"), .string("A-1"), .string("C1"), .integer(1), .string("fragile"),
                    .integer(41),
                ],
                [.null, .string("A-5"), .null, .null, .null, .null],
            ])
        let query = try request.compile(model: Self.model, layout: FerryLayout())
        // One join per relationship path, however many key paths use it.
        #expect(query.sql.components(separatedBy: "LEFT JOIN").count - 1 == 2)
    }

    @Test("a one-to-one relationship keyed on the other side is fetched through the inverse")
    func inverseOneToOne() throws {
        let model = ObjectModel(
            name: "One", version: "1",
            entities: [
                EntityDescription(
                    name: "A", attributes: [AttributeDescription(name: "name", type: .string)],
                    relationships: [RelationshipDescription(name: "b", destination: "B", inverse: "a")],
                    uniquenessConstraints: [["name"]]),
                EntityDescription(
                    name: "B", attributes: [AttributeDescription(name: "label", type: .string)],
                    relationships: [RelationshipDescription(name: "a", destination: "A", inverse: "b")],
                    uniquenessConstraints: [["label"]]),
            ])
        let directory = TemporaryDirectory()
        let store = try Store.open(at: directory.file("one.sqlite"), model: model)
        try store.write { connection in
            // A.b < B.a, so A owns the key column `b`.
            try connection.executeScript(
                """
                INSERT INTO "B"(ferry_pk, label) VALUES (1, 'b1'), (2, 'b2');
                INSERT INTO "A"(ferry_pk, name, b) VALUES (1, 'a1', 2), (2, 'a2', NULL);
                """)
        }
        #expect(
            try Self.rows(store, FetchRequest(entity: "B", properties: ["label", "a", "a.name"])) == [
                [.string("b1"), .null, .null], [.string("b2"), .string("a1"), .string("a1")],
            ])
    }

    @Test("unknown entities and key paths are errors that name the entity and suggest a name")
    func errors() throws {
        let directory = TemporaryDirectory()
        let store = try Self.makeStore(directory)
        let fields = InputLocation(file: "--fields", line: 1, column: 1)
        func message(_ request: FetchRequest) -> String {
            do {
                _ = try Self.rows(store, request)
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        #expect(
            message(FetchRequest(entity: "Ordr", entityLocation: InputLocation(file: "job.yml", line: 4, column: 13)))
                == "job.yml:4:13: error: unknown entity 'Ordr' in model 'Fetch'; did you mean 'Order'?")
        #expect(
            message(
                FetchRequest(
                    entity: "Order", properties: FetchProperty.list("number, customer.emial", location: fields)))
                == "--fields:1:18: error: Customer has no attribute 'emial'; did you mean 'email'?")
        #expect(
            message(
                FetchRequest(entity: "Order", properties: FetchProperty.list("number,custmer.email", location: fields)))
                == "--fields:1:8: error: Order has no relationship 'custmer'; did you mean 'customer'?")
        #expect(
            message(FetchRequest(entity: "Order", properties: FetchProperty.list("customer.orders", location: fields)))
                == "--fields:1:10: error: 'orders' of Customer is a to-many relationship; only attributes and to-one relationships can be fetched or sorted by"
        )
        #expect(
            message(FetchRequest(entity: "Order", properties: FetchProperty.list("number.size", location: fields)))
                == "--fields:1:1: error: 'number' of Order is an attribute, not a relationship, so 'size' cannot follow it"
        )
        #expect(
            message(
                FetchRequest(
                    entity: "Order",
                    sortDescriptors: [
                        SortDescriptor("totl", location: InputLocation(file: "--sort", line: 1, column: 1))
                    ]))
                == "--sort:1:1: error: Order has no attribute 'totl'; did you mean 'total'?")
        #expect(
            message(
                FetchRequest(
                    entity: "Order",
                    predicate: try Predicate(
                        format: "totl > 1", location: InputLocation(file: "--where", line: 1, column: 1))))
                == "--where:1:1: error: Order has no attribute 'totl'; did you mean 'total'?")
        #expect(message(FetchRequest(entity: "Order", limit: -1)) == "error: the limit must be 0 or more, not -1")
        #expect(message(FetchRequest(entity: "Order", offset: -2)) == "error: the offset must be 0 or more, not -2")
    }

    @Test("sort descriptors parse key, key:asc and key:desc")
    func sortDescriptorSyntax() throws {
        #expect(try SortDescriptor.parse("name") == SortDescriptor("name"))
        #expect(try SortDescriptor.parse("customer.email:desc") == SortDescriptor("customer.email", ascending: false))
        #expect(try SortDescriptor.parse("age:ASC") == SortDescriptor("age"))
        #expect(throws: FerryError.self) { try SortDescriptor.parse(":desc") }
        do {
            _ = try SortDescriptor.parse("age:down", location: InputLocation(file: "--sort", line: 1, column: 1))
            Issue.record("no error")
        } catch {
            #expect("\(error)" == "--sort:1:5: error: unknown sort direction 'down' (asc or desc)")
        }
    }

    @Test("the cursor streams: rows are read one at a time from SQLite")
    func streaming() throws {
        let directory = TemporaryDirectory()
        let store = try Self.makeStore(directory)
        try store.fetch(FetchRequest(entity: "Order", properties: ["number", "total"])) { cursor in
            var count = 0
            while try cursor.advance() {
                count += 1
                #expect(cursor.storageClass(at: 0) == .text)
                cursor.withTextBytes(at: 0) { #expect(Array($0) == Array("A-\(count)".utf8)) }
            }
            #expect(count == 8)
            #expect(try cursor.advance() == false)
        }
    }
}
