import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

@Suite("Integer key runs")
struct IntegerKeyRunsTests {
    func runs(_ pairs: [(Int64, Int64)], maximumRuns: Int = 100) -> IntegerKeyRuns? {
        var iterator = pairs.makeIterator()
        return IntegerKeyRuns(maximumRuns: maximumRuns) { iterator.next().map { (key: $0.0, primaryKey: $0.1) } }
    }

    @Test("consecutive keys with consecutive primary keys share a run; every key maps exactly")
    func runsAndLookups() throws {
        let pairs: [(Int64, Int64)] = [(1, 10), (2, 11), (3, 12), (5, 13), (6, 14), (7, 2), (8, 3), (100, 4)]
        let map = try #require(runs(pairs))
        #expect(map.runCount == 4)
        for (key, primaryKey) in pairs { #expect(map.primaryKey(for: key) == primaryKey) }
        for missing: Int64 in [Int64.min, -1, 0, 4, 9, 99, 101, Int64.max] {
            #expect(map.primaryKey(for: missing) == nil)
        }
    }

    @Test("a repeated key keeps its first primary key; keys out of order or too many runs give no map")
    func duplicatesOrderAndLimit() throws {
        let map = try #require(runs([(1, 5), (1, 9), (2, 6)]))
        #expect((map.primaryKey(for: 1), map.primaryKey(for: 2), map.runCount) == (5, 6, 1))
        #expect(runs([(2, 1), (1, 2)]) == nil)
        #expect(runs([(1, 1), (3, 2), (5, 3)], maximumRuns: 2) == nil)
        #expect(runs([(1, 1), (2, 2), (3, 3)], maximumRuns: 1)?.runCount == 1)
        #expect(runs([])?.primaryKey(for: 0) == nil)
    }

    @Test("keys and primary keys at the ends of Int64 map exactly")
    func extremes() throws {
        let pairs: [(Int64, Int64)] = [
            (Int64.min, Int64.max - 1), (Int64.min + 1, Int64.max), (0, Int64.min), (Int64.max - 1, 7), (Int64.max, 8),
        ]
        let map = try #require(runs(pairs))
        for (key, primaryKey) in pairs { #expect(map.primaryKey(for: key) == primaryKey) }
        #expect(map.runCount == 3)
        #expect(map.primaryKey(for: Int64.min + 2) == nil)
        #expect(map.primaryKey(for: 1) == nil)
    }
}

@Suite("Reference resolver: the copy of the destination's keys")
struct ReferenceSnapshotTests {
    let dir = TemporaryDirectory()

    /// A shop whose customers' primary keys are not in the order of their ids.
    func store() throws -> Store {
        let store = try Store.open(at: dir.file("shop.sqlite"), model: SampleModels.shop())
        try store.write { connection in
            let customers = try BatchInserter(
                connection: connection, model: store.model, layout: store.layout, entity: "Customer",
                columns: [.attribute("id"), .attribute("email")])
            for id in [30, 10, 20, 21, 22, 5] {
                #expect(try customers.insert([.integer(Int64(id)), .string("c\(id)@x.io")]) == .inserted)
            }
        }
        return store
    }

    func makeResolver(_ store: Store, _ connection: Connection, match: String = "id") throws -> ReferenceResolver {
        try ReferenceResolver(
            connection: connection, model: store.model, layout: store.layout, entity: "Order", relationship: "customer",
            match: match)
    }

    func primaryKey(_ connection: Connection, id: Int64) throws -> Int64? {
        try connection.scalar("SELECT ferry_pk FROM Customer WHERE id = ?", [.integer(id)])?.int64
    }

    @Test("inside a transaction keys resolve from the copy, exactly as by query; objects added later still resolve")
    func resolvesLikeTheQuery() throws {
        let store = try store()
        try store.write { connection in
            let resolver = try makeResolver(store, connection)
            resolver.resolveFromSnapshot()
            for id: Int64 in [5, 10, 20, 21, 22, 30] {
                let expected = try primaryKey(connection, id: id)
                #expect(try resolver.resolve(.integer(id)) == expected)
            }
            #expect(resolver.resolvesFromSnapshot)
            for id: Int64 in [0, 6, 23, 31, -5] { #expect(try resolver.resolve(.integer(id)) == nil) }
            // An object written after the copy (an earlier record of the same import) is found by query.
            try connection.execute("INSERT INTO Customer (id, email) VALUES (23, 'new@x.io')")
            let added = connection.lastInsertRowID
            #expect(try resolver.resolve(.integer(23)) == added)
        }
    }

    @Test("outside a transaction, with a non-integer match attribute, or a key stored as text, every key is a query")
    func fallsBackToQueries() throws {
        let store = try store()
        try store.withConnection { connection in
            let resolver = try makeResolver(store, connection)
            resolver.resolveFromSnapshot()
            let expected = try primaryKey(connection, id: 20)
            #expect(try resolver.resolve(.integer(20)) == expected)
            #expect(!resolver.resolvesFromSnapshot)
        }
        try store.write { connection in
            let byEmail = try makeResolver(store, connection, match: "email")
            byEmail.resolveFromSnapshot()
            let expected21 = try primaryKey(connection, id: 21)
            #expect(try byEmail.resolve(.string("c21@x.io")) == expected21)
            #expect(!byEmail.resolvesFromSnapshot)
            // A key that is not stored as an integer (a damaged store) makes the copy inexact: no copy.
            try connection.execute("INSERT INTO Customer (id, email) VALUES ('x7', 'text@x.io')")
            let resolver = try makeResolver(store, connection)
            resolver.resolveFromSnapshot()
            let expected22 = try primaryKey(connection, id: 22)
            #expect(try resolver.resolve(.integer(22)) == expected22)
            #expect(!resolver.resolvesFromSnapshot)
        }
    }

    @Test("a commit by another connection between transactions drops the copy; the next transaction sees the change")
    func anotherWriterInvalidatesTheCopy() throws {
        let store = try store()
        let resolver = try store.withConnection { try makeResolver(store, $0) }
        resolver.resolveFromSnapshot()
        let resolved: Int64? = try store.write { _ in try resolver.resolve(.integer(20)) }
        let before = try #require(resolved)
        #expect(resolver.resolvesFromSnapshot)
        // Another process renumbers customer 20 and adds customer 40.
        let other = try Connection(path: dir.file("shop.sqlite"))
        try other.execute("UPDATE Customer SET id = 41 WHERE id = 20")
        try other.execute("INSERT INTO Customer (id, email) VALUES (40, 'c40@x.io')")
        try store.write { connection in
            try resolver.revalidateSnapshot()
            #expect(!resolver.resolvesFromSnapshot)
            #expect(try resolver.resolve(.integer(20)) == nil)
            #expect(try resolver.resolve(.integer(41)) == before)
            let expected40 = try primaryKey(connection, id: 40)
            #expect(try resolver.resolve(.integer(40)) == expected40)
            #expect(resolver.resolvesFromSnapshot)
        }
        // Without another writer, the copy is kept across transactions.
        try store.write { _ in
            try resolver.revalidateSnapshot()
            #expect(resolver.resolvesFromSnapshot)
        }
    }
}
