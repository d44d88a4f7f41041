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

    /// Rolls back the hot journal a killed writer left beside the store at `path`, as any SQLite
    /// connection that may write does when it first reads, so that a read-only connection then
    /// reads the last committed state (a read-only connection cannot roll a journal back: SQLite
    /// fails it with "attempt to write a readonly database"). Does nothing without a journal, or
    /// when the store cannot be written (then the read-only open reports it).
    package static func rollBackHotJournal(_ path: String, busyTimeout: Duration) {
        let journal = path + "-journal"
        guard let size = (try? FileManager.default.attributesOfItem(atPath: journal))?[.size] as? Int, size > 0,
            FileManager.default.isWritableFile(atPath: path),
            let connection = try? Connection(path: path, readOnly: false, create: false)
        else { return }
        connection.setBusyTimeout(milliseconds: busyTimeout.milliseconds)
        do {
            _ = try connection.scalar("SELECT count(*) FROM sqlite_schema")
        } catch {
            FerryLog.store.notice("could not roll back the journal beside '\(path)': \(error)")
        }
    }

    /// How a work file is named in messages: `quoted` in place of `'path'`, `bare` in place of
    /// the path alone.
    package struct ShownName: Sendable {
        package var path: String
        package var quoted: String
        package var bare: String

        package init(path: String, quoted: String, bare: String) {
            self.path = path
            self.quoted = quoted
            self.bare = bare
        }
    }

    /// `error` with ferry's work files named as the user knows them (a migration's scratch file as
    /// "the version 2 copy of 'store'", a copy's as the copy being built): each path, and first the
    /// `file:` URIs ferry opens it by (`?mode=ro`, `rw`, `rwc`, as SQLite's messages repeat them),
    /// the longest paths first (`-10` before `-1`). Any other error is returned as it is.
    package static func naming(_ error: any Error, _ files: [ShownName]) -> any Error {
        guard var error = error as? FerryError else { return error }
        func rename(_ text: String) -> String {
            var text = text
            for file in files.sorted(by: { $0.path.count > $1.path.count }) {
                let forms = ["ro", "rw", "rwc"].map { MigrationStepRunner.uri(file.path, mode: $0) } + [file.path]
                for form in forms {
                    text = text.replacingOccurrences(of: "'\(form)'", with: file.quoted)
                        .replacingOccurrences(of: form, with: file.bare)
                }
            }
            return text
        }
        error.message = rename(error.message)
        error.notes = error.notes.map(rename)
        return error
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
            try FileIO.replace(path, with: newPath)
        } catch {
            throw FerryError(.io, "cannot move '\(newPath)' to '\(path)': \(error)")
        }
    }
}
