import FerryTestSupport
import Foundation
import Testing

/// Core Data's lightweight rules through the `ferry` binary, on a ferry store of an Xcode model
/// (Fixtures/xcode-lightweight/Library.xcdatamodeld): V1 → V2 renames Author to Writer (and
/// name to fullName, books to latestBook) through Renaming IDs, widens Book.pages Int16 → Int32
/// and turns the to-many Author.books into the to-one Writer.latestBook (a one-to-many becomes
/// one-to-one); V2 → V3 narrows Book.pages back to Int16, which is refused.
@Suite("Core Data's lightweight rules through ferry model diff and ferry migrate", .serialized)
struct XcodeLightweightCLITests {
    static let package = DiffCLIFixtures.fixture("xcode-lightweight/Library.xcdatamodeld")

    /// A ferry store of V1 with three authors and four books (books 11 and 12 by author 1), and a
    /// copy of the package to migrate it with.
    static func prepareStore(in directory: TemporaryDirectory) throws -> (store: String, package: String) {
        let package = directory.file("Library.xcdatamodeld")
        try FileManager.default.copyItem(atPath: Self.package, toPath: package)
        _ = try directory.write("model.yml", "name: Library\ncurrent: V1\nversions:\n  - Library.xcdatamodeld/V1.xcdatamodel\n")
        _ = try directory.write("authors.ndjson", #"{"id":1,"name":"Ann"}"# + "\n" + #"{"id":2,"name":"Bob"}"# + "\n" + #"{"id":3,"name":"Cy"}"# + "\n")
        _ = try directory.write(
            "books.ndjson",
            [#"{"id":10,"pages":100,"author":2}"#, #"{"id":11,"pages":200,"author":1}"#, #"{"id":12,"pages":300,"author":1}"#, #"{"id":13,"pages":null,"author":null}"#]
                .joined(separator: "\n") + "\n")
        let job = try directory.write("load.yml", """
            job: load-library
            store: {path: library.sqlite}
            model: {path: model.yml}
            steps:
              - import: {source: authors.ndjson, entity: Author}
              - import:
                  source: books.ndjson
                  entity: Book
                  relationships:
                    author: {field: author, match: id}

            """)
        let loaded = try runFerry(["run", job, "--quiet"])
        #expect(loaded.exitCode == 0, "\(loaded)")
        return (directory.file("library.sqlite"), package)
    }

    @Test("model diff of an Xcode package names Core Data's rules and infers to-many → to-one; JSON carries the rule set")
    func diff() throws {
        let result = try runFerry(["model", "diff", Self.package, "--from", "V1", "--to", "V2"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.hasPrefix("Library V1 → V2\n  rules: Core Data's lightweight-migration rules (Xcode model)\n"), "\(result)")
        #expect(result.stdout.contains("✓ entity: renamed from Author"), "\(result)")
        #expect(result.stdout.contains("✓ relationship latestBook: renamed from books"), "\(result)")
        #expect(
            result.stdout.contains("✓ relationship latestBook: to-many → to-one (Core Data infers it; each record keeps the linked Book with the lowest primary key)"),
            "\(result)")
        #expect(result.stdout.contains("✓ attribute pages: type int16 → int32 (lossless widening)"), "\(result)")

        let json = try runFerry(["model", "diff", Self.package, "--from", "V1", "--to", "V2", "--json"])
        #expect(json.exitCode == 0, "\(json)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let steps = try #require(report["steps"] as? [[String: Any]])
        #expect(steps.map { $0["rules"] as? String } == ["core-data"])

        let yaml = try runFerry(["model", "diff", DiffCLIFixtures.fixture("models/Shop"), "--from", "1", "--to", "2", "--json"])
        let yamlReport = try #require(try JSONSerialization.jsonObject(with: Data(yaml.stdout.utf8)) as? [String: Any])
        #expect((yamlReport["steps"] as? [[String: Any]])?.map { $0["rules"] as? String } == ["ferry"], "\(yaml)")
    }

    @Test("model diff refuses a narrowing for an Xcode model with the reason and both fixes, exit 65")
    func diffRefusesNarrowing() throws {
        let result = try runFerry(["model", "diff", Self.package, "--from", "V2", "--to", "V3"])
        #expect(result.exitCode == 65, "\(result)")
        #expect(result.stdout.contains("✗ attribute pages: type int32 → int16"), "\(result)")
        #expect(result.stdout.contains("reason: Book.pages changes type from int32 to int16; Core Data's documented lightweight migration lists no type changes"), "\(result)")
        #expect(result.stdout.contains("fix: write a mapping model (.xcmappingmodel) or the ferry mapping file mappings/V2-to-V3.yml"), "\(result)")
    }

    @Test("migrate V1 → V2 of a ferry store: renames carried, pages widened, each writer keeps the book with the lowest key")
    func migrate() throws {
        let directory = TemporaryDirectory("xcode-lightweight")
        let (store, package) = try Self.prepareStore(in: directory)
        let migrated = try runFerry(["migrate", store, "--model", package, "--to", "V2", "--no-backup"])
        #expect(migrated.exitCode == 0, "\(migrated)")
        #expect(migrated.stdout.contains("step V1 → V2 (inferred): Writer 3, Book 4"), "\(migrated)")
        #expect(try StoreSnapshot.texts(store, "SELECT id, fullName FROM Writer ORDER BY id") == [["1", "Ann"], ["2", "Bob"], ["3", "Cy"]])
        // Book 12 was the second book of author 1: its link is cleared, book 11 (lower key) keeps it.
        let books = try StoreSnapshot.texts(store, "SELECT b.id, b.pages, w.id FROM Book b LEFT JOIN Writer w ON w.ferry_pk = b.writer ORDER BY b.id")
        #expect(books == [["10", "100", "2"], ["11", "200", "1"], ["12", "300", nil], ["13", nil, nil]], "\(books)")
        // verify at V2: the one-to-one Book.writer ↔ Writer.latestBook has no shared link.
        let index = try directory.write(
            "v2.yml", "name: Library\ncurrent: V2\nversions:\n  - Library.xcdatamodeld/V1.xcdatamodel\n  - Library.xcdatamodeld/V2.xcdatamodel\n")
        let verified = try runFerry(["verify", store, "--model", index])
        #expect(verified.exitCode == 0, "\(verified)")
        #expect(verified.stdout.contains("2 links, every one to an existing Writer, none shared"), "\(verified)")
    }

    @Test("migrate to V3 refuses the narrowing before touching the store, naming the change and both fixes")
    func migrateRefusesNarrowing() throws {
        let directory = TemporaryDirectory("xcode-lightweight-refused")
        let (store, package) = try Self.prepareStore(in: directory)
        let before = try StoreSnapshot.take(store)
        let refused = try runFerry(["migrate", store, "--model", package, "--no-backup"])
        #expect(refused.exitCode != 0, "\(refused)")
        #expect(refused.stderr.contains("cannot infer a mapping from Library version V2 to version V3: 1 change needs a mapping model (.xcmappingmodel) or the ferry mapping file mappings/V2-to-V3.yml"), "\(refused)")
        #expect(refused.stderr.contains("Book.pages changes type from int32 to int16"), "\(refused)")
        #expect(try StoreSnapshot.take(store) == before)
    }
}
