import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// A migration step's new file is flushed on another thread while the step verifies it; the
/// step swaps it in only after `finish()`.
@Suite struct BackgroundFlushTests {
    @Test("a store flushed in the background while it is read stays intact, and finish() flushes what came after")
    func flushWhileReading() throws {
        let directory = TemporaryDirectory("ferry-flush")
        let path = directory.file("new.sqlite")
        do {
            let connection = try Connection(path: path)
            try connection.execute("PRAGMA journal_mode = OFF")
            try connection.executeScript(
                """
                CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
                INSERT INTO t SELECT i, printf('value %d', i) FROM n;
                """)
        }
        let flush = try BackgroundFlush(path)
        flush.start()
        flush.start()  // a second flush queues behind the first
        // A reader meanwhile, as the step's checks are.
        do {
            let reader = try Connection(path: path, readOnly: true, create: false)
            #expect(try reader.scalar("SELECT count(*) FROM t")?.int64 == 20000)
            #expect(try reader.scalar("PRAGMA integrity_check")?.text == "ok")
        }
        // A write after the flush started (the journal-mode byte a WAL store gets).
        do {
            let writer = try Connection(path: path, create: false)
            _ = try writer.scalar("PRAGMA journal_mode = WAL")
        }
        try flush.finish()
        let check = try Connection(path: path, readOnly: true, create: false)
        #expect(try check.scalar("PRAGMA journal_mode")?.text == "wal")
        #expect(try check.scalar("SELECT sum(k) FROM t")?.int64 == 20000 * 20001 / 2)
    }

    @Test("a file that is not there: a clear error naming it, before any flush starts")
    func missingFile() throws {
        let directory = TemporaryDirectory("ferry-flush")
        let path = directory.file("gone.sqlite")
        let error = try #require(throws: FerryError.self) { try BackgroundFlush(path) }
        #expect(error.code == .io)
        #expect(error.message.contains("cannot open '\(path)' to flush it"), "\(error.message)")
    }
}
