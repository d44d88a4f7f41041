import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Flushes a step's new store file to disk on another thread while the step goes on: the disk
/// writes (hundreds of megabytes for a large store) overlap the step's CPU work (building the
/// indexes, verifying) instead of following it. Each ``start()`` flushes what the file holds at
/// that moment; ``finish()`` waits for them, flushes what was written since (the journal-mode
/// byte of the header) and the file's folder, and only then may the file be swapped in.
///
/// The file stays open until ``finish()``, called once every SQLite connection to it is closed:
/// closing a descriptor drops the process's POSIX locks on the file, which SQLite's connections
/// to it would still rely on.
final class BackgroundFlush: @unchecked Sendable {
    // @unchecked: `failure` is only read and written on `queue`, a serial queue.
    private let queue = DispatchQueue(label: "ferry.background-flush")
    private var failure: Int32?
    private let descriptor: Int32
    private let path: String

    /// Opens the file at `path` (a step's new store, already created) for flushing.
    init(_ path: String) throws {
        self.path = path
        descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw FerryError(.io, "cannot open '\(path)' to flush it: \(String(cString: strerror(errno)))")
        }
    }

    /// Starts flushing what the file holds now (the pages its writers handed to the system).
    func start() {
        queue.async { [self] in
            if failure == nil, fsync(descriptor) != 0 { failure = errno }
        }
    }

    /// Waits for the flushes started, flushes the rest of the file and its folder.
    func finish() throws {
        if let failure = queue.sync(execute: { failure }) {
            throw FerryError(.io, "cannot flush '\(path)': \(String(cString: strerror(failure)))")
        }
        try StoreFiles.synchronize(path)
    }

    // Flushes still queued hold `self`, so the file closes after them.
    deinit { close(descriptor) }
}
