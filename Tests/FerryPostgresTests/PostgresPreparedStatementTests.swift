import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

@Suite(
    "PostgreSQL prepared statements: prepared once per text and types, kept through rollbacks and errors",
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresPreparedStatementTests {
    /// The statements the server holds prepared for `connection`'s session, by name.
    private func serverStatements(_ connection: PostgresConnection) throws -> [String: String] {
        let rows = try connection.execute(
            "SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'ferry_s%'"
        ).rows
        return try Dictionary(uniqueKeysWithValues: rows.map { (try $0.string(0), try $0.string(1)) })
    }

    /// Expects `count` statements prepared, as the connection counts them and as the server holds them.
    private func expectPrepared(
        _ count: Int, on connection: PostgresConnection, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(connection.preparedStatementCount == count, sourceLocation: sourceLocation)
        #expect(try serverStatements(connection).count == count, sourceLocation: sourceLocation)
    }

    @Test("a text is prepared on its first run and executed by name after, with the results execute gives")
    func cacheHit() throws {
        let scratch = try PostgresScratch()
        let connection = scratch.connection
        try connection.execute("CREATE TABLE \(scratch.table("t")) (k bigint PRIMARY KEY, v text)")
        let insert = "INSERT INTO \(scratch.table("t")) (k, v) VALUES ($1, $2) RETURNING k"
        for key in 1...3 {
            let result = try connection.executePrepared(insert, [.integer(Int64(key)), .text("v\(key)")])
            #expect(result.affectedRows == 1)
            #expect(try result.rows.map { try $0.int(0) } == [Int64(key)])
        }
        #expect(connection.preparedStatementCount == 1)
        #expect(try serverStatements(connection).values.sorted() == [insert])

        let select = "SELECT k, v FROM \(scratch.table("t")) WHERE k >= $1 ORDER BY k"
        let prepared = try connection.executePrepared(select, [.integer(2)])
        let unprepared = try connection.execute(select, [.integer(2)])
        #expect(prepared.columns == unprepared.columns)
        #expect(prepared.rows.map(\.values) == unprepared.rows.map(\.values))
        #expect(prepared.rows.map(\.values) == [[.integer(2), .text("v2")], [.integer(3), .text("v3")]])
        #expect(try connection.executePrepared(select, [.integer(9)]).rows.isEmpty)
        try expectPrepared(2, on: connection)
    }

    @Test("two texts are two statements; one text sent other parameter types is another")
    func textsAndTypes() throws {
        let scratch = try PostgresScratch()
        let connection = scratch.connection
        // The type of `$1 + 1` shows the type the server gave $1.
        let typed = "SELECT pg_typeof($1 + 1)::text AS type, $1 + 1 AS next"
        let asText = try connection.executePrepared(typed, [.text("2")]).rows[0]
        #expect(try asText.string(0) == "integer")
        #expect(try asText.int(1) == 3)
        // NULL and text are both sent untyped: the same statement.
        let asNull = try connection.executePrepared(typed, [.null]).rows[0]
        #expect(try asNull.string(0) == "integer")
        #expect(asNull.isNull(1))
        #expect(connection.preparedStatementCount == 1)
        // An integer is sent as int8, a double as float8: prepared again, typed as execute types them.
        let asInteger = try connection.executePrepared(typed, [.integer(5)]).rows[0]
        #expect(try asInteger.string(0) == "bigint")
        #expect(try asInteger.string(0) == connection.execute(typed, [.integer(5)]).rows[0].string(0))
        let asDouble = try connection.executePrepared(typed, [.real(0.5)]).rows[0]
        #expect(try asDouble.string(0) == "double precision")
        #expect(try asDouble.double(1) == 1.5)
        #expect(connection.preparedStatementCount == 3)
        #expect(try connection.executePrepared("SELECT $1::int + 1", [.text("41")]).rows[0].int(0) == 42)
        try expectPrepared(4, on: connection)
    }

    @Test("prepared and unprepared runs store the same values in typed columns")
    func inferredTypes() throws {
        let scratch = try PostgresScratch()
        let connection = scratch.connection
        try connection.execute(
            """
            CREATE TABLE \(scratch.table("typed")) (id int, n numeric, d float8, t timestamptz, b boolean,
                u uuid, j jsonb, y bytea)
            """)
        let insert = "INSERT INTO \(scratch.table("typed")) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        let rows: [[PostgresValue]] = [
            [
                .text("12.50"), .real(0.1), .text("2001-02-03T04:05:06Z"), .text("1"),
                .text("b1a1e9a4-5a43-4f3e-9a54-1a2b3c4d5e6f"), .text("{\"a\": [1, 2]}"), .bytes([0, 0xFF]),
            ],
            [.real(0.30000000000000004), .real(-2.5), .null, .text("0"), .null, .text("3"), .null],
            [.null, .null, .text("2001-02-03 04:05:06+02"), .null, .null, .null, .bytes([])],
        ]
        for (index, values) in rows.enumerated() {
            try connection.execute(insert, [.integer(Int64(2 * index))] + values)
            try connection.executePrepared(insert, [.integer(Int64(2 * index + 1))] + values)
        }
        let stored = try connection.execute("SELECT * FROM \(scratch.table("typed")) ORDER BY id").rows
        #expect(stored.count == 6)
        for pair in stride(from: 0, to: stored.count, by: 2) {
            #expect(Array(stored[pair].values.dropFirst()) == Array(stored[pair + 1].values.dropFirst()))
        }
        #expect(stored[0]["n"] == .text("12.50"))
        #expect(stored[1]["b"] == .bool(true))
    }

    @Test("a statement that fails to prepare is not kept, and the statements prepared stay usable")
    func badStatements() throws {
        let scratch = try PostgresScratch()
        let connection = scratch.connection
        try connection.execute("CREATE TABLE \(scratch.table("u")) (k text PRIMARY KEY)")
        let insert = "INSERT INTO \(scratch.table("u")) VALUES ($1)"
        try connection.executePrepared(insert, [.text("a")])

        for _ in 1...2 {
            let syntax = try #require(throws: PostgresError.self) {
                try connection.executePrepared("SELEC $1", [.text("x")])
            }
            #expect(syntax.kind == .server)
            #expect(syntax.sqlState == "42601")
            #expect(syntax.message.contains("syntax error at or near \"SELEC\""))
        }
        let missing = try #require(throws: PostgresError.self) {
            try connection.executePrepared("SELECT * FROM \(scratch.table("absent")) WHERE k = $1", [.text("x")])
        }
        #expect(missing.sqlState == "42P01")
        #expect(connection.preparedStatementCount == 1)

        // A prepared statement that fails when run (a duplicate key) stays prepared.
        let duplicate = try #require(throws: PostgresError.self) {
            try connection.executePrepared(insert, [.text("a")])
        }
        #expect(duplicate.sqlState == "23505")
        #expect(duplicate.detail == "Key (k)=(a) already exists.")
        try connection.executePrepared(insert, [.text("b")])
        try expectPrepared(1, on: connection)
        #expect(try scratch.count("u") == 2)
    }

    @Test(
        "a prepared statement survives a rolled-back savepoint and transaction; one that failed inside a savepoint runs again"
    )
    func savepoints() throws {
        let scratch = try PostgresScratch()
        let connection = scratch.connection
        try connection.execute("CREATE TABLE \(scratch.table("s")) (k bigint PRIMARY KEY)")
        let insert = "INSERT INTO \(scratch.table("s")) VALUES ($1)"
        let count = "SELECT count(*) FROM \(scratch.table("s")) WHERE k > $1"
        struct Undo: Error {}
        try connection.transaction {
            try connection.executePrepared(insert, [.integer(1)])
            // Fails inside a savepoint: the savepoint is rolled back, the transaction goes on.
            let failure = try #require(throws: PostgresError.self) {
                try connection.transaction { try connection.executePrepared(insert, [.integer(1)]) }
            }
            #expect(failure.sqlState == "23505")
            // First prepared inside a savepoint that is then rolled back.
            #expect(throws: Undo.self) {
                try connection.transaction {
                    #expect(try connection.executePrepared(count, [.integer(0)]).rows[0].int(0) == 1)
                    try connection.executePrepared(insert, [.integer(2)])
                    throw Undo()
                }
            }
            try connection.executePrepared(insert, [.integer(3)])
            #expect(try connection.executePrepared(count, [.integer(0)]).rows[0].int(0) == 2)
        }
        #expect(throws: Undo.self) {
            try connection.transaction {
                try connection.executePrepared(insert, [.integer(4)])
                throw Undo()
            }
        }
        try connection.executePrepared(insert, [.integer(2)])
        #expect(try connection.executePrepared(count, [.integer(1)]).rows[0].int(0) == 2)
        #expect(
            try connection.execute("SELECT k FROM \(scratch.table("s")) ORDER BY k").rows.map { try $0.int(0) } == [
                1, 2, 3,
            ])
        try expectPrepared(2, on: connection)
    }

    @Test("a text first run in a failed transaction is prepared once the transaction is over")
    func failedTransaction() throws {
        let scratch = try PostgresScratch()
        let connection = scratch.connection
        try connection.execute("BEGIN")
        #expect(throws: PostgresError.self) { try connection.execute("SELECT 1 / 0") }
        let aborted = try #require(throws: PostgresError.self) {
            try connection.executePrepared("SELECT $1::int", [.text("7")])
        }
        #expect(aborted.sqlState == "25P02")
        #expect(connection.preparedStatementCount == 0)
        try connection.execute("ROLLBACK")
        #expect(try connection.executePrepared("SELECT $1::int", [.text("7")]).rows[0].int(0) == 7)
        try expectPrepared(1, on: connection)
    }

    @Test("a statement deallocated or whose table changed its columns is prepared again on the next run")
    func staleStatements() throws {
        let scratch = try PostgresScratch()
        let connection = scratch.connection
        try connection.execute("CREATE TABLE \(scratch.table("w")) (k int)")
        try connection.execute("INSERT INTO \(scratch.table("w")) VALUES (1)")
        let select = "SELECT * FROM \(scratch.table("w")) WHERE k = $1"
        #expect(try connection.executePrepared(select, [.integer(1)]).columns.count == 1)

        try connection.execute("ALTER TABLE \(scratch.table("w")) ADD COLUMN v text DEFAULT 'x'")
        let changed = try #require(throws: PostgresError.self) { try connection.executePrepared(select, [.integer(1)]) }
        #expect(changed.sqlState == "0A000")
        let again = try connection.executePrepared(select, [.integer(1)])
        #expect(again.rows.map(\.values) == [[.integer(1), .text("x")]])

        try connection.execute("DEALLOCATE ALL")
        let gone = try #require(throws: PostgresError.self) { try connection.executePrepared(select, [.integer(1)]) }
        #expect(gone.sqlState == "26000")
        #expect(try connection.executePrepared(select, [.integer(1)]).rows.count == 1)
        try expectPrepared(1, on: connection)
    }

    @Test("a table or a schema renamed away and another created in its place: the statement reads the new one")
    func replacedTable() throws {
        let scratch = try PostgresScratch()
        let connection = scratch.connection
        try connection.execute("CREATE TABLE \(scratch.table("r")) (k int)")
        try connection.execute("INSERT INTO \(scratch.table("r")) VALUES (1)")
        let count = "SELECT count(*) FROM \(scratch.table("r")) WHERE k > $1"
        for _ in 1...6 { #expect(try connection.executePrepared(count, [.integer(0)]).rows[0].int(0) == 1) }
        try connection.execute("ALTER TABLE \(scratch.table("r")) RENAME TO old_r")
        try connection.execute("CREATE TABLE \(scratch.table("r")) (k int)")
        #expect(try connection.executePrepared(count, [.integer(0)]).rows[0].int(0) == 0)
        // A migration swaps schemas by renaming them: the statement reads the schema now so named.
        try connection.execute("INSERT INTO \(scratch.table("r")) VALUES (1), (2)")
        let schema = PostgresIdentifier.quote(scratch.schema)
        let backup = PostgresIdentifier.quote(scratch.schema + "_backup")
        defer { _ = try? connection.execute("DROP SCHEMA IF EXISTS \(backup) CASCADE") }
        try connection.transaction {
            try connection.execute("ALTER SCHEMA \(schema) RENAME TO \(backup)")
            try connection.execute("CREATE SCHEMA \(schema)")
            try connection.execute("CREATE TABLE \(scratch.table("r")) AS SELECT k FROM \(backup).r WHERE k = 2")
        }
        #expect(try connection.executePrepared(count, [.integer(0)]).rows[0].int(0) == 1)
        #expect(connection.preparedStatementCount == 1)
    }

    @Test("past the session's capacity new texts run unprepared; closing forgets every statement")
    func capacityAndClose() throws {
        let scratch = try PostgresScratch()
        let connection = try scratch.openAnother()
        for index in 0..<257 {
            let row = try connection.executePrepared("SELECT \(index) + $1::int", [.text("1")]).rows[0]
            #expect(try row.int(0) == Int64(index + 1))
        }
        try expectPrepared(256, on: connection)
        #expect(try connection.executePrepared("SELECT 0 + $1::int", [.text("5")]).rows[0].int(0) == 5)
        connection.close()
        #expect(connection.preparedStatementCount == 0)
        let closed = try #require(throws: PostgresError.self) { try connection.executePrepared("SELECT 1") }
        #expect(closed.kind == .connectionFailed)
    }
}
