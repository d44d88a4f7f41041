import Foundation

/// SQLite's write lock on a store file, held by a migration from before it reads the store until
/// its new file is in place, so that every SQLite client (the `sqlite3` shell, an app, Core Data)
/// that writes meanwhile waits or fails with `SQLITE_BUSY` ("database is locked").
///
/// ``StoreLock`` excludes ferry's own writers only. SQLite's locks are POSIX record locks, which a
/// process loses as soon as it closes *any* descriptor of the file (reading a store's header,
/// copying it): a `BEGIN IMMEDIATE` on one connection does not survive a migration that reads
/// the file in other ways. On Linux the barrier takes the byte ranges SQLite locks as open file
/// description locks (`F_OFD_SETLK`) on a descriptor of its own, which only ``release()``
/// closes:
///
/// - rollback journal: a write lock on SQLite's reserved byte and a read lock on its shared range,
///   what `BEGIN IMMEDIATE` holds: no other connection can start a write transaction, readers
///   still read.
/// - WAL: the writer lock lives in the `-shm` (which ferry never opens otherwise), so a
///   connection of the barrier's own holds `BEGIN IMMEDIATE`, taken once a complete checkpoint
///   left the `-wal` empty; plus the read lock on the shared range, so that no other process takes
///   the exclusive lock with which closing its last connection deletes the `-wal` and `-shm`, or
///   changes the journal mode.
///
/// Elsewhere the connection's `BEGIN IMMEDIATE` is the barrier in both modes.
package final class SQLiteWriteBarrier {
    /// SQLite's lock bytes (`os.h`): the pending byte at 1 GiB, the reserved byte after it, then
    /// the 510 bytes of the shared range.
    private static let pendingByte: Int64 = 0x4000_0000
    private static let reservedByte = pendingByte + 1
    private static let sharedFirst = pendingByte + 2
    private static let sharedSize: Int64 = 510

    /// The store file.
    package let path: String
    /// The descriptor whose open file description holds the locks (-1: none).
    private var descriptor: Int32 = -1
    /// The connection holding `BEGIN IMMEDIATE` (WAL, or where there are no descriptor locks).
    private var connection: Connection?
    /// True when the store is in WAL mode.
    private var isWriteAheadLog = false

    /// Takes the barrier on the SQLite database at `path`, waiting up to `timeout` for another
    /// writer to finish.
    ///
    /// - Throws: `FerryError` (`.store`) when another connection keeps writing for `timeout`, or
    ///   when a WAL store's `-wal` cannot be emptied (a reader holds an older snapshot).
    package init(path: String, timeout: Duration) throws {
        self.path = path
        let deadline = ContinuousClock.now + timeout
        do {
            if FileIO.hasDescriptorLocks {
                do {
                    descriptor = try FileIO.openExisting(path)
                } catch {
                    throw FerryError(.io, "cannot open '\(path)' to lock it for the migration: \(error)")
                }
                if try isWAL() {
                    isWriteAheadLog = true
                    try lock(exclusive: false, start: Self.sharedFirst, length: Self.sharedSize, until: deadline)
                    try beginWrite(emptyingLog: true, until: deadline)
                    try refuseOtherConnections()
                } else {
                    try lock(exclusive: false, start: Self.sharedFirst, length: Self.sharedSize, until: deadline)
                    try lock(exclusive: true, start: Self.reservedByte, length: 1, until: deadline)
                }
            } else {
                try beginWrite(emptyingLog: false, until: deadline)
            }
        } catch {
            release()
            throw error
        }
    }

    deinit { release() }

    /// Releases the barrier: the descriptor closed first, then the connection's transaction
    /// rolled back and the connection closed, which, as the last connection of a WAL store that
    /// is still in place (a failed migration), checkpoints and removes its `-wal` and `-shm` as
    /// SQLite always does. After the swap SQLite sees the file moved and leaves them alone (they
    /// are gone already). Called again, it does nothing.
    package func release() {
        if descriptor >= 0 {
            FileIO.close(descriptor)
            descriptor = -1
        }
        if let connection {
            try? connection.execute("ROLLBACK")
            self.connection = nil  // the only reference: the connection closes here
        }
    }

    /// Puts the finished store at `newPath` in place of the locked one (``StoreFiles/swapIn(_:at:)``)
    /// and releases the barrier: after the `rename(2)` where the descriptor holds the locks (a
    /// writer waiting meanwhile then finds the file it opened moved), else just before it (where
    /// the connection is the barrier: closing the old file's last connection after the rename
    /// must not remove a `-wal` by name).
    package func swapIn(_ newPath: String) throws {
        guard descriptor >= 0 else {
            release()
            try StoreFiles.swapIn(newPath, at: path)
            return
        }
        defer { release() }
        if isWriteAheadLog { try refuseOtherConnections() }
        try StoreFiles.swapIn(newPath, at: path)
    }

    /// Refuses a WAL store that another process has open. Such a connection keeps the replaced
    /// file's -wal and -shm: what it writes after the swap (a write waiting for the barrier
    /// included) would be committed to a file that is no longer the store, and lost. Every open
    /// connection holds a read lock on the -shm, so its holders are the connections. Checked when
    /// the barrier is taken and again just before the swap (a connection may open meanwhile).
    private func refuseOtherConnections() throws {
        let holders = LockHolders.others(of: path + "-shm")
        guard !holders.isEmpty else { return }
        let names = holders.map(\.description).joined(separator: ", ")
        throw FerryError(
            .store,
            "cannot migrate '\(path)': another process has it open (\(names)); in WAL mode what it writes after the migration would go to the replaced file and be lost, so nothing was changed",
            notes: ["close the store in that program (quit the app, end the sqlite3 shell) and run the migration again"]
        )
    }

    /// True when the file's header says WAL (its read and write versions are 2).
    private func isWAL() throws -> Bool {
        let header: [UInt8]
        do {
            header = try FileIO.readBytes(descriptor, at: 0, count: 20)
        } catch {
            throw FerryError(.io, "cannot read '\(path)' to lock it for the migration: \(error)")
        }
        return header.count == 20 && header[18] == 2
    }

    /// Takes a descriptor lock, retrying until `deadline`.
    private func lock(exclusive: Bool, start: Int64, length: Int64, until deadline: ContinuousClock.Instant) throws {
        while true {
            let taken: Bool
            do {
                taken = try FileIO.tryLockRange(descriptor, exclusive: exclusive, start: start, length: length)
            } catch {
                throw FerryError(.io, "cannot lock '\(path)' for the migration: \(error)")
            }
            if taken { return }
            guard ContinuousClock.now < deadline else { throw busy() }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// `BEGIN IMMEDIATE` on a connection of the barrier's own; with `emptyingLog`, only once the
    /// `-wal` is empty (checkpointed completely before the transaction, and nothing written since).
    private func beginWrite(emptyingLog: Bool, until deadline: ContinuousClock.Instant) throws {
        let connection = try Connection(path: path, create: false)
        self.connection = connection
        while true {
            let remaining = max(deadline - ContinuousClock.now, .milliseconds(1))
            connection.setBusyTimeout(milliseconds: Int(remaining.components.seconds * 1000) + 1)
            if emptyingLog { _ = try? connection.rows("PRAGMA wal_checkpoint(TRUNCATE)") }
            do {
                try connection.execute("BEGIN IMMEDIATE")
            } catch {
                throw busy()
            }
            let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int ?? 0
            if !emptyingLog || wal == 0 { return }
            try? connection.execute("ROLLBACK")
            guard ContinuousClock.now < deadline else { throw busy() }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    private func busy() -> FerryError {
        FerryError(
            .store,
            "cannot migrate '\(path)': another process keeps writing to it (SQLite's write lock is taken); nothing was changed",
            notes: ["close the other connections to the store (apps, sqlite3 shells) and run the migration again"])
    }
}
