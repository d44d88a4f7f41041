import FerryCore
import FerryPostgresStore
import FerryTestSupport
import Foundation
import Testing

/// A PostgreSQL store URL in a fresh schema of its own on the test server, dropped when released.
final class PostgresStoreScratch {
    let url: String
    let schema: String

    init() throws {
        schema = "ferry_store_" + UUID().uuidString.lowercased().replacing("-", with: "")
        url = try PostgresTestServer.requireURL() + "?schema=" + schema
    }

    /// Runs SQL in the scratch schema through a store session of its own (for set-up and checks).
    func rows(_ sql: String, model: ObjectModel = SampleModels.shop()) throws -> [[DatabaseValue]] {
        let store = try Store.open(at: url, model: model, options: Store.Options(readOnly: true))
        return try store.withDatabase { try $0.rows(sql) }
    }

    /// Drops the schema (and any backup or work schema named after it) through a session of its
    /// own: opening the store again would wait for the writer lock of a store the test still holds.
    deinit {
        PostgresStoreLoader.dropSchemas(startingWith: schema)
    }
}

@Suite(
    "PostgreSQL store: opening, creating, locking",
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresStoreTests {
    @Test("a new store is a schema with ferry's tables, the model's tables in PostgreSQL's types, and metadata")
    func createsSchema() throws {
        let scratch = try PostgresStoreScratch()
        let model = SampleModels.shop()
        do {
            let store = try Store.open(at: scratch.url, model: model)
            #expect(store.engine == .postgreSQL)
            #expect(store.metadata.modelName == "Shop")
            #expect(store.metadata.modelHash == model.versionHash)
            #expect(store.metadata.model == model)
            #expect(try store.entityCounts().map(\.count) == [0, 0])
        }
        let columns = try scratch.rows(
            "SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '-') FROM information_schema.columns WHERE table_schema = '\(scratch.schema)' AND table_name IN ('Customer', 'Order') ORDER BY 1"
        ).compactMap { $0[0].text }
        #expect(columns.contains("Customer.balance numeric YES '0'::numeric"))
        #expect(columns.contains("Customer.active boolean YES true"))
        #expect(columns.contains("Customer.joined timestamp with time zone YES -"))
        #expect(columns.contains("Customer.age smallint YES -"))
        #expect(columns.contains("Customer.id bigint NO -"))
        #expect(columns.contains("Order.customer bigint NO -"))
        #expect(columns.contains("Customer.ferry_pk bigint NO -"))
        let indexes = try scratch.rows(
            "SELECT indexname FROM pg_indexes WHERE schemaname = '\(scratch.schema)' ORDER BY 1"
        ).compactMap { $0[0].text }
        #expect(indexes.contains("ferry_unique_Customer_email"))
        #expect(indexes.contains("ferry_fk_Order_customer"))
        let tables = try scratch.rows(
            "SELECT tablename FROM pg_tables WHERE schemaname = '\(scratch.schema)' ORDER BY 1"
        ).compactMap { $0[0].text }
        #expect(tables == ["Customer", "Order", "ferry_entities", "ferry_metadata", "ferry_runs"])
    }

    @Test("reopening finds the store; another model version is a model mismatch naming both")
    func reopensAndChecksModel() throws {
        let scratch = try PostgresStoreScratch()
        _ = try Store.open(at: scratch.url, model: SampleModels.shop())
        let again = try Store.open(
            at: scratch.url, model: SampleModels.shop(), options: Store.Options(createIfMissing: false, readOnly: true))
        #expect(again.metadata.modelVersion == "1")
        var other = SampleModels.shop(version: "2")
        other.entities[1].attributes.append(AttributeDescription(name: "note", type: .string))
        let error = try #require(throws: FerryError.self) { try Store.open(at: scratch.url, model: other) }
        #expect(error.code == .modelMismatch)
        #expect(error.message.contains("version 1"))
        #expect(error.message.contains("version 2"))
    }

    @Test("a second writer waits for the advisory lock, then fails naming the store; it opens once the first is closed")
    func oneWriter() throws {
        let scratch = try PostgresStoreScratch()
        var first: Store? = try Store.open(at: scratch.url, model: SampleModels.shop())
        let started = ContinuousClock.now
        let error = try #require(throws: FerryError.self) {
            try Store.open(
                at: scratch.url, model: SampleModels.shop(), options: Store.Options(busyTimeout: .milliseconds(400)))
        }
        #expect(ContinuousClock.now - started >= .milliseconds(400))
        #expect(error.message.contains("the store is locked by another process"))
        #expect(error.message.contains(scratch.schema))
        // Readers take no lock.
        _ = try Store.open(at: scratch.url, model: SampleModels.shop(), options: Store.Options(readOnly: true))
        withExtendedLifetime(first) {}
        first = nil
        _ = try Store.open(
            at: scratch.url, model: SampleModels.shop(), options: Store.Options(busyTimeout: .milliseconds(400)))
    }

    @Test("a schema holding other tables is not taken over; a missing store is not created when told not to")
    func refusesForeignSchema() throws {
        let scratch = try PostgresStoreScratch()
        let missing = try #require(throws: FerryError.self) {
            try Store.open(at: scratch.url, model: SampleModels.shop(), options: Store.Options(createIfMissing: false))
        }
        #expect(missing.message.contains("does not exist"))
        let store = try Store.open(at: scratch.url, model: SampleModels.shop())
        try store.withDatabase { database in
            try database.execute("CREATE SCHEMA \"\(scratch.schema)_other\"")
            try database.execute("CREATE TABLE \"\(scratch.schema)_other\".legacy (id int)")
        }
        let foreign = try #require(throws: FerryError.self) {
            try Store.open(
                at: try PostgresTestServer.requireURL() + "?schema=\(scratch.schema)_other", model: SampleModels.shop())
        }
        #expect(foreign.message.contains("is a PostgreSQL schema but not a ferry store"))
        try store.withDatabase { try $0.execute("DROP SCHEMA \"\(scratch.schema)_other\" CASCADE") }
    }

    @Test("a malformed URL is a usage error naming the part at fault; a password never appears in messages")
    func badURLs() throws {
        let error = try #require(throws: FerryError.self) {
            try Store.open(at: "postgresql://u@localhost:54x/db", model: SampleModels.shop())
        }
        #expect(error.code == .usage)
        #expect(error.message.contains("54x"))
        let refused = try #require(throws: FerryError.self) {
            try Store.open(at: "postgresql://someone:s3cret@127.0.0.1:1/nowhere", model: SampleModels.shop())
        }
        #expect(!"\(refused)".contains("s3cret"))
    }

    @Test("operations that need SQLite are refused clearly on a PostgreSQL store")
    func sqliteOnlyRefused() throws {
        let scratch = try PostgresStoreScratch()
        let store = try Store.open(at: scratch.url, model: SampleModels.shop())
        let error = try #require(throws: FerryError.self) { try store.write { _ in } }
        #expect(error.message.contains("not available on a PostgreSQL store yet"))
        let request = BatchInsertRequest(entity: "Customer", columns: [.attribute("name")], conflictPolicy: .update) {
            _ in true
        }
        let policy = try #require(throws: FerryError.self) { try store.execute(request) }
        #expect(
            policy.message.contains(
                "on_conflict: update needs the record to supply every attribute of one of Customer's uniqueness constraints"
            ))
    }
}

@Suite("PostgreSQL SQL: placeholders and dialect (no server)")
struct PostgreSQLDialectTests {
    @Test("SQLite's ? and ?N become $N as SQLite numbers them; question marks in literals and identifiers stay")
    func placeholders() {
        #expect(
            PostgresDatabase.numberedPlaceholders("SELECT a FROM t WHERE b = ? AND c = ?")
                == "SELECT a FROM t WHERE b = $1 AND c = $2")
        #expect(
            PostgresDatabase.numberedPlaceholders(
                "UPDATE t SET x = CASE WHEN ?5 THEN ?1 ELSE x END WHERE k = ?3 AND y = ?")
                == "UPDATE t SET x = CASE WHEN $5 THEN $1 ELSE x END WHERE k = $3 AND y = $6")
        #expect(
            PostgresDatabase.numberedPlaceholders("SELECT '?', \"a?b\", ? FROM t") == "SELECT '?', \"a?b\", $1 FROM t")
        #expect(PostgresDatabase.numberedPlaceholders("SELECT 'it''s ?' || ?") == "SELECT 'it''s ?' || $1")
        #expect(PostgresDatabase.numberedPlaceholders("SELECT 1") == "SELECT 1")
    }

    @Test(
        "a statement run many times: ?N placeholders, changes, rows, and ferry's errors naming the store",
        .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
    func preparedStatements() throws {
        let scratch = try PostgresStoreScratch()
        let store = try Store.open(at: scratch.url, model: SampleModels.shop())
        try store.withDatabase { database in
            let postgres = try #require(database as? PostgresDatabase)
            try postgres.execute("CREATE TABLE prepared_t (k bigint PRIMARY KEY, v text)")
            let upsert = postgres.statement(
                "INSERT INTO prepared_t (k, v) VALUES (?1, ?2) ON CONFLICT (k) DO UPDATE SET v = ?2 WHERE prepared_t.v <> ?2"
            )
            #expect(
                upsert.text.hasSuffix("VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = $2 WHERE prepared_t.v <> $2"))
            try upsert.execute([.integer(1), .text("a")])
            #expect(postgres.changes == 1)
            try upsert.execute([.integer(1), .text("a")])
            #expect(postgres.changes == 0)
            try upsert.execute([.integer(1), .text("b")])
            #expect(postgres.changes == 1)
            let find = postgres.statement("SELECT v, k FROM prepared_t WHERE k = ?")
            #expect(try find.scalar([.integer(1)]) == .text("b"))
            #expect(try find.scalar([.integer(2)]) == nil)
            #expect(try find.rows([.integer(1)]) == [[.text("b"), .integer(1)]])
            let insert = postgres.statement("INSERT INTO prepared_t (k, v) VALUES (?, ?)")
            let duplicate = try #require(throws: FerryError.self) { try insert.execute([.integer(1), .text("c")]) }
            #expect(duplicate.code == .constraint)
            #expect(duplicate.message.contains("(schema \(scratch.schema))"))
            let failure = try #require(duplicate.underlying as? PostgresStatementFailure)
            #expect(failure.isUniqueConstraint)
            #expect(failure.statement == insert.text)
            try insert.execute([.integer(2), .text("c")])
            #expect(postgres.changes == 1)
            #expect(try find.scalar([.integer(2)]) == .text("c"))
        }
    }

    @Test("column types, keys, literals and conflicts in PostgreSQL's SQL")
    func dialect() {
        let dialect = PostgreSQLDialect()
        #expect(dialect.columnType(for: .decimal, storedAs: .text) == "numeric")
        #expect(dialect.columnType(for: .date, storedAs: .text) == "timestamptz")
        #expect(dialect.columnType(for: .uuid, storedAs: .text) == "uuid")
        #expect(dialect.columnType(for: .json, storedAs: .text) == "jsonb")
        #expect(dialect.columnType(for: .binary, storedAs: .blob) == "bytea")
        #expect(
            dialect.keyColumnDefinition("ferry_pk")
                == "\"ferry_pk\" bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
        #expect(dialect.literal(.text("it's")) == "'it''s'")
        #expect(dialect.literal(.blob([0, 255])) == "'\\x00ff'::bytea")
        #expect(dialect.literal(.real(-.infinity)) == "'-Infinity'::float8")
        #expect(dialect.qualified("Customer", in: "shop") == "\"shop\".\"Customer\"")
        #expect(
            dialect.insert(
                into: "\"m\"", columns: ["key", "value"], values: "VALUES (?, ?)",
                onConflict: .update(key: ["key"], columns: ["value"]))
                == "INSERT INTO \"m\" (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
        )
        #expect(
            dialect.ordering("t0.\"name\"", type: .string, ascending: true) == ["t0.\"name\" COLLATE \"C\" NULLS FIRST"]
        )
        #expect(dialect.ordering("t0.\"total\"", type: .decimal, ascending: false) == ["t0.\"total\" DESC NULLS LAST"])
    }
}
