import FerryTestSupport
import Foundation
import Testing

/// Rejects are data too (issue 14): a rejects file that cannot be written fails the step, and a
/// checkpointed import keeps the rejects of every batch it committed, whenever it is killed.
@Suite("Rejects are never lost", .serialized)
struct RejectsSafetyTests {
    /// People whose every 100th record has an age that is not a number.
    static func peopleWithBadAges(in dir: TemporaryDirectory, count: Int) throws -> String {
        var text = "id,email,name,age\n"
        text.reserveCapacity(count * 60)
        for id in 1...count {
            text +=
                "\(id),user\(id)@example.com,User \(id) \(String(repeating: "x", count: 40)),\(id % 100 == 0 ? "old" : String(id % 100))\n"
        }
        return try dir.write("people-bad-ages.csv", text)
    }

    @Test("a rejects file on a full disk fails the step instead of claiming it was written")
    func fullDisk() throws {
        let dir = TemporaryDirectory()
        let data = try Self.peopleWithBadAges(in: dir, count: 500)
        let store = dir.file("people.sqlite")

        let result = try runFerry(
            ContractTests.importArguments(data, store: store, ["--rejects", "/dev/full", "--max-rejects", "100%"]))

        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("/dev/full"), "\(result)")
        #expect(result.stderr.contains("no space left"), "\(result)")
        // The step rolled back: no row is kept whose companions were not recorded (the import
        // created the store, so no store is left at all).
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test(
        "SIGKILL during a checkpointed import keeps the rejects of every committed batch",
        arguments: [1_500_000, 4_000_000])
    func killCheckpointedWithRejects(grownBy bytes: Int) throws {
        let dir = TemporaryDirectory()
        let data = try Self.peopleWithBadAges(in: dir, count: 200_000)
        let store = try ContractTests.peopleStore(in: dir, ids: nil)
        let rejects = dir.file("rejects.ndjson")
        _ = try ContractTests.runAndKill(
            [
                "run", Fixtures.path("jobs/people-checkpointed-rejects.yml"), "--param", "store=\(store)", "--param",
                "data=\(data)",
                "--param", "rejects=\(rejects)", "--quiet",
            ],
            store: store, at: .storeGrown(by: bytes))

        let committed = try #require(try StoreSnapshot.integers(store, "SELECT coalesce(max(id), 0) FROM Person").first)
        #expect(committed > 0)
        let lines = try String(contentsOfFile: rejects, encoding: .utf8).split(separator: "\n")
        let rejected = Set(
            lines.compactMap { line -> Int64? in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                    return nil
                }
                return (object["record"] as? NSNumber)?.int64Value
            })
        // Record n is person n; every bad record up to the last committed one is in the file.
        let expected = Set(stride(from: Int64(100), through: committed, by: 100))
        #expect(
            expected.isSubset(of: rejected),
            "\(expected.subtracting(rejected).count) rejects of committed batches are missing")
    }
}
