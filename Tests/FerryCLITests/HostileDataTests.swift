import FerryTestSupport
import Foundation
import Testing

/// Data files with one enormous or deeply nested record: a located error (exit 1, nothing
/// committed) instead of gigabytes of memory and a raw SQLite error; the limits are job options.
@Suite("hostile JSON and NDJSON data", .serialized)
struct HostileDataTests {
    static let model = """
        name: Notes
        entities:
          Note:
            attributes:
              id: {type: int64, optional: false, unique: true}
              text: string
              extra: json
        """

    func directory() throws -> TemporaryDirectory {
        let directory = TemporaryDirectory("ferry-cli-hostile-data")
        try directory.write("notes.yml", Self.model)
        return directory
    }

    func count(_ directory: TemporaryDirectory) throws -> String {
        try sqlite3(directory.file("notes.sqlite"), "SELECT count(*) FROM Note")
    }

    /// A record holding a 65 MiB string, as an NDJSON line or a JSON array element.
    static let huge = "{\"id\": 2, \"text\": \"" + String(repeating: "x", count: 65 << 20) + "\"}"

    @Test(
        "a record with a 65 MiB string is refused where it is found, before SQLite sees it",
        arguments: [
            (
                "notes.ndjson", "{\"id\": 1, \"text\": \"a\"}\n" + huge + "\n",
                "notes.ndjson:2:1: error: record is longer than 64 MiB (record 2)"
            ),
            (
                "notes.json", "[{\"id\": 1, \"text\": \"a\"},\n " + huge + "]\n",
                "notes.json:2:20: error: record is longer than 64 MiB (record 2)"
            ),
        ])
    func hugeRecord(file: String, contents: String, expected: String) throws {
        let directory = try directory()
        try directory.write(file, contents)
        let result = try runFerry(
            ["import", file, "--store", "notes.sqlite", "--model", "notes.yml", "--entity", "Note"], cwd: directory.path
        )
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains(expected), "\(result.stderr)")
        #expect(!result.stderr.contains("SQLite"))
        // Nothing kept: the import created the store and failed, so no store is left.
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("notes.sqlite").path))
    }

    @Test("json: {max_record_bytes, max_depth} change the limits of a job's json and ndjson imports")
    func jobOptions() throws {
        let directory = try directory()
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        try directory.write("deep.ndjson", "{\"id\": 1, \"extra\": \(deep)}\n")
        try directory.write("long.json", "[{\"id\": 2, \"text\": \"" + String(repeating: "z", count: 2_000) + "\"}]\n")
        func job(_ source: String, _ options: String) -> String {
            "store: notes.sqlite\nmodel: notes.yml\nsteps:\n  - import: {source: \(source), entity: Note, json: \(options)}\n"
        }
        try directory.write("default.yml", job("deep.ndjson", "{}"))
        let refused = try runFerry(["run", "default.yml", "--quiet"], cwd: directory.path)
        #expect(refused.exitCode == 2, "\(refused)")
        #expect(refused.stderr.contains("JSON nesting is deeper than 512 levels"), "\(refused.stderr)")

        try directory.write("deeper.yml", job("deep.ndjson", "{max_depth: 1000}"))
        let accepted = try runFerry(["run", "deeper.yml", "--quiet"], cwd: directory.path)
        #expect(accepted.exitCode == 0, "\(accepted)")
        #expect(try count(directory) == "1\n")

        try directory.write("small.yml", job("long.json", "{max_record_bytes: 1000}"))
        let small = try runFerry(["run", "small.yml", "--quiet"], cwd: directory.path)
        #expect(small.exitCode == 1, "\(small)")
        #expect(
            small.stderr.contains("long.json:1:2: error: record is longer than 1000 bytes (record 1)"),
            "\(small.stderr)")

        try directory.write("bad.yml", job("long.json", "{max_depth: 0, max_record_bytes: lots}"))
        let bad = try runFerry(["validate", "bad.yml"], cwd: directory.path)
        #expect(bad.exitCode == 64, "\(bad)")
        #expect(bad.stderr.contains("bad.yml:4:65: error: 'max_depth' must be at least 1, not 0"), "\(bad.stderr)")
        #expect(
            bad.stderr.contains("error: expected a whole number for 'max_record_bytes' but found 'lots'"),
            "\(bad.stderr)")
    }
}
