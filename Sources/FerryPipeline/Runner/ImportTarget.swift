import FerryCore
import Foundation

/// The store file an import writes: the store itself or, for a dry run that would change what a
/// rollback cannot undo, a scratch copy in the temporary folder that ``close()`` removes.
///
/// A dry run changes nothing: one that would create the store imports into a new scratch store
/// (a PostgreSQL store that exists is written in a transaction rolled back at the end);
/// one that adds a table or columns to the store (``copyForDryRun()``), or opens a Core Data store
/// in place, works on a copy of the store and its `-wal`.
package final class ImportTarget {
    /// The user's store.
    package let store: String
    /// True for a dry run.
    package let dryRun: Bool
    /// Where the import writes: ``store``, or the scratch store of a dry run.
    package private(set) var path: String
    private let scratch: String

    /// The target of an import into `store`: a scratch store when a dry run would create it.
    package init(store: String, dryRun: Bool) {
        self.store = store
        self.dryRun = dryRun
        scratch = NSTemporaryDirectory() + "/ferry-dry-run-\(UUID().uuidString).sqlite"
        path = dryRun && !Self.exists(store) ? scratch : store
    }

    /// Whether the store exists: the file, or for a PostgreSQL URL a ferry store in its schema
    /// (a dry run into one runs in its transaction, rolled back, and sees its objects).
    private static func exists(_ store: String) -> Bool {
        (try? Store.exists(at: store)) ?? false
    }

    /// True when the import writes a scratch store instead of the user's.
    package var isScratch: Bool { path == scratch }

    /// On a dry run, moves the import to a copy of the store (and its `-wal`); nothing otherwise,
    /// or when it already works on a scratch store.
    package func copyForDryRun() throws {
        guard dryRun, !isScratch else { return }
        try JobRunner.copyStore(from: store, to: scratch)
        path = scratch
    }

    /// The store's writer lock, held from reading the store's model to the end of the import (the
    /// model read, the table added and the rows imported all belong to the same file); nil for a
    /// scratch store, and on a dry run when the store has no lock file.
    package func lock() throws -> StoreLock? {
        guard !isScratch else { return nil }
        return try StoreLock.acquire(for: store, timeout: .seconds(30), policy: dryRun ? .takeIfPresent : .take)
    }

    /// How the import opens ``path``: a scratch store needs no lock, a dry run creates no lock file.
    package var lockPolicy: StoreLock.Policy {
        dryRun ? (isScratch ? .none : .takeIfPresent) : .take
    }

    /// Removes the scratch store, if any, with its companion files.
    package func close() {
        if isScratch { JobRunner.removeWorkFile(scratch) }
    }
}
