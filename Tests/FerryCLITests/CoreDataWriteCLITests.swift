import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `ferry import` into Core Data stores through the real binary: a new store from the sample
/// Library model (`--layout coredata`) read back identically by `ferry export` and passing
/// `ferry verify`; a new store with `--compiled-model`; a copy of a real store written in place
/// with Core Data's bookkeeping, the original untouched; dry runs; and the refusals.
@Suite("ferry import into Core Data stores, through the real binary", .serialized)
struct CoreDataWriteCLITests {
    typealias Samples = CoreDataStoreCLITests
    static let root = TestPaths.packageRoot.appendingPathComponent("samples/coredata").path
    static let library = root + "/Library.xcdatamodeld"
    static func data(_ name: String) -> String { root + "/data/" + name }

    static func ferry(_ arguments: [String]) throws -> ProcessResult {
        try FerryProcess(arguments).wait(timeout: .seconds(120))
    }

    static func records(_ output: String) throws -> [[String: Any]] {
        try #require(
            try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]],
            "not an array of objects: \(output)")
    }

    static func sql(_ path: String, _ query: String) throws -> [[DatabaseValue]] {
        try Connection(path: path, readOnly: true, create: false).rows(query)
    }

    @Test(
        "a new Core Data store from the Library model: every attribute type reads back identically, and verify passes")
    func newStoreRoundTrip() throws {
        let directory = TemporaryDirectory("ferry-cdw-cli-new")
        let store = directory.file("Library.sqlite")
        for (file, entity, layout) in [
            ("authors.csv", "Author", true), ("books.json", "Book", false), ("novels.csv", "GraphicNovel", false),
        ] {
            let result = try Self.ferry(
                ["import", Self.data(file), "--store", store, "--model", Self.library, "--entity", entity, "--quiet"]
                    + (layout ? ["--layout", "coredata"] : []))
            #expect(result.exitCode == 0, "\(file): \(result)")
        }
        let export = try Self.ferry([
            "export", "--store", store, "--model", Self.library, "--entity", "Book", "--format", "json", "--quiet",
        ])
        #expect(export.exitCode == 0, "\(export)")
        let books = try Self.records(export.stdout)
        let input = try Self.records(try String(contentsOfFile: Self.data("books.json"), encoding: .utf8))
        #expect(books.count == 4)
        for (written, read) in zip(input, books) {
            for key in ["isbn", "title", "publishedAt", "uniqueID", "cover"] {
                #expect(String(describing: written[key] ?? "nil") == String(describing: read[key] ?? "nil"), "\(key)")
            }
            #expect((read["price"] as? Double) == Double(written["price"] as? String ?? ""))
            #expect((read["rating"] as? Double) == (written["rating"] as? Double))
        }
        let novels = try Self.records(
            try Self.ferry([
                "export", "--store", store, "--model", Self.library, "--entity", "GraphicNovel", "--format", "json",
                "--quiet",
            ]).stdout)
        #expect(novels.map { $0["isBlackAndWhite"] as? Bool } == [false, true])
        #expect(novels.map { $0["rating"] as? Double } == [0, 0], "the model default, as Core Data gives it")
        // Core Data's forms and bookkeeping, at the SQLite level.
        let rows = try Self.sql(
            store,
            "SELECT Z_PK, Z_ENT, Z_OPT, typeof(ZPUBLISHEDAT), typeof(ZPRICE), length(ZUNIQUEID) FROM ZBOOK ORDER BY Z_PK"
        )
        #expect(rows.map { $0[0].int64 } == [1, 2, 3, 4])
        #expect(rows.map { $0[1].int64 } == [1, 1, 2, 2])
        // Seconds since 2001 and decimals as numbers (whole values become integers under the
        // columns' NUMERIC affinity, as with Core Data's own writes), never text.
        #expect(
            rows.allSatisfy { $0[2].int64 == 1 && ["real", "integer"].contains($0[3].text) && $0[4].text == "real" })
        #expect(rows.prefix(2).allSatisfy { $0[5].int64 == 16 })
        #expect(
            try Self.sql(store, "SELECT count(*) FROM ZBOOK WHERE Z_PK = 1 AND ZPUBLISHEDAT = -1004745600.0").first?
                .first?.int64 == 1)
        #expect(
            try Self.sql(store, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME IN ('Book', 'Writer') ORDER BY Z_ENT").map
            { $0.first?.int64 } == [4, 2])
        let verify = try Self.ferry(["verify", store, "--model", Self.library, "--quiet"])
        #expect(verify.exitCode == 0, "\(verify)")
        // Updating through on_conflict counts a change in Z_OPT.
        let update = try Self.ferry([
            "import", Self.data("authors.csv"), "--store", store, "--model", Self.library, "--entity", "Author",
            "--on-conflict", "update", "--quiet",
        ])
        #expect(update.exitCode == 0, "\(update)")
        #expect(try Self.sql(store, "SELECT Z_OPT FROM ZWRITER ORDER BY Z_PK").map { $0.first?.int64 } == [2, 2])
    }

    @Test(
        "--compiled-model writes the compiled version's hashes; the store is then identified by them",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
    func compiledModel() throws {
        let directory = TemporaryDirectory("ferry-cdw-cli-momd")
        let store = directory.file("Seed.sqlite")
        let posts = try directory.write("posts.csv", "postID,date,hide\nP-1,2024-05-01T10:00:00Z,false\n")
        let result = try Self.ferry([
            "import", posts, "--store", store, "--model", Samples.package(Samples.examples), "--entity", "Post",
            "--layout", "coredata",
            "--compiled-model", Samples.compiledModel, "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result)")
        let compiled = try CompiledModelVersions.read(Samples.compiledModel)
        let file = try CoreDataStoreFile.read(store)
        #expect(file.metadata.versionHashes == compiled.versionHashes["CoreDataMigration_Example 4"])
        let version = try Self.ferry([
            "store", "version", store, "--model", Samples.package(Samples.examples), "--compiled-model",
            Samples.compiledModel,
        ])
        #expect(version.stdout.contains("CoreDataMigration_Example 4"), "\(version)")
    }

    @Test(
        "import into a copy of a real store writes it in place with Core Data's keys; export reads the rows back; the original is untouched",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func existingStore() throws {
        let directory = TemporaryDirectory("ferry-cdw-cli-old")
        let original = Samples.store(Samples.revised, "CoreDataMigration_Example_3.sqlite")
        let before = try FileFingerprint.of(original)
        let store = try Samples.writableCopy(original, into: directory, name: "App.sqlite")
        let maxBefore = try #require(
            try Self.sql(store, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Post'").first?.first?.int64)
        let csv = try directory.write(
            "posts.csv", "postID,hexColor,date\nNEW-1,#112233,2024-01-02T03:04:05.678Z\nNEW-2,,\n")
        let dry = try Self.ferry(["import", csv, "--store", store, "--entity", "Post", "--dry-run", "--quiet"])
        #expect(dry.exitCode == 0, "\(dry)")
        #expect(
            try Self.sql(store, "SELECT count(*) FROM ZPOST WHERE ZPOSTID LIKE 'NEW-%'").first?.first?.int64 == 0,
            "a dry run changes nothing")
        let result = try Self.ferry(["import", csv, "--store", store, "--entity", "Post", "--quiet"])
        #expect(result.exitCode == 0, "\(result)")
        let rows = try Self.sql(store, "SELECT Z_PK, Z_ENT, Z_OPT FROM ZPOST WHERE ZPOSTID LIKE 'NEW-%' ORDER BY Z_PK")
        #expect(rows.map { $0.compactMap(\.int64) } == [[maxBefore + 1, 1, 1], [maxBefore + 2, 1, 1]])
        #expect(
            try Self.sql(store, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Post'").first?.first?.int64 == maxBefore
                + 2)
        #expect(try Self.sql(store, "PRAGMA integrity_check").first?.first?.text == "ok")
        let export = try Self.ferry(["export", "--store", store, "--entity", "Post", "--format", "json", "--quiet"])
        let posts = try Self.records(export.stdout)
        #expect(posts.count == 14)
        #expect(
            posts.contains {
                $0["postID"] as? String == "NEW-1" && $0["date"] as? String == "2024-01-02T03:04:05.678Z"
                    && $0["hexColor"] as? String == "#112233"
            })
        let verify = try Self.ferry(["verify", store, "--quiet"])
        #expect(verify.exitCode == 0, "\(verify)")
        #expect(try FileFingerprint.of(original) == before)
    }

    @Test(
        "refusals: --layout on the wrong store, --compiled-model without a new Core Data store, an abstract entity, a read-only store",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func refusals() throws {
        let directory = TemporaryDirectory("ferry-cdw-cli-bad")
        let csv = try directory.write("people.csv", "name\nAda\n")
        let ferryStore = directory.file("ferry.sqlite")
        #expect(try Self.ferry(["import", csv, "--store", ferryStore, "--entity", "Person", "--quiet"]).exitCode == 0)
        let wrongLayout = try Self.ferry([
            "import", csv, "--store", ferryStore, "--entity", "Person", "--layout", "coredata", "--model", Self.library,
        ])
        #expect(wrongLayout.exitCode == 64 && wrongLayout.stderr.contains("exists and is not one"), "\(wrongLayout)")
        let bogus = try Self.ferry(["import", csv, "--store", directory.file("x.sqlite"), "--layout", "mongo"])
        #expect(bogus.exitCode == 64 && bogus.stderr.contains("--layout must be ferry or coredata"), "\(bogus)")
        let noModel = try Self.ferry(["import", csv, "--store", directory.file("y.sqlite"), "--layout", "coredata"])
        #expect(noModel.exitCode == 64 && noModel.stderr.contains("needs --model"), "\(noModel)")
        let momd = try Self.ferry([
            "import", csv, "--store", ferryStore, "--entity", "Person", "--compiled-model", Samples.compiledModel,
        ])
        #expect(momd.exitCode == 64 && momd.stderr.contains("--compiled-model applies"), "\(momd)")
        let abstract = try Self.ferry([
            "import", csv, "--store", directory.file("lib.sqlite"), "--model", Self.library, "--layout", "coredata",
            "--entity", "Writer",
        ])
        #expect(abstract.exitCode != 0 && abstract.stderr.contains("Writer is an abstract entity"), "\(abstract)")

        let readOnly = try Samples.copy(
            Samples.store(Samples.revised, "CoreDataMigration_Example_3.sqlite"), into: directory, name: "ro.sqlite")
        let before = try FileFingerprint.of(readOnly)
        let refused = try Self.ferry([
            "import", try directory.write("posts.csv", "postID\nX\n"), "--store", readOnly, "--entity", "Post",
        ])
        #expect(refused.exitCode == 1 && refused.stderr.contains("read-only"), "\(refused)")
        #expect(try FileFingerprint.of(readOnly) == before)
        #expect(!FileManager.default.fileExists(atPath: readOnly + ".ferry-lock"))
    }

    /// A new Library store made by `ferry import` (two authors, two books), with pages, an
    /// author and a tag on the first book added in SQL as Core Data would store them.
    static func libraryStore(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("Library.sqlite")
        for (file, entity, layout) in [("authors.csv", "Author", true), ("books.json", "Book", false)] {
            let result = try Self.ferry(
                ["import", Self.data(file), "--store", path, "--model", library, "--entity", entity, "--quiet"]
                    + (layout ? ["--layout", "coredata"] : []))
            #expect(result.exitCode == 0, "\(result)")
        }
        try Connection(path: path, create: false).executeScript(
            """
            UPDATE ZBOOK SET ZAUTHOR = 2 WHERE Z_PK = 1;
            INSERT INTO ZPAGE (Z_PK, Z_ENT, Z_OPT, ZNUMBER, ZBOOK, Z1_BOOK, Z_FOK_BOOK) VALUES (1, 3, 1, 1, 1, 1, 1), (2, 3, 1, 2, 1, 1, 2), (3, 3, 1, 3, 1, 1, 3);
            INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (1, 4, 1, 'classic');
            INSERT INTO Z_1TAGS (Z_1BOOKS, Z_4TAGS) VALUES (1, 1);
            UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_NAME = 'Page';
            UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME = 'Tag';
            """)
        return path
    }

    @Test(
        "ferry update and ferry delete on a Core Data store: Z_OPT counts updates; deny refuses, cascade follows, join rows go"
    )
    func updateAndDelete() throws {
        let directory = TemporaryDirectory("ferry-cdw-cli-mut")
        let store = try Self.libraryStore(in: directory)
        let update = try Self.ferry([
            "update", "--store", store, "--model", Self.library, "--entity", "Book", "--where",
            "isbn == '978-0-316-76948-0'", "--set", "title=A2", "--quiet",
        ])
        #expect(update.exitCode == 0, "\(update)")
        #expect(
            try Self.sql(store, "SELECT ZTITLE, Z_OPT FROM ZBOOK ORDER BY Z_PK").map {
                [$0[0].text ?? "", String($0[1].int64 ?? 0)]
            } == [["A2", "2"], ["A Wizard of Earthsea", "1"]])

        let denied = try Self.ferry([
            "delete", "--store", store, "--model", Self.library, "--entity", "Author", "--where", "TRUEPREDICATE",
        ])
        #expect(denied.exitCode != 0, "Author.books is Deny: \(denied)")
        #expect(try Self.sql(store, "SELECT count(*) FROM ZWRITER").first?.first?.int64 == 2, "nothing deleted")

        let dry = try Self.ferry([
            "delete", "--store", store, "--model", Self.library, "--entity", "Book", "--where", "title == 'A2'",
            "--dry-run", "--quiet",
        ])
        #expect(dry.exitCode == 0, "\(dry)")
        #expect(try Self.sql(store, "SELECT count(*) FROM ZPAGE").first?.first?.int64 == 3, "a dry run changes nothing")
        let delete = try Self.ferry([
            "delete", "--store", store, "--model", Self.library, "--entity", "Book", "--where", "title == 'A2'",
            "--quiet",
        ])
        #expect(delete.exitCode == 0, "\(delete)")
        #expect(try Self.sql(store, "SELECT count(*) FROM ZPAGE").first?.first?.int64 == 0, "Book.pages cascades")
        #expect(
            try Self.sql(store, "SELECT count(*) FROM Z_1TAGS").first?.first?.int64 == 0,
            "the deleted book's join rows go with it")
        #expect(try Self.sql(store, "SELECT count(*) FROM ZTAG").first?.first?.int64 == 1)
        #expect(try Self.sql(store, "SELECT Z_PK FROM ZBOOK").map { $0.first?.int64 } == [2])
        #expect(
            try Self.sql(store, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book'").first?.first?.int64 == 2,
            "keys are never reused")
        #expect(try Self.ferry(["verify", store, "--model", Self.library, "--quiet"]).exitCode == 0)
    }

    @Test(
        "the sample pipeline pipelines/coredata-library.yml builds the seed store, exports the books as imported, verifies, and runs again"
    )
    func samplePipeline() throws {
        let directory = TemporaryDirectory("ferry-cdw-cli-pipeline")
        let job = TestPaths.packageRoot.appendingPathComponent("pipelines/coredata-library.yml").path
        for _ in 0..<2 {
            let result = try Self.ferry(["run", job, "--param", "out=\(directory.path)", "--quiet"])
            #expect(result.exitCode == 0, "\(result)")
        }
        let store = directory.file("Library.sqlite")
        let books = try Self.records(try String(contentsOfFile: directory.file("library-books.json"), encoding: .utf8))
        #expect(
            books.map { $0["isbn"] as? String ?? "" } == [
                "978-0-316-35852-3", "978-0-316-76948-0", "978-2-203-00101-1", "978-2-203-00102-8",
            ])
        #expect(
            books[1]["cover"] as? String == "YnBsaXN0MDA="
                && books[1]["uniqueID"] as? String == "6f1c1f9e-3b0a-4c55-9a3c-0d8f5b1a2e77")
        #expect(
            books.map { $0["author"] as? String ?? "" } == ["Ursula K. Le Guin", "Ursula K. Le Guin", "Hergé", "Hergé"])
        // Pages: Z1_BOOK is the book's entity (2 = GraphicNovel), Z_FOK_BOOK the order within each book.
        #expect(
            try Self.sql(store, "SELECT ZBOOK, Z1_BOOK, Z_FOK_BOOK FROM ZPAGE ORDER BY Z_PK").map {
                $0.compactMap(\.int64)
            }
                == [[3, 2, 1], [3, 2, 2], [1, 1, 1], [4, 2, 1]])
        // The hashes computed from the model: 6 entities (unverified: Library has ordered relationships).
        #expect(try CoreDataStoreFile.read(store).metadata.versionHashes.count == 6)
        #expect(try Self.ferry(["verify", store, "--model", Self.library, "--quiet"]).exitCode == 0)
    }

    @Test(
        "a job imports into an existing Core Data store in place, resolving a to-one to a sub-entity (Author, in ZWRITER)"
    )
    func jobIntoExistingStore() throws {
        let directory = TemporaryDirectory("ferry-cdw-cli-sub")
        let store = try Self.libraryStore(in: directory)
        // The lookup reads only the destination's rows (and its sub-entities'), as Core Data fetches.
        let job = try directory.write(
            "pages.yml",
            """
            job: pages
            store: \(store)
            model: \(Self.library)
            steps:
              - import:
                  source: \(Self.data("novels.csv"))
                  entity: GraphicNovel
                  relationships:
                    author: {field: author, match: name}
            """)
        let result = try Self.ferry(["run", job, "--quiet"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try Self.sql(store, "SELECT ZAUTHOR, Z_PK FROM ZBOOK WHERE Z_ENT = 2 ORDER BY Z_PK").map {
                $0.compactMap(\.int64)
            } == [[1, 3], [1, 4]])
        #expect(try Self.sql(store, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book'").first?.first?.int64 == 4)
    }
}
