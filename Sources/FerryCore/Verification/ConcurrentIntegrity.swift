internal import CFerrySQLite
import Foundation

/// `PRAGMA integrity_check` (or `quick_check`) run on a second, read-only connection on another
/// thread, while the session's own connection runs the other checks.
///
/// The verifier only starts one when the two connections are bound to see the same state of the
/// store: the store is a file in a rollback-journal mode (not WAL) and the session's connection
/// is in a read transaction (not a write transaction with changes others cannot see) whose
/// SHARED lock it already holds, so no writer can commit until the session ends. The second connection gets no busy timeout: when it cannot read at once (a writer is
/// waiting for the session's lock), or fails in any way, the session runs the pragma itself, as
/// it always did, so reports never depend on whether the concurrent run worked.
final class ConcurrentIntegrity: @unchecked Sendable {
    // @unchecked: `problems` and `seconds` are written by the worker thread before it signals
    // `done`, and read only after waiting for it.
    private let done = DispatchSemaphore(value: 0)
    private var problems: [String]?
    private var seconds: Double = 0
    let pragma: String

    /// Starts the pragma on `path` at once.
    init(path: String, pragma: String, cacheSize: Int = -16384) {
        self.pragma = pragma
        Thread.detachNewThread { [self] in
            let started = ContinuousClock.now
            do {
                let connection = try Connection(path: path, readOnly: true, create: false)
                try connection.execute("PRAGMA cache_size = \(cacheSize)")
                problems = try connection.rows("PRAGMA \(pragma)(100)").compactMap { $0.first?.text }.filter {
                    $0 != "ok"
                }
            } catch {
                problems = nil
            }
            seconds = Verifier.seconds(since: started)
            done.signal()
        }
    }

    /// Waits for the pragma: its problems (empty when it said `ok`) and how long it ran, or nil
    /// when it could not run.
    func wait() -> (problems: [String], seconds: Double)? {
        done.wait()
        done.signal()  // a second wait returns at once
        return problems.map { ($0, seconds) }
    }

    /// Starts the pragma for `connection`'s database when a second connection sees the same
    /// state (see the type's description); nil otherwise.
    static func start(for connection: Connection, quick: Bool) -> ConcurrentIntegrity? {
        let path = connection.path
        guard connection.isInTransaction, path != ":memory:", !path.hasPrefix("file:"),
            FileManager.default.fileExists(atPath: path)
        else {
            return nil
        }
        do {
            guard try connection.scalar("PRAGMA journal_mode")?.text?.lowercased() != "wal" else { return nil }
            // A read in the transaction takes (and keeps) the SHARED lock before the second
            // connection starts reading.
            _ = try connection.scalar("SELECT count(*) FROM sqlite_schema")
        } catch {
            return nil
        }
        // A write transaction (a dry run, changes not yet committed) is not what another
        // connection would see.
        guard sqlite3_txn_state(connection.handle, "main") == SQLITE_TXN_READ else { return nil }
        return ConcurrentIntegrity(path: path, pragma: quick ? "quick_check" : "integrity_check")
    }
}
