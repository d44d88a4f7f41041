import FerryTestSupport
import Foundation
import Testing

@Suite("ferry check", .serialized)
struct CheckCommandTests {
    static let root = TestPaths.packageRoot.path
    static let fixtures = TestPaths.packageRoot.appendingPathComponent("Tests/FerryCLITests/Fixtures/snapshots").path

    @Test("good snapshots pass; corrupted ones fail with a clear report and a JUnit suite each")
    func corruptedSnapshots() throws {
        let dir = TemporaryDirectory()
        let junit = dir.file("check.xml")
        let result = try runFerry(
            [
                "check", Self.fixtures, "\(Self.root)/samples/snapshots", "--model", "\(Self.root)/samples/models/Shop",
                "--to", "2", "--junit", junit,
            ],
            cwd: Self.root)
        #expect(result.exitCode == 1)
        #expect(result.stdout.contains("not-a-store.sqlite: FAILED"))
        #expect(result.stdout.contains("is not a SQLite database (its first bytes are not the SQLite header)"))
        #expect(result.stdout.contains("shop-v1-dangling-order.sqlite: FAILED"))
        #expect(
            result.stdout.contains(
                "foreign_key_check: Order ferry_pk 2 (number = SO-100002): refers to a missing Customer"))
        #expect(result.stdout.contains("samples/snapshots/shop-v1.sqlite: ok"))
        #expect(result.stdout.contains("samples/snapshots/shop-v2.sqlite: ok"))
        #expect(result.stdout.hasSuffix("2 of 4 snapshots passed\n"))
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.components(separatedBy: "<testsuite ").count - 1 == 4)
        #expect(xml.contains(#"<testsuite name="shop-v1-dangling-order.sqlite""#))
        #expect(xml.contains("<failure message="))
    }

    @Test("a failed check (not a failed migration) exits 3")
    func failedExpectation() throws {
        let dir = TemporaryDirectory()
        let expect = try dir.write("expect.yml", "counts: {Customer: 198}\n")
        let result = try runFerry(
            [
                "check", "\(Self.root)/samples/snapshots/shop-v1.sqlite", "--model", "\(Self.root)/samples/models/Shop",
                "--to", "2", "--expect", expect,
            ],
            cwd: Self.root)
        #expect(result.exitCode == 3)
        #expect(result.stdout.contains("shop-v1.sqlite: FAILED"))
        #expect(result.stdout.contains("count Customer [Customer]: expected exactly 198 rows, found 197"))
    }
}

@Suite("ferry import: fields after the sample")
struct ImportIgnoredFieldsCLITests {
    @Test(
        "an inferred import with --on-new-field error fails on a key after the sample, located; by default (ignore) it names the key"
    )
    func laterKeys() throws {
        let dir = TemporaryDirectory()
        let data = try dir.write(
            "people.ndjson", #"{"id": 1, "name": "Ana"}"# + "\n" + #"{"id": 2, "name": "Bo", "shoe_size": 44}"# + "\n")
        let refused = try runFerry(
            ["import", data, "--store", dir.file("p.sqlite"), "--sample", "1", "--on-new-field", "error"],
            cwd: dir.path)
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.stderr.contains("people.ndjson:2: error: new field 'shoe_size' in the source"), "\(refused)")
        let added = try runFerry(
            ["import", data, "--store", dir.file("p.sqlite"), "--sample", "1", "--on-new-field", "add"], cwd: dir.path)
        #expect(added.exitCode == 1, "\(added)")
        #expect(added.stderr.contains("after the records the model was inferred from"), "\(added)")
        let result = try runFerry(["import", data, "--store", dir.file("p.sqlite"), "--sample", "1"], cwd: dir.path)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("not imported (no attribute maps them): shoe_size"), "\(result)")
    }
}
