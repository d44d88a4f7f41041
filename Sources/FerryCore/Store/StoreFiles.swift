import Foundation
import Logging

/// File-level operations on a store and its companion files (`-journal`, `-wal`, `-shm`).
package enum StoreFiles {
    /// The companion files SQLite may keep beside a database.
    package static func companions(of path: String) -> [String] {
        [path + "-journal", path + "-wal", path + "-shm"]
    }

    /// What follows the store's file name in the names of ferry's work files beside it: a
    /// migration's steps (`STORE.ferry-migrating-N`), a rebuild's new store, a dry run's copy.
    package static let migrationScratchMark = ".ferry-migrating-"
    package static let rebuildMark = ".ferry-rebuild"
    package static let dryRunMark = ".ferry-dry-run"
    /// `ferry copy`'s new store, renamed to the destination once verified.
    package static let copyScratchMark = ".ferry-copy"
    package static let workFileMarks = [migrationScratchMark, rebuildMark, dryRunMark, copyScratchMark]

    /// Removes the files beside the store at `path` whose names are the store's followed by one
    /// of `marks` (work files a killed run left, with their companions). Only call it while
    /// holding the store's writer lock: no running ferry owns such files then.
    package static func removeLeftovers(of path: String, marked marks: [String]) {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let prefixes = marks.map { url.lastPathComponent + $0 }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where prefixes.contains(where: { name.hasPrefix($0) }) {
            removeWorkFile((folder as NSString).appendingPathComponent(name))
        }
    }

    /// Removes a store and its companion files, ignoring those that do not exist.
    package static func remove(_ path: String) {
        for file in [path] + companions(of: path) {
            removeWorkFile(file)
        }
    }

    /// Removes a temporary or work file or folder ferry made, as cleanup after the work (or its
    /// failure): one that does not exist is fine; one that cannot be removed does not fail the
    /// run (its own outcome is the one reported) but is logged at `notice` with the reason, so a
    /// file left behind is never silent.
    package static func removeWorkFile(_ path: String) {
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch CocoaError.fileNoSuchFile {
            return
        } catch {
            guard FileManager.default.fileExists(atPath: path) else { return }
            FerryLog.store.notice("could not remove the work file '\(path)': \(error.localizedDescription)")
        }
    }

    /// Atomically puts the (closed) store at `newPath` in place of `path`.
    ///
    /// An old store with a hot journal or a WAL is first opened and settled, so that no
    /// companion file of the old store can be applied to the new one; then `rename(2)` swaps the
    /// files in one step: a crash leaves either the old store or the new one, never a mix.
    package static func replace(_ path: String, with newPath: String) throws {
        if companions(of: path).contains(where: { FileManager.default.fileExists(atPath: $0) }) {
            let connection = try Connection(path: path, create: false)
            // Reading recovers a hot journal; DELETE mode checkpoints and removes a WAL.
            _ = try connection.scalar("SELECT count(*) FROM sqlite_schema")
            _ = try connection.scalar("PRAGMA journal_mode = DELETE")
        }
        for file in companions(of: path) where FileManager.default.fileExists(atPath: file) {
            throw FerryError(.store, "cannot replace '\(path)': \(file) is still in use by another process")
        }
        do {
            try FileIO.rename(newPath, to: path)
        } catch {
            throw FerryError(.io, "cannot move '\(newPath)' to '\(path)': \(error)")
        }
    }
}
