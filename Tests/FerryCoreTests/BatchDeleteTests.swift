import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// A store whose Customer has one relationship per delete rule, Orders with Items (two cascade
/// levels) and Tags through a join table, and a self-referential Node tree.
struct DeleteFixture {
    let directory = TemporaryDirectory("ferry-delete")
    let store: Store

    static func relationship(_ name: String, _ destination: String, many: Bool = false, inverse: String?, rule: DeleteRule = .nullify, optional: Bool = true) -> RelationshipDescription {
        RelationshipDescription(name: name, destination: destination, isToMany: many, inverse: inverse, deleteRule: rule, isOptional: optional)
    }

    static func entity(_ name: String, _ relationships: [RelationshipDescription]) -> EntityDescription {
        EntityDescription(name: name, attributes: [AttributeDescription(name: "name", type: .string)], relationships: relationships)
    }

    static let model = ObjectModel(
        name: "Rules", version: "1",
        entities: [
            entity("Customer", [
                relationship("orders", "Order", many: true, inverse: "customer", rule: .cascade),
                relationship("notes", "Note", many: true, inverse: "customer", rule: .nullify),
                relationship("invoices", "Invoice", many: true, inverse: "customer", rule: .deny),
                relationship("visits", "Visit", many: true, inverse: "customer", rule: .noAction),
                relationship("reviews", "Review", many: true, inverse: "customer", rule: .nullify),
            ]),
            entity("Order", [
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
            entity("Node", [
                relationship("parent", "Node", inverse: "children"),
                relationship("children", "Node", many: true, inverse: "parent", rule: .cascade),
                relationship("friend", "Node", inverse: "friendOf", rule: .cascade),
                relationship("friendOf", "Node", inverse: "friend", rule: .cascade),
            ]),
            entity("Log", [relationship("node", "Node", inverse: nil)]),
            entity("Plain", []),
        ])

    init() throws {
        store = try Store.open(at: directory.file("rules.sqlite"), model: Self.model)
        try store.write { connection in
            try connection.executeScript(
                """
                INSERT INTO Customer(ferry_pk, name) VALUES (1, 'Ann'), (2, 'Bob'), (3, 'Cy'), (4, 'Dee'), (5, 'Eve');
                INSERT INTO "Order"(ferry_pk, name, customer) VALUES (1, 'A-1', 1), (2, 'A-2', 1), (3, 'B-1', 2);
                INSERT INTO Item(ferry_pk, name, "order") VALUES (1, 'i1', 1), (2, 'i2', 1), (3, 'i3', 2), (4, 'i4', 3);
                INSERT INTO Tag(ferry_pk, name) VALUES (1, 'rush'), (2, 'gift'), (3, 'bulk');
                INSERT INTO ferry_link_Order_tags(ferry_source, ferry_target) VALUES (1, 1), (2, 1), (2, 2), (3, 3);
                INSERT INTO Note(ferry_pk, name, customer) VALUES (1, 'n1', 1), (2, 'n2', 1), (3, 'n3', 2);
                INSERT INTO Invoice(ferry_pk, name, customer) VALUES (1, 'inv', 3), (2, 'inv2', 3);
                INSERT INTO Visit(ferry_pk, name, customer) VALUES (1, 'v', 4);
                INSERT INTO Review(ferry_pk, name, customer) VALUES (1, 'r', 5);
                """)
        }
    }

    func delete(_ predicate: String, entity: String = "Customer", rules: BatchDeleteRequest.DeleteRules = .apply, dryRun: Bool = false) throws -> BatchDeleteResult {
        let request = BatchDeleteRequest(
            entity: entity, predicate: try Predicate(format: predicate), deleteRules: rules, location: InputLocation(file: "job.yml", line: 7, column: 5))
        return try store.execute(request, dryRun: dryRun)
    }

    func keys(_ table: String) throws -> [Int64] {
        try store.withConnection { try $0.rows("SELECT ferry_pk FROM \"\(table)\" ORDER BY ferry_pk").compactMap { $0[0].int64 } }
    }

    func links() throws -> [[Int64]] {
        try store.withConnection { try $0.rows("SELECT ferry_source, ferry_target FROM ferry_link_Order_tags ORDER BY 1, 2").map { $0.compactMap(\.int64) } }
    }

    func dump() throws -> [String: [[DatabaseValue]]] {
        var result: [String: [[DatabaseValue]]] = [:]
        for table in Self.model.entityNames + ["ferry_link_Order_tags"] {
            result[table] = try store.withConnection { try $0.rows("SELECT * FROM \"\(table)\" ORDER BY 1, 2") }
        }
        return result
    }
}

@Suite("BatchDeleteRequest")
struct BatchDeleteTests {
    @Test("cascade goes two levels down and through a join table; nullify clears references")
    func cascadeAndNullify() throws {
        let fixture = try DeleteFixture()
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
        let notes = try fixture.store.withConnection { try $0.rows("SELECT ferry_pk, customer FROM Note ORDER BY 1") }
        #expect(notes == [[.integer(1), .null], [.integer(2), .null], [.integer(3), .integer(2)]])
    }

    @Test("nullify of a many-to-many removes only the join rows")
    func nullifyJoinTable() throws {
        let fixture = try DeleteFixture()
        let result = try fixture.delete("name == 'rush'", entity: "Tag")
        #expect(result.deleted == ["Tag": 1])
        #expect(result.nullified == ["Tag.orders": 2])
        #expect(try fixture.keys("Order") == [1, 2, 3])
        #expect(try fixture.links() == [[2, 2], [3, 3]])
    }

    @Test("deny fails with the relationship and the count of blocking objects, deleting nothing")
    func deny() throws {
        let fixture = try DeleteFixture()
        let before = try fixture.dump()
        #expect(errorText { _ = try fixture.delete("name IN {'Ann', 'Cy'}") }
            == "job.yml:7:5: error: cannot delete 2 Customer objects: relationship Customer.invoices has delete rule deny and 2 related Invoice objects refer to them; nothing was deleted")
        #expect(try fixture.dump() == before)
    }

    @Test("no_action leaves references alone, so a dangling foreign key stops the delete")
    func noAction() throws {
        let fixture = try DeleteFixture()
        let before = try fixture.dump()
        #expect(errorText { _ = try fixture.delete("name == 'Dee'") }
            == "job.yml:7:5: error: cannot delete the Customer objects: 1 Visit object still refers to them through Visit.customer (delete rule no_action of Customer.visits), and the store's foreign keys forbid dangling references; nothing was deleted")
        #expect(try fixture.dump() == before)
        try fixture.store.write { try $0.execute("DELETE FROM Visit") }
        #expect(try fixture.delete("name == 'Dee'").deleted == ["Customer": 1])
    }

    @Test("nullify of a required inverse is an error, as Core Data's validation would say")
    func nullifyRequired() throws {
        let fixture = try DeleteFixture()
        let text = errorText { _ = try fixture.delete("name == 'Eve'") }
        #expect(text == """
            job.yml:7:5: error: cannot nullify Customer.reviews: 1 Review object would lose Review.customer, which is required; nothing was deleted
              give Customer.reviews delete rule cascade, or delete or reassign those Review objects first
            """)
    }

    @Test("delete_rules: ignore deletes only the selected rows, and reports the references that block it")
    func ignore() throws {
        let fixture = try DeleteFixture()
        let before = try fixture.dump()
        let text = errorText { _ = try fixture.delete("name IN {'Ann', 'Bob'}", rules: .ignore) }
        #expect(text == """
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

    @Test("cascades through cycles and deep self-references terminate")
    func cycles() throws {
        let fixture = try DeleteFixture()
        try fixture.store.write { connection in
            // A chain of 300 nodes, each the parent of the next; nodes 301 and 302 are friends of each other.
            try connection.execute("INSERT INTO Node(ferry_pk, name) VALUES (1, 'root')")
            for key in 2...300 { try connection.execute("INSERT INTO Node(ferry_pk, name, parent) VALUES (\(key), 'n\(key)', \(key - 1))") }
            try connection.execute("INSERT INTO Node(ferry_pk, name) VALUES (301, 'a'), (302, 'b'), (303, 'keep')")
            try connection.execute("UPDATE Node SET friend = 302 WHERE ferry_pk = 301")
            try connection.execute("INSERT INTO Log(ferry_pk, name, node) VALUES (1, 'l1', 150), (2, 'l2', 303)")
        }
        let chain = try fixture.delete("name == 'n3'", entity: "Node")
        #expect(chain.deleted == ["Node": 298])
        #expect(chain.nullified == ["Log.node": 1])
        #expect(try fixture.keys("Node") == [1, 2, 301, 302, 303])
        let pair = try fixture.delete("name == 'b'", entity: "Node")
        #expect(pair.deleted == ["Node": 2])
        #expect(try fixture.keys("Node") == [1, 2, 303])
        let logs = try fixture.store.withConnection { try $0.rows("SELECT node FROM Log ORDER BY ferry_pk") }
        #expect(logs == [[.null], [.integer(303)]])
    }

    @Test("a dry run reports the counts and changes nothing; an entity without relationships is a plain DELETE")
    func dryRunAndPlain() throws {
        let fixture = try DeleteFixture()
        let before = try fixture.dump()
        let result = try fixture.delete("name == 'Ann'", dryRun: true)
        #expect(result.deleted == ["Customer": 1, "Order": 2, "Item": 3, "Tag": 2])
        #expect(try fixture.dump() == before)
        try fixture.store.write { try $0.execute("INSERT INTO Plain(name) VALUES ('a'), ('b'), ('c')") }
        #expect(try fixture.delete("name != 'b'", entity: "Plain").deleted == ["Plain": 2])
        #expect(try fixture.delete("FALSEPREDICATE", entity: "Customer").deleted == ["Customer": 0])
        #expect(errorText { try BatchDeleteRequest(entity: "Custmer").check(model: DeleteFixture.model) }
            == "error: unknown entity 'Custmer' in model 'Rules'; did you mean 'Customer'?")
        #expect(errorText { _ = try fixture.delete("nme == 'x'") }
            == "<predicate>:1:1: error: Customer has no attribute 'nme'; did you mean 'name'?")
    }
}
