import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `integrity_check` runs on a second connection while the other checks run (a store file in
/// rollback-journal mode, read in a transaction), and on the session's own connection otherwise:
/// the reports must not differ.
@Suite("Verification: integrity checks on a second connection report as on the first")
struct ConcurrentIntegrityTests {
    /// A shop store whose email index claims to index `name` (integrity_check finds 3 problems).
    func brokenIndex() throws -> BrokenStore {
        let store = try BrokenStore()
        try validShop(store)
        try store.editSchema("ferry_unique_Customer_email", replacing: "(\"email\")", with: "(\"name\")")
        return store
    }

    let checks: [Check] = [
        .integrity(quick: false), .count(entity: "Customer", expectation: .exactly(3)), .types(entity: "Customer"),
        .integrity(quick: true),
        .integrity(quick: false),
    ]

    /// The results without their timings.
    func summary(_ results: [CheckResult]) -> [String] {
        results.map {
            "\($0.name) \($0.outcome) \($0.message) \($0.measured.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })"
        }
    }

    @Test("in a read transaction (concurrent) and outside one (serial): same results, in the checks' order")
    func sameResults() throws {
        let store = try brokenIndex()
        let verifier = Verifier(model: store.model)
        let concurrent = verifier.run(checks, on: try store.open()).results
        // A bare connection outside any transaction runs every check itself.
        let connection = try Connection(path: store.path, readOnly: true, create: false)
        try Verifier.registerFunctions(on: connection)
        let serial = verifier.run(checks, on: connection, layout: FerryLayout())
        #expect(summary(concurrent) == summary(serial))
        #expect(
            concurrent.map(\.name) == [
                "integrity_check", "count Customer", "types Customer", "quick_check", "integrity_check",
            ])
        #expect(concurrent.map(\.outcome) == [.failed, .passed, .passed, .passed, .failed])
        #expect(concurrent[0].message.hasPrefix("3 problems: "))
        #expect(concurrent[0].message.contains("ferry_unique_Customer_email"))
        #expect(concurrent.allSatisfy { $0.elapsedSeconds > 0 })
    }

    @Test("a store in WAL mode runs the integrity checks on its own connection, with the same results")
    func walStore() throws {
        let store = try brokenIndex()
        let serial = summary(Verifier(model: store.model).run(checks, on: try store.open()).results)
        try store.raw("PRAGMA journal_mode = WAL")
        let wal = Verifier(model: store.model).run(checks, on: try store.open()).results
        #expect(summary(wal) == serial)
        #expect(wal[0].outcome == .failed)
    }

    @Test("inside a write transaction the checks see its uncommitted changes, integrity_check too")
    func writeTransaction() throws {
        let store = try brokenIndex()
        let opened = try store.open()
        let results = try opened.withConnection { connection in
            try connection.execute("BEGIN IMMEDIATE")
            defer { try? connection.execute("ROLLBACK") }
            // Repaired in the transaction only: the committed file still has the broken index.
            try connection.execute("REINDEX ferry_unique_Customer_email")
            return Verifier(model: store.model).run(
                [.integrity(quick: false), .uniqueness(entity: "Customer")], on: connection, layout: FerryLayout())
        }
        #expect(results.map(\.message) == ["ok", "no duplicates", "no duplicates"])
        let after = Verifier(model: store.model).run([.integrity(quick: false)], on: opened).results
        #expect(after[0].message.hasPrefix("3 problems: "))
    }

    @Test("a sound store passes both ways, and the store is left unlocked")
    func soundStore() throws {
        let store = try BrokenStore()
        try validShop(store)
        let results = Verifier(model: store.model).run(
            Verifier.builtInChecks(for: store.model, level: .all), on: try store.open()
        ).results
        #expect(results.allSatisfy { $0.outcome == .passed || $0.outcome == .skipped }, "\(summary(results))")
        #expect(results.filter { $0.check == "integrity_check" }.map(\.message) == ["ok"])
        // The second connection is gone: a writer gets its lock at once.
        let writer = try Connection(path: store.path)
        try writer.executeScript("BEGIN EXCLUSIVE; COMMIT")
    }
}
