import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Flushes a step's new store file to disk on another thread while the step verifies it: the
/// disk writes (hundreds of megabytes for a large store) overlap the checks' CPU work instead of
/// following it. ``finish()`` waits for it, flushes what was written since (the journal-mode
/// byte of the header) and the file's folder, and only then may the file be swapped in.
///
/// The file stays open until ``finish()``, called once every SQLite connection to it is closed:
/// closing a descriptor drops the process's POSIX locks on the file, which SQLite's connections
/// to it would still rely on.
final class BackgroundFlush: @unchecked Sendable {
    // @unchecked: `failure` is written by the worker thread before it signals `done`, and read
    // only after waiting for it.
    private let done = DispatchSemaphore(value: 0)
    private var failure: Int32?
    private let descriptor: Int32
    private let path: String
    private var closed = false

    /// Starts flushing the file at `path`, whose writers have committed.
    init(_ path: String) throws {
        self.path = path
        descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw FerryError(.io, "cannot open '\(path)' to flush it: \(String(cString: strerror(errno)))")
        }
        Thread.detachNewThread { [self] in
            if fsync(descriptor) != 0 { failure = errno }
            done.signal()
        }
    }

    /// Waits for the flush, flushes the rest of the file and its folder, and closes the file.
    func finish() throws {
        done.wait()
        defer {
            close(descriptor)
            closed = true
        }
        if let failure {
            throw FerryError(.io, "cannot flush '\(path)': \(String(cString: strerror(failure)))")
        }
        try StoreFiles.synchronize(path)
    }

    // A step that failed before `finish()` leaves the file to be removed; the worker thread holds
    // `self` until it is done, so this runs after it.
    deinit {
        if !closed { close(descriptor) }
    }
}
