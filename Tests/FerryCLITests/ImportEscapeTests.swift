import FerryTestSupport
import Foundation
import Testing

/// `--escape` and `csv: {escape:}` through the real binary: a MySQL-style export (backslash
/// escapes, `\N` for NULL) imports exactly, through the fast path and the general path alike.
@Suite("ferry import: escape character")
struct ImportEscapeTests {
    static let export = "id,name,note\n1,\"O\\\"Brien\",a\\,b\n2,\\N,\"back\\\\slash\"\n3,multi\\\nline,x\nbad,y,z\n"

    @Test(
        "--escape '\\': escaped quotes, delimiters, backslashes and line breaks; \\N is null; a bad value is a located reject"
    )
    func commandLine() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let file = try dir.write("dump.csv", Self.export)
        let rejects = dir.file("r.ndjson")
        let result = try runFerry([
            "import", file, "--escape", "\\", "--store", store, "--type", "id=int64", "--rejects", rejects,
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, quote(name), note FROM dump ORDER BY ferry_pk") == [
                ["1", "'O\"Brien'", "a,b"], ["2", "NULL", "back\\slash"], ["3", "'multi\nline'", "x"],
            ])
        let rejected = try lines(ofFile: rejects).map { try jsonObject(text: $0) }
        #expect(rejected.map { $0["line"] as? Int } == [6])
        #expect(rejected.map { $0["column"] as? Int } == [1])
    }

    @Test(
        "a job's csv: {escape:} reads the same; an escape that is the delimiter, or not one character, is refused (64)")
    func jobAndBadEscapes() throws {
        let dir = TemporaryDirectory()
        _ = try dir.write("dump.csv", Self.export.replacingOccurrences(of: "bad,y,z\n", with: ""))
        _ = try dir.write(
            "model.yml", "entities:\n  Row:\n    attributes:\n      id: int64\n      name: string\n      note: string\n"
        )
        let job = try dir.write(
            "job.yml",
            """
            store: out.sqlite
            model: model.yml
            steps:
              - import: {source: dump.csv, entity: Row, csv: {escape: "\\\\"}}
            """)
        let result = try runFerry(["run", job, "--quiet"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(dir.file("out.sqlite"), "SELECT quote(name), note FROM Row ORDER BY id") == [
                ["'O\"Brien'", "a,b"], ["NULL", "back\\slash"], ["'multi\nline'", "x"],
            ])

        let clash = try dir.write(
            "clash.yml",
            """
            store: out2.sqlite
            model: model.yml
            steps:
              - import: {source: dump.csv, entity: Row, csv: {escape: ","}}
            """)
        let validate = try runFerry(["validate", clash])
        #expect(validate.exitCode == 64, "\(validate)")
        #expect(
            validate.errorLines == [
                "\(clash):4:59: error: the CSV escape character must differ from the delimiter, the quote (a doubled quote already escapes it) and line breaks"
            ], "\(validate)")
        let store = dir.file("s.sqlite")
        let long = try runFerry(["import", dir.file("dump.csv"), "--escape", "\\\\", "--store", store])
        #expect(long.exitCode == 64, "\(long)")
        #expect(long.errorLines == ["error: --escape must be one character, got '\\\\'"], "\(long)")
        let quote = try runFerry(["import", dir.file("dump.csv"), "--escape", "\"", "--store", store])
        #expect(quote.exitCode == 64, "\(quote)")
        let json = try dir.write("a.ndjson", "{\"id\": 1}\n")
        let notCSV = try runFerry(["import", json, "--escape", "\\", "--store", store])
        #expect(notCSV.exitCode == 64, "\(notCSV)")
        #expect(!FileManager.default.fileExists(atPath: store))
    }
}
