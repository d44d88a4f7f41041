import Foundation

/// A private copy of a Core Data store (main file, `-wal`, `-journal`) in a temporary folder,
/// opened read-write there so that SQLite can replay the WAL and rebuild `-shm` without
/// touching the user's files (COREDATA.md §2.1: opening an original, even read-only, rewrites
/// its `-shm`; `immutable=1` would hide rows that live only in the `-wal`).
///
/// ```swift
/// let copy = try CoreDataStoreCopy(of: "App.sqlite")
/// defer { copy.remove() }
/// let rows = try copy.connection.rows("SELECT count(*) FROM ZPOST")
/// ```
package final class CoreDataStoreCopy {
    /// The user's store.
    package let original: String
    /// The copy's folder (removed by ``remove()``).
    package let folder: URL
    /// The open copy.
    package private(set) var connection: Connection?
    /// The copy's main file.
    package var path: String { folder.appendingPathComponent("store.sqlite").path }

    /// What starts the name of every copy's folder, followed by the owning process id and `-`.
    static let folderPrefix = "ferry-coredata-"

    /// A new private folder (0700) in the temporary directory for a copy of the store at
    /// `path`, named so that the next process making one removes it once its owner is gone
    /// (``removeAbandonedCopies()``).
    package static func makePrivateFolder(for path: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "\(folderPrefix)\(FileIO.processID)-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw FerryError(.io, "cannot make a private copy of store '\(path)': \(error.localizedDescription)")
        }
        return folder
    }

    /// Copies the store and its companions and opens the copy.
    package init(of path: String) throws {
        original = path
        Self.removeAbandonedCopies()
        folder = try Self.makePrivateFolder(for: path)
        let copy = self.path
        do {
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            // -shm is left behind on purpose: SQLite rebuilds it from the -wal.
            for suffix in ["-wal", "-journal"] where FileManager.default.fileExists(atPath: path + suffix) {
                try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
            }
            // The copies are ferry's own: writable, whatever the originals' permissions.
            for file in [copy, copy + "-wal", copy + "-journal"] where FileManager.default.fileExists(atPath: file) {
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
            }
            connection = try Connection(path: copy, readOnly: false, create: false)
        } catch let error as FerryError {
            remove()
            throw FerryError(error.code, error.message.replacingOccurrences(of: copy, with: path), notes: error.notes)
        } catch {
            remove()
            throw FerryError(.io, "cannot make a private copy of store '\(path)': \(error.localizedDescription)")
        }
    }

    /// The open connection to the copy.
    package var database: Connection {
        get throws {
            guard let connection else { throw FerryError(.internal, "the copy of store '\(original)' is closed") }
            return connection
        }
    }

    /// Closes the copy and deletes its folder.
    package func remove() {
        connection = nil
        try? FileManager.default.removeItem(at: folder)
    }

    deinit { remove() }

    /// Removes the copies of processes that no longer run (ferry stopped at once by a signal
    /// leaves its copy behind).
    static func removeAbandonedCopies() {
        let temporary = FileManager.default.temporaryDirectory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: temporary.path) else { return }
        for name in names where name.hasPrefix(folderPrefix) {
            let rest = name.dropFirst(folderPrefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[rest.startIndex..<dash]), pid > 0 else {
                continue
            }
            if !FileIO.processRuns(pid) {
                try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
            }
        }
    }
}
