import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// A library model in two versions: v2 turns `Book.authorName` into an `Author` entity (one per
/// distinct name), adds computed attributes and drops books before 1950.
enum LibraryModels {
    static let v1 = ObjectModel(
        name: "Library", version: "1",
        entities: [
            EntityDescription(
                name: "Book",
                attributes: [
                    AttributeDescription(name: "isbn", type: .string, isOptional: false),
                    AttributeDescription(name: "title", type: .string, isOptional: false),
                    AttributeDescription(name: "authorName", type: .string),
                    AttributeDescription(name: "price", type: .decimal),
                    AttributeDescription(name: "year", type: .int16),
                ],
                relationships: [
                    RelationshipDescription(name: "loans", destination: "Loan", isToMany: true, inverse: "book")
                ],
                uniquenessConstraints: [["isbn"]]),
            EntityDescription(
                name: "Loan",
                attributes: [AttributeDescription(name: "reader", type: .string, isOptional: false)],
                relationships: [RelationshipDescription(name: "book", destination: "Book", inverse: "loans")]),
        ])

    static let v2 = ObjectModel(
        name: "Library", version: "2",
        entities: [
            EntityDescription(
                name: "Author",
                attributes: [AttributeDescription(name: "name", type: .string, isOptional: false)],
                relationships: [
                    RelationshipDescription(name: "books", destination: "Book", isToMany: true, inverse: "author")
                ],
                uniquenessConstraints: [["name"]]),
            EntityDescription(
                name: "Book",
                attributes: [
                    AttributeDescription(name: "isbn", type: .string, isOptional: false),
                    AttributeDescription(name: "title", type: .string, isOptional: false),
                    AttributeDescription(name: "shout", type: .string, isOptional: false),
                    AttributeDescription(name: "label", type: .string),
                    AttributeDescription(name: "price", type: .decimal),
                    AttributeDescription(name: "year", type: .int32),
                ],
                relationships: [
                    RelationshipDescription(name: "loans", destination: "Loan", isToMany: true, inverse: "book"),
                    RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
                ],
                uniquenessConstraints: [["isbn"]]),
            EntityDescription(
                name: "Loan",
                attributes: [AttributeDescription(name: "reader", type: .string, isOptional: false)],
                relationships: [RelationshipDescription(name: "book", destination: "Book", inverse: "loans")]),
        ])

    static var bundle: ModelBundle { ModelBundle(name: "Library", versions: [v1, v2], currentVersion: "2") }

    /// The 1 → 2 mapping as a mapping file would give it.
    static func mapping() throws -> MappingModel {
        var mapping = MappingModel(
            source: v1, destination: v2, inferred: ModelDiff(from: v1, to: v2).bestEffortMapping())
        guard let bookIndex = mapping.entities.firstIndex(where: { $0.name == "Book" }),
            let authorIndex = mapping.entities.firstIndex(where: { $0.name == "Author" })
        else { throw FerryError(.internal, "bad fixture") }
        mapping.entities[authorIndex].source = "Book"
        mapping.entities[authorIndex].distinct = "$source.authorName"
        mapping.entities[authorIndex].attributes = [
            .init(destination: "name", value: .expression("$source.authorName"))
        ]
        mapping.entities[bookIndex].filter = "year >= 1950"
        mapping.entities[bookIndex].attributes = mapping.entities[bookIndex].attributes.map { attribute in
            switch attribute.destination {
            case "shout": return .init(destination: "shout", value: .expression("uppercase($source.title)"))
            case "label":
                return .init(destination: "label", value: .expression(#"$source.isbn + ": " + $source.title"#))
            default: return attribute
            }
        }
        mapping.entities[bookIndex].relationships = mapping.entities[bookIndex].relationships.map { relationship in
            relationship.destination == "author"
                ? .init(destination: "author", value: .fromMapping("Author")) : relationship
        }
        // Authors are made before the books that point at them.
        let author = mapping.entities.remove(at: authorIndex)
        mapping.entities.insert(author, at: 0)
        return mapping
    }

    /// A v1 store with five books (one before 1950, one without author) and three loans.
    static func makeStore(at path: String) throws {
        let store = try Store.open(at: path, model: v1)
        try store.write { connection in
            try connection.executeScript(
                """
                INSERT INTO Book (ferry_pk, isbn, title, authorName, price, year) VALUES
                    (1, '978-1', 'Dune', 'Frank Herbert', '9.99', 1965),
                    (2, '978-2', 'Children of Dune', 'Frank Herbert', '10.5', 1976),
                    (3, '978-3', 'Émile', 'Jean-Jacques Rousseau', '3', 1762),
                    (4, '978-4', 'Kindred', 'Octavia E. Butler', NULL, 1979),
                    (5, '978-5', 'Anonymous Notes', NULL, '1', 2001);
                INSERT INTO Loan (ferry_pk, reader, book) VALUES (1, 'ana', 1), (2, 'bo', 3), (3, 'cy', 5);
                """)
        }
    }
}

@Suite("Migration engine", .serialized)
struct MigrationEngineTests {
    func rows(_ path: String, _ sql: String) throws -> [[DatabaseValue]] {
        try Connection(path: path).rows(sql)
    }

    @Test("a mapping step: distinct values become objects, expressions, filters, relationships from other mappings")
    func mappingStep() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("library.sqlite")
        try LibraryModels.makeStore(at: path)
        let migrator = Migrator(storePath: path, bundle: LibraryModels.bundle) { _, _ in try LibraryModels.mapping() }
        let report = try migrator.run()
        #expect(report.fromVersion == "1")
        #expect(report.toVersion == "2")
        let books = report.steps[0].entities.first { $0.mapping == "Book" }
        #expect(books?.read == 4)  // Émile (1762) is filtered out
        #expect(books?.written == 4)
        #expect(
            try rows(path, "SELECT ferry_pk, name FROM Author ORDER BY ferry_pk") == [
                [.integer(1), .text("Frank Herbert")], [.integer(2), .text("Jean-Jacques Rousseau")],
                [.integer(3), .text("Octavia E. Butler")],
            ])
        // Books keep their keys; the author points at the Author made from the same book.
        #expect(
            try rows(
                path,
                "SELECT ferry_pk, isbn, shout, label, price, year, (SELECT name FROM Author WHERE ferry_pk = author) FROM Book ORDER BY ferry_pk"
            ) == [
                [
                    .integer(1), .text("978-1"), .text("DUNE"), .text("978-1: Dune"), .text("9.99"), .integer(1965),
                    .text("Frank Herbert"),
                ],
                [
                    .integer(2), .text("978-2"), .text("CHILDREN OF DUNE"), .text("978-2: Children of Dune"),
                    .text("10.5"), .integer(1976), .text("Frank Herbert"),
                ],
                [
                    .integer(4), .text("978-4"), .text("KINDRED"), .text("978-4: Kindred"), .null, .integer(1979),
                    .text("Octavia E. Butler"),
                ],
                [
                    .integer(5), .text("978-5"), .text("ANONYMOUS NOTES"), .text("978-5: Anonymous Notes"), .text("1"),
                    .integer(2001), .null,
                ],
            ])
        // The loan of the filtered-out book loses its book instead of dangling.
        #expect(
            try rows(path, "SELECT ferry_pk, reader, book FROM Loan ORDER BY ferry_pk") == [
                [.integer(1), .text("ana"), .integer(1)], [.integer(2), .text("bo"), .null],
                [.integer(3), .text("cy"), .integer(5)],
            ])
        let metadata = try #require(try Store.metadata(at: path))
        #expect(metadata.modelVersion == "2")
        #expect(metadata.modelHash == LibraryModels.v2.versionHash)
        #expect(try rows(path, "PRAGMA foreign_key_check").isEmpty)
        // The original is kept as a backup, untouched.
        let backup = try #require(report.backup)
        #expect(try Store.metadata(at: backup)?.modelVersion == "1")
        #expect(try rows(backup, "SELECT count(*) FROM Book") == [[.integer(5)]])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter {
            $0.contains("ferry-migrating")
        }
        #expect(leftovers.isEmpty)
    }

    @Test("a failing step leaves the original store exactly as it was, and no scratch files")
    func failureLeavesOriginal() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("library.sqlite")
        try LibraryModels.makeStore(at: path)
        let before = try rows(path, "SELECT * FROM Book ORDER BY ferry_pk")
        // `name` is required, and a book without author would make an Author without name: the
        // mapping says every book makes one (no distinct), so the nil name fails.
        let migrator = Migrator(storePath: path, bundle: LibraryModels.bundle) { _, _ in
            var mapping = try LibraryModels.mapping()
            mapping.entities[0].distinct = nil
            return mapping
        }
        let error = try #require(throws: FerryError.self) { try migrator.run() }
        #expect(error.code == .migration)
        #expect(error.message.contains("Author"))
        #expect(error.notes.contains("nothing was changed: the original store is as it was"))
        #expect(try Store.metadata(at: path)?.modelVersion == "1")
        #expect(try rows(path, "SELECT * FROM Book ORDER BY ferry_pk") == before)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(
            files == ["library.sqlite", "library.sqlite.ferry-lock"],
            "the store and the writer lock file the migration took, nothing else")
    }

    @Test("an expression error names the expression and the source object")
    func expressionErrors() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("library.sqlite")
        try LibraryModels.makeStore(at: path)
        let migrator = Migrator(storePath: path, bundle: LibraryModels.bundle) { _, _ in
            var mapping = try LibraryModels.mapping()
            let book = try #require(mapping.entities.firstIndex { $0.name == "Book" })
            mapping.entities[book].attributes = mapping.entities[book].attributes.map {
                $0.destination == "year" ? .init(destination: "year", value: .expression("int($source.title)")) : $0
            }
            return mapping
        }
        let error = try #require(throws: FerryError.self) { try migrator.run() }
        #expect(error.message.contains("int($source.title)"))
        #expect(error.message.contains("Book 1"))
        #expect(try Store.metadata(at: path)?.modelVersion == "1")
    }

    @Test("a plan lists the steps and the records each reads, and changes nothing")
    func plan() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("library.sqlite")
        try LibraryModels.makeStore(at: path)
        let plan = try Migrator(storePath: path, bundle: LibraryModels.bundle) { _, _ in try LibraryModels.mapping() }
            .plan()
        #expect(plan.source.version == "1")
        #expect(plan.target.version == "2")
        #expect(plan.steps.count == 1)
        #expect(plan.counts == ["Book": 5, "Loan": 3])
        #expect(try Store.metadata(at: path)?.modelVersion == "1")
    }

    @Test("a store at the target version is left alone")
    func nothingToDo() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("library.sqlite")
        _ = try Store.open(at: path, model: LibraryModels.v2)
        let report = try Migrator(storePath: path, bundle: LibraryModels.bundle) { _, _ in try LibraryModels.mapping() }
            .run()
        #expect(report.steps.isEmpty)
        #expect(report.backup == nil)
    }

    @Test("rows still in the write-ahead log are migrated")
    func writeAheadLog() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("library.sqlite")
        try LibraryModels.makeStore(at: path)
        let writer = try Connection(path: path)
        _ = try writer.rows("PRAGMA journal_mode = WAL")
        try writer.execute("PRAGMA wal_autocheckpoint = 0")
        try writer.execute(
            "INSERT INTO Book (ferry_pk, isbn, title, authorName, year) VALUES (6, '978-6', 'Parable', 'Octavia E. Butler', 1993)"
        )
        #expect(((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int ?? 0) > 0)
        let report = try Migrator(storePath: path, bundle: LibraryModels.bundle) { _, _ in try LibraryModels.mapping() }
            .run()
        #expect(report.steps.count == 1)
        #expect(try rows(path, "SELECT isbn FROM Book WHERE ferry_pk = 6") == [[.text("978-6")]])
        #expect(try rows(path, "SELECT count(*) FROM Author WHERE name = 'Octavia E. Butler'") == [[.integer(1)]])
        _ = writer
    }
}

@Suite("Migration engine: checksums")
struct MigrationChecksumTests {
    @Test("copied attributes are proven unchanged; transformed ones are listed as not comparable")
    func checksums() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("library.sqlite")
        try LibraryModels.makeStore(at: path)
        var options = MigrationOptions()
        options.checksums = true
        let report = try Migrator(storePath: path, bundle: LibraryModels.bundle, options: options) { _, _ in
            var mapping = try LibraryModels.mapping()
            let book = try #require(mapping.entities.firstIndex { $0.name == "Book" })
            mapping.entities[book].filter = nil
            return mapping
        }.run()
        let book = try #require(report.steps[0].entities.first { $0.mapping == "Book" })
        #expect(book.unchanged == ["isbn", "title", "price"])
        #expect(book.notComparable == ["shout", "label", "year"])
        let loan = try #require(report.steps[0].entities.first { $0.mapping == "Loan" })
        #expect(loan.unchanged == ["reader"])
        let author = try #require(report.steps[0].entities.first { $0.mapping == "Author" })
        #expect(author.notComparable == ["name"])
    }
}
