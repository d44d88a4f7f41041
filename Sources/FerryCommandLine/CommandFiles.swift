import FerryCore
import Foundation

/// Checks made on the files a command names before it opens any of them.
enum CommandFiles {
    /// The store a command reads or changes (`export`, `update`, `delete`, `verify`, `store …`,
    /// `migrate`): a URL other than a PostgreSQL one is refused (exit 64), and a missing store is a store error (exit 1)
    /// with the same message for every command, as when a job's store must exist.
    static func requireExistingStore(_ path: String) throws {
        try PathOrURL.requireStore(path)
        // A PostgreSQL store's existence is checked when it is opened (it is not created then).
        let location = StoreLocation(path)
        guard location.isInMemory || location.mayExist else {
            throw FerryError(.store, "store '\(path)' does not exist")
        }
    }

    /// Refuses (exit 64, before anything is written) any output that is the store, one of its
    /// companion files, an input or another output, and any output that is a URL.
    static func checkOutputs(
        store: String?, inputs: [(path: String?, role: String)], outputs: [(path: String?, role: String)]
    ) throws {
        for output in outputs {
            if let path = output.path { try PathOrURL.requireFile(path, role: output.role) }
        }
        var conflicts = OutputConflicts(store: store)
        for input in inputs { conflicts.input(input.path, role: input.role) }
        for output in outputs { conflicts.output(output.path, role: output.role) }
        try conflicts.check()
    }
}
