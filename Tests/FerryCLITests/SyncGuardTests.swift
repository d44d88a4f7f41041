import FerryTestSupport
import Foundation
import Testing

/// Issue 23's sync items through the real binary: a sync key that is not unique in the model is
/// refused before any work (it deleted 998 of 1,000 rows whose key was in the source), and a
/// sync that would delete more rows than `max_delete:` / `--max-delete` allow (a truncated
/// nightly file) is rolled back.
@Suite("mode: sync guards: a unique key, max_delete", .serialized)
struct SyncGuardTests {
    static let model = """
        entities:
          Customer:
            attributes:
              id: {type: int64, optional: false, unique: true}
              name: string
              city: string
          Stock:
            attributes:
              sku: {type: string, optional: false}
              shop: {type: int64, optional: false}
              count: int64
            unique: [[sku, shop]]
        """

    /// `count` customers: ids 1…count, named N<id>, a tenth of them in Oslo.
    static func customers(_ ids: ClosedRange<Int>) -> String {
        "id,name,city\n" + ids.map { "\($0),N\($0),\($0 % 10 == 0 ? "Oslo" : "Rome")" }.joined(separator: "\n") + "\n"
    }

    /// A store with customers 1…`count`.
    func prepared(count: Int) throws -> TemporaryDirectory {
        let directory = TemporaryDirectory("ferry-sync-guards")
        try directory.write("model.yml", Self.model)
        try directory.write("full.csv", Self.customers(1...count))
        let loaded = try runFerry(
            ["import", "full.csv", "--store", "s.sqlite", "--model", "model.yml", "--entity", "Customer", "--quiet"],
            cwd: directory.path)
        #expect(loaded.exitCode == 0, "\(loaded)")
        return directory
    }

    func count(_ directory: TemporaryDirectory) throws -> Int {
        Int(try sqlite3(directory.file("s.sqlite"), "SELECT count(*) FROM Customer").trimmingCharacters(in: .newlines))
            ?? -1
    }

    func job(_ directory: TemporaryDirectory, _ step: String) throws -> String {
        try directory.write(
            "job.yml",
            """
            store: s.sqlite
            model: model.yml
            steps:
              - import: {source: full.csv, entity: Customer, mode: sync\(step)}

            """)
    }

    // MARK: - A unique key

    @Test("a sync key that is not unique in the model is refused before any work (job and command)")
    func nonUniqueKey() throws {
        let directory = try prepared(count: 1000)
        let before = try sqlite3(directory.file("s.sqlite"), "SELECT * FROM Customer ORDER BY id")
        // The issue's case: a mistyped key and a 100 % reject budget; the unchanged full file.
        let job = try self.job(directory, ", key: city, rejects: r.ndjson, max_rejects: 100%, max_delete: none")
        let refused = try runFerry(["run", job], cwd: directory.path)
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(
            refused.stderr.contains(
                "job.yml:4:67: error: 'mode: sync' needs a key that identifies one Customer: [city] is not unique in the model (the uniqueness constraints of 'Customer' are [id]); rows sharing a key value with a record of the source would be deleted"
            ), "\(refused)")
        let validated = try runFerry(["validate", job], cwd: directory.path)
        #expect(validated.exitCode == 64, "\(validated)")
        #expect(validated.stderr.contains("[city] is not unique in the model"), "\(validated)")

        let command = try runFerry(
            [
                "import", "full.csv", "--store", "s.sqlite", "--model", "model.yml", "--entity", "Customer", "--mode",
                "sync", "--key", "name,city",
            ], cwd: directory.path)
        #expect(command.exitCode == 64, "\(command)")
        #expect(command.stderr.contains("[name, city] is not unique in the model"), "\(command)")
        #expect(command.stderr.contains("use the attributes of a uniqueness constraint as 'key' (--key)"), "\(command)")
        #expect(try sqlite3(directory.file("s.sqlite"), "SELECT * FROM Customer ORDER BY id") == before)
    }

    @Test("a key naming exactly a uniqueness constraint's attributes, in any order, is accepted; a part of one is not")
    func constraintKeys() throws {
        let directory = try prepared(count: 3)
        try directory.write("stock.csv", "sku,shop,count\nA,1,5\nA,2,6\nB,1,7\n")
        try directory.write("stock2.csv", "sku,shop,count\nA,1,5\nA,2,9\n")
        func sync(_ file: String, key: String) throws -> ProcessResult {
            try runFerry(
                [
                    "import", file, "--store", "s.sqlite", "--model", "model.yml", "--entity", "Stock", "--mode",
                    "sync",
                    "--key", key, "--max-delete", "none", "--quiet",
                ], cwd: directory.path)
        }
        let first = try sync("stock.csv", key: "shop,sku")
        #expect(first.exitCode == 0, "\(first)")
        let part = try sync("stock2.csv", key: "sku")
        #expect(part.exitCode == 64, "\(part)")
        #expect(
            part.stderr.contains(
                "[sku] is not unique in the model (the uniqueness constraints of 'Stock' are [sku, shop])"),
            "\(part)")
        let second = try sync("stock2.csv", key: "sku,shop")
        #expect(second.exitCode == 0, "\(second)")
        #expect(
            try sqlite3(directory.file("s.sqlite"), "SELECT sku, shop, count FROM Stock ORDER BY sku, shop")
                == "A|1|5\nA|2|9\n")
    }

    // MARK: - max_delete

    @Test("a truncated nightly file: the sync would delete 60 of 100 rows; the default 10% rolls it back, exit 3")
    func truncatedFile() throws {
        let directory = try prepared(count: 100)
        let before = try sqlite3(directory.file("s.sqlite"), "SELECT * FROM Customer ORDER BY id")
        // Cut at a line boundary: the first 40 customers, one of them changed.
        try directory.write("full.csv", Self.customers(1...40).replacingOccurrences(of: "1,N1,Rome", with: "1,N1,Lima"))
        let job = try self.job(directory, "")
        let refused = try runFerry(["run", job], cwd: directory.path)
        #expect(refused.exitCode == 3, "\(refused)")
        #expect(
            refused.stderr.contains(
                "full.csv: error: a sync would delete 60 of 100 Customer rows (60.0%), more than max_delete allows (10% of 100, at least 1: 10 rows); the step was rolled back"
            ), "\(refused)")
        #expect(
            refused.stderr.contains(
                "if these rows are meant to go, set 'max_delete: 60' (or a percentage, or 'none') on the step, or pass --max-delete 60 to ferry import"
            ), "\(refused)")
        // Rolled back: the update of customer 1 too.
        #expect(try sqlite3(directory.file("s.sqlite"), "SELECT * FROM Customer ORDER BY id") == before)

        let command = try runFerry(
            [
                "import", "full.csv", "--store", "s.sqlite", "--model", "model.yml", "--entity", "Customer", "--mode",
                "sync",
            ], cwd: directory.path)
        #expect(command.exitCode == 3, "\(command)")
        #expect(command.stderr.contains("a sync would delete 60 of 100 Customer rows"), "\(command)")
        #expect(try count(directory) == 100)

        // Allowed by a count, a share or a percentage at least as large.
        for (allowed, limit) in [(false, "59"), (false, "0.5"), (true, "60%")] {
            let result = try runFerry(
                [
                    "import", "full.csv", "--store", "s.sqlite", "--model", "model.yml", "--entity", "Customer",
                    "--mode", "sync", "--max-delete", limit, "--dry-run", "--quiet",
                ], cwd: directory.path)
            #expect(result.exitCode == (allowed ? 0 : 3), "\(limit): \(result)")
        }
        let allowed = try runFerry(
            ["run", try self.job(directory, ", max_delete: 60"), "--quiet"], cwd: directory.path)
        #expect(allowed.exitCode == 0, "\(allowed)")
        #expect(try count(directory) == 40)
    }

    @Test("tiny stores: the default always allows one row (1 of 3), not two; 'none' allows all but an empty file")
    func tinyStore() throws {
        let directory = try prepared(count: 3)
        try directory.write("full.csv", Self.customers(1...2))
        let one = try runFerry(["run", try self.job(directory, ""), "--quiet"], cwd: directory.path)
        #expect(one.exitCode == 0, "\(one)")
        #expect(try count(directory) == 2)

        let refill = try prepared(count: 3)
        try refill.write("full.csv", Self.customers(1...1))
        let two = try runFerry(["run", try self.job(refill, "")], cwd: refill.path)
        #expect(two.exitCode == 3, "\(two)")
        #expect(
            two.stderr.contains(
                "a sync would delete 2 of 3 Customer rows (66.7%), more than max_delete allows (10% of 3, at least 1: 1 row)"
            ), "\(two)")
        let unlimited = try runFerry(["run", try self.job(refill, ", max_delete: none"), "--quiet"], cwd: refill.path)
        #expect(unlimited.exitCode == 0, "\(unlimited)")
        #expect(try count(refill) == 1)
    }

    @Test("max_delete values: wrong ones are refused at their place, and only with mode: sync")
    func wrongValues() throws {
        let directory = try prepared(count: 3)
        for (value, column) in [("-1", 74), ("150%", 74), ("1.5", 74), ("many", 74)] {
            let job = try self.job(directory, ", max_delete: \"\(value)\"")
            let result = try runFerry(["validate", job], cwd: directory.path)
            #expect(result.exitCode == 64, "\(value): \(result)")
            #expect(
                result.stderr.contains(
                    "job.yml:4:\(column): error: expected a count (500), a share (0.25 or \"25%\") or 'none' for 'max_delete' but found '\(value)'"
                ), "\(value): \(result)")
        }
        let append = try directory.write(
            "append.yml",
            "store: s.sqlite\nmodel: model.yml\nsteps:\n  - import: {source: full.csv, entity: Customer, max_delete: 5}\n"
        )
        let refused = try runFerry(["validate", append], cwd: directory.path)
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(refused.stderr.contains("'max_delete' applies only to 'mode: sync'"), "\(refused)")
        let flag = try runFerry(
            ["import", "full.csv", "--store", "s.sqlite", "--entity", "Customer", "--max-delete", "5"],
            cwd: directory.path)
        #expect(flag.exitCode == 64, "\(flag)")
        #expect(flag.errorLines == ["error: --key, --allow-empty-sync and --max-delete apply only to --mode sync"])
        let bad = try runFerry(
            [
                "import", "full.csv", "--store", "s.sqlite", "--model", "model.yml", "--entity", "Customer", "--mode",
                "sync", "--max-delete", "lots",
            ], cwd: directory.path)
        #expect(bad.exitCode == 64, "\(bad)")
        #expect(
            bad.errorLines == ["error: --max-delete takes a count (500), a share (0.25 or 25%) or none, not 'lots'"])
    }
}
