import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

@Suite(
    "PostgreSQL COPY FROM STDIN: escaping, batches, errors, atomicity",
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresCopyTests {
    static let columns = ["id", "label", "note", "age", "ratio", "active", "blob"]

    private func createTable(_ scratch: PostgresScratch, _ name: String = "people") throws {
        try scratch.connection.execute(
            """
            CREATE TABLE \(scratch.table(name)) (
                id bigint PRIMARY KEY, label text, note text, age integer, ratio float8,
                active boolean, blob bytea)
            """)
    }

    /// Row `n` of the generated data: text needing every escape COPY knows, and NULLs.
    private static func row(_ n: Int) -> [PostgresValue] {
        let texts = [
            "tab\there", "line\nbreak", "carriage\r\nreturn", "back\\slash \\N \\t", "\\", "",
            "Ünïcödé Żółć 日本語 \u{1F680}", "quote \" and ' and ,", "\\N",
        ]
        let label: PostgresValue = n % 11 == 0 ? .null : .text("\(texts[n % texts.count]) #\(n)")
        let note: PostgresValue = .text(texts[(n / 3) % texts.count])
        let age: PostgresValue = n % 7 == 0 ? .null : .integer(Int64(n % 120))
        let blob: PostgresValue = n % 5 == 0 ? .null : .bytes([UInt8(n & 0xFF), 0, 0x5C, 0x0A])
        return [.integer(Int64(n)), label, note, age, .real(Double(n) / 8), .bool(n % 2 == 0), blob]
    }

    @Test("100 000 rows of hard text stream in small batches and read back identical")
    func largeCopy() throws {
        let scratch = try PostgresScratch()
        try createTable(scratch)
        let count = 100_000
        let stored = try scratch.connection.copy(
            into: "people", schema: scratch.schema, columns: Self.columns, batchBytes: 64 * 1024
        ) { writer in
            for n in 1...count { try writer.append(Self.row(n)) }
            #expect(writer.rowCount == count)
        }
        #expect(stored == count)
        let rows = try scratch.connection.execute(
            "SELECT \(Self.columns.joined(separator: ", ")) FROM \(scratch.table("people")) ORDER BY id"
        ).rows
        #expect(rows.count == count)
        var mismatches = 0
        for (index, row) in rows.enumerated() where row.values != Self.row(index + 1) {
            if mismatches < 3 { Issue.record("row \(index + 1): \(row.values) != \(Self.row(index + 1))") }
            mismatches += 1
        }
        #expect(mismatches == 0)
        // Text that looks like an escape stays text: "\\N" is not NULL, "" is not NULL.
        let literal = try scratch.connection.execute(
            "SELECT count(*) FROM \(scratch.table("people")) WHERE note = '\\N'"
        ).rows[0].int(0)
        #expect(literal > 0)
    }

    @Test("NUL in text is refused before it is sent, naming row and column; nothing is stored")
    func nulRefused() throws {
        let scratch = try PostgresScratch()
        try createTable(scratch)
        let error = try #require(throws: PostgresError.self) {
            try scratch.connection.copy(into: "people", schema: scratch.schema, columns: Self.columns) { writer in
                for n in 1...10 { try writer.append(Self.row(n)) }
                var bad = Self.row(11)
                bad[2] = .text("before\u{0}after")
                try writer.append(bad)
            }
        }
        #expect(error.kind == .invalidValue)
        #expect(error.copyLine == 11)
        #expect(error.copyColumn == "note")
        #expect(error.description.contains("NUL character (U+0000)"))
        #expect(error.description.contains("(COPY row 11, column note)"))
        #expect(try scratch.count("people") == 0)
        #expect(try scratch.connection.execute("SELECT 1").rows[0].int(0) == 1, "the session is usable")
    }

    @Test("a row the server rejects mid-stream fails the whole COPY with its row and column")
    func serverRejectsMidStream() throws {
        let scratch = try PostgresScratch()
        try createTable(scratch)
        let error = try #require(throws: PostgresError.self) {
            try scratch.connection.copy(
                into: "people", schema: scratch.schema, columns: Self.columns, batchBytes: 4096
            ) { writer in
                for n in 1...60_000 {
                    var row = Self.row(n)
                    if n == 50_000 { row[3] = .text("fifty") }
                    try writer.append(row)
                }
            }
        }
        #expect(error.kind == .server)
        #expect(error.sqlState == "22P02")
        #expect(error.copyLine == 50_000)
        #expect(error.copyColumn == "age")
        #expect(error.message.contains("invalid input syntax for type integer: \"fifty\""))
        #expect(error.description.contains("(COPY row 50000, column age)"))
        #expect(try scratch.count("people") == 0)
    }

    @Test("a constraint violation at the end of a COPY is reported and stores nothing")
    func constraintViolation() throws {
        let scratch = try PostgresScratch()
        try createTable(scratch)
        let error = try #require(throws: PostgresError.self) {
            try scratch.connection.copy(into: "people", schema: scratch.schema, columns: Self.columns) { writer in
                for n in 1...100 { try writer.append(Self.row(n)) }
                try writer.append(Self.row(42))
            }
        }
        #expect(error.sqlState == "23505")
        #expect(error.copyLine == 101)
        #expect(try scratch.count("people") == 0)
    }

    @Test("a failed COPY inside a transaction rolls back the transaction's earlier work")
    func rollsBackTransaction() throws {
        let scratch = try PostgresScratch()
        try createTable(scratch)
        let db = scratch.connection
        #expect(throws: PostgresError.self) {
            try db.transaction {
                try db.execute(
                    "INSERT INTO \(scratch.table("people")) (id, label) VALUES ($1, $2)",
                    [.integer(-1), .text("before")])
                try db.copy(into: "people", schema: scratch.schema, columns: Self.columns) { writer in
                    for n in 1...1000 { try writer.append(Self.row(n)) }
                    try writer.append([.integer(1001), .null, .null, .text("x"), .null, .null, .null])
                }
            }
        }
        #expect(!db.isInTransaction)
        #expect(try scratch.count("people") == 0)
    }

    @Test("an error thrown by the producer aborts the COPY and is rethrown as is")
    func producerThrows() throws {
        struct SourceBroke: Error, Equatable {}
        let scratch = try PostgresScratch()
        try createTable(scratch)
        #expect(throws: SourceBroke.self) {
            try scratch.connection.copy(
                into: "people", schema: scratch.schema, columns: Self.columns, batchBytes: 1024
            ) { writer in
                for n in 1...5000 { try writer.append(Self.row(n)) }
                throw SourceBroke()
            }
        }
        #expect(try scratch.count("people") == 0)
        // The session left COPY mode: a new COPY works.
        let stored = try scratch.connection.copy(into: "people", schema: scratch.schema, columns: Self.columns) {
            try $0.append(Self.row(1))
        }
        #expect(stored == 1)
    }

    @Test("a row with the wrong number of values is refused, naming the row")
    func wrongWidth() throws {
        let scratch = try PostgresScratch()
        try createTable(scratch)
        let error = try #require(throws: PostgresError.self) {
            try scratch.connection.copy(into: "people", schema: scratch.schema, columns: Self.columns) { writer in
                try writer.append(Self.row(1))
                try writer.append([.integer(2)])
            }
        }
        #expect(error.kind == .invalidValue)
        #expect(error.copyLine == 2)
        #expect(error.message == "the row has 1 values for 7 columns")
        #expect(try scratch.count("people") == 0)
    }

    @Test("a COPY into a table that does not exist fails before any row is produced")
    func missingTable() throws {
        let scratch = try PostgresScratch()
        var produced = false
        let error = try #require(throws: PostgresError.self) {
            try scratch.connection.copy(into: "absent", schema: scratch.schema, columns: ["id"]) { _ in
                produced = true
            }
        }
        #expect(!produced)
        #expect(error.sqlState == "42P01")
        #expect(error.message.contains("relation \"\(scratch.schema).absent\" does not exist"))
    }

    /// A scratch schema with the `people` table and a COPY into it, open.
    private func openStream() throws -> (PostgresScratch, PostgresCopyStream) {
        let scratch = try PostgresScratch()
        try createTable(scratch)
        return (
            scratch, try scratch.connection.beginCopy(into: "people", schema: scratch.schema, columns: Self.columns)
        )
    }

    @Test("an open COPY stream stores rows sent in parts while the caller works between sends")
    func streamInParts() throws {
        let (scratch, stream) = try openStream()
        var text = PostgresCopyText(columns: Self.columns)
        var sent = 0
        for n in 1...20_000 {
            try text.append(Self.row(n))
            if text.bytes.count - sent >= 8192 {
                try stream.send(text.bytes[sent...])
                sent = text.bytes.count
            }
        }
        try stream.send(text.bytes[sent...])
        #expect(try stream.finish() == 20_000)
        #expect(try scratch.count("people") == 20_000)
        #expect(throws: PostgresError.self, "a finished stream takes no more rows") {
            try stream.send(text.bytes[...])
        }
    }

    @Test("another statement on the connection aborts an open COPY: nothing of it stays, its finish says why")
    func otherStatementAbortsStream() throws {
        let (scratch, stream) = try openStream()
        var text = PostgresCopyText(columns: Self.columns)
        for n in 1...100 { try text.append(Self.row(n)) }
        try stream.send(text.bytes[...])
        #expect(try scratch.connection.execute("SELECT 41 + 1").rows[0].int(0) == 42)
        let error = try #require(throws: PostgresError.self) { try stream.finish() }
        #expect(error.message.contains("another statement ran on the connection"), "\(error)")
        #expect(try scratch.count("people") == 0)
    }

    @Test("a constraint violation in a streamed COPY comes from finish, or from a later send once the server refused")
    func streamConstraintViolation() throws {
        let (scratch, stream) = try openStream()
        var text = PostgresCopyText(columns: Self.columns)
        try text.append(Self.row(7))
        try text.append(Self.row(7))
        let error = try #require(throws: PostgresError.self) {
            try stream.send(text.bytes[...])
            try stream.finish()
        }
        #expect(error.sqlState == "23505")
        #expect(error.copyLine == 2)
        #expect(try scratch.count("people") == 0)
        #expect(try scratch.connection.execute("SELECT 1").rows[0].int(0) == 1, "the session is usable")
    }
}
