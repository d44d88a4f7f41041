import Foundation
import Synchronization

/// ferry's writer lock on a store file: an exclusive `flock(2)` on `STORE.ferry-lock` beside it.
///
/// SQLite's own locks are POSIX record locks, which a process loses as soon as it closes *any*
/// descriptor of the database file, and which only last one transaction. A migration or a rebuild
/// must exclude other writers from its first read to its final `rename(2)`, across many
/// connections and file operations; a second lock on a file of its own, which is never renamed,
/// replaced or opened for anything else, does that. Every ferry writer takes it before it opens the
/// store for writing, so it always opens the file that is at the path once it holds the lock: a
/// writer that waited for a migration writes into the migrated store, never into the retired one.
///
/// The lock is reentrant within a process (a job holds it while its migrate step takes it again)
/// and released when the last holder in the process lets go, or when the process ends, however it
/// ends. The lock file is left in place: removing it would let two processes lock two different
/// files of the same name.
package final class StoreLock: Sendable {
    /// The lock file's path.
    package let path: String

    /// Whether an opener of a store takes its writer lock.
    package enum Policy: Sendable {
        /// Take it, creating the lock file when there is none yet (every writer).
        case take
        /// Take it only when the lock file exists (dry runs, which must not create files).
        case takeIfPresent
        /// Do not take it: a work file whose caller holds the lock of the store it will replace.
        case none
    }

    private struct Held {
        var descriptor: Int32
        var holders: Int
    }

    /// The locks this process holds, by lock file path.
    private static let held = Mutex<[String: Held]>([:])

    private init(path: String) {
        self.path = path
    }

    deinit {
        Self.held.withLock { held in
            guard var entry = held[path] else { return }
            entry.holders -= 1
            if entry.holders > 0 {
                held[path] = entry
            } else {
                held[path] = nil
                FileIO.unlockAndClose(entry.descriptor)
            }
        }
    }

    /// Opens the lock file at `path`, creating it and (like `mkdir -p`) its folder: a writer
    /// creates the store there next.
    private static func openLockFile(_ path: String) throws(FileIO.Failure) -> Int32 {
        do {
            return try FileIO.openLockFile(path)
        } catch  where error.isMissingFile {
            let folder = (path as NSString).deletingLastPathComponent
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            return try FileIO.openLockFile(path)
        }
    }

    /// The lock file of the store at `storePath`.
    package static func lockPath(for storePath: String) -> String {
        URL(fileURLWithPath: storePath).standardizedFileURL.path + ".ferry-lock"
    }

    /// False for stores that have no file to lock (`:memory:`, SQLite URIs, PostgreSQL URLs).
    package static func isLockable(_ storePath: String) -> Bool {
        // A PostgreSQL store's one writer is a server advisory lock (`Store+PostgreSQL.swift`).
        storePath != ":memory:" && !storePath.hasPrefix("file:") && !StoreLocation.namesDatabaseServer(storePath)
    }

    /// Takes the writer lock of the store at `storePath`, waiting up to `timeout` for another
    /// process to release it. Creates the store's folder when it does not exist yet.
    ///
    /// - Throws: `.store` "the store is locked by another process" when the wait times out, `.io`
    ///   when the lock file cannot be created.
    package static func acquire(for storePath: String, timeout: Duration) throws -> StoreLock {
        guard let lock = try acquire(for: storePath, timeout: timeout, policy: .take) else {
            throw FerryError(.internal, "no writer lock was taken for '\(storePath)'")
        }
        return lock
    }

    /// Takes the writer lock of the store at `storePath` as `policy` says; nil when it says not to
    /// (or, with `.takeIfPresent`, when the store has no lock file) and for in-memory stores.
    package static func acquire(for storePath: String, timeout: Duration, policy: Policy) throws -> StoreLock? {
        guard isLockable(storePath), policy != .none else { return nil }
        let path = lockPath(for: storePath)
        if policy == .takeIfPresent && !FileManager.default.fileExists(atPath: path) { return nil }
        let deadline = ContinuousClock.now + timeout
        while true {
            let outcome: Result<Bool, FerryError> = held.withLock { held in
                if var entry = held[path] {
                    entry.holders += 1
                    held[path] = entry
                    return .success(true)
                }
                let descriptor: Int32
                do {
                    descriptor = try Self.openLockFile(path)
                } catch {
                    return .failure(
                        FerryError(.io, "cannot create the lock file '\(path)' of the store '\(storePath)': \(error)"))
                }
                guard FileIO.tryLockExclusively(descriptor) else {
                    FileIO.close(descriptor)
                    return .success(false)
                }
                held[path] = Held(descriptor: descriptor, holders: 1)
                return .success(true)
            }
            if try outcome.get() { return StoreLock(path: path) }
            guard ContinuousClock.now < deadline else {
                throw FerryError(
                    .store,
                    "the store '\(storePath)' is locked by another process (waited \(timeout.formattedSeconds))",
                    notes: ["another ferry job, import or migration is writing to it; run again when it has finished"])
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}
