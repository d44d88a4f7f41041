import FerryTestSupport
import Foundation
import Testing

/// `pipelines/import-shop.yml` end to end, against the numbers documented in
/// `samples/data/README.md`.
@Suite("Sample pipeline import-shop")
struct SamplePipelineTests {
    static let job = Fixtures.repository("pipelines/import-shop.yml")
    static let data = Fixtures.repository("samples/data")

    /// Per step: entity, read, inserted, rejected, and the (record, line) of each reject.
    static let expected:
        [(entity: String, read: Int, inserted: Int, rejected: Int, rejects: String, records: [[Int]])] = [
            ("Customer", 200, 197, 3, "customers.rejects.ndjson", [[57, 59], [112, 117], [158, 164]]),
            ("Product", 50, 50, 0, "products.rejects.ndjson", []),
            ("Order", 500, 497, 3, "orders.rejects.ndjson", [[123, 123], [245, 245], [377, 377]]),
            ("OrderItem", 1473, 1472, 1, "order_items.rejects.ndjson", [[888, 889]]),
        ]

    /// The tables whose content differs between two runs over the same data (dates of runs and of creation).
    static let notData: Set<String> = ["ferry_runs", "ferry_metadata"]

    /// Runs the job with its store and rejects in `out` (and the data from `data` when given).
    static func run(out: String, data: String? = nil, report: String? = nil) throws -> ProcessResult {
        var arguments = ["run", job, "--param", "out=\(out)", "--quiet"]
        if let data { arguments += ["--param", "data=\(data)"] }
        if let report { arguments += ["--report", report] }
        return try runFerry(arguments)
    }

    @Test("validate accepts the sample job")
    func validate() throws {
        let result = try runFerry(["validate", Self.job])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout == "\(Self.job): ok (4 steps, model Shop version 1)\n")
    }

    @Test("the documented counts, rejects and relationships")
    func counts() throws {
        let dir = TemporaryDirectory()
        let out = dir.file("out")
        let report = dir.file("report.json")
        let result = try Self.run(out: out, report: report)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr == "")

        let json = try jsonObject(file: report)
        #expect(json["outcome"] as? String == "succeeded")
        #expect(json["store"] as? String == "\(out)/shop.sqlite")
        let steps = try #require(json["steps"] as? [[String: Any]])
        #expect(steps.count == 4)
        for (step, expected) in zip(steps, Self.expected) {
            let counts = ["read", "inserted", "updated", "skipped", "rejected"].map { step[$0] as? Int ?? -1 }
            #expect(step["entity"] as? String == expected.entity)
            #expect(counts == [expected.read, expected.inserted, 0, 0, expected.rejected], "\(expected.entity)")
            #expect(counts[0] == counts[1] + counts[2] + counts[3] + counts[4], "\(expected.entity)")
            let rejects = "\(out)/\(expected.rejects)"
            #expect(step["rejects_file"] as? String == rejects)
            try ContractTests.expectRejectsFile(rejects, count: expected.rejected)
            let located = try lines(ofFile: rejects).map { line -> [Int] in
                let object = try jsonObject(text: line)
                return [object["record"] as? Int ?? -1, object["line"] as? Int ?? -1]
            }
            #expect(located == expected.records, "\(expected.entity)")
        }

        let store = "\(out)/shop.sqlite"
        let snapshot = try StoreSnapshot.take(store)
        #expect(snapshot.integrity == "ok")
        #expect(["Customer", "Product", "Order", "OrderItem"].map { snapshot.rows($0) } == [197, 50, 497, 1472])
        // Every order has its customer, every item its order and product, and they exist.
        #expect(
            try StoreSnapshot.integers(
                store,
                """
                SELECT count(*) FROM "Order" o LEFT JOIN Customer c ON c.ferry_pk = o.customer WHERE c.ferry_pk IS NULL
                """) == [0])
        #expect(
            try StoreSnapshot.integers(
                store,
                """
                SELECT count(*) FROM OrderItem i LEFT JOIN "Order" o ON o.ferry_pk = i."order" LEFT JOIN Product p ON p.ferry_pk = i.product
                WHERE o.ferry_pk IS NULL OR p.ferry_pk IS NULL
                """) == [0])
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM pragma_foreign_key_check") == [0])
        // Every accepted order's total is the sum of its items.
        #expect(
            try StoreSnapshot.integers(
                store,
                """
                SELECT count(*) FROM "Order" o WHERE abs(CAST(o.total AS REAL) -
                  (SELECT coalesce(sum(quantity * CAST(unit_price AS REAL)), 0) FROM OrderItem WHERE "order" = o.ferry_pk)) > 0.005
                """) == [0])
        // The rejected customers are not there; the duplicated id is there once.
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Customer WHERE id IN (1057, 1112)") == [0])
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Customer WHERE id = 1010") == [1])
    }

    @Test("--dry-run runs every step, each seeing the ones before, and creates no store")
    func dryRun() throws {
        let dir = TemporaryDirectory()
        let out = dir.file("out")
        let report = dir.file("report.json")
        let dry = try runFerry(["run", Self.job, "--param", "out=\(out)", "--dry-run", "--report", report])
        #expect(dry.exitCode == 0, "\(dry)")
        #expect(dry.stdout.components(separatedBy: "(dry run, rolled back)").count == 5, "\(dry)")
        let json = try jsonObject(file: report)
        #expect(json["outcome"] as? String == "dry_run")
        let steps = try #require(json["steps"] as? [[String: Any]])
        #expect(steps.map { $0["outcome"] as? String } == Array(repeating: "dry_run", count: 4))
        #expect(
            steps.map { [$0["read"] as? Int, $0["inserted"] as? Int, $0["rejected"] as? Int] }
                == Self.expected.map { [$0.read, $0.inserted, $0.rejected] })
        #expect(fileSize("\(out)/shop.sqlite") == nil)
        #expect(fileSize("\(out)/shop.sqlite.ferry-rebuild") == nil)
    }

    @Test("--param data reads a copy of the data; a failed night keeps the previous store")
    func paramDataAndRebuild() throws {
        let dir = TemporaryDirectory()
        let copy = dir.file("exports")
        try FileManager.default.copyItem(atPath: Self.data, toPath: copy)
        let out = dir.file("out")
        let report = dir.file("report.json")
        let first = try Self.run(out: out, data: copy, report: report)
        #expect(first.exitCode == 0, "\(first)")
        let steps = try #require(try jsonObject(file: report)["steps"] as? [[String: Any]])
        #expect(
            steps.map { $0["source"] as? String } == [
                "\(copy)/customers.csv", "\(copy)/products.json", "\(copy)/orders.ndjson", "\(copy)/order_items.csv",
            ])
        let store = "\(out)/shop.sqlite"
        let before = try StoreSnapshot.take(store)
        let beforeData = try StoreSnapshot.take(store, excluding: Self.notData)
        #expect(before.rows("Customer") == 197)

        // Tonight's customers file has a fourth bad record: over the budget of 3.
        let customers = "\(copy)/customers.csv"
        var text = try String(contentsOfFile: customers, encoding: .utf8)
        let newLine = text.utf8.count { $0 == UInt8(ascii: "\n") } + 1
        text += "9001,not-an-email,Late Arrival,,,0,2024-06-30T00:00:00Z,yes,,\n"
        try text.write(toFile: customers, atomically: true, encoding: .utf8)
        let failed = try Self.run(out: out, data: copy)
        #expect(failed.exitCode == 2, "\(failed)")
        #expect(
            failed.errorLines.first
                == "\(customers):\(newLine):6: error: more than 3 records were rejected; the step was rolled back (record 201)"
        )
        #expect(try StoreSnapshot.take(store) == before)
        #expect(fileSize(store + ".ferry-rebuild") == nil)

        // Fixed again: the store is rebuilt with the same content (and a new creation date).
        try FileManager.default.removeItem(atPath: customers)
        try FileManager.default.copyItem(atPath: "\(Self.data)/customers.csv", toPath: customers)
        let again = try Self.run(out: out, data: copy)
        #expect(again.exitCode == 0, "\(again)")
        #expect(try StoreSnapshot.take(store, excluding: Self.notData) == beforeData)
    }
}
