import FerryCore
import FerryFormats
@_spi(Testing) import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// Records the read-ahead thread coerced are written several rows per `INSERT` statement; a
/// statement a constraint refuses writes nothing, and its records are written one by one. That
/// must change nothing but the speed: the same rows in the same order, counts, located rejects
/// and committed batches as writing every record on its own.
@Suite("Import several rows per statement")
struct MultiRowImportTests {
    typealias Mode = ReadAheadImportTests.Mode
    typealias Outcome = ReadAheadImportTests.Outcome

    /// `count` customers; records at `duplicates` repeat the id of the record before them
    /// (refused by the unique index, so by SQLite inside a multi-row statement), and every 89th
    /// breaks a rule (refused before SQLite, so never in such a statement).
    static func customersCSV(_ count: Int, duplicates: Set<Int>, ruleBreakers: Bool = true) -> String {
        var lines = ["id,email,name,age,balance,joined,active"]
        for id in 1...count {
            let key = duplicates.contains(id) ? id - 1 : id
            let age = ruleBreakers && id % 89 == 0 ? "-1" : String(id % 90)
            lines.append(
                "\(key),c\(id)@x.io,c\(id),\(age),\(id).25,2024-02-\(String(format: "%02d", id % 28 + 1))T08:30:00Z,\(id % 3 == 0 ? "false" : "true")"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }

    func run(
        _ source: String, entity: String, mode: Mode, dir: TemporaryDirectory, store storePath: String? = nil,
        configure: (inout ImportStep) -> Void = { _ in }
    ) throws -> (outcome: Outcome, multiRowRecords: Int) {
        let result = try ReadAheadImportTests.importOnce(
            source, format: .csv, model: SampleModels.shop(), entity: entity,
            store: storePath ?? dir.file("\(mode).sqlite"), rejects: dir.file("\(mode)-\(entity).rejects"), mode: mode,
            alwaysCoerce: true, configure: configure)
        return (result.outcome, result.runner.multiRowRecords)
    }

    @Test("duplicates refused inside multi-row statements: the same rows, order, counts and rejects in every mode")
    func duplicatesInsideStatements() throws {
        let dir = TemporaryDirectory()
        // Duplicates near the start, middle and end of 16-row statements, two in one statement,
        // one repeating the last record of the first read-ahead batch (2,048 records), none next
        // to another or to a record a rule refuses (so each is a duplicate of a written row).
        let duplicates: Set<Int> = [2, 17, 40, 47, 2_049, 2_051, 5_000, 9_999]
        let source = try dir.write("customers.csv", Self.customersCSV(10_000, duplicates: duplicates))
        let results = try Mode.all.map { try run(source, entity: "Customer", mode: $0, dir: dir) }
        ReadAheadImportTests().expectSame(results.map(\.outcome))
        let outcome = results[0].outcome
        let ruleBreakers = (1...10_000).filter { $0 % 89 == 0 }.count
        #expect(outcome.error == nil)
        #expect(
            outcome.counts == [10_000, 10_000 - duplicates.count - ruleBreakers, 0, 0, duplicates.count + ruleBreakers])
        #expect(outcome.rows.count == 10_000 - duplicates.count - ruleBreakers)
        // Each duplicate is rejected with its own record number and line.
        for id in duplicates.sorted() {
            #expect(
                outcome.rejects.contains { $0.hasPrefix("\(id) \(id + 1):") && $0.contains("uniqueness constraint") },
                "record \(id)")
        }
        #expect(outcome.rejects.contains { $0.hasPrefix("89 90:") && $0.contains("age") })
        let numbers = outcome.rejects.compactMap { Int($0.split(separator: " ")[0]) }
        #expect(numbers == numbers.sorted())
        // The rows keep the records' order: ids ascend with the primary key.
        let ids = outcome.rows.compactMap { row -> Int64? in
            if case .integer(let id) = row[1] { id } else { nil }
        }
        #expect(ids == ids.sorted() && ids.count == outcome.rows.count)
        // Only the fast path with the read-ahead thread writes several rows per statement, and it
        // did for most records.
        #expect(results[0].multiRowRecords > 8_000)
        for (result, mode) in zip(results, Mode.all).dropFirst() where !(mode.fastPath && mode.readsAhead) {
            #expect(result.multiRowRecords == 0, "\(mode)")
        }
    }

    @Test("atomic: false batches that are not a multiple of a statement's rows commit the same records")
    func checkpointedBatches() throws {
        let dir = TemporaryDirectory()
        let source = try dir.write("customers.csv", Self.customersCSV(3_000, duplicates: [700, 1_401, 2_999]))
        let results = try Mode.all.map { mode in
            try run(source, entity: "Customer", mode: mode, dir: dir) { step in
                step.atomic = false
                step.batchSize = 701
            }
        }
        ReadAheadImportTests().expectSame(results.map(\.outcome))
        #expect(results[0].outcome.counts[0] == 3_000)
        #expect(results[0].outcome.counts[4] == 3 + (1...3_000).filter { $0 % 89 == 0 }.count)
        #expect(results[0].multiRowRecords > 2_000)
    }

    @Test("references to another entity resolve inside multi-row statements; a missing key rejects its own record")
    func referencesToAnotherEntity() throws {
        let dir = TemporaryDirectory()
        let customers = try dir.write("customers.csv", Self.customersCSV(2_000, duplicates: [], ruleBreakers: false))
        var lines = ["number,customer_id,total"]
        for number in 1...5_000 {
            // Every 211th order names a customer that does not exist.
            let customer = number % 211 == 0 ? "99999" : String(number * 13 % 2_000 + 1)
            lines.append("O-\(number),\(customer),\(number).5")
        }
        let orders = try dir.write("orders.csv", lines.joined(separator: "\n") + "\n")
        var results: [(outcome: Outcome, multiRowRecords: Int)] = []
        for mode in Mode.all {
            let store = dir.file("orders-\(mode).sqlite")
            _ = try run(customers, entity: "Customer", mode: mode, dir: dir, store: store)
            results.append(
                try run(orders, entity: "Order", mode: mode, dir: dir, store: store) { step in
                    step.relationships = [
                        RelationshipMapping(
                            relationship: "customer", field: "customer_id", match: "id", missing: .reject)
                    ]
                })
        }
        ReadAheadImportTests().expectSame(results.map(\.outcome))
        let outcome = results[0].outcome
        let missing = (1...5_000).filter { $0 % 211 == 0 }
        #expect(outcome.counts == [5_000, 5_000 - missing.count, 0, 0, missing.count])
        for number in missing {
            #expect(outcome.rejects.contains { $0.hasPrefix("\(number) \(number + 1):") && $0.contains("99999") })
        }
        // Each order points to its customer's row.
        let store = try Store.open(at: dir.file("orders-\(Mode.all[0]).sqlite"), model: SampleModels.shop())
        let linked = try store.withConnection {
            try $0.rows(
                #"SELECT o.number, c.id FROM "Order" o LEFT JOIN "Customer" c ON c.ferry_pk = o.customer WHERE o.number IN ('O-1', 'O-7', 'O-15') ORDER BY o.ferry_pk"#
            )
        }
        #expect(
            linked == [[.text("O-1"), .integer(14)], [.text("O-7"), .integer(92)], [.text("O-15"), .integer(196)]])
        #expect(results[0].multiRowRecords > 4_000)
    }
}
