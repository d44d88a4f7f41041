import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

@Suite("Several rows per INSERT statement")
struct MultiRowInsertTests {
    let dir = TemporaryDirectory()

    @Test("writes its rows in order with one statement; a refused row stops it, the rows before it stay written")
    func allOrNothing() throws {
        let store = try Store.open(at: dir.file("shop.sqlite"), model: SampleModels.shop())
        try store.write { connection in
            let inserter = try BatchInserter(
                connection: connection, model: store.model, layout: store.layout, entity: "Customer",
                columns: [.attribute("id"), .attribute("email")])
            let insert = try #require(try inserter.multiRowInsert())
            #expect(insert.rowCount == MultiRowInsert.maximumRows)
            #expect(insert.columnCount == 2)
            let count = insert.rowCount
            let first = (1...count).map { Int64($0) }
            var emails = first.map { "c\($0)@x.io" }
            insert.begin()
            for (row, id) in first.enumerated() {
                try insert.bind(id, row: row, column: 0)
                try Array(emails[row].utf8).withUnsafeBufferPointer {
                    try insert.bind(Value.string(String(decoding: $0, as: UTF8.self)), row: row, column: 1)
                }
            }
            #expect(try insert.write() == count)
            inserter.didWriteMultipleRows()
            #expect(inserter.lastKey == Int64(count))
            // The second set repeats an email in its middle row: the rows before it are written,
            // it and the rows after it are not.
            let second = (1...count).map { Int64(100 + $0) }
            emails = second.map { "c\($0)@x.io" }
            emails[count / 2] = "c3@x.io"
            let bytes = emails.map { Array($0.utf8) }
            insert.begin()
            for (row, id) in second.enumerated() {
                try insert.bind(id, row: row, column: 0)
                try bytes[row].withUnsafeBufferPointer { try insert.bind(borrowingUTF8: $0, row: row, column: 1) }
            }
            #expect(try insert.write() == count / 2)
            let written = first + second.prefix(count / 2)
            let rows = try connection.rows(#"SELECT id, email FROM "Customer" ORDER BY ferry_pk"#)
            #expect(rows.map { $0[0] } == written.map { DatabaseValue.integer($0) })
            #expect(rows.map { $0[1] } == written.map { DatabaseValue.text("c\($0)@x.io") })
            // A refused first row writes nothing.
            insert.begin()
            for row in 0..<count {
                try insert.bind(Int64(row == 0 ? 1 : 500 + row), row: row, column: 0)
                try Array("d\(row)@x.io".utf8).withUnsafeBufferPointer {
                    try insert.bind(borrowingUTF8: $0, row: row, column: 1)
                }
            }
            #expect(try insert.write() == 0)
            #expect(try connection.scalar(#"SELECT count(*) FROM "Customer""#) == .integer(Int64(written.count)))
            // Without the repeated email the same statement writes all of them, text borrowed (the
            // first row's empty, bound without a buffer).
            let third = (1...count).map { Int64(200 + $0) }
            let fixed = third.map { Array("c\($0)@x.io".utf8) }
            insert.begin()
            for (row, id) in third.enumerated() {
                try insert.bind(Double(id), row: row, column: 0)
                if row == 0 {
                    try insert.bind(borrowingUTF8: UnsafeBufferPointer(start: nil, count: 0), row: row, column: 1)
                    continue
                }
                try fixed[row].withUnsafeBufferPointer { try insert.bind(borrowingUTF8: $0, row: row, column: 1) }
            }
            #expect(try insert.write() == count)
            let all = try connection.rows(#"SELECT id, email FROM "Customer" ORDER BY ferry_pk"#)
            #expect(all.count == written.count + count)
            #expect(all.last == [.integer(Int64(200 + count)), .text("c\(200 + count)@x.io")])
            #expect(try connection.scalar(#"SELECT count(*) FROM "Customer" WHERE email = ''"#) == .integer(1))
            // The ids bound as doubles were stored by the column's affinity as integers.
            #expect(try connection.scalar(#"SELECT typeof(id) FROM "Customer" WHERE id = 201"#) == .text("integer"))
        }
    }

    @Test("only plain inserts get one: keep, update, replace and wide rows write one row per statement")
    func onlyPlainInserts() throws {
        let store = try Store.open(at: dir.file("shop.sqlite"), model: SampleModels.shop())
        try store.write { connection in
            for policy in [ConflictPolicy.keep, .update, .replace] {
                let inserter = try BatchInserter(
                    connection: connection, model: store.model, layout: store.layout, entity: "Customer",
                    columns: [.attribute("id"), .attribute("email")], policy: policy)
                #expect(try inserter.multiRowInsert() == nil, "\(policy)")
            }
            let plain = try BatchInserter(
                connection: connection, model: store.model, layout: store.layout, entity: "Customer",
                columns: [.attribute("id"), .attribute("email"), .attribute("name")])
            // As many rows as 999 parameters allow, at most 16.
            #expect(try plain.multiRowInsert()?.rowCount == 16)
            #expect(try plain.multiRowInsert() === plain.multiRowInsert())
        }
    }
}
