import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// A second layout, to prove that every SQL generator takes its names and value forms from the
/// layout it is given: tables `T_<Entity>`, columns `C_<attribute>`, key `PK`, foreign keys
/// `FK_<relationship>`, join tables `J_…` with columns `SRC`/`DST`, bookkeeping tables
/// `META`/`ENT`/`RUNS`, and dates stored as integer milliseconds (``MillisecondDates``).
struct RenamedLayout: StoreLayout {
    private let ferry = FerryLayout()

    var valueCoding: any ValueCoding { MillisecondDates() }
    var dialect: any SQLDialect { SQLiteDialect() }
    var keyColumn: String { "PK" }
    var versionColumn: String? { nil }
    var bookkeeping: BookkeepingTables? { BookkeepingTables(metadata: "META", entities: "ENT", runs: "RUNS") }

    func table(for entity: EntityDescription) -> String { table(forEntityNamed: entity.name) }
    func table(forEntityNamed name: String) -> String { "T_" + name }
    func entityFilter(for entity: EntityDescription) -> EntityFilter? { nil }
    func column(forAttribute attribute: String, in entity: EntityDescription) -> String { "C_" + attribute }

    func storage(
        of relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
    ) -> RelationshipStorage {
        switch ferry.storage(of: relationship, in: entity, model: model) {
        case .foreignKey(let column):
            return .foreignKey(column: "FK_" + column)
        case .inverseForeignKey(let table, let column):
            return .inverseForeignKey(destinationTable: "T_" + table, column: "FK_" + column)
        case .joinTable(let table, let source, let target):
            func renamed(_ column: String) -> String { column == FerryLayout.linkSourceColumn ? "SRC" : "DST" }
            return .joinTable(table: "J_" + table, sourceColumn: renamed(source), targetColumn: renamed(target))
        }
    }

    func uniqueIndexName(entity: String, columns: [String]) -> String {
        "U_\(entity)_\(columns.joined(separator: "_"))"
    }
    func indexName(entity: String, index: IndexDescription) -> String {
        "I_\(entity)_\(index.attributes.joined(separator: "_"))"
    }
    func foreignKeyIndexName(entity: String, column: String) -> String { "F_\(entity)_\(column)" }
    func joinTargetIndexName(table: String) -> String { table + "_DST" }
    func checkRepresentable(_ model: ObjectModel) throws { try ferry.checkRepresentable(model) }
}

/// ferry's value forms, except dates: integer milliseconds since 1970.
struct MillisecondDates: ValueCoding {
    private let ferry = FerryValueCoding()
    var name: String { "test-millisecond-dates" }

    func storageClass(for type: AttributeType) -> DatabaseValue.StorageClass {
        type == .date ? .integer : ferry.storageClass(for: type)
    }

    func encode(_ value: Value) -> DatabaseValue {
        if case .date(let instant) = value { return .integer(instant.milliseconds) }
        return ferry.encode(value)
    }

    func bind(_ value: Value, to statement: Statement, at index: Int) throws {
        if case .date(let instant) = value { return try statement.bind(instant.milliseconds, at: index) }
        try ferry.bind(value, to: statement, at: index)
    }

    func decode(_ value: DatabaseValue, as type: AttributeType) -> Value {
        if type == .date, case .integer(let millis) = value { return .date(millis) }
        return ferry.decode(value, as: type)
    }
}

@Suite("The store seam: layouts, value codings, the SQL dialect and the run log")
struct StoreSeamTests {
    static let model = SampleModels.shop()
    static let layout = RenamedLayout()
    static let january = DateCoding.parseISO8601("2024-01-15T10:00:00.000Z")!
    static let march = DateCoding.parseISO8601("2024-03-01T08:30:00.000Z")!

    /// A database laid out by ``RenamedLayout`` with three customers and four orders.
    static func renamedStore(in directory: TemporaryDirectory) throws -> Connection {
        let connection = try Connection(path: directory.file("renamed.sqlite"))
        try Store.configure(connection, busyTimeout: .seconds(5))
        try connection.transaction(.immediate) {
            try Store.createSchema(for: model, on: connection, layout: layout)
            let customers = try BatchInserter(
                connection: connection, model: model, layout: layout, entity: "Customer",
                columns: [.attribute("id"), .attribute("email"), .attribute("name"), .attribute("joined")])
            let rows: [[Value]] = [
                [.integer(1), .string("ann@example.org"), .string("Ann"), .date(january)],
                [.integer(2), .string("bob@example.com"), .string("Bob"), .date(march)],
                [.integer(3), .string("cy@example.org"), .null, .null],
            ]
            for row in rows { #expect(try customers.insert(row) == .inserted) }
            let resolver = try ReferenceResolver(
                connection: connection, model: model, layout: layout, entity: "Order", relationship: "customer",
                match: "id")
            let orders = try BatchInserter(
                connection: connection, model: model, layout: layout, entity: "Order",
                columns: [.attribute("number"), .attribute("total"), .relationship("customer")])
            for (number, total, customer) in [
                ("A-1", "10.50", 1), ("A-2", "3", 1), ("B-1", "99.99", 2), ("C-1", "1", 3),
            ] {
                let key = try #require(try resolver.resolve(.integer(Int64(customer))))
                #expect(try orders.insert([.string(number), .decimal(total), .integer(key)]) == .inserted)
            }
        }
        return connection
    }

    @Test("a store in another layout gets that layout's tables, columns, indexes and value forms")
    func schemaAndValueForms() throws {
        let directory = TemporaryDirectory()
        let connection = try Self.renamedStore(in: directory)
        let tables = try connection.rows("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").compactMap
        { $0.first?.text }
        #expect(tables == ["ENT", "META", "RUNS", "T_Customer", "T_Order"])
        let indexes = Set(
            try connection.rows("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL").compactMap {
                $0.first?.text
            })
        #expect(indexes == ["U_Customer_id", "U_Customer_email", "U_Order_number", "F_Order_FK_customer"])
        let columns = try connection.rows("SELECT name FROM pragma_table_info('T_Order') ORDER BY cid").compactMap {
            $0.first?.text
        }
        #expect(columns == ["PK", "C_number", "C_total", "FK_customer"])
        // Dates in the layout's form: integers, not ferry's ISO-8601 text.
        let joined = try connection.rows(#"SELECT typeof("C_joined"), "C_joined" FROM "T_Customer" ORDER BY "PK""#)
        #expect(
            joined == [
                [.text("integer"), .integer(Self.january)], [.text("integer"), .integer(Self.march)],
                [.text("null"), .null],
            ])
        // ferry's metadata went into the layout's bookkeeping tables.
        let metadata = try #require(try StoreMetadata.read(from: connection, layout: Self.layout))
        #expect(metadata.modelHash == Self.model.versionHash)
        #expect(try StoreMetadata.read(from: connection, layout: FerryLayout()) == nil)
    }

    @Test("fetches, predicates and sorting read the other layout's names and decode its values")
    func fetches() throws {
        let directory = TemporaryDirectory()
        let connection = try Self.renamedStore(in: directory)
        let request = FetchRequest(
            entity: "Customer", predicate: try Predicate(format: "joined >= '2024-01-01' AND ANY orders.total > 5"),
            sortDescriptors: [SortDescriptor("joined", ascending: false)], properties: ["email", "joined"])
        let cursor = try FetchCursor(request, connection: connection, model: Self.model, layout: Self.layout)
        var rows: [[Value]] = []
        while let row = try cursor.next() { rows.append(row) }
        #expect(
            rows == [
                [.string("bob@example.com"), .date(Self.march)], [.string("ann@example.org"), .date(Self.january)],
            ])

        let orders = FetchRequest(
            entity: "Order", predicate: try Predicate(format: "customer.email ENDSWITH '.org'"),
            sortDescriptors: [SortDescriptor("number")],
            properties: ["number", "customer", "customer.name"])
        let orderCursor = try FetchCursor(orders, connection: connection, model: Self.model, layout: Self.layout)
        var orderRows: [[Value]] = []
        while let row = try orderCursor.next() { orderRows.append(row) }
        #expect(
            orderRows == [
                [.string("A-1"), .integer(1), .string("Ann")], [.string("A-2"), .integer(1), .string("Ann")],
                [.string("C-1"), .integer(3), .null],
            ])
    }

    @Test("batch updates and deletes (with cascades) work on the other layout's tables")
    func updatesAndDeletes() throws {
        let directory = TemporaryDirectory()
        let connection = try Self.renamedStore(in: directory)
        let update = BatchUpdateRequest(
            entity: "Customer", predicate: try Predicate(format: "email ENDSWITH '.org'"),
            propertiesToUpdate: [
                "joined": .constant(.date(Self.march)),
                "age": .expression(try Expression.parse("id + 40", bareNamesAreAttributes: true)),
            ])
        let updated = try connection.transaction(.immediate) {
            try update.plan(model: Self.model, layout: Self.layout).run(on: connection)
        }
        #expect(updated.updated == 2)
        #expect(
            try connection.rows(#"SELECT "C_age", "C_joined" FROM "T_Customer" ORDER BY "PK""#) == [
                [.integer(41), .integer(Self.march)], [.null, .integer(Self.march)],
                [.integer(43), .integer(Self.march)],
            ])

        let delete = BatchDeleteRequest(entity: "Customer", predicate: try Predicate(format: "id == 1"))
        let deleted = try connection.transaction(.immediate) {
            try BatchDeleter(request: delete, model: Self.model, layout: Self.layout).run(on: connection)
        }
        #expect(deleted.deleted == ["Customer": 1, "Order": 2])
        #expect(
            try connection.rows(#"SELECT "C_number" FROM "T_Order" ORDER BY "C_number""#) == [
                [.text("B-1")], [.text("C-1")],
            ])
    }

    @Test("verification checks the other layout's tables, and finds a dangling key in them")
    func verification() throws {
        let directory = TemporaryDirectory()
        let connection = try Self.renamedStore(in: directory)
        let checks: [Check] = [
            .integrity(quick: false), .foreignKeys(entity: nil), .uniqueness(entity: "Customer"),
            .uniqueness(entity: "Order"),
            .required(entity: "Order"), .validationRules(entity: "Customer"), .relationships(entity: "Order"),
            .count(entity: "Order", expectation: .exactly(4)), .modelHash(expected: Self.model),
            .assertion(
                PredicateAssertion(entity: "Customer", predicate: "joined < '2024-02-01'", expectation: .exactly(1))),
        ]
        let passing = Verifier(model: Self.model).run(checks, on: connection, layout: Self.layout)
        #expect(
            passing.allSatisfy { $0.outcome == .passed },
            "\(passing.filter { $0.outcome != .passed }.map { "\($0.name): \($0.message)" })")

        try connection.execute("PRAGMA foreign_keys = OFF")
        try connection.execute(#"UPDATE "T_Order" SET "FK_customer" = 99 WHERE "C_number" = 'B-1'"#)
        let failing = Verifier(model: Self.model).run(
            [.relationships(entity: "Order")], on: connection, layout: Self.layout)
        let result = try #require(failing.first)
        #expect(result.outcome == .failed)
        #expect(result.message == "1 link to a missing Customer")
        #expect(result.offending.map(\.keyValue) == ["B-1"])
    }

    @Test("checksums compare typed values, so two layouts holding the same values agree")
    func checksumsAcrossLayouts() throws {
        let directory = TemporaryDirectory()
        let renamed = try Self.renamedStore(in: directory)
        let store = try Store.open(at: directory.file("ferry.sqlite"), model: Self.model)
        try store.write { connection in
            let customers = try BatchInserter(
                connection: connection, model: Self.model, layout: store.layout, entity: "Customer",
                columns: [.attribute("id"), .attribute("email"), .attribute("name"), .attribute("joined")])
            _ = try customers.insert([.integer(1), .string("ann@example.org"), .string("Ann"), .date(Self.january)])
            _ = try customers.insert([.integer(2), .string("bob@example.com"), .string("Bob"), .date(Self.march)])
            _ = try customers.insert([.integer(3), .string("cy@example.org"), .null, .null])
        }
        let attributes = ["id", "email", "name", "joined"]
        let ferry = try EntityChecksum.compute(store: store, entity: "Customer", attributes: attributes)
        let other = try EntityChecksum.compute(
            connection: renamed, model: Self.model, layout: Self.layout, entity: "Customer", attributes: attributes)
        #expect(ferry.matches(other))
        #expect(ferry.rows == 3)
    }

    // MARK: - Run log

    @Test("the run log records runs and lists the latest first, with a limit or all of them")
    func runLog() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(at: directory.file("shop.sqlite"), model: Self.model)
        let first = RunRecord(
            job: "nightly", stepIndex: 1, step: "import", entity: "Customer", source: "customers.csv",
            startedAt: "2024-01-01T00:00:00.000Z",
            endedAt: "2024-01-01T00:00:01.000Z", outcome: "succeeded", read: 10, inserted: 8, updated: 1, skipped: 0,
            rejected: 1)
        let second = RunRecord(
            job: "nightly", stepIndex: 2, step: "delete", entity: "Order", startedAt: "2024-01-01T00:00:02.000Z",
            outcome: "failed", message: "boom")
        try store.write { connection in
            let log = try #require(RunLog(on: connection, layout: store.layout))
            try log.record(first)
            try log.record(second)
        }
        let (all, latest, none) = try store.read { connection in
            let log = try #require(RunLog(on: connection, layout: store.layout))
            return (try log.recent(limit: nil), try log.recent(limit: 1), try log.recent(limit: 0))
        }
        var expectedFirst = first
        var expectedSecond = second
        expectedFirst.id = 1
        expectedSecond.id = 2
        #expect(all == [expectedSecond, expectedFirst])
        #expect(latest == [expectedSecond])
        #expect(none.isEmpty)
    }

    @Test("the run log copies into another store's log on the same connection, oldest first")
    func runLogCopy() throws {
        let directory = TemporaryDirectory()
        let source = try Self.renamedStore(in: directory)
        let sourceLog = try #require(RunLog(on: source, layout: Self.layout))
        for number in 1...3 {
            try sourceLog.record(
                RunRecord(
                    job: "job \(number)", step: "import", startedAt: "2024-01-0\(number)T00:00:00.000Z",
                    outcome: "succeeded", read: number))
        }
        let other = try Connection(path: directory.file("other.sqlite"))
        try other.execute(RunLog.createStatement(table: "RUNS", dialect: SQLiteDialect()))
        try source.execute("ATTACH DATABASE ? AS copy", [.text(directory.file("other.sqlite"))])
        let destination = try #require(RunLog(on: source, layout: Self.layout, schema: "copy"))
        try destination.copy(from: try #require(RunLog(on: source, layout: Self.layout, schema: "main")))
        #expect(try destination.recent(limit: nil).map(\.job) == ["job 3", "job 2", "job 1"])
        #expect(try destination.recent(limit: nil).map(\.read) == [3, 2, 1])
    }

    @Test("a layout without bookkeeping tables has no run log and no ferry metadata")
    func noBookkeeping() throws {
        struct Bare: StoreLayout {
            let base = RenamedLayout()
            var valueCoding: any ValueCoding { base.valueCoding }
            var dialect: any SQLDialect { base.dialect }
            var keyColumn: String { base.keyColumn }
            var versionColumn: String? { "OPT" }
            var bookkeeping: BookkeepingTables? { nil }
            func table(for entity: EntityDescription) -> String { base.table(for: entity) }
            func table(forEntityNamed name: String) -> String { base.table(forEntityNamed: name) }
            func entityFilter(for entity: EntityDescription) -> EntityFilter? {
                EntityFilter(column: "ENT", values: [3, 4])
            }
            func column(forAttribute attribute: String, in entity: EntityDescription) -> String {
                base.column(forAttribute: attribute, in: entity)
            }
            func storage(
                of relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
            ) -> RelationshipStorage {
                base.storage(of: relationship, in: entity, model: model)
            }
            func uniqueIndexName(entity: String, columns: [String]) -> String {
                base.uniqueIndexName(entity: entity, columns: columns)
            }
            func indexName(entity: String, index: IndexDescription) -> String {
                base.indexName(entity: entity, index: index)
            }
            func foreignKeyIndexName(entity: String, column: String) -> String {
                base.foreignKeyIndexName(entity: entity, column: column)
            }
            func joinTargetIndexName(table: String) -> String { base.joinTargetIndexName(table: table) }
            func checkRepresentable(_ model: ObjectModel) throws {}
        }
        let connection = try Connection(path: ":memory:")
        #expect(RunLog(on: connection, layout: Bare()) == nil)
        #expect(try StoreMetadata.read(from: connection, layout: Bare()) == nil)
        #expect(StoreSchema.bookkeepingTables(in: Bare()).isEmpty)
        let customer = try #require(Self.model.entity(named: "Customer"))
        #expect(Bare().entityFilterClause(for: customer, alias: "t0") == #" WHERE t0."ENT" IN (3, 4)"#)
        #expect(FerryLayout().entityFilterClause(for: customer, alias: "t0") == "")
        #expect(throws: FerryError.self) {
            try StoreMetadata.write(for: Self.model, to: connection, layout: Bare(), createdAt: "now")
        }
    }

    // MARK: - SQLite dialect

    @Test("every literal the dialect writes reads back as the same value in SQLite")
    func literalsRoundTrip() throws {
        let dialect = SQLiteDialect()
        let connection = try Connection(path: ":memory:")
        let values: [DatabaseValue] = [
            .null, .integer(0), .integer(Int64.min), .integer(Int64.max), .real(1.5), .real(-0.25), .real(.infinity),
            .real(-.infinity),
            .text(""), .text("it's \"quoted\""), .text("nul\u{0}inside"), .text("é 🙂"), .blob([]),
            .blob([0, 1, 0xfe, 0xff]),
        ]
        for value in values {
            let read = try connection.scalar("SELECT \(dialect.literal(value))")
            #expect(read == value, "literal \(dialect.literal(value))")
        }
        // The literal works as a column default, where SQLite needs an expression in parentheses.
        try connection.execute("CREATE TABLE t (a TEXT DEFAULT \(dialect.literal(.text("x\u{0}y"))), b INTEGER)")
        try connection.execute("INSERT INTO t (b) VALUES (1)")
        #expect(try connection.scalar("SELECT a FROM t") == .text("x\u{0}y"))
    }

    @Test("INSERT with conflict actions: fail, ignore, update, from VALUES and from SELECT")
    func insertConflictActions() throws {
        let dialect = SQLiteDialect()
        let connection = try Connection(path: ":memory:")
        try connection.execute("CREATE TABLE kv (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
        try connection.execute("CREATE TABLE source (k TEXT, v TEXT)")
        try connection.execute("INSERT INTO source VALUES ('a', 'from select'), ('c', 'new')")
        let insert = dialect.insert(into: "kv", columns: ["key", "value"], values: "VALUES (?, ?)", onConflict: .fail)
        try connection.execute(insert, [.text("a"), .text("1")])
        #expect(throws: FerryError.self) { try connection.execute(insert, [.text("a"), .text("2")]) }
        try connection.execute(
            dialect.insert(into: "kv", columns: ["key", "value"], values: "VALUES (?, ?)", onConflict: .ignore),
            [.text("a"), .text("3")])
        #expect(try connection.scalar("SELECT value FROM kv WHERE key = 'a'") == .text("1"))
        let upsert = dialect.insert(
            into: "kv", columns: ["key", "value"], values: "VALUES (?, ?)",
            onConflict: .update(key: ["key"], columns: ["value"]))
        try connection.execute(upsert, [.text("a"), .text("4")])
        try connection.execute(upsert, [.text("b"), .text("5")])
        #expect(
            try connection.rows("SELECT key, value FROM kv ORDER BY key") == [
                [.text("a"), .text("4")], [.text("b"), .text("5")],
            ])
        // From a SELECT without WHERE: the dialect adds one, or SQLite would read ON as a join's.
        try connection.execute(
            dialect.insert(
                into: "kv", columns: ["key", "value"], values: "SELECT k, v FROM source", onConflict: .ignore))
        try connection.execute(
            dialect.insert(
                into: "kv", columns: ["key", "value"], values: "SELECT k, v FROM source",
                onConflict: .update(key: ["key"], columns: ["value"])))
        #expect(
            try connection.rows("SELECT key, value FROM kv ORDER BY key") == [
                [.text("a"), .text("from select")], [.text("b"), .text("5")], [.text("c"), .text("new")],
            ])
        try connection.execute("CREATE TABLE counter (id INTEGER PRIMARY KEY)")
        try connection.execute(dialect.insert(into: "counter", columns: [], values: "", onConflict: .fail))
        #expect(try connection.scalar("SELECT count(*) FROM counter") == .integer(1))
    }

    @Test("the dialect's queries and conditions run on SQLite as documented")
    func dialectQueries() throws {
        let dialect = SQLiteDialect()
        let connection = try Connection(path: ":memory:")
        #expect(try connection.scalar(dialect.userTableCountQuery) == .integer(0))
        try connection.execute(
            "CREATE TABLE \(dialect.quote("odd \"name\"")) (\(dialect.keyColumnDefinition("id")), x)")
        #expect(try connection.scalar(dialect.tableExistsQuery, [.text("odd \"name\"")]) == .integer(1))
        #expect(try connection.scalar(dialect.tableExistsQuery, [.text("missing")]) == .integer(0))
        #expect(try connection.scalar(dialect.userTableCountQuery) == .integer(1))
        try connection.execute("INSERT INTO \(dialect.quote("odd \"name\"")) (x) VALUES (1), ('1'), (1.0), (NULL)")
        let integers = try connection.scalar(
            "SELECT count(*) FROM \(dialect.quote("odd \"name\"")) WHERE \(dialect.isInteger("x"))")
        #expect(integers == .integer(1))
        try connection.execute("ATTACH DATABASE ':memory:' AS other")
        try connection.execute("CREATE TABLE \(dialect.qualified("T", in: "other")) (a)")
        #expect(try connection.scalar("SELECT count(*) FROM other.sqlite_schema WHERE name = 'T'") == .integer(1))
        for type in AttributeType.allCases {
            try connection.execute(
                "CREATE TABLE \(dialect.quote("t_\(type.rawValue)")) (v \(dialect.columnType(for: type, storedAs: FerryValueCoding().storageClass(for: type))))"
            )
        }
    }

    @Test("ferry's layout keeps its names: join tables the same whichever side is created first")
    func ferryLayoutJoinTables() throws {
        let model = PredicateTestModel.model
        let layout = FerryLayout()
        let statements = StoreSchema.statements(for: model, layout: layout)
        let link = try #require(statements.first { $0.contains("CREATE TABLE \"ferry_link_Order_tags\"") })
        #expect(
            link == """
                CREATE TABLE "ferry_link_Order_tags" (
                    "ferry_source" INTEGER NOT NULL REFERENCES "Order"("ferry_pk") ON DELETE CASCADE,
                    "ferry_target" INTEGER NOT NULL REFERENCES "Tag"("ferry_pk") ON DELETE CASCADE,
                    PRIMARY KEY ("ferry_source", "ferry_target")
                ) WITHOUT ROWID
                """)
        #expect(
            statements.contains(
                #"CREATE INDEX "ferry_link_Order_tags_target" ON "ferry_link_Order_tags"("ferry_target")"#))
        // The same table when the Tag side is met first.
        let reversed = ObjectModel(name: model.name, version: model.version, entities: model.entities.reversed())
        #expect(StoreSchema.statements(for: reversed, layout: layout).contains(link))
        let order = try #require(model.entity(named: "Order"))
        let customer = try #require(model.entity(named: "Customer"))
        let tags = try #require(order.relationship(named: "tags"))
        let profile = try #require(customer.relationship(named: "profile"))
        #expect(
            layout.storage(of: tags, in: order, model: model)
                == .joinTable(
                    table: "ferry_link_Order_tags", sourceColumn: "ferry_source", targetColumn: "ferry_target"))
        #expect(layout.storage(of: profile, in: customer, model: model) == .foreignKey(column: "profile"))
        #expect(layout.ownsForeignKey(profile, in: customer, model: model))
        let profileEntity = try #require(model.entity(named: "Profile"))
        let back = try #require(profileEntity.relationship(named: "customer"))
        #expect(
            layout.storage(of: back, in: profileEntity, model: model)
                == .inverseForeignKey(destinationTable: "Customer", column: "profile"))
        #expect(!layout.ownsForeignKey(back, in: profileEntity, model: model))
    }
}
