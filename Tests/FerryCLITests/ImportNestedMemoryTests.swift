import FerryTestSupport
import Foundation
import Testing

/// The memory a `nested:` import takes for one huge record (issue 23): a record of about 60 MB
/// (under the 64 MiB `max_record_bytes`) whose nested values hold two million small objects is
/// imported under an address-space limit that reading it into a tree of values exceeded (950 MB
/// resident at its peak; it then crashed under 900 MB of address space), with its counts, links
/// and the located reject of the record after it intact.
@Suite("ferry import: a nested record's memory is bounded by its size", .serialized)
struct ImportNestedMemoryTests {
    /// The most virtual memory the import may take (`ulimit -v`, KiB): the binary's mappings,
    /// threads and a small import's heap, plus a few times the record (a debug build needs
    /// about 450 MB of address space for it now).
    static let addressSpaceKiB = 700_000

    /// About `megabytes` MB of JSON: one person whose company nests `history`, two million small
    /// objects no attribute reads, and 2,000 pets; then a person with a pet missing its key.
    static func input(megabytes: Int) -> (text: String, rejectLine: Int, rejectColumn: Int) {
        let element = "{\"year\": 1999, \"tags\": [\"a\"]},\n"
        let count = megabytes * 1_000_000 / element.utf8.count
        var text = "[{\"id\": 1, \"name\": \"big\",\n \"company\": {\"id\": 10, \"name\": \"Acme\", \"history\": [\n"
        text += String(repeating: element, count: count)
        text += "{\"year\": 2000}]},\n \"pets\": ["
        text += (0..<2_000).map { "{\"id\": \($0), \"name\": \"pet \($0)\"}" }.joined(separator: ", ")
        text += "]},\n{\"id\": 2, \"name\": \"small\", \"pets\": [{\"id\": 5000}, "
        let rejectLine = count + 5
        let lastNewline = text.utf8.lastIndex(of: 0x0A).map { text.utf8.distance(from: text.utf8.startIndex, to: $0) }
        let rejectColumn = text.utf8.count - (lastNewline ?? 0)
        text += "{\"name\": \"no id\"}]}\n]\n"
        return (text, rejectLine, rejectColumn)
    }

    @Test(
        "a 60 MB record nesting two million objects imports under a 700 MB address-space limit, counts, links and located rejects intact"
    )
    func hugeRecordUnderLimit() throws {
        let directory = TemporaryDirectory("ferry-cli-nested-memory")
        try directory.write("model.yml", ImportNestedTests.model)
        let input = Self.input(megabytes: 60)
        try directory.write("big.json", input.text)
        let size = try #require(
            try FileManager.default.attributesOfItem(atPath: directory.file("big.json"))[.size] as? Int)
        #expect(size > 55_000_000 && size < 64 * 1024 * 1024)
        let run = try runFerryInShell(
            "ulimit -v \(Self.addressSpaceKiB) && exec \"$0\" \"$@\"",
            [
                "import", "big.json", "--store", "s.sqlite", "--model", "model.yml", "--entity", "Person", "--nested",
                "--rejects", "r.ndjson", "--max-rejects", "100%",
            ], cwd: directory.path, timeout: .seconds(300))
        #expect(run.exitCode == 0 && !run.wasSignaled, "\(run.exitCode) \(run.stderr.suffix(2_000))")
        #expect(run.stdout.contains("read 2, inserted 1,"), "\(run.stdout)")
        #expect(run.stdout.contains("rejected 1"), "\(run.stdout)")
        #expect(
            run.stdout.contains("nested Pet: inserted 2,000, updated 0, unchanged 0, linked 2,000"), "\(run.stdout)")
        #expect(run.stdout.contains("nested Company: inserted 1, updated 0, unchanged 0, linked 1"), "\(run.stdout)")
        #expect(try sqlite3(directory.file("s.sqlite"), "SELECT count(*) FROM Pet WHERE owner IS NOT NULL") == "2000\n")
        #expect(
            try sqlite3(
                directory.file("s.sqlite"),
                "SELECT c.name FROM Person p JOIN Company c ON c.ferry_pk = p.company WHERE p.id = 1") == "Acme\n")
        let rejects = try String(contentsOfFile: directory.file("r.ndjson"), encoding: .utf8)
        let reject = try #require(
            try JSONSerialization.jsonObject(with: Data(rejects.utf8)) as? [String: Any], "\(rejects.prefix(500))")
        #expect(reject["line"] as? Int == input.rejectLine, "\(reject)")
        #expect(reject["column"] as? Int == input.rejectColumn, "\(reject)")
        #expect(reject["field"] as? String == "pets[1]", "\(reject)")
        #expect(
            (reject["reason"] as? String)?.contains("a nested Pet needs its key: 'id' (Pet.id) is missing or null")
                == true,
            "\(reject)")
    }
}
