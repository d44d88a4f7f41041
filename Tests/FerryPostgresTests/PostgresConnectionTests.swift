import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

@Suite(
    "PostgreSQL connection: queries, typed results, errors, transactions",
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresConnectionTests {
    @Test("parameters go in typed and values come back typed by column type")
    func typedRoundTrip() throws {
        let scratch = try PostgresScratch()
        let result = try scratch.connection.execute(
            """
            SELECT $1::bigint AS i, $2::boolean AS b, $3::float8 AS d, $4::text AS t, $5::bytea AS y,
                   $6::text AS n, 12345678901234567890.25::numeric AS big, 7::smallint AS s,
                   'b1a1e9a4-5a43-4f3e-9a54-1a2b3c4d5e6f'::uuid AS u, $7::int AS i4
            """,
            [
                .integer(Int64.min), .bool(true), .real(-0.125), .text("Żółć\ttab\\ 'q' \u{1F600}"),
                .bytes([0, 1, 0xFF, 0x5C]), .null, .integer(42),
            ])
        #expect(result.columns.map(\.name) == ["i", "b", "d", "t", "y", "n", "big", "s", "u", "i4"])
        let row = try #require(result.rows.first)
        #expect(try row.int(0) == Int64.min)
        #expect(try row.bool(1))
        #expect(try row.double(2) == -0.125)
        #expect(try row.string(3) == "Żółć\ttab\\ 'q' \u{1F600}")
        #expect(try row.bytes(4) == [0, 1, 0xFF, 0x5C])
        #expect(row.isNull(5))
        #expect(try row.string(6) == "12345678901234567890.25")
        #expect(try row.int(7) == 7)
        #expect(try row.string(8) == "b1a1e9a4-5a43-4f3e-9a54-1a2b3c4d5e6f")
        #expect(row["i4"] == .integer(42))
        #expect(row["missing"] == nil)
    }

    @Test(
        "a script sent without waiting runs in its transaction; the next statement reads its outcome, and its error once"
    )
    func sentScript() throws {
        let scratch = try PostgresScratch()
        let connection = scratch.connection
        let table = scratch.table("t")
        try connection.execute("CREATE TABLE \(table) (id bigint PRIMARY KEY)")
        try connection.execute("BEGIN")
        try connection.sendScript(
            "INSERT INTO \(table) SELECT generate_series(1, 50000); INSERT INTO \(table) VALUES (-1)")
        #expect(connection.isInTransaction)
        // The next statement waits for the script: it sees every row.
        #expect(try scratch.count("t") == 50_001)
        try connection.execute("COMMIT")
        #expect(!connection.isInTransaction)

        // A failing script: its error comes from the next statement, which does not run; the
        // session then works again.
        try connection.execute("BEGIN")
        try connection.sendScript("INSERT INTO \(table) VALUES (-2); INSERT INTO \(table) VALUES (1)")
        let error = try #require(throws: PostgresError.self) { try connection.execute("SELECT 1") }
        #expect(error.sqlState == "23505", "\(error)")
        try connection.execute("ROLLBACK")
        #expect(try scratch.count("t") == 50_001)
        try connection.finishSentScript()
    }

    @Test("special doubles survive both ways")
    func specialDoubles() throws {
        let scratch = try PostgresScratch()
        let row = try scratch.connection.execute(
            "SELECT $1::float8, $2::float8, $3::float8", [.real(.infinity), .real(-.infinity), .real(.nan)]
        ).rows[0]
        #expect(try row.double(0) == .infinity)
        #expect(try row.double(1) == -.infinity)
        #expect(try row.double(2).isNaN)
    }

    @Test("asking for the wrong type names the column and both types")
    func typeMismatch() throws {
        let scratch = try PostgresScratch()
        let row = try scratch.connection.execute("SELECT 'x'::text AS label").rows[0]
        let error = try #require(throws: PostgresError.self) { try row.int(0) }
        #expect(error.kind == .typeMismatch)
        #expect(error.message == "column 1 'label' is text, not integer")
    }

    @Test("affected rows come from the command tag")
    func affectedRows() throws {
        let scratch = try PostgresScratch()
        try scratch.connection.execute("CREATE TABLE \(scratch.table("t")) (v int)")
        let insert = try scratch.connection.execute(
            "INSERT INTO \(scratch.table("t")) SELECT generate_series(1, $1::int)", [.integer(5)])
        #expect(insert.affectedRows == 5)
        let update = try scratch.connection.execute("UPDATE \(scratch.table("t")) SET v = v WHERE v > 3")
        #expect(update.affectedRows == 2)
    }

    @Test("a server error carries its SQLSTATE, message and detail")
    func serverErrors() throws {
        let scratch = try PostgresScratch()
        let syntax = try #require(throws: PostgresError.self) { try scratch.connection.execute("SELEC 1") }
        #expect(syntax.kind == .server)
        #expect(syntax.sqlState == "42601")
        #expect(syntax.message.contains("syntax error at or near \"SELEC\""))

        try scratch.connection.execute("CREATE TABLE \(scratch.table("u")) (k text PRIMARY KEY)")
        try scratch.connection.execute("INSERT INTO \(scratch.table("u")) VALUES ($1)", [.text("a")])
        let duplicate = try #require(throws: PostgresError.self) {
            try scratch.connection.execute("INSERT INTO \(scratch.table("u")) VALUES ($1)", [.text("a")])
        }
        #expect(duplicate.sqlState == "23505")
        #expect(duplicate.detail == "Key (k)=(a) already exists.")
        #expect(duplicate.description.contains("[SQLSTATE 23505]\nDETAIL: Key (k)=(a) already exists."))
        // The session is still usable.
        #expect(try scratch.connection.execute("SELECT 1").rows[0].int(0) == 1)
    }

    @Test("a script runs several statements; execute refuses more than one")
    func scripts() throws {
        let scratch = try PostgresScratch()
        try scratch.connection.executeScript(
            "CREATE TABLE \(scratch.table("a")) (v int); INSERT INTO \(scratch.table("a")) VALUES (1), (2);")
        #expect(try scratch.count("a") == 2)
        let error = try #require(throws: PostgresError.self) {
            try scratch.connection.execute("SELECT 1; SELECT 2")
        }
        #expect(error.sqlState == "42601")
    }

    @Test("a transaction commits when its body returns and rolls back when it throws")
    func transactions() throws {
        struct Stop: Error {}
        let scratch = try PostgresScratch()
        let db = scratch.connection
        let table = scratch.table("t")
        try db.execute("CREATE TABLE \(table) (v int)")
        let value = try db.transaction {
            try db.execute("INSERT INTO \(table) VALUES (1)")
            #expect(db.isInTransaction)
            return 7
        }
        #expect(value == 7)
        #expect(!db.isInTransaction)
        #expect(throws: Stop.self) {
            try db.transaction {
                try db.execute("INSERT INTO \(table) VALUES (2)")
                throw Stop()
            }
        }
        #expect(!db.isInTransaction)
        // A statement failing inside the body rolls the whole transaction back too.
        #expect(throws: PostgresError.self) {
            try db.transaction {
                try db.execute("INSERT INTO \(table) VALUES (3)")
                try db.execute("INSERT INTO \(table) VALUES ('not a number')")
            }
        }
        let values = try db.execute("SELECT v FROM \(table) ORDER BY v").rows.map { try $0.int(0) }
        #expect(values == [1])
    }

    @Test("a nested transaction is a savepoint: its failure undoes only its own work")
    func nestedTransactions() throws {
        struct Stop: Error {}
        let scratch = try PostgresScratch()
        let db = scratch.connection
        let table = scratch.table("t")
        try db.execute("CREATE TABLE \(table) (v int)")
        try db.transaction {
            try db.execute("INSERT INTO \(table) VALUES (1)")
            #expect(throws: Stop.self) {
                try db.transaction {
                    try db.execute("INSERT INTO \(table) VALUES (2)")
                    throw Stop()
                }
            }
            try db.transaction { try db.execute("INSERT INTO \(table) VALUES (3)") }
        }
        let values = try db.execute("SELECT v FROM \(table) ORDER BY v").rows.map { try $0.int(0) }
        #expect(values == [1, 3])
    }

    @Test("a Unix socket directory given by host= connects")
    func unixSocket() throws {
        let scratch = try PostgresScratch()
        let settings = try scratch.connection.execute(
            "SELECT current_setting('unix_socket_directories'), current_setting('port'), current_user, current_database()"
        ).rows[0]
        let directory = try #require(try settings.string(0).split(separator: ",").first)
            .trimmingCharacters(in: .whitespaces)
        let encoded = try #require(directory.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let url =
            "postgresql://\(try settings.string(2))@/\(try settings.string(3))?host=\(encoded)&port=\(try settings.string(1))"
        let socket = try PostgresConnection(url)
        let address = try socket.execute("SELECT inet_client_addr() IS NULL").rows[0]
        #expect(try address.bool(0), "a Unix-socket session has no client address")
    }

    @Test("a server that does not answer gives an error naming the URL, without the password")
    func refused() throws {
        let port = try closedPort()
        let error = try #require(throws: PostgresError.self) {
            try PostgresConnection("postgresql://nobody:hunter2@127.0.0.1:\(port)/none?connect_timeout=5")
        }
        #expect(error.kind == .connectionFailed)
        #expect(error.message.hasPrefix("cannot connect to postgresql://nobody:***@127.0.0.1:\(port)/none"))
        #expect(error.message.contains("Connection refused"))
        #expect(!error.description.contains("hunter2"))
    }

    @Test("an unknown libpq keyword is refused by libpq, named in the error")
    func unknownKeyword() throws {
        let error = try #require(throws: PostgresError.self) {
            try PostgresConnection("postgresql://u@127.0.0.1/d?colour=blue")
        }
        #expect(error.kind == .connectionFailed)
        #expect(error.message.contains("invalid connection option \"colour\""))
    }

    @Test("a closed connection refuses statements")
    func closed() throws {
        let connection = try PostgresConnection(PostgresTestServer.requireURL())
        connection.close()
        let error = try #require(throws: PostgresError.self) { try connection.execute("SELECT 1") }
        #expect(error.message.hasSuffix("is closed"))
    }

    /// A loopback port nothing listens on: bound, then released.
    private func closedPort() throws -> Int {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                guard bind(listener, $0, length) == 0, getsockname(listener, $0, &length) == 0 else {
                    throw POSIXError(.EADDRINUSE)
                }
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
