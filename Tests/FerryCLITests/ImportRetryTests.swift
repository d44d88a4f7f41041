import FerryTestSupport
import Foundation
import Testing

/// A first import that creates the store and fails leaves no store: the model it inferred (and
/// recorded) must not shape the corrected retry, which once reused the wrong model with exit 0.
@Suite("ferry import: a failed first import leaves nothing to shape the retry", .serialized)
struct ImportRetryTests {
    /// `code` looks like an integer in the first two rows, and is text after them.
    static let codes = "id,code\n1,10\n2,20\n3,A30\n4,B40\n"

    @Test("inferred from a sample that was wrong: the failed import removes the store it made; the retry infers anew")
    func failedFirstImportLeavesNoStore() throws {
        let directory = TemporaryDirectory("ferry-cli-import-retry")
        try Self.codes.write(to: directory.url.appendingPathComponent("codes.csv"), atomically: true, encoding: .utf8)
        let store = directory.url.appendingPathComponent("codes.sqlite").path
        let first = try runFerry(
            ["import", "codes.csv", "--store", "codes.sqlite", "--sample", "2", "--quiet"], cwd: directory.path)
        #expect(first.exitCode != 0, "\(first)")
        #expect(first.stderr.contains("'A30' is not an integer"), "\(first.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store), "the failed first import left its store")
        for companion in ["-wal", "-shm", "-journal"] {
            #expect(!FileManager.default.fileExists(atPath: store + companion), "\(companion) left behind")
        }
        // The corrected retry: the type given, and it is the one the store gets.
        let retry = try runFerry(
            ["import", "codes.csv", "--store", "codes.sqlite", "--sample", "2", "--type", "code=string", "--quiet"],
            cwd: directory.path)
        #expect(retry.exitCode == 0, "\(retry)")
        let exported = try runFerry(
            ["export", "--store", "codes.sqlite", "--entity", "codes", "--format", "csv", "--sort", "id", "--quiet"],
            cwd: directory.path)
        #expect(exported.stdout.contains("3,A30") && exported.stdout.contains("1,10"), "\(exported)")
    }

    @Test("a failed import into a store that existed keeps the store and its rows")
    func failedImportKeepsExistingStore() throws {
        let directory = TemporaryDirectory("ferry-cli-import-retry")
        try "id,code\n1,10\n2,20\n".write(
            to: directory.url.appendingPathComponent("good.csv"), atomically: true, encoding: .utf8)
        try Self.codes.write(to: directory.url.appendingPathComponent("codes.csv"), atomically: true, encoding: .utf8)
        let good = try runFerry(
            ["import", "good.csv", "--store", "codes.sqlite", "--entity", "codes", "--quiet"], cwd: directory.path)
        #expect(good.exitCode == 0, "\(good)")
        let bad = try runFerry(
            [
                "import", "codes.csv", "--store", "codes.sqlite", "--entity", "codes", "--on-conflict", "update",
                "--quiet",
            ],
            cwd: directory.path)
        #expect(bad.exitCode != 0, "\(bad)")
        let exported = try runFerry(
            ["export", "--store", "codes.sqlite", "--entity", "codes", "--format", "csv", "--sort", "id", "--quiet"],
            cwd: directory.path)
        #expect(exported.exitCode == 0, "\(exported)")
        #expect(exported.stdout.contains("1,10") && exported.stdout.contains("2,20"), "\(exported)")
    }
}

/// A ferry store's model comes back out: `ferry model show STORE` and `ferry model convert
/// STORE OUT` read the model the store records (they once said "is not UTF-8 text").
@Suite("ferry model show and convert on a ferry store", .serialized)
struct StoreModelTests {
    @Test("show and convert a store's recorded model; a database without one is a clear error")
    func storeModel() throws {
        let directory = TemporaryDirectory("ferry-cli-store-model")
        try "id,name,price\n1,tea,2.50\n2,cake,4\n".write(
            to: directory.url.appendingPathComponent("items.csv"), atomically: true, encoding: .utf8)
        let imported = try runFerry(
            ["import", "items.csv", "--store", "shop.sqlite", "--unique", "id", "--quiet"], cwd: directory.path)
        #expect(imported.exitCode == 0, "\(imported)")
        let shown = try runFerry(["model", "show", "shop.sqlite"], cwd: directory.path)
        #expect(shown.exitCode == 0, "\(shown)")
        #expect(shown.stdout.contains("items"), "\(shown.stdout)")
        #expect(shown.stdout.contains("unique (id)"), "\(shown.stdout)")
        let json = try runFerry(["model", "show", "shop.sqlite", "--json"], cwd: directory.path)
        #expect(json.exitCode == 0, "\(json)")
        let converted = try runFerry(["model", "convert", "shop.sqlite", "model-out"], cwd: directory.path)
        #expect(converted.exitCode == 0, "\(converted)")
        // The converted model is the store's: importing with it into the store needs no migration.
        let again = try runFerry(
            [
                "import", "items.csv", "--store", "shop.sqlite", "--model", "model-out", "--entity", "items",
                "--on-conflict",
                "update", "--quiet",
            ], cwd: directory.path)
        #expect(again.exitCode == 0, "\(again)")
        // A SQLite database that records no model.
        let plain = try runProgram(
            "/usr/bin/sqlite3", [directory.url.appendingPathComponent("plain.db").path, "CREATE TABLE t (a)"])
        #expect(plain.exitCode == 0, "\(plain)")
        let refused = try runFerry(["model", "show", "plain.db"], cwd: directory.path)
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(refused.stderr.contains("is a database without a model"), "\(refused.stderr)")
    }
}
