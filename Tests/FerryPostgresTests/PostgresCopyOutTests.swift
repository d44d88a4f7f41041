import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

@Suite(
    "PostgreSQL COPY TO STDOUT: rows, escapes, errors, ending early",
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresCopyOutTests {
    /// Every row of `query` through COPY, each as its fields (nil for NULL) decoded as text.
    private static func copied(_ connection: PostgresConnection, _ query: String) throws -> [[String?]] {
        let stream = try connection.copyOut(query)
        var scratch: [UInt8] = []
        var rows: [[String?]] = []
        while let row = try stream.nextRow() {
            var fields: [String?] = []
            PostgresCopyTextFields.forEach(in: row, scratch: &scratch) { _, field in
                fields.append(field.map { String(decoding: $0, as: UTF8.self) })
            }
            rows.append(fields)
        }
        #expect(stream.rowCount == rows.count)
        return rows
    }

    static let texts = [
        "tab\there", "line\nbreak", "carriage\r\nreturn", "back\\slash \\N \\t", "\\", "", "\\N",
        "Ünïcödé Żółć 日本語 \u{1F680}", "quote \" and ' and ,", "\u{1}\u{8}\u{B}\u{C}\u{7F}", "trailing \\",
    ]

    @Test("hard text, NULLs and every escape read back as the values the server holds")
    func hardText() throws {
        let scratch = try PostgresScratch()
        let table = scratch.table("texts")
        try scratch.connection.execute("CREATE TABLE \(table) (id int, t text, b bytea)")
        for (index, text) in Self.texts.enumerated() {
            try scratch.connection.execute(
                "INSERT INTO \(table) VALUES ($1, $2, $3)",
                [.integer(Int64(index)), .text(text), .bytes(Array(text.utf8))])
        }
        try scratch.connection.execute("INSERT INTO \(table) VALUES (99, NULL, NULL)")
        let rows = try Self.copied(scratch.connection, "SELECT id, t, b FROM \(table) ORDER BY id")
        #expect(rows.count == Self.texts.count + 1)
        for (index, text) in Self.texts.enumerated() {
            #expect(
                rows[index] == ["\(index)", text, "\\x" + Array(text.utf8).map { String(format: "%02x", $0) }.joined()])
        }
        #expect(rows.last == ["99", nil, nil])
        // The session is usable after the COPY.
        #expect(try scratch.connection.execute("SELECT 1").rows[0].int(0) == 1)
    }

    @Test("200 000 rows stream with flat memory and in order")
    func manyRows() throws {
        let scratch = try PostgresScratch()
        let stream = try scratch.connection.copyOut("SELECT g, repeat('x', g % 50) FROM generate_series(1, 200000) g")
        var scratchBytes: [UInt8] = []
        var expected = 1
        while let row = try stream.nextRow() {
            var number = 0
            var length = -1
            PostgresCopyTextFields.forEach(in: row, scratch: &scratchBytes) { index, field in
                guard let field else { return }
                if index == 0 {
                    number = Int(String(decoding: field, as: UTF8.self)) ?? -1
                } else {
                    length = field.count
                }
            }
            if number != expected || length != expected % 50 {
                Issue.record("row \(expected): \(number), \(length)")
                break
            }
            expected += 1
        }
        #expect(expected == 200_001)
    }

    @Test("a query that fails part way throws the server's error from the read that meets it")
    func failsMidStream() throws {
        let scratch = try PostgresScratch()
        let stream = try scratch.connection.copyOut("SELECT 10 / (3 - g) FROM generate_series(1, 5) g")
        var read = 0
        let error = #expect(throws: PostgresError.self) {
            while try stream.nextRow() != nil { read += 1 }
        }
        #expect(read == 2)
        #expect(error?.sqlState == "22012", "\(String(describing: error))")
        #expect(error?.message.contains("division by zero") == true)
        #expect(try scratch.connection.execute("SELECT 2").rows[0].int(0) == 2)
    }

    @Test("a query the server refuses fails before any row, naming the cause")
    func refusedQuery() throws {
        let scratch = try PostgresScratch()
        let error = #expect(throws: PostgresError.self) {
            _ = try scratch.connection.copyOut("SELECT nope FROM nowhere")
        }
        #expect(error?.sqlState == "42P01", "\(String(describing: error))")
        #expect(try scratch.connection.execute("SELECT 3").rows[0].int(0) == 3)
    }

    @Test("cancel stops the server; another statement drains an open COPY, whose next read says why")
    func endingEarly() throws {
        let scratch = try PostgresScratch()
        // Cancelled inside a transaction: the transaction fails, the session stays usable.
        #expect(throws: (any Error).self) {
            try scratch.connection.transaction {
                let stream = try scratch.connection.copyOut("SELECT g FROM generate_series(1, 50000000) g")
                #expect(try stream.nextRow() != nil)
                let started = ContinuousClock.now
                stream.cancel()
                #expect(started.duration(to: .now) < .seconds(20))
                #expect(try stream.nextRow() == nil)
                _ = try scratch.connection.execute("SELECT 1")
            }
        }
        #expect(try scratch.connection.execute("SELECT 4").rows[0].int(0) == 4)
        // Another statement: the rest is read and dropped, the statement runs, the stream ends.
        let stream = try scratch.connection.copyOut("SELECT g FROM generate_series(1, 1000) g")
        #expect(try stream.nextRow() != nil)
        #expect(try scratch.connection.execute("SELECT 5").rows[0].int(0) == 5)
        let error = #expect(throws: PostgresError.self) { _ = try stream.nextRow() }
        #expect(error?.message.contains("another statement ran on the connection") == true)
    }

    @Test("fields split on tabs and unescape as COPY writes and reads them")
    func fields() {
        func split(_ text: String) -> [String?] {
            var scratch: [UInt8] = []
            var fields: [String?] = []
            let count = Array(text.utf8).withUnsafeBufferPointer { row in
                PostgresCopyTextFields.forEach(in: row, scratch: &scratch) { index, field in
                    #expect(index == fields.count)
                    fields.append(field.map { String(decoding: $0, as: UTF8.self) })
                }
            }
            #expect(count == fields.count)
            return fields
        }
        #expect(split("1\tabc\t\\N\n") == ["1", "abc", nil])
        #expect(split("\n") == [""])
        #expect(split("\t\n") == ["", ""])
        #expect(split("\\\\N\t\\N") == ["\\N", nil])
        #expect(split("a\\tb\\nc\\rd\\\\e\\bf\\fg\\vh") == ["a\tb\nc\rd\\e\u{8}f\u{C}g\u{B}h"])
        #expect(split("\\101\\x42\\x4g\\7\\q") == ["AB\u{4}g\u{7}q"])
        #expect(split("end\\") == ["end\\"])
    }
}
