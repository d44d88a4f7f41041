import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// After a passed integrity_check, a uniqueness constraint backed by a plain UNIQUE index is
/// proven without its GROUP BY query; every other case still runs the query.
@Suite("Verification: unique indexes proven by integrity_check")
struct UniqueIndexProofTests {
    @Test("SQLite's promise: integrity_check reports duplicate keys in a UNIQUE index")
    func sqlitePromise() throws {
        let store = try BrokenStore()
        try validShop(store)
        // Duplicates slipped in while the index was not unique, then the index claims UNIQUE again.
        try store.editSchema("ferry_unique_Customer_email", replacing: "CREATE UNIQUE INDEX", with: "CREATE INDEX")
        try store.raw("UPDATE Customer SET email = 'ann@x.io' WHERE id = 2")
        try store.editSchema("ferry_unique_Customer_email", replacing: "CREATE INDEX", with: "CREATE UNIQUE INDEX")
        let results = try store.run([.integrity(quick: false), .uniqueness(entity: "Customer")])
        #expect(results.map(\.name) == ["integrity_check", "unique Customer(id)", "unique Customer(email)"])
        #expect(results[0].message == "1 problem: non-unique entry in index ferry_unique_Customer_email")
        // integrity_check failed, so nothing is taken as proven: both constraints are queried.
        #expect(results[1].measured == ["duplicate_values": 0, "rows": 0])
        #expect(results[2].outcome == .failed)
        #expect(results[2].message == "1 value of email is shared by 2 records")
    }

    @Test("with a passed integrity_check the unique index proves the constraint; without one the query runs")
    func proven() throws {
        let store = try BrokenStore()
        try validShop(store)
        // Uniqueness before integrity in the list: the proof still applies, the order is kept.
        let withIntegrity = try store.run([.uniqueness(entity: "Customer"), .integrity(quick: false)])
        #expect(withIntegrity.map(\.name) == ["unique Customer(id)", "unique Customer(email)", "integrity_check"])
        #expect(withIntegrity.map(\.message) == ["no duplicates", "no duplicates", "ok"])
        #expect(
            withIntegrity[0].measured == ["duplicate_values": 0, "rows": 0, "unique_index": "ferry_unique_Customer_id"])
        #expect(
            withIntegrity[1].measured == [
                "duplicate_values": 0, "rows": 0, "unique_index": "ferry_unique_Customer_email",
            ])
        let quickOnly = try store.run([.integrity(quick: true), .uniqueness(entity: "Customer")])
        #expect(quickOnly[1].measured == ["duplicate_values": 0, "rows": 0])
        let alone = try store.run([.uniqueness(entity: "Customer")])
        #expect(alone.map(\.measured) == [["duplicate_values": 0, "rows": 0], ["duplicate_values": 0, "rows": 0]])
    }

    @Test("expression, partial and collated unique indexes prove nothing: the query runs and finds duplicates")
    func unprovable() throws {
        for (index, duplicate) in [
            ("CREATE UNIQUE INDEX other ON Customer(lower(email))", false),
            ("CREATE UNIQUE INDEX other ON Customer(email) WHERE id > 1", true),
            ("CREATE UNIQUE INDEX other ON Customer(email COLLATE NOCASE)", false),
        ] {
            let store = try BrokenStore()
            try validShop(store)
            try store.raw("DROP INDEX ferry_unique_Customer_email; \(index)")
            if duplicate {
                // Customer 1 is outside the partial index, so the index takes a second ann@x.io.
                try store.raw(
                    "INSERT INTO Customer(ferry_pk, id, email, balance, active) VALUES (4, 4, 'ann@x.io', '0', 1)")
            }
            let results = try store.run([.integrity(quick: false), .uniqueness(entity: "Customer")])
            #expect(results[0].message == "ok", "\(index)")
            #expect(results[1].measured["unique_index"] == "ferry_unique_Customer_id")
            #expect(results[2].name == "unique Customer(email)")
            if duplicate {
                #expect(results[2].message == "1 value of email is shared by 2 records", "\(index)")
            } else {
                #expect(results[2].measured == ["duplicate_values": 0, "rows": 0], "\(index)")
            }
        }
    }

    @Test("a table declaring a collation always gets the query")
    func collatedTable() throws {
        let store = try BrokenStore()
        try validShop(store)
        try store.editSchema("Customer", replacing: "\"name\" TEXT", with: "\"name\" TEXT COLLATE NOCASE")
        let results = try store.run([.integrity(quick: false), .uniqueness(entity: "Customer")])
        #expect(results.map(\.outcome) == [.passed, .passed, .passed])
        #expect(results[1].measured == ["duplicate_values": 0, "rows": 0])
    }
}
