import FerryTestSupport
import Foundation
import Testing

/// Paths of the CLI tests' fixtures and of the repository's samples.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func path(_ name: String) -> String { root.appendingPathComponent(name).path }

    static var peopleModel: String { path("models/people.yml") }
    static var peopleJob: String { path("jobs/people.yml") }

    /// A file of the repository (`samples/…`, `pipelines/…`).
    static func repository(_ name: String) -> String { TestPaths.packageRoot.appendingPathComponent(name).path }
}

/// Large generated CSV files, written once per machine and package (deterministic content) and
/// shared by the suites that need a long-running import.
///
/// Each row is about 130 bytes, so 300,000 rows make a 40 MB store: more than SQLite's page
/// cache, so a long import writes pages into the store file (and its journal) before it commits.
enum BigFiles {
    static let rows = 300_000
    static let otherRows = 100_000

    /// ids 1…300,000.
    static var big: String { shared.big }
    /// ids 300,001…400,000.
    static var other: String { shared.other }
    /// ids 400,001…500,000.
    static var third: String { shared.third }

    private struct Paths: Sendable {
        var big: String
        var other: String
        var third: String
    }

    private static let shared: Paths = {
        let key = FNV1a.hex(TestPaths.packageRoot.path).prefix(12)
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ferry-cli-tests-\(key)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let big = folder.appendingPathComponent("people-300k-v1.csv").path
        let other = folder.appendingPathComponent("people-100k-v1.csv").path
        let third = folder.appendingPathComponent("people-100k-b-v1.csv").path
        generate(big, ids: 1...rows)
        generate(other, ids: (rows + 1)...(rows + otherRows))
        generate(third, ids: (rows + otherRows + 1)...(rows + 2 * otherRows))
        return Paths(big: big, other: other, third: third)
    }()

    /// The CSV text of people rows with the given ids.
    static func csv(ids: ClosedRange<Int>, header: Bool = true) -> [UInt8] {
        let padding = String(repeating: "x", count: 80)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(ids.count * 130)
        if header { bytes += Array("id,email,name,age\n".utf8) }
        for id in ids {
            bytes += Array("\(id),user\(id)@example.com,User \(id) \(padding),\(id % 100)\n".utf8)
        }
        return bytes
    }

    /// Writes the file unless a complete copy is there (written to a temporary name, then renamed).
    private static func generate(_ path: String, ids: ClosedRange<Int>) {
        let bytes = csv(ids: ids)
        if let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            (attributes[.size] as? NSNumber)?.intValue == bytes.count
        {
            return
        }
        let temporary = path + ".\(UUID().uuidString).tmp"
        _ = FileManager.default.createFile(atPath: temporary, contents: Data(bytes))
        _ = rename(temporary, path)
    }
}

/// A short, stable hex digest for folder names (FNV-1a, 64 bits).
enum FNV1a {
    static func hex(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}

/// The size of a file, or nil when it does not exist.
func fileSize(_ path: String) -> Int? {
    (try? FileManager.default.attributesOfItem(atPath: path))?[.size].flatMap { ($0 as? NSNumber)?.intValue }
}

/// Decodes a JSON object from a file or from text.
func jsonObject(file path: String) throws -> [String: Any] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

func jsonObject(text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}

/// The lines of a text file, without the empty one after the last newline.
func lines(ofFile path: String) throws -> [String] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
}

extension ProcessResult {
    /// The stderr lines, for exact comparisons.
    var errorLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

/// What the `sqlite3` command prints for `sql` on the database at `path` (a store as any SQLite
/// tool sees it).
func sqlite3(_ path: String, _ sql: String) throws -> String {
    try runProgram("/usr/bin/sqlite3", [path, sql]).stdout
}

/// Switches the people store at `store` to WAL mode and commits people `ids` without ever
/// checkpointing: while the returned connection stays open, those rows live only in the `-wal`.
func appendPeopleInWALMode(_ store: String, ids: ClosedRange<Int>) throws -> StoreConnection {
    let writer = try StoreConnection(store)
    try writer.execute("PRAGMA journal_mode = WAL")
    try writer.execute("PRAGMA wal_autocheckpoint = 0")
    try writer.execute("BEGIN")
    for id in ids {
        try writer.execute(
            "INSERT INTO Person (id, email, name, age) VALUES (\(id), 'w\(id)@example.com', 'W \(id)', 7)")
    }
    try writer.execute("COMMIT")
    return writer
}
