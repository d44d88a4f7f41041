import FerryTestSupport
import Foundation
import Testing

/// Several files as one import step, through the real binary: quoted globs expanded by ferry,
/// lists of paths, jobs with `source:` patterns and lists, compressed files among them, and the
/// bad paths (a pattern matching nothing, a header that differs, mixed formats).
@Suite("ferry import: many files")
struct ImportManyFilesTests {
    /// A nightly folder: day1, day2 (gzip), day10, in an order `ls` would get wrong.
    func nightly(_ dir: TemporaryDirectory) throws -> String {
        let folder = dir.file("nightly")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = try dir.write("nightly/day1.csv", "id,name,amount\n1,Ann,10.5\n2,Bob,x\n")
        _ = try dir.write("nightly/day10.csv", "id,name,amount\n10,Eve,1\n11,Fay,2\n")
        let plain = try dir.write("day2.plain", "id,name,amount\n3,Cy,3\n4,Di,4\n5,Ed,oops\n")
        try gzip(plain, to: dir.file("nightly/day2.csv.gz"))
        // A folder and a file of another kind the pattern must not pick up.
        try FileManager.default.createDirectory(atPath: dir.file("nightly/day3.csv"), withIntermediateDirectories: true)
        _ = try dir.write("nightly/notes.txt", "not data\n")
        return folder
    }

    func gzip(_ source: String, to path: String) throws {
        let gzip = try runShell("gzip -c '\(source)' > '\(path)'")
        #expect(gzip.exitCode == 0, "\(gzip)")
    }

    @Test(
        "a quoted glob is read in natural order (day1, day2.gz, day10); rejects and the report name each record's file")
    func globInNaturalOrder() throws {
        let dir = TemporaryDirectory()
        let folder = try nightly(dir)
        let store = dir.file("s.sqlite")
        let rejects = dir.file("r.ndjson")
        let report = dir.file("report.json")
        let result = try runFerry([
            "import", folder + "/day*", "--format", "csv", "--store", store, "--entity", "sales", "--type",
            "amount=double",
            "--rejects", rejects, "--report", report,
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.contains("\(folder)/day1.csv: read 2, inserted 1, updated 0, skipped 0, rejected 1"),
            "\(result)")
        #expect(
            result.stdout.contains("\(folder)/day2.csv.gz: read 3, inserted 2, updated 0, skipped 0, rejected 1"),
            "\(result)")
        #expect(
            result.stdout.contains("\(folder)/day10.csv: read 2, inserted 2, updated 0, skipped 0, rejected 0"),
            "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, name FROM sales ORDER BY ferry_pk") == [
                ["1", "Ann"], ["3", "Cy"], ["4", "Di"], ["10", "Eve"], ["11", "Fay"],
            ])

        let rejected = try lines(ofFile: rejects).map { try jsonObject(text: $0) }
        #expect(rejected.count == 2)
        #expect(rejected.map { $0["file"] as? String } == ["\(folder)/day1.csv", "\(folder)/day2.csv.gz"])
        #expect(rejected.map { $0["line"] as? Int } == [3, 4])
        #expect(rejected.map { $0["column"] as? Int } == [7, 6])
        #expect(rejected.map { $0["record"] as? Int } == [2, 3])

        let json = try jsonObject(file: report)
        let step = try #require((json["steps"] as? [[String: Any]])?.first)
        #expect(step["read"] as? Int == 7)
        #expect(step["rejected"] as? Int == 2)
        let files = try #require(step["files"] as? [[String: Any]])
        #expect(
            files.map { $0["file"] as? String } == [
                "\(folder)/day1.csv", "\(folder)/day2.csv.gz", "\(folder)/day10.csv",
            ])
        #expect(files.map { $0["read"] as? Int } == [2, 3, 2])
        #expect(files.map { $0["inserted"] as? Int } == [1, 2, 2])
        #expect(files.map { $0["rejected"] as? Int } == [1, 1, 0])
    }

    @Test("without --rejects, the first bad record stops the import at its own file:line:column, and nothing is kept")
    func rejectNamesItsFile() throws {
        let dir = TemporaryDirectory()
        let folder = try nightly(dir)
        let store = dir.file("s.sqlite")
        _ = try dir.write("nightly/day1.csv", "id,name,amount\n1,Ann,10.5\n2,Bob,2\n")
        let result = try runFerry([
            "import", folder + "/*.csv*", "--format", "csv", "--store", store, "--entity", "sales", "--type",
            "amount=double",
        ])
        #expect(result.exitCode == 2, "\(result)")
        #expect(
            result.errorLines.first == "\(folder)/day2.csv.gz:4:6: error: amount: 'oops' is not a number (record 3)",
            "\(result)")
        // The import created the store and failed: it leaves no store (nor the model it inferred).
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test("several paths on the command line are read in the order given; the entity is named after the first")
    func severalPaths() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let b = try dir.write("people-b.csv", "id,name\n3,c\n")
        let a = try dir.write("people-a.csv", "id,name\n1,a\n2,b\n")
        let result = try runFerry(["import", b, a, "--store", store, "--quiet"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, name FROM people_b ORDER BY ferry_pk") == [
                ["3", "c"], ["1", "a"], ["2", "b"],
            ])
    }

    @Test(
        "an inferred model sees every file's sample; a glob's entity is named after what its files share, else their folder"
    )
    func entityNames() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        try FileManager.default.createDirectory(atPath: dir.file("inbox"), withIntermediateDirectories: true)
        _ = try dir.write("inbox/orders-2024-01.csv", "id,total\n1,5\n")
        _ = try dir.write("inbox/orders-2024-02.csv", "id,total\n2,6.25\n")
        let orders = try runFerry(["import", dir.file("inbox/orders-*.csv"), "--store", store])
        #expect(orders.exitCode == 0, "\(orders)")
        // 5 alone is an integer; the second file's 6.25 makes the column a double.
        #expect(orders.stdout.hasPrefix("inferred orders: id int64, total double\n"), "\(orders)")
        let folder = try runFerry(["import", dir.file("inbox/*.csv"), "--store", store, "--quiet"])
        #expect(folder.exitCode == 0, "\(folder)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, total FROM inbox ORDER BY ferry_pk") == [
                ["1", "5.0"], ["2", "6.25"],
            ])
    }

    @Test("a CSV file whose header differs from the first file's is an error naming it; nothing is imported")
    func headerDiffers() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        _ = try dir.write("a1.csv", "id,name\n1,a\n")
        _ = try dir.write("a2.csv", "\nid,nom\n2,b\n")
        _ = try dir.write("a3.csv", "id,name,extra\n3,c,x\n")
        let renamed = try runFerry([
            "import", dir.file("a1.csv"), dir.file("a2.csv"), "--store", store, "--entity", "t",
        ])
        #expect(renamed.exitCode == 1, "\(renamed)")
        #expect(
            renamed.errorLines.first
                == "\(dir.file("a2.csv")):2:1: error: the header row of \(dir.file("a2.csv")) differs from the first file's: column 2 is 'nom' where \(dir.file("a1.csv")) has 'name'",
            "\(renamed)")
        let extra = try runFerry(["import", dir.file("a1.csv"), dir.file("a3.csv"), "--store", store, "--entity", "t"])
        #expect(extra.exitCode == 1, "\(extra)")
        #expect(
            extra.errorLines.first?.hasSuffix("it has 3 columns, \(dir.file("a1.csv")) has 2: 'extra' is extra")
                == true, "\(extra)")
        // The model is inferred from a sample that reaches the second file: nothing was created.
        #expect(!FileManager.default.fileExists(atPath: store))
        // With a model, the first file's rows are read before the second file fails: rolled back.
        let model = try dir.write(
            "model.yml", "entities:\n  t:\n    attributes:\n      id: int64\n      name: string\n")
        let modelled = try runFerry([
            "import", dir.file("a1.csv"), dir.file("a2.csv"), "--store", store, "--entity", "t", "--model", model,
        ])
        #expect(modelled.exitCode == 1, "\(modelled)")
        #expect(
            modelled.errorLines.first?.hasPrefix("\(dir.file("a2.csv")):2:1: error: the header row of") == true,
            "\(modelled)")
        // Rolled back, and the store this import created is removed with it.
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test("a glob that matches nothing exits 66 naming it; a list mixing formats exits 64; - cannot be one of several")
    func badSources() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let none = try runFerry(["import", dir.file("nothing-*.csv"), "--store", store])
        #expect(none.exitCode == 66, "\(none)")
        #expect(
            none.errorLines == ["\(dir.file("nothing-*.csv")): error: no file matches '\(dir.file("nothing-*.csv"))'"],
            "\(none)")
        #expect(!FileManager.default.fileExists(atPath: store))
        let csv = try dir.write("a.csv", "id\n1\n")
        let json = try dir.write("b.ndjson", "{\"id\": 2}\n")
        let mixed = try runFerry(["import", csv, json, "--store", store])
        #expect(mixed.exitCode == 64, "\(mixed)")
        #expect(mixed.errorLines.first?.contains("'\(json)' is not a .csv file like '\(csv)'") == true, "\(mixed)")
        let stdin = try runFerry(["import", csv, "-", "--store", store])
        #expect(stdin.exitCode == 64, "\(stdin)")
        #expect(stdin.errorLines == ["error: standard input ('-') cannot be one of several sources"], "\(stdin)")
    }

    @Test("NDJSON files with keys in other orders map by name, each file's new keys included")
    func ndjsonFiles() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let first = try dir.write("j1.ndjson", "{\"b\": 1, \"a\": \"x\"}\n")
        let second = try dir.write("j2.ndjson", "{\"a\": \"y\", \"c\": true}\n{\"b\": 2}\n")
        let result = try runFerry(["import", first, second, "--store", store, "--entity", "j", "--quiet"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT quote(a), quote(b), quote(c) FROM j ORDER BY ferry_pk") == [
                ["'x'", "1", "NULL"], ["'y'", "NULL", "1"], ["NULL", "2", "NULL"],
            ])
    }

    @Test(
        "a job's source may be a glob or a list; validate names a pattern matching nothing (exit 66); a run of it exits 66"
    )
    func jobSources() throws {
        let dir = TemporaryDirectory()
        let folder = try nightly(dir)
        _ = try dir.write("extra.csv", "id,name,amount\n99,Zed,9\n")
        _ = try dir.write(
            "model.yml",
            """
            entities:
              Sale:
                attributes:
                  id: {type: int64, unique: true}
                  name: string
                  amount: double
            """)
        let job = try dir.write(
            "job.yml",
            """
            store: out.sqlite
            model: model.yml
            steps:
              - import:
                  source: [nightly/day1*.csv, "nightly/day2.csv.gz", extra.csv]
                  entity: Sale
                  rejects: rejects.ndjson
                  max_rejects: unlimited
            """)
        let result = try runFerry(["run", job, "--report", dir.file("report.json")])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.integers(dir.file("out.sqlite"), "SELECT id FROM Sale ORDER BY ferry_pk") == [
                1, 10, 11, 3, 4, 99,
            ])
        let rejected = try lines(ofFile: dir.file("rejects.ndjson")).map { try jsonObject(text: $0) }
        #expect(rejected.map { $0["file"] as? String } == ["\(folder)/day1.csv", "\(folder)/day2.csv.gz"])
        let step = try #require((try jsonObject(file: dir.file("report.json"))["steps"] as? [[String: Any]])?.first)
        #expect(
            (step["files"] as? [[String: Any]])?.map { $0["file"] as? String } == [
                "\(folder)/day1.csv", "\(folder)/day10.csv", "\(folder)/day2.csv.gz", dir.file("extra.csv"),
            ])

        let missing = try dir.write(
            "missing.yml",
            """
            store: out2.sqlite
            model: model.yml
            steps:
              - import:
                  source: nightly/*.tsv
                  entity: Sale
            """)
        let validate = try runFerry(["validate", missing])
        #expect(validate.exitCode == 66, "\(validate)")
        #expect(
            validate.errorLines == ["\(missing):4:5: error: source '\(folder)/*.tsv' matches no file"], "\(validate)")
        let run = try runFerry(["run", missing])
        #expect(run.exitCode == 66, "\(run)")
        #expect(run.errorLines.first == "\(folder)/*.tsv: error: no file matches '\(folder)/*.tsv'", "\(run)")

        let mixed = try dir.write(
            "mixed.yml",
            """
            store: out3.sqlite
            model: model.yml
            steps:
              - import:
                  source: [extra.csv, data.ndjson]
                  entity: Sale
            """)
        let mixedResult = try runFerry(["validate", mixed])
        #expect(mixedResult.exitCode == 64, "\(mixedResult)")
        #expect(
            mixedResult.errorLines.first?.contains("the sources of one step must have one format") == true,
            "\(mixedResult)")
    }
}
