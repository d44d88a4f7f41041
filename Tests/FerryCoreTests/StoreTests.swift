import FerryCore
import FerryTestSupport
import Foundation
import Testing

@Suite("Store: layout, metadata, model check")
struct StoreTests {
    @Test("a new store has one table per entity, FK columns, unique indexes and metadata")
    func layout() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("shop.sqlite")
        let model = SampleModels.shop()
        let store = try Store.open(at: path, model: model)
        let schema = try store.withConnection {
            try $0.rows("SELECT name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name")
        }
        let text = schema.map { "\($0[0]): \($0[1])" }.joined(separator: "\n")
        #expect(text.contains("\"Customer\""))
        #expect(text.contains("\"customer\" INTEGER NOT NULL REFERENCES \"Customer\"(\"ferry_pk\")"))
        #expect(text.contains("CREATE UNIQUE INDEX \"ferry_unique_Customer_email\""))
        #expect(text.contains("\"balance\" TEXT DEFAULT '0'"))
        #expect(store.metadata.modelName == "Shop")
        #expect(store.metadata.modelVersion == "1")
        #expect(store.metadata.modelHash == model.versionHash)
        #expect(Set(store.metadata.entityHashes.keys) == ["Customer", "Order"])
        #expect(store.metadata.model == model)
    }

    @Test("opening with a different model version fails naming both versions")
    func mismatch() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("shop.sqlite")
        _ = try Store.open(at: path, model: SampleModels.shop(version: "1"))
        var changed = SampleModels.shop(version: "2")
        changed.entities[1].attributes.append(AttributeDescription(name: "note", type: .string))
        let error = try #require(throws: FerryError.self) { try Store.open(at: path, model: changed) }
        #expect(error.code == .modelMismatch)
        #expect(error.message.contains("is at model Shop version 1"))
        #expect(error.message.contains("the model given is Shop version 2"))
        #expect(error.notes.first == "entities that differ: Order")
    }

    @Test("a SQLite file that is not a ferry store is refused")
    func foreignDatabase() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("other.sqlite")
        try Connection(path: path).execute("CREATE TABLE t(x)")
        let error = try #require(throws: FerryError.self) { try Store.open(at: path, model: SampleModels.shop()) }
        #expect(
            error.message == "'\(path)' is a SQLite database but not a ferry store (it has no ferry_metadata table)")
    }

    @Test("values are stored in their canonical, sortable forms", arguments: ["file", ":memory:"])
    func storage(kind: String) throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(at: kind == "file" ? dir.file("s.sqlite") : ":memory:", model: SampleModels.shop())
        let result = try store.execute(
            oneRow([
                "id": .integer(1), "email": .string("a@x.io"), "balance": .decimal("12.50"),
                "joined": .date(1_700_000_000_123),
            ]))
        #expect(result.inserted == 1)
        let row = try store.withConnection { try $0.rows("SELECT balance, joined, active FROM Customer") }
        #expect(row == [[.text("12.50"), .text("2023-11-14T22:13:20.123Z"), .integer(1)]])
    }
}

@Suite("Batch insert: validation, conflicts, references")
struct BatchInsertTests {
    let dir = TemporaryDirectory()

    func makeStore() throws -> Store { try Store.open(at: dir.file("shop.sqlite"), model: SampleModels.shop()) }

    @Test("the handler supplies rows until it says done; counts add up")
    func handler() throws {
        let store = try makeStore()
        var next = 0
        var rejected: [String] = []
        var request = BatchInsertRequest(
            entity: "Customer", columns: [.attribute("id"), .attribute("email"), .attribute("age")]
        ) { row in
            guard next < 5 else { return true }
            row = [.integer(Int64(next)), .string(next == 3 ? "bad" : "c\(next)@x.io"), .integer(next == 4 ? 200 : 30)]
            next += 1
            return false
        }
        request.onReject = { _, reason in rejected.append(reason) }
        let result = try store.execute(request)
        #expect(result.read == 5)
        #expect(result.inserted == 3)
        #expect(result.rejected == 2)
        #expect(result.read == result.inserted + result.updated + result.skipped + result.rejected)
        #expect(
            rejected == ["email does not match the pattern [^@ ]+@[^@ ]+", "age 200 is greater than the maximum 150"])
    }

    @Test("error policy rejects duplicates; keep skips them")
    func errorAndKeep() throws {
        let store = try makeStore()
        _ = try store.execute(oneRow(["id": .integer(1), "email": .string("a@x.io")]))
        var reasons: [String] = []
        var request = oneRow(["id": .integer(1), "email": .string("b@x.io")])
        request.onReject = { _, reason in reasons.append(reason) }
        #expect(try store.execute(request).rejected == 1)
        #expect(reasons == ["another Customer already has the same id (uniqueness constraint)"])
        var keep = oneRow(["id": .integer(1), "email": .string("b@x.io")])
        keep.conflictPolicy = .keep
        #expect(try store.execute(keep).skipped == 1)
        #expect(try store.withConnection { try $0.scalar("SELECT email FROM Customer") } == .text("a@x.io"))
    }

    @Test("update changes only the supplied attributes (no Core Data reset pitfall)")
    func updateKeepsUnsupplied() throws {
        let store = try makeStore()
        _ = try store.execute(
            oneRow(["id": .integer(7), "email": .string("a@x.io"), "name": .string("Ana"), "age": .integer(40)]))
        var update = oneRow(["id": .integer(7), "age": .integer(41)])
        update.conflictPolicy = .update
        let result = try store.execute(update)
        #expect(result.updated == 1)
        let row = try store.withConnection { try $0.rows("SELECT email, name, age FROM Customer") }
        #expect(row == [[.text("a@x.io"), .text("Ana"), .integer(41)]])
    }

    @Test("replace overwrites the whole object but keeps its identity")
    func replace() throws {
        let store = try makeStore()
        _ = try store.execute(
            oneRow(["id": .integer(7), "email": .string("a@x.io"), "name": .string("Ana"), "balance": .decimal("5")]))
        let before = try store.withConnection { try $0.scalar("SELECT ferry_pk FROM Customer") }
        var replace = oneRow(["id": .integer(7), "email": .string("z@x.io")])
        replace.conflictPolicy = .replace
        #expect(try store.execute(replace).updated == 1)
        let row = try store.withConnection { try $0.rows("SELECT ferry_pk, email, name, balance FROM Customer") }
        #expect(row == [[before!, .text("z@x.io"), .null, .text("0")]])
    }

    @Test("a missing required value is a rejection, not a crash")
    func required() throws {
        let store = try makeStore()
        var reasons: [String] = []
        var request = oneRow(["id": .integer(1)])
        request.onReject = { _, reason in reasons.append(reason) }
        #expect(try store.execute(request).rejected == 1)
        #expect(reasons == ["email is required"])
    }

    @Test("references resolve through a unique attribute, also to rows inserted earlier in the same transaction")
    func references() throws {
        let store = try makeStore()
        try store.write { connection in
            let customers = try BatchInserter(
                connection: connection, model: store.model, layout: store.layout, entity: "Customer",
                columns: [.attribute("id"), .attribute("email")])
            #expect(try customers.insert([.integer(42), .string("a@x.io")]) == .inserted)
            let resolver = try ReferenceResolver(
                connection: connection, model: store.model, layout: store.layout, entity: "Order",
                relationship: "customer", match: "id")
            let key = try #require(try resolver.resolve(.integer(42)))
            #expect(try resolver.resolve(.integer(43)) == nil)
            let orders = try BatchInserter(
                connection: connection, model: store.model, layout: store.layout, entity: "Order",
                columns: [.attribute("number"), .relationship("customer")])
            #expect(try orders.insert([.string("A-1"), .integer(key)]) == .inserted)
            #expect(try orders.insert([.string("A-2"), .null]) == .rejected(reason: "customer is required", column: 1))
        }
    }

    func oneRow(_ values: KeyValuePairs<String, Value>) -> BatchInsertRequest {
        var done = false
        let columns = values.map { InsertColumn.attribute($0.key) }
        let row = values.map(\.value)
        return BatchInsertRequest(entity: "Customer", columns: columns) { out in
            if done { return true }
            out = row
            done = true
            return false
        }
    }
}

extension StoreTests {
    func oneRow(_ values: KeyValuePairs<String, Value>) -> BatchInsertRequest {
        BatchInsertTests().oneRow(values)
    }
}
