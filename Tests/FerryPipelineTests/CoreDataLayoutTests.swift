import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

@Suite(
    "Core Data's store layout and value forms, on real Core Data stores",
    .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
struct CoreDataLayoutTests {
    static let revised = CoreDataSamples.root.appendingPathComponent("wibosco-CoreDataMigrationRevised")
    static let example = CoreDataSamples.root.appendingPathComponent("wibosco-CoreDataMigration-Example")

    /// A version of a sample's Xcode model.
    static func model(_ sample: URL, version: String) throws -> ObjectModel {
        let bundle = try ModelLoader().load(
            path: sample.appendingPathComponent(
                "CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"
            ).path)
        return try #require(bundle.version(version))
    }

    /// A copy of a sample store (never the original: opening a store may rewrite its files), opened
    /// with ferry's SQL functions, and its Core Data layout.
    static func open(
        _ sample: URL, store: String, model: ObjectModel, in directory: TemporaryDirectory
    ) throws -> (Connection, CoreDataLayout) {
        let source = sample.appendingPathComponent("CoreDataMigration-ExampleTests/Resources/SQLite/\(store)").path
        let copy = directory.file(store)
        try FileManager.default.copyItem(atPath: source, toPath: copy)
        let connection = try Connection(path: copy)
        try Store.configure(connection, busyTimeout: .seconds(5))
        return (connection, try CoreDataLayout.reading(connection, model: model))
    }

    static func fetch(
        _ request: FetchRequest, model: ObjectModel, layout: CoreDataLayout, on connection: Connection
    ) throws -> [[Value]] {
        let cursor = try FetchCursor(request, connection: connection, model: model, layout: layout)
        var rows: [[Value]] = []
        while let row = try cursor.next() { rows.append(row) }
        return rows
    }

    /// Milliseconds since 1970 of a Unix time in seconds with a fraction.
    static func millis(_ unix: Double) -> Int64 { Int64((unix * 1000).rounded()) }

    @Test("entity numbers follow Core Data's pre-order: roots by name, each followed by its sub-entities by name")
    func numbering() throws {
        func entity(
            _ name: String, parent: String? = nil, attributes: [String] = [],
            relationships: [RelationshipDescription] = []
        ) -> EntityDescription {
            var entity = EntityDescription(
                name: name, attributes: attributes.map { AttributeDescription(name: $0, type: .string) },
                relationships: relationships)
            entity.parent = parent
            return entity
        }
        // COREDATA.md §2.3: Book 1, GraphicNovel 2, Feedback 3, Page 4, Writer 5, Author 6.
        let model = ObjectModel(
            name: "Books", version: "1",
            entities: [
                entity("Writer"),
                entity(
                    "Page",
                    relationships: [RelationshipDescription(name: "book", destination: "Book", inverse: "pages")]),
                entity("Author", parent: "Writer"), entity("GraphicNovel", parent: "Book", attributes: ["artist"]),
                entity("Feedback", relationships: [RelationshipDescription(name: "author", destination: "Author")]),
                entity(
                    "Book", attributes: ["title"],
                    relationships: [
                        RelationshipDescription(name: "pages", destination: "Page", isToMany: true, inverse: "book")
                    ]),
            ])
        let layout = CoreDataLayout(model: model)
        #expect(
            layout.entityNumbers == ["Book": 1, "GraphicNovel": 2, "Feedback": 3, "Page": 4, "Writer": 5, "Author": 6])
        let novel = try #require(model.entity(named: "GraphicNovel"))
        let book = try #require(model.entity(named: "Book"))
        let author = try #require(model.entity(named: "Author"))
        let page = try #require(model.entity(named: "Page"))
        let feedback = try #require(model.entity(named: "Feedback"))
        #expect(layout.table(for: novel) == "ZBOOK")
        #expect(layout.table(for: author) == "ZWRITER")
        #expect(layout.entityFilter(for: book) == EntityFilter(column: "Z_ENT", values: [1, 2]))
        #expect(layout.entityFilter(for: novel) == EntityFilter(column: "Z_ENT", values: [2]))
        #expect(layout.entityFilter(for: page) == nil)
        #expect(layout.column(forAttribute: "artist", in: novel) == "ZARTIST")
        #expect(layout.keyColumn == "Z_PK")
        #expect(layout.versionColumn == "Z_OPT")
        #expect(layout.bookkeeping == nil)
        let pageBook = try #require(page.relationship(named: "book"))
        let bookPages = try #require(book.relationship(named: "pages"))
        #expect(layout.storage(of: pageBook, in: page, model: model) == .foreignKey(column: "ZBOOK"))
        // Book has a sub-entity: the key of a Page's book comes with the target's Z_ENT.
        #expect(layout.entityColumn(forForeignKeyOf: pageBook, in: page, model: model) == "Z1_BOOK")
        // Author has none (a sub-entity itself): the key only.
        #expect(
            layout.entityColumn(
                forForeignKeyOf: try #require(feedback.relationship(named: "author")), in: feedback, model: model)
                == nil)
        #expect(
            layout.storage(of: bookPages, in: book, model: model)
                == .inverseForeignKey(destinationTable: "ZPAGE", column: "ZBOOK"))
        #expect(layout.foreignKeyIndexName(entity: "Page", column: "ZBOOK") == "ZPAGE_ZBOOK_INDEX")
        #expect(layout.uniqueIndexName(entity: "Author", columns: ["alias"]) == "Z_Author_UNIQUE_alias")
    }

    @Test("the numbering agrees with Z_PRIMARYKEY in every real store")
    func numberingMatchesStores() throws {
        let directory = TemporaryDirectory()
        for (sample, store, version) in [
            (Self.revised, "CoreDataMigration_Example_1.sqlite", "CoreDataMigration_Example"),
            (Self.revised, "CoreDataMigration_Example_3.sqlite", "CoreDataMigration_Example 3"),
            (Self.example, "CoreDataMigration_Example_3.sqlite", "CoreDataMigration_Example 3"),
        ] {
            let model = try Self.model(sample, version: version)
            let (connection, layout) = try Self.open(sample, store: store, model: model, in: TemporaryDirectory())
            var recorded: [String: Int64] = [:]
            for row in try connection.rows("SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY WHERE Z_ENT < 16000") {
                recorded[try #require(row[0].text)] = row[1].int64
            }
            #expect(layout.entityNumbers == recorded, "\(store)")
            for entity in model.entities {
                let exists = try connection.scalar(layout.dialect.tableExistsQuery, [.text(layout.table(for: entity))])
                #expect(exists == .integer(1), "\(store): \(layout.table(for: entity))")
            }
        }
        _ = directory
    }

    @Test("reading a v3 store: the newest post with its date, color and two sections (EXPECTED.md)")
    func readRevisedStore() throws {
        let directory = TemporaryDirectory()
        let model = try Self.model(Self.revised, version: "CoreDataMigration_Example 3")
        let (connection, layout) = try Self.open(
            Self.revised, store: "CoreDataMigration_Example_3.sqlite", model: model, in: directory)
        let newest = try Self.fetch(
            FetchRequest(
                entity: "Post", sortDescriptors: [SortDescriptor("date", ascending: false)], limit: 1,
                properties: ["postID", "date", "hexColor"]),
            model: model, layout: layout, on: connection)
        #expect(
            newest == [
                [
                    .string("7BC43935-3209-404E-836A-06F3C6518CB1"),
                    .date(try #require(Timestamp(referenceSeconds: 569456815.200076))),
                    .string("BAEFB6"),
                ]
            ])
        // Sections through their to-one key (a predicate over the relationship), sorted by index.
        let sections = try Self.fetch(
            FetchRequest(
                entity: "Section",
                predicate: try Predicate(format: "post.postID == '7BC43935-3209-404E-836A-06F3C6518CB1'"),
                sortDescriptors: [SortDescriptor("index")], properties: ["index", "title", "post.postID"]),
            model: model, layout: layout, on: connection)
        #expect(sections.count == 2)
        #expect(sections.first?.prefix(2) == [.integer(0), .string("This post will have 2 sections")])
        #expect(sections.allSatisfy { $0[2] == .string("7BC43935-3209-404E-836A-06F3C6518CB1") })
        // The to-many side is the inverse's key: posts with two sections or more.
        let postsWithTwo = try Self.fetch(
            FetchRequest(
                entity: "Post", predicate: try Predicate(format: "sections.@count >= 2"), properties: ["postID"]),
            model: model, layout: layout, on: connection)
        #expect(postsWithTwo.contains([.string("7BC43935-3209-404E-836A-06F3C6518CB1")]))
        let report = Verifier(model: model).run(
            [
                .count(entity: "Post", expectation: .exactly(12)), .count(entity: "Section", expectation: .exactly(14)),
                .relationships(entity: "Section"), .integrity(quick: false),
            ],
            on: connection, layout: layout)
        #expect(report.allSatisfy { $0.outcome == .passed }, "\(report.map { "\($0.name): \($0.message)" })")
    }

    @Test("reading a v1 store: the post with the greatest postID (EXPECTED.md)")
    func readFirstStore() throws {
        let directory = TemporaryDirectory()
        let model = try Self.model(Self.revised, version: "CoreDataMigration_Example")
        let (connection, layout) = try Self.open(
            Self.revised, store: "CoreDataMigration_Example_1.sqlite", model: model, in: directory)
        let rows = try Self.fetch(
            FetchRequest(
                entity: "Post", sortDescriptors: [SortDescriptor("postID", ascending: false)],
                properties: ["postID", "date", "color", "content"]),
            model: model, layout: layout, on: connection)
        #expect(rows.count == 10)
        #expect(
            rows.first == [
                .string("FFFECB21-6645-4FDD-B8B0-B960D0E61F5A"),
                .date(try #require(Timestamp(referenceSeconds: 569186950.058821))),
                .string("1BB732"), .string("Test body"),
            ])
        // A date in a predicate is compared in the store's own form (seconds since 2001).
        let later = try Self.fetch(
            FetchRequest(
                entity: "Post", predicate: try Predicate(format: "date >= '2019-01-14T19:29:10.058Z'"),
                properties: ["postID"]),
            model: model, layout: layout, on: connection)
        let all = try Self.fetch(
            FetchRequest(entity: "Post", properties: ["date"]), model: model, layout: layout, on: connection)
        let expected = all.filter {
            if case .date(let instant) = $0[0] {
                instant >= Timestamp(milliseconds: Self.millis(1547494150.058))
            } else {
                false
            }
        }.count
        #expect(later.count == expected)
        #expect(later.count > 0)
    }

    @Test("a one-to-one keeps a key on both sides; both are followed, and verify finds them consistent")
    func oneToOne() throws {
        let directory = TemporaryDirectory()
        let model = try Self.model(Self.example, version: "CoreDataMigration_Example 3")
        let (connection, layout) = try Self.open(
            Self.example, store: "CoreDataMigration_Example_3.sqlite", model: model, in: directory)
        let post = try #require(model.entity(named: "Post"))
        let color = try #require(model.entity(named: "Color"))
        #expect(
            layout.storage(of: try #require(post.relationship(named: "color")), in: post, model: model)
                == .foreignKey(column: "ZCOLOR"))
        #expect(
            layout.storage(of: try #require(color.relationship(named: "post")), in: color, model: model)
                == .foreignKey(column: "ZPOST"))
        let joined = try Self.fetch(
            FetchRequest(
                entity: "Post", predicate: try Predicate(format: "color.hex == 'FA31AC'"),
                properties: ["postID", "color.hex", "color.post.postID"]),
            model: model, layout: layout, on: connection)
        #expect(joined.count >= 1)
        #expect(joined.allSatisfy { $0[1] == .string("FA31AC") && $0[2] == $0[0] })
        let report = Verifier(model: model).run(
            [
                .count(entity: "Post", expectation: .exactly(7995)), .relationships(entity: "Post"),
                .relationships(entity: "Color"),
            ],
            on: connection, layout: layout)
        #expect(report.allSatisfy { $0.outcome == .passed }, "\(report.map { "\($0.name): \($0.message)" })")
    }

    @Test("a many-to-many join table is found by its column names, whatever it is called")
    func joinTableDiscovery() throws {
        let model = ObjectModel(
            name: "Notes", version: "1",
            entities: [
                EntityDescription(
                    name: "Note", attributes: [AttributeDescription(name: "text", type: .string)],
                    relationships: [
                        RelationshipDescription(name: "tags", destination: "Tag", isToMany: true, inverse: "notes")
                    ]),
                EntityDescription(
                    name: "Tag", attributes: [AttributeDescription(name: "name", type: .string)],
                    relationships: [
                        RelationshipDescription(name: "notes", destination: "Note", isToMany: true, inverse: "tags")
                    ]),
            ])
        let connection = try Connection(path: ":memory:")
        try Store.configure(connection, busyTimeout: .seconds(5))
        // Note is entity 1, Tag 2: Z_1NOTES holds Note keys, Z_2TAGS Tag keys; the table is named
        // from the Tag side here, which the naming rule alone would not guess.
        try connection.executeScript(
            """
            CREATE TABLE ZNOTE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTEXT VARCHAR );
            CREATE TABLE ZTAG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
            CREATE TABLE Z_2NOTES ( Z_1NOTES INTEGER, Z_2TAGS INTEGER, PRIMARY KEY (Z_1NOTES, Z_2TAGS) );
            INSERT INTO ZNOTE VALUES (1, 1, 1, 'groceries'), (2, 1, 1, 'holiday'), (3, 1, 1, 'untagged');
            INSERT INTO ZTAG VALUES (1, 2, 1, 'home'), (2, 2, 1, 'travel');
            INSERT INTO Z_2NOTES VALUES (1, 1), (2, 1), (2, 2);
            """)
        let layout = try CoreDataLayout.reading(connection, model: model)
        let note = try #require(model.entity(named: "Note"))
        let tag = try #require(model.entity(named: "Tag"))
        #expect(
            layout.storage(of: try #require(note.relationship(named: "tags")), in: note, model: model)
                == .joinTable(table: "Z_2NOTES", sourceColumn: "Z_1NOTES", targetColumn: "Z_2TAGS"))
        #expect(
            layout.storage(of: try #require(tag.relationship(named: "notes")), in: tag, model: model)
                == .joinTable(table: "Z_2NOTES", sourceColumn: "Z_2TAGS", targetColumn: "Z_1NOTES"))
        let travelling = try Self.fetch(
            FetchRequest(
                entity: "Note", predicate: try Predicate(format: "ANY tags.name == 'travel'"), properties: ["text"]),
            model: model, layout: layout, on: connection)
        #expect(travelling == [[.string("holiday")]])
        let busy = try Self.fetch(
            FetchRequest(entity: "Tag", predicate: try Predicate(format: "notes.@count == 2"), properties: ["name"]),
            model: model, layout: layout, on: connection)
        #expect(busy == [[.string("home")]])
        // Without the table in the store, the layout falls back to the name the rule gives.
        #expect(
            CoreDataLayout(model: model).storage(
                of: try #require(note.relationship(named: "tags")), in: note, model: model)
                == .joinTable(table: "Z_1TAGS", sourceColumn: "Z_1NOTES", targetColumn: "Z_2TAGS"))
    }

    @Test("Core Data's value forms: dates since 2001, UUID blobs, decimals as doubles, booleans as integers")
    func valueForms() throws {
        let coding = CoreDataValueCoding()
        // EXPECTED.md: ZDATE 569186950.058821 is Unix 1547494150.058821.
        let decoded = coding.decode(.real(569186950.058821), as: .date)
        #expect(decoded == .date(try #require(Timestamp(referenceSeconds: 569186950.058821))))
        let instant = try #require(Timestamp(referenceSeconds: 569186950.058821))
        #expect(instant.milliseconds == 1_547_494_150_058)
        #expect(instant.description == "2019-01-14T19:29:10.058821Z")
        #expect(coding.encode(decoded) == .real(569186950.058821))
        #expect(coding.encode(.date(1_547_494_150_059)) == .real(569186950.059))
        #expect(coding.decode(.real(569186950.059), as: .date) == .date(1_547_494_150_059))
        #expect(coding.decode(.real(0), as: .date) == .date(978_307_200_000))
        let uuid = "7bc43935-3209-404e-836a-06f3c6518cb1"
        let bytes: [UInt8] = [
            0x7b, 0xc4, 0x39, 0x35, 0x32, 0x09, 0x40, 0x4e, 0x83, 0x6a, 0x06, 0xf3, 0xc6, 0x51, 0x8c, 0xb1,
        ]
        #expect(coding.encode(.uuid(uuid)) == .blob(bytes))
        #expect(coding.encode(.uuid(uuid.uppercased())) == .blob(bytes))
        #expect(coding.decode(.blob(bytes), as: .uuid) == .uuid(uuid))
        #expect(coding.decode(.blob([1, 2, 3]), as: .uuid) == .binary([1, 2, 3]))
        #expect(coding.encode(.uuid("not a uuid")) == .text("not a uuid"))
        #expect(coding.encode(.decimal("12.5")) == .real(12.5))
        #expect(coding.decode(.real(12.5), as: .decimal) == .decimal("12.5"))
        #expect(coding.encode(.bool(true)) == .integer(1))
        #expect(coding.decode(.integer(0), as: .bool) == .bool(false))
        #expect(coding.decode(.null, as: .date) == .null)
        #expect(
            AttributeType.allCases.map(coding.storageClass)
                == AttributeType.allCases.map { type in
                    switch type {
                    case .int16, .int32, .int64, .bool: DatabaseValue.StorageClass.integer
                    case .double, .float, .decimal, .date: .real
                    case .string, .uri, .json: .text
                    case .uuid, .binary: .blob
                    }
                })
        // Bound values are the encoded ones.
        let connection = try Connection(path: ":memory:")
        let statement = try connection.prepare("SELECT ?, ?, ?")
        try coding.bind(.date(978_307_200_000), to: statement, at: 1)
        try coding.bind(.uuid(uuid), to: statement, at: 2)
        try coding.bind(.null, to: statement, at: 3)
        #expect(try statement.step())
        #expect(statement.value(at: 0) == .real(0))
        #expect(statement.value(at: 1) == .blob(bytes))
        #expect(statement.value(at: 2) == .null)
    }

    /// Book (1) with sub-entities Comic (2) and Novel (3) in `ZBOOK`, Page (4) → Novel: a Plain
    /// book, Comic A, Novel A (pages 1 and 2) and Novel B; page 5 points at Comic A's key.
    static func sharedTableStore() throws -> (Connection, ObjectModel, CoreDataLayout) {
        var novel = EntityDescription(
            name: "Novel", attributes: [AttributeDescription(name: "artist", type: .string)],
            relationships: [
                RelationshipDescription(name: "pages", destination: "Page", isToMany: true, inverse: "novel")
            ])
        novel.parent = "Book"
        var comic = EntityDescription(name: "Comic")
        comic.parent = "Book"
        let model = ObjectModel(
            name: "Books", version: "1",
            entities: [
                EntityDescription(name: "Book", attributes: [AttributeDescription(name: "title", type: .string)]),
                comic, novel,
                EntityDescription(
                    name: "Page", attributes: [AttributeDescription(name: "number", type: .int32)],
                    relationships: [RelationshipDescription(name: "novel", destination: "Novel", inverse: "pages")]),
            ]
        ).withInheritedProperties
        let connection = try Connection(path: ":memory:")
        try Store.configure(connection, busyTimeout: .seconds(5))
        try connection.executeScript(
            """
            CREATE TABLE ZBOOK (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR, ZARTIST VARCHAR);
            CREATE TABLE ZPAGE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNUMBER INTEGER, ZNOVEL INTEGER);
            INSERT INTO ZBOOK VALUES (1, 1, 1, 'Plain', NULL), (2, 2, 1, 'Comic A', NULL), (3, 3, 1, 'Novel A', 'Ann'), (4, 3, 1, 'Novel B', 'Bo');
            INSERT INTO ZPAGE VALUES (1, 4, 1, 1, 3), (2, 4, 1, 2, 3), (3, 4, 1, 5, 2);
            """)
        return (connection, model, try CoreDataLayout.reading(connection, model: model))
    }

    @Test(
        "a shared table: each entity reads its own and its sub-entities' rows, never a sibling's, in fetches, key paths, predicates and checks"
    )
    func sharedTableRows() throws {
        let (connection, model, layout) = try Self.sharedTableStore()
        #expect(layout.entityNumbers == ["Book": 1, "Comic": 2, "Novel": 3, "Page": 4])
        func titles(_ entity: String, _ predicate: String? = nil) throws -> [Value] {
            let request = FetchRequest(
                entity: entity, predicate: try predicate.map { try Predicate(format: $0) }, properties: ["title"])
            return try Self.fetch(request, model: model, layout: layout, on: connection).map { $0[0] }
        }
        #expect(try titles("Book") == [.string("Plain"), .string("Comic A"), .string("Novel A"), .string("Novel B")])
        #expect(
            try titles("Novel") == [.string("Novel A"), .string("Novel B")],
            "a sub-entity reads its inherited title, and only its rows")
        #expect(try titles("Comic") == [.string("Comic A")])
        // Page 5 points at a Comic's key: through `novel` it has none.
        let pages = try Self.fetch(
            FetchRequest(entity: "Page", properties: ["number", "novel.title"]), model: model, layout: layout,
            on: connection)
        #expect(
            pages == [[.integer(1), .string("Novel A")], [.integer(2), .string("Novel A")], [.integer(5), .null]])
        #expect(try titles("Novel", "ANY pages.number > 1") == [.string("Novel A")])
        #expect(try titles("Novel", "pages.@count == 0") == [.string("Novel B")])
        let comicPages = try Self.fetch(
            FetchRequest(
                entity: "Page", predicate: try Predicate(format: "novel.title BEGINSWITH 'Comic'"),
                properties: ["number"]),
            model: model, layout: layout, on: connection)
        #expect(comicPages.isEmpty)
        let report = Verifier(model: model).run(
            [
                .count(entity: "Book", expectation: .exactly(4)), .count(entity: "Novel", expectation: .exactly(2)),
                .count(entity: "Comic", expectation: .exactly(1)),
                .relationships(entity: "Page"),
            ],
            on: connection, layout: layout)
        #expect(report.prefix(3).allSatisfy { $0.outcome == .passed }, "\(report.map { "\($0.name): \($0.message)" })")
        let relationship = try #require(report.last)
        #expect(relationship.outcome == .failed)
        #expect(relationship.message == "1 link to a missing Novel", "\(relationship.message)")
        #expect(relationship.offending.map(\.primaryKey) == [3])
    }

    @Test(
        "withInheritedProperties: a sub-entity lists its ancestors' properties and constraints, root first, then its own; parents are kept"
    )
    func inheritedProperties() throws {
        let (_, model, _) = try Self.sharedTableStore()
        let novel = try #require(model.entity(named: "Novel"))
        #expect(novel.attributes.map(\.name) == ["title", "artist"])
        #expect(novel.parent == "Book")
        #expect(try #require(model.entity(named: "Comic")).attributes.map(\.name) == ["title"])
        #expect(try #require(model.entity(named: "Book")).attributes.map(\.name) == ["title"])
        let root = EntityDescription(
            name: "Item", attributes: [AttributeDescription(name: "code", type: .string)],
            uniquenessConstraints: [["code"]])
        var leaf = EntityDescription(name: "Part", attributes: [AttributeDescription(name: "code", type: .int64)])
        leaf.parent = "Item"
        let expanded = ObjectModel(name: "M", version: "1", entities: [root, leaf]).withInheritedProperties
        let part = try #require(expanded.entity(named: "Part"))
        #expect(
            part.attributes.map(\.type) == [.int64], "a property the sub-entity declares itself is kept as declared")
        #expect(part.uniquenessConstraints == [["code"]])
        #expect(part.uniquenessConstraintLocations.count == 1)
    }
}
