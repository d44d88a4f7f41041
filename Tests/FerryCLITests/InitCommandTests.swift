import FerryTestSupport
import Foundation
import Testing

/// `ferry init FILE... [--store S] [--output DIR]` through the real binary: the model and job it
/// writes for a folder of related files run at once with `ferry run`, validate against the
/// published schemas, say why they chose what they chose, and never overwrite a file.
@Suite("ferry init: a model and a job from data files (CLI)")
struct InitCommandTests {
    static let schemas = TestPaths.packageRoot.appendingPathComponent("schemas").path

    /// authors.csv (windows-1252, comma), books.csv (semicolons, a column named "Page Count")
    /// referring to authors by author_id, and reviews.ndjson referring to books by book_id.
    static func library(_ dir: TemporaryDirectory) throws -> [String] {
        var authors = Array("author_id,name,born\n1,Ursula K. Le Guin,1929-10-21\n2,Gabriel Garc".utf8)
        authors += [0xED] + Array("a M".utf8) + [0xE1] + Array("rquez,1927-03-06\n3,Italo Calvino,1923-10-15\n".utf8)
        return [
            try dir.write("authors.csv", bytes: authors),
            try dir.write(
                "books.csv",
                """
                book_id;title;author_id;Page Count
                10;The Left Hand of Darkness;1;304
                11;One Hundred Years of Solitude;2;417
                12;Invisible Cities;3;165
                13;The Dispossessed;1;387

                """),
            try dir.write(
                "reviews.ndjson",
                """
                {"review_id": 1, "book_id": 10, "stars": 5}
                {"review_id": 2, "book_id": 12, "stars": 4}
                {"review_id": 3, "book_id": 10, "stars": 3}

                """),
        ]
    }

    @Test("init on related files writes a model and a job that ferry run runs at once")
    func initThenRun() throws {
        let dir = TemporaryDirectory()
        let files = try Self.library(dir)
        let result = try runFerry(
            ["init"] + files.map { ($0 as NSString).lastPathComponent } + [
                "--store", "library.sqlite", "--output", "out",
            ],
            cwd: dir.path)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("(3 entities, 2 relationships)"), "\(result)")
        let job = try String(contentsOfFile: dir.file("out/job.yml"), encoding: .utf8)
        let model = try String(contentsOfFile: dir.file("out/model.yml"), encoding: .utf8)
        #expect(job.hasPrefix("# yaml-language-server: $schema=https://"), "\(job)")
        #expect(model.hasPrefix("# yaml-language-server: $schema=https://"), "\(model)")
        // Each choice is in the files, with its reason.
        #expect(job.contains("source: ../authors.csv"), "\(job)")
        #expect(job.contains("store: {path: ../library.sqlite, rebuild: true}"), "\(job)")
        #expect(job.contains("encoding: windows-1252  # the file is not valid UTF-8"), "\(job)")
        #expect(job.contains("csv: {delimiter: \";\"}  # the delimiter that splits"), "\(job)")
        #expect(job.contains("page_count: \"Page Count\""), "\(job)")
        #expect(job.contains("author: {field: author_id, match: author_id}"), "\(job)")
        #expect(job.contains("book: {field: book_id, match: book_id}"), "\(job)")
        #expect(model.contains("author_id: {type: int64, optional: false}  # the key"), "\(model)")
        #expect(model.contains("the author_id values of books.csv are all author_id values of authors.csv"), "\(model)")
        // Referenced files first: authors before books before reviews.
        let order = ["source: ../authors.csv", "source: ../books.csv", "source: ../reviews.ndjson"].map {
            job.range(of: $0)?.lowerBound
        }
        #expect(order.allSatisfy { $0 != nil } && order == order.sorted { $0! < $1! }, "\(job)")
        // Both files validate against the published schemas.
        for (file, kind) in [("out/job.yml", "job"), ("out/model.yml", "model")] {
            let schema = try JSONSchema(path: "\(Self.schemas)/\(kind).schema.json")
            let violations = schema.violations(of: try YAMLValue.load(path: dir.file(file)))
            #expect(violations.isEmpty, "\(file): \(violations)")
        }

        let run = try runFerry(["run", dir.file("out/job.yml")], cwd: dir.path)
        #expect(run.exitCode == 0, "\(run)")
        let store = dir.file("library.sqlite")
        #expect(
            try StoreSnapshot.texts(
                store,
                "SELECT b.title, a.name, b.page_count FROM books b JOIN authors a ON a.ferry_pk = b.author ORDER BY b.book_id"
            ) == [
                ["The Left Hand of Darkness", "Ursula K. Le Guin", "304"],
                ["One Hundred Years of Solitude", "Gabriel García Márquez", "417"],
                ["Invisible Cities", "Italo Calvino", "165"],
                ["The Dispossessed", "Ursula K. Le Guin", "387"],
            ])
        #expect(
            try StoreSnapshot.texts(
                store, "SELECT r.stars, b.title FROM reviews r JOIN books b ON b.ferry_pk = r.book ORDER BY r.review_id"
            )
                == [
                    ["5", "The Left Hand of Darkness"], ["4", "Invisible Cities"], ["3", "The Left Hand of Darkness"],
                ])
        // The job runs again (a full reload), and ferry validate finds nothing to say.
        #expect(try runFerry(["run", dir.file("out/job.yml")], cwd: dir.path).exitCode == 0)
        let validate = try runFerry(["validate", dir.file("out/job.yml")], cwd: dir.path)
        #expect(validate.exitCode == 0, "\(validate)")
    }

    @Test("init never overwrites: an existing job.yml or model.yml is refused with exit 64 and nothing is written")
    func refusesToOverwrite() throws {
        let dir = TemporaryDirectory()
        let files = try Self.library(dir)
        try FileManager.default.createDirectory(atPath: dir.file("out"), withIntermediateDirectories: true)
        let existing = try dir.write("out/job.yml", "# mine\n")
        let result = try runFerry(["init"] + files + ["--output", dir.file("out")])
        #expect(result.exitCode == 64, "\(result)")
        #expect(
            result.stderr.contains("job.yml' exists: ferry init never overwrites a file, and wrote nothing"),
            "\(result)")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "# mine\n")
        #expect(!FileManager.default.fileExists(atPath: dir.file("out/model.yml")))
        #expect(!FileManager.default.fileExists(atPath: dir.file("out/out.sqlite")))

        let missing = try runFerry(["init", dir.file("nothing.csv"), "--output", dir.file("other")])
        #expect(missing.exitCode == 66, "\(missing)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("other")))

        let unknown = try dir.write("notes.txt.bak", "a\n")
        let refused = try runFerry(["init", unknown, "--output", dir.file("other")])
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(refused.stderr.contains("cannot tell the format of"), "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("other/model.yml")))
    }

    @Test("a column with a value that is no key stays an attribute; compressed, tab-separated and headerless files")
    func looseReferencesAndDialects() throws {
        let dir = TemporaryDirectory()
        try dir.write("customers.tsv", "id\tname\n1\tAnn\n2\tBob\n")
        // Customer 3 does not exist: customer_id is no reference, it stays a number.
        try dir.write("orders.csv", "order_id,customer_id,total\n100,1,9.50\n101,3,12.00\n")
        let gzip = try runProgram("/bin/sh", ["-c", "gzip orders.csv"], cwd: dir.path)
        #expect(gzip.exitCode == 0, "\(gzip)")
        try dir.write("scores.csv", "1,Ann,34\n2,Bob,41\n3,Cy,29\n")
        let result = try runFerry(
            ["init", "customers.tsv", "orders.csv.gz", "scores.csv", "--store", "shop.sqlite"], cwd: dir.path)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("(3 entities, 0 relationships)"), "\(result)")
        let job = try String(contentsOfFile: dir.file("job.yml"), encoding: .utf8)
        let model = try String(contentsOfFile: dir.file("model.yml"), encoding: .utf8)
        #expect(job.contains("source: orders.csv.gz"), "\(job)")
        #expect(!job.contains("encoding:"), "compressed UTF-8 is UTF-8: \(job)")
        #expect(job.contains("csv: {header: false, columns: [column_1, column_2, column_3]}"), "\(job)")
        #expect(model.contains("customer_id: int64"), "\(model)")
        #expect(model.contains("id: {type: int64, optional: false}  # the key"), "\(model)")
        let run = try runFerry(["run", "job.yml"], cwd: dir.path)
        #expect(run.exitCode == 0, "\(run)")
        let store = dir.file("shop.sqlite")
        #expect(
            try StoreSnapshot.integers(store, "SELECT customer_id FROM orders ORDER BY order_id") == [1, 3])
        #expect(try StoreSnapshot.integers(store, "SELECT COUNT(*) FROM scores") == [3])
    }

    @Test("init without files writes sample data and a commented example job that runs")
    func example() throws {
        let dir = TemporaryDirectory()
        let result = try runFerry(["init", "--output", "example"], cwd: dir.path)
        #expect(result.exitCode == 0, "\(result)")
        for name in ["authors.csv", "books.csv", "model.yml", "job.yml"] {
            #expect(FileManager.default.fileExists(atPath: dir.file("example/\(name)")), "\(name): \(result)")
        }
        let job = try String(contentsOfFile: dir.file("example/job.yml"), encoding: .utf8)
        #expect(job.contains("# An example job that ferry init wrote over generated sample data"), "\(job)")
        let run = try runFerry(["run", "example/job.yml"], cwd: dir.path)
        #expect(run.exitCode == 0, "\(run)")
        let store = dir.file("example/example.sqlite")
        #expect(try StoreSnapshot.integers(store, "SELECT COUNT(*) FROM authors") == [4])
        #expect(
            try StoreSnapshot.texts(
                store,
                "SELECT a.name FROM books b JOIN authors a ON a.ferry_pk = b.author WHERE b.title = 'Solaris'") == [
                    ["Stanisław Lem"]
                ])
        let again = try runFerry(["init", "--output", "example"], cwd: dir.path)
        #expect(again.exitCode == 64, "\(again)")
    }
}
