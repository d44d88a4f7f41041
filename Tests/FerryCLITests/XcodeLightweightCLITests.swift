import FerryTestSupport
import Foundation
import Testing

/// Core Data's lightweight rules through the `ferry` binary, on ferry stores of an Xcode model
/// (Fixtures/xcode-lightweight/Library.xcdatamodeld): V1 → V2 renames Author to Writer (and
/// name to fullName, books to latestBook) through Renaming IDs, widens Book.pages Int16 → Int32
/// and turns the to-many Author.books into the to-one Writer.latestBook (a one-to-many becomes
/// one-to-one); V2 → V3 narrows Book.pages back to Int16 (a checked narrowing); V3 → V4 makes
/// Book.pages a Date, which is refused.
@Suite("Core Data's lightweight rules through ferry model diff and ferry migrate", .serialized)
struct XcodeLightweightCLITests {
    static let package = DiffCLIFixtures.fixture("xcode-lightweight/Library.xcdatamodeld")

    /// A ferry store of `version` (V1 or V2) with three authors and four books (books 11 and 12
    /// by author 1, `pages` as given), and a copy of the package to migrate it with.
    static func prepareStore(
        at version: String = "V1", pages: [String] = ["100", "200", "300", "null"], in directory: TemporaryDirectory
    ) throws -> (store: String, package: String) {
        let package = directory.file("Library.xcdatamodeld")
        try FileManager.default.copyItem(atPath: Self.package, toPath: package)
        let versions = version == "V1" ? ["V1"] : ["V1", "V2"]
        _ = try directory.write(
            "model.yml",
            "name: Library\ncurrent: \(version)\nversions:\n"
                + versions.map { "  - Library.xcdatamodeld/\($0).xcdatamodel\n" }.joined())
        _ = try directory.write(
            "authors.ndjson",
            #"{"id":1,"name":"Ann"}"# + "\n" + #"{"id":2,"name":"Bob"}"# + "\n" + #"{"id":3,"name":"Cy"}"# + "\n")
        let links = ["2", "1", "1", "null"]
        let books = (0..<4).map { #"{"id":\#(10 + $0),"pages":\#(pages[$0]),"author":\#(links[$0])}"# }
        _ = try directory.write("books.ndjson", books.joined(separator: "\n") + "\n")
        let (author, name, link) = version == "V1" ? ("Author", "name", "author") : ("Writer", "fullName", "writer")
        let job = try directory.write(
            "load.yml",
            """
            job: load-library
            store: {path: library.sqlite}
            model: {path: model.yml}
            steps:
              - import: {source: authors.ndjson, entity: \(author), fields: {\(name): name}}
              - import:
                  source: books.ndjson
                  entity: Book
                  relationships:
                    \(link): {field: author, match: id}

            """)
        let loaded = try runFerry(["run", job, "--quiet"])
        #expect(loaded.exitCode == 0, "\(loaded)")
        return (directory.file("library.sqlite"), package)
    }

    @Test(
        "model diff of an Xcode package names Core Data's rules and infers to-many → to-one; JSON carries the rule set")
    func diff() throws {
        let result = try runFerry(["model", "diff", Self.package, "--from", "V1", "--to", "V2"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.hasPrefix(
                "Library V1 → V2\n  rules: Core Data's lightweight-migration rules (Xcode model)\n"), "\(result)")
        #expect(result.stdout.contains("✓ entity: renamed from Author"), "\(result)")
        #expect(result.stdout.contains("✓ relationship latestBook: renamed from books"), "\(result)")
        #expect(
            result.stdout.contains(
                "✓ relationship latestBook: to-many → to-one (Core Data infers it; each record keeps the linked Book with the lowest primary key)"
            ),
            "\(result)")
        #expect(result.stdout.contains("✓ attribute pages: type int16 → int32 (lossless widening)"), "\(result)")

        let json = try runFerry(["model", "diff", Self.package, "--from", "V1", "--to", "V2", "--json"])
        #expect(json.exitCode == 0, "\(json)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let steps = try #require(report["steps"] as? [[String: Any]])
        #expect(steps.map { $0["rules"] as? String } == ["core-data"])

        let yaml = try runFerry([
            "model", "diff", DiffCLIFixtures.fixture("models/Shop"), "--from", "1", "--to", "2", "--json",
        ])
        let yamlReport = try #require(try JSONSerialization.jsonObject(with: Data(yaml.stdout.utf8)) as? [String: Any])
        #expect((yamlReport["steps"] as? [[String: Any]])?.map { $0["rules"] as? String } == ["ferry"], "\(yaml)")
    }

    @Test(
        "model diff infers a checked narrowing for an Xcode model and refuses a number → date change with the reason and both fixes"
    )
    func diffNarrowingAndRefusal() throws {
        let narrowed = try runFerry(["model", "diff", Self.package, "--from", "V2", "--to", "V3"])
        #expect(narrowed.exitCode == 0, "\(narrowed)")
        #expect(
            narrowed.stdout.contains(
                "✓ attribute pages: type int32 → int16 (checked narrowing, ferry's extension: each value converted only when it fits exactly)"
            ),
            "\(narrowed)")
        #expect(
            narrowed.stdout.contains(
                "warning: the migration fails, naming the record, if a stored Book.pages value does not fit int16"),
            "\(narrowed)")

        let result = try runFerry(["model", "diff", Self.package, "--from", "V3", "--to", "V4"])
        #expect(result.exitCode == 65, "\(result)")
        #expect(result.stdout.contains("✗ attribute pages: type int16 → date"), "\(result)")
        #expect(
            result.stdout.contains(
                "reason: Book.pages changes type from int16 to date; Core Data's documented lightweight migration lists no type changes"
            ), "\(result)")
        #expect(
            result.stdout.contains(
                "fix: write a mapping model (.xcmappingmodel) or the ferry mapping file mappings/V3-to-V4.yml"),
            "\(result)")
    }

    @Test(
        "migrate V1 → V2 of a ferry store: renames carried, pages widened, each writer keeps the book with the lowest key"
    )
    func migrate() throws {
        let directory = TemporaryDirectory("xcode-lightweight")
        let (store, package) = try Self.prepareStore(in: directory)
        let migrated = try runFerry(["migrate", store, "--model", package, "--to", "V2", "--no-backup"])
        #expect(migrated.exitCode == 0, "\(migrated)")
        #expect(migrated.stdout.contains("step V1 → V2 (inferred): Writer 3, Book 4"), "\(migrated)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, fullName FROM Writer ORDER BY id") == [
                ["1", "Ann"], ["2", "Bob"], ["3", "Cy"],
            ])
        // Book 12 was the second book of author 1: its link is cleared, book 11 (lower key) keeps it.
        let books = try StoreSnapshot.texts(
            store, "SELECT b.id, b.pages, w.id FROM Book b LEFT JOIN Writer w ON w.ferry_pk = b.writer ORDER BY b.id")
        #expect(
            books == [["10", "100", "2"], ["11", "200", "1"], ["12", "300", nil], ["13", nil, nil]], "\(books)")
        // verify at V2: the one-to-one Book.writer ↔ Writer.latestBook has no shared link.
        let index = try directory.write(
            "v2.yml",
            "name: Library\ncurrent: V2\nversions:\n  - Library.xcdatamodeld/V1.xcdatamodel\n  - Library.xcdatamodeld/V2.xcdatamodel\n"
        )
        let verified = try runFerry(["verify", store, "--model", index])
        #expect(verified.exitCode == 0, "\(verified)")
        #expect(verified.stdout.contains("2 links, every one to an existing Writer, none shared"), "\(verified)")
    }

    @Test(
        "migrate V2 → V3 narrows pages when every value fits; a value that does not fit fails the migration naming the object, the store untouched"
    )
    func migrateNarrowing() throws {
        let fits = TemporaryDirectory("xcode-lightweight-fits")
        let (store, package) = try Self.prepareStore(at: "V2", pages: ["-32768", "32767", "0", "null"], in: fits)
        let migrated = try runFerry(["migrate", store, "--model", package, "--to", "V3", "--no-backup"])
        #expect(migrated.exitCode == 0, "\(migrated)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, pages FROM Book ORDER BY id") == [
                ["10", "-32768"], ["11", "32767"], ["12", "0"], ["13", nil],
            ])

        let overflow = TemporaryDirectory("xcode-lightweight-overflow")
        let (bad, badPackage) = try Self.prepareStore(at: "V2", pages: ["100", "200", "40000", "null"], in: overflow)
        let before = try StoreSnapshot.take(bad)
        let failed = try runFerry(["migrate", bad, "--model", badPackage, "--to", "V3", "--no-backup"])
        #expect(failed.exitCode != 0, "\(failed)")
        #expect(failed.stderr.contains("Book object 3: pages value 40000 does not fit int16"), "\(failed)")
        #expect(failed.stderr.contains("nothing was changed"), "\(failed)")
        #expect(try StoreSnapshot.take(bad) == before)
    }

    @Test("migrate to V4 refuses the number → date change before touching the store, naming the change and both fixes")
    func migrateRefuses() throws {
        let directory = TemporaryDirectory("xcode-lightweight-refused")
        let (store, package) = try Self.prepareStore(in: directory)
        let before = try StoreSnapshot.take(store)
        let refused = try runFerry(["migrate", store, "--model", package, "--no-backup"])
        #expect(refused.exitCode != 0, "\(refused)")
        #expect(
            refused.stderr.contains(
                "cannot infer a mapping from Library version V3 to version V4: 1 change needs a mapping model (.xcmappingmodel) or the ferry mapping file mappings/V3-to-V4.yml"
            ),
            "\(refused)")
        #expect(refused.stderr.contains("Book.pages changes type from int16 to date"), "\(refused)")
        #expect(try StoreSnapshot.take(store) == before)
    }
}
