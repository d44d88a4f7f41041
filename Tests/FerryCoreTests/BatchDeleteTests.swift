import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// The backends a store-level test runs against: SQLite always, PostgreSQL when a test server
/// is there (and always in CI, where a missing server fails the test).
enum StoreBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgresql

    static var available: [StoreBackend] { PostgresTestServer.shouldRun ? allCases : [.sqlite] }

    var testDescription: String { rawValue }
}

/// A store whose Customer has one relationship per delete rule, Orders with Items (two cascade
/// levels) and Tags through a join table, and a self-referential Node tree.
struct DeleteFixture {
    let directory = TemporaryDirectory("ferry-delete")
    let scratch: PostgresStoreScratch?
    let store: Store

    static func relationship(
        _ name: String, _ destination: String, many: Bool = false, inverse: String?, rule: DeleteRule = .nullify,
        optional: Bool = true
    ) -> RelationshipDescription {
        RelationshipDescription(
            name: name, destination: destination, isToMany: many, inverse: inverse, deleteRule: rule,
            isOptional: optional)
    }

    static func entity(_ name: String, _ relationships: [RelationshipDescription]) -> EntityDescription {
        EntityDescription(
            name: name, attributes: [AttributeDescription(name: "name", type: .string)], relationships: relationships)
    }

    static let model = ObjectModel(
        name: "Rules", version: "1",
        entities: [
            entity(
                "Customer",
                [
                    relationship("orders", "Order", many: true, inverse: "customer", rule: .cascade),
                    relationship("notes", "Note", many: true, inverse: "customer", rule: .nullify),
                    relationship("invoices", "Invoice", many: true, inverse: "customer", rule: .deny),
                    relationship("visits", "Visit", many: true, inverse: "customer", rule: .noAction),
                    relationship("reviews", "Review", many: true, inverse: "customer", rule: .nullify),
                ]),
            entity(
                "Order",
                [
                    relationship("customer", "Customer", inverse: "orders", optional: false),
                    relationship("items", "Item", many: true, inverse: "order", rule: .cascade),
                    relationship("tags", "Tag", many: true, inverse: "orders", rule: .cascade),
                ]),
            entity("Item", [relationship("order", "Order", inverse: "items", optional: false)]),
            entity("Tag", [relationship("orders", "Order", many: true, inverse: "tags", rule: .nullify)]),
            entity("Note", [relationship("customer", "Customer", inverse: "notes")]),
            entity("Invoice", [relationship("customer", "Customer", inverse: "invoices")]),
            entity("Visit", [relationship("customer", "Customer", inverse: "visits")]),
            entity("Review", [relationship("customer", "Customer", inverse: "reviews", optional: false)]),
            entity(
                "Node",
                [
                    relationship("parent", "Node", inverse: "children"),
                    relationship("children", "Node", many: true, inverse: "parent", rule: .cascade),
                    relationship("friend", "Node", inverse: "friendOf", rule: .cascade),
                    relationship("friendOf", "Node", inverse: "friend", rule: .cascade),
                ]),
            entity("Log", [relationship("node", "Node", inverse: nil)]),
            entity("Plain", []),
        ])

    init(_ backend: StoreBackend = .sqlite) throws {
        scratch = backend == .postgresql ? try PostgresStoreScratch() : nil
        store = try Store.open(at: scratch?.url ?? directory.file("rules.sqlite"), model: Self.model)
        try execute(
            """
            INSERT INTO "Customer"(ferry_pk, name) VALUES (1, 'Ann'), (2, 'Bob'), (3, 'Cy'), (4, 'Dee'), (5, 'Eve');
            INSERT INTO "Order"(ferry_pk, name, customer) VALUES (1, 'A-1', 1), (2, 'A-2', 1), (3, 'B-1', 2);
            INSERT INTO "Item"(ferry_pk, name, "order") VALUES (1, 'i1', 1), (2, 'i2', 1), (3, 'i3', 2), (4, 'i4', 3);
            INSERT INTO "Tag"(ferry_pk, name) VALUES (1, 'rush'), (2, 'gift'), (3, 'bulk');
            INSERT INTO "ferry_link_Order_tags"(ferry_source, ferry_target) VALUES (1, 1), (2, 1), (2, 2), (3, 3);
            INSERT INTO "Note"(ferry_pk, name, customer) VALUES (1, 'n1', 1), (2, 'n2', 1), (3, 'n3', 2);
            INSERT INTO "Invoice"(ferry_pk, name, customer) VALUES (1, 'inv', 3), (2, 'inv2', 3);
            INSERT INTO "Visit"(ferry_pk, name, customer) VALUES (1, 'v', 4);
            INSERT INTO "Review"(ferry_pk, name, customer) VALUES (1, 'r', 5);
            """)
    }

    /// Runs fixed SQL (identifiers quoted, for PostgreSQL) in one write transaction.
    func execute(_ script: String) throws {
        try store.writeDatabase { try $0.executeScript(script) }
    }

    func rows(_ sql: String) throws -> [[DatabaseValue]] {
        try store.withDatabase { try $0.rows(sql) }
    }

    func delete(
        _ predicate: String, entity: String = "Customer", rules: BatchDeleteRequest.DeleteRules = .apply,
        dryRun: Bool = false
    ) throws -> BatchDeleteResult {
        let request = BatchDeleteRequest(
            entity: entity, predicate: try Predicate(format: predicate), deleteRules: rules,
            location: InputLocation(file: "job.yml", line: 7, column: 5))
        return try store.execute(request, dryRun: dryRun)
    }

    func keys(_ table: String) throws -> [Int64] {
        try rows("SELECT ferry_pk FROM \"\(table)\" ORDER BY ferry_pk").compactMap { $0[0].int64 }
    }

    func links() throws -> [[Int64]] {
        try rows("SELECT ferry_source, ferry_target FROM \"ferry_link_Order_tags\" ORDER BY 1, 2").map {
            $0.compactMap(\.int64)
        }
    }

    func dump() throws -> [String: [[DatabaseValue]]] {
        var result: [String: [[DatabaseValue]]] = [:]
        for table in Self.model.entityNames + ["ferry_link_Order_tags"] {
            result[table] = try rows("SELECT * FROM \"\(table)\" ORDER BY 1, 2")
        }
        return result
    }
}

@Suite("BatchDeleteRequest")
struct BatchDeleteTests {
    @Test(
        "cascade goes two levels down and through a join table; nullify clears references",
        arguments: StoreBackend.available)
    func cascadeAndNullify(_ backend: StoreBackend) throws {
        let fixture = try DeleteFixture(backend)
        let result = try fixture.delete("name == 'Ann'")
        #expect(result.deleted == ["Customer": 1, "Order": 2, "Item": 3, "Tag": 2])
        #expect(result.deletedCount == 1)
        #expect(result.cascaded == ["Order": 2, "Item": 3, "Tag": 2])
        #expect(result.nullified == ["Note.customer": 2])
        #expect(try fixture.keys("Customer") == [2, 3, 4, 5])
        #expect(try fixture.keys("Order") == [3])
        #expect(try fixture.keys("Item") == [4])
        #expect(try fixture.keys("Tag") == [3])
        #expect(try fixture.links() == [[3, 3]])
        let notes = try fixture.rows("SELECT ferry_pk, customer FROM \"Note\" ORDER BY 1")
        #expect(notes == [[.integer(1), .null], [.integer(2), .null], [.integer(3), .integer(2)]])
    }

    @Test(
        "a predicate ferry evaluates in part ([c], LIKE) deletes the same objects as the SQL",
        arguments: StoreBackend.available)
    func predicateEvaluatedByFerry(_ backend: StoreBackend) throws {
        let fixture = try DeleteFixture(backend)
        let result = try fixture.delete("name ==[c] 'ANN' OR (ANY orders.name LIKE 'B-?' AND invoices.@count == 0)")
        #expect(result.deleted == ["Customer": 2, "Order": 3, "Item": 4, "Tag": 3])
        #expect(result.nullified == ["Note.customer": 3])
        #expect(try fixture.keys("Customer") == [3, 4, 5])
        #expect(try fixture.delete("name LIKE[c] 'p*'", entity: "Plain", rules: .ignore).deleted == ["Plain": 0])
    }

    @Test("nullify of a many-to-many removes only the join rows", arguments: StoreBackend.available)
    func nullifyJoinTable(_ backend: StoreBackend) throws {
        let fixture = try DeleteFixture(backend)
        let result = try fixture.delete("name == 'rush'", entity: "Tag")
        #expect(result.deleted == ["Tag": 1])
        #expect(result.nullified == ["Tag.orders": 2])
        #expect(try fixture.keys("Order") == [1, 2, 3])
        #expect(try fixture.links() == [[2, 2], [3, 3]])
    }

    @Test(
        "deny fails with the relationship and the count of blocking objects, deleting nothing",
        arguments: StoreBackend.available)
    func deny(_ backend: StoreBackend) throws {
        let fixture = try DeleteFixture(backend)
        let before = try fixture.dump()
        #expect(
            errorText { _ = try fixture.delete("name IN {'Ann', 'Cy'}") }
                == "job.yml:7:5: error: cannot delete 2 Customer objects: relationship Customer.invoices has delete rule deny and 2 related Invoice objects refer to them; nothing was deleted"
        )
        #expect(try fixture.dump() == before)
    }

    @Test(
        "no_action leaves references alone, so a dangling foreign key stops the delete",
        arguments: StoreBackend.available)
    func noAction(_ backend: StoreBackend) throws {
        let fixture = try DeleteFixture(backend)
        let before = try fixture.dump()
        #expect(
            errorText { _ = try fixture.delete("name == 'Dee'") }
                == "job.yml:7:5: error: cannot delete the Customer objects: 1 Visit object still refers to them through Visit.customer (delete rule no_action of Customer.visits), and the store's foreign keys forbid dangling references; nothing was deleted"
        )
        #expect(try fixture.dump() == before)
        try fixture.execute("DELETE FROM \"Visit\"")
        #expect(try fixture.delete("name == 'Dee'").deleted == ["Customer": 1])
    }

    @Test(
        "nullify of a required inverse is an error, as Core Data's validation would say",
        arguments: StoreBackend.available)
    func nullifyRequired(_ backend: StoreBackend) throws {
        let fixture = try DeleteFixture(backend)
        let text = errorText { _ = try fixture.delete("name == 'Eve'") }
        #expect(
            text == """
                job.yml:7:5: error: cannot nullify Customer.reviews: 1 Review object would lose Review.customer, which is required; nothing was deleted
                  give Customer.reviews delete rule cascade, or delete or reassign those Review objects first
                """)
    }

    @Test(
        "delete_rules: ignore deletes only the selected rows, and reports the references that block it",
        arguments: StoreBackend.available)
    func ignore(_ backend: StoreBackend) throws {
        let fixture = try DeleteFixture(backend)
        let before = try fixture.dump()
        let text = errorText { _ = try fixture.delete("name IN {'Ann', 'Bob'}", rules: .ignore) }
        #expect(
            text == """
                job.yml:7:5: error: with delete_rules: ignore only the selected Customer objects are deleted, but other objects still refer to them (3 Order objects through Order.customer, 3 Note objects through Note.customer) and the store's foreign keys forbid dangling references; nothing was deleted
                  apply the model's delete rules (delete_rules: apply), or delete or reassign the referring objects first
                """)
        #expect(try fixture.dump() == before)
        // Orders hold the keys: deleting them alone leaves items dangling, which ignore reports too.
        #expect(try fixture.delete("TRUEPREDICATE", entity: "Item", rules: .ignore).deleted == ["Item": 4])
        let result = try fixture.delete("name BEGINSWITH 'A'", entity: "Order", rules: .ignore)
        #expect(result.deleted == ["Order": 2])
        #expect(try fixture.keys("Tag") == [1, 2, 3])
        #expect(try fixture.links() == [[3, 3]])
    }

    @Test("cascades through cycles and deep self-references terminate", arguments: StoreBackend.available)
    func cycles(_ backend: StoreBackend) throws {
        let fixture = try DeleteFixture(backend)
        // A chain of 300 nodes, each the parent of the next; nodes 301 and 302 are friends of each other.
        var script = "INSERT INTO \"Node\"(ferry_pk, name) VALUES (1, 'root');\n"
        for key in 2...300 {
            script += "INSERT INTO \"Node\"(ferry_pk, name, parent) VALUES (\(key), 'n\(key)', \(key - 1));\n"
        }
        script += """
            INSERT INTO "Node"(ferry_pk, name) VALUES (301, 'a'), (302, 'b'), (303, 'keep');
            UPDATE "Node" SET friend = 302 WHERE ferry_pk = 301;
            INSERT INTO "Log"(ferry_pk, name, node) VALUES (1, 'l1', 150), (2, 'l2', 303);
            """
        try fixture.execute(script)
        let chain = try fixture.delete("name == 'n3'", entity: "Node")
        #expect(chain.deleted == ["Node": 298])
        #expect(chain.nullified == ["Log.node": 1])
        #expect(try fixture.keys("Node") == [1, 2, 301, 302, 303])
        let pair = try fixture.delete("name == 'b'", entity: "Node")
        #expect(pair.deleted == ["Node": 2])
        #expect(try fixture.keys("Node") == [1, 2, 303])
        let logs = try fixture.rows("SELECT node FROM \"Log\" ORDER BY ferry_pk")
        #expect(logs == [[.null], [.integer(303)]])
    }

    @Test(
        "a dry run reports the counts and changes nothing; an entity without relationships is a plain DELETE",
        arguments: StoreBackend.available)
    func dryRunAndPlain(_ backend: StoreBackend) throws {
        let fixture = try DeleteFixture(backend)
        let before = try fixture.dump()
        let result = try fixture.delete("name == 'Ann'", dryRun: true)
        #expect(result.deleted == ["Customer": 1, "Order": 2, "Item": 3, "Tag": 2])
        #expect(try fixture.dump() == before)
        try fixture.execute("INSERT INTO \"Plain\"(name) VALUES ('a'), ('b'), ('c')")
        #expect(try fixture.delete("name != 'b'", entity: "Plain").deleted == ["Plain": 2])
        #expect(try fixture.delete("FALSEPREDICATE", entity: "Customer").deleted == ["Customer": 0])
        #expect(
            errorText { try BatchDeleteRequest(entity: "Custmer").check(model: DeleteFixture.model) }
                == "error: unknown entity 'Custmer' in model 'Rules'; did you mean 'Customer'?")
        #expect(
            errorText { _ = try fixture.delete("nme == 'x'") }
                == "<predicate>:1:1: error: Customer has no attribute 'nme'; did you mean 'name'?")
    }
}
