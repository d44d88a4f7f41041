#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ferry's calls into the C library for files and processes, the one place in `FerryCore` that
/// knows which C library the platform has (Glibc or Darwin).
///
/// Each call returns or throws the cause of a failure in plain words (`strerror(3)`), which the
/// caller puts into its own located message. Why a helper and not swift-system: see "File I/O"
/// in docs/architecture.md.
package enum FileIO {
    /// Adds the owner's write permission to a file ferry copied for its own work (a snapshot's
    /// private copy, a job's `copy_from:` store), which `copyItem` made with the source's mode:
    /// a read-only source must not make its copy one that writers refuse. Nothing else widens.
    package static func makeOwnerWritable(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw FerryError(.io, "cannot read the mode of '\(path)': \(String(cString: strerror(errno)))")
        }
        let mode = info.st_mode & 0o7777
        guard mode & 0o200 == 0 else { return }
        guard chmod(path, mode | 0o200) == 0 else {
            throw FerryError(.io, "cannot make '\(path)' writable: \(String(cString: strerror(errno)))")
        }
    }

    /// A failed call: its `errno` and the cause in words (`No such file or directory`).
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// The `errno` value.
        package let code: Int32
        /// `strerror(code)`.
        package var description: String { FileIO.reason(code) }

        /// True when the file (or a folder on its path) does not exist (`ENOENT`).
        package var isMissingFile: Bool { code == ENOENT }

        /// True when the device is full (`ENOSPC`).
        package var isNoSpace: Bool { code == ENOSPC }

        /// The failure of the call that just set `errno`.
        static var last: Failure { Failure(code: errno) }
    }

    /// The cause an `errno` value stands for, in words.
    package static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Renames `source` to `destination` in one step (`rename(2)`), replacing a file there.
    package static func rename(_ source: String, to destination: String) throws(Failure) {
        guard systemRename(source, destination) == 0 else { throw .last }
    }

    /// Puts the file at `newPath` in place of the one at `path` with one `rename(2)`, after giving
    /// it the mode, owner and group of the file it replaces (`chown(2)`, `chmod(2)`), so that
    /// replacing a file (a migration's or a rebuild's swap, an export, a copy) never widens who
    /// may read it. Where the owner or group cannot be kept (another user's file), the file keeps
    /// ours and its mode loses the group's and others' bits rather than grant them to another
    /// group. A new file (nothing at `path`) keeps the mode it was made with (the umask's).
    package static func replace(_ path: String, with newPath: String) throws(Failure) {
        var old = stat()
        if stat(path, &old) == 0 {
            var mode = old.st_mode & 0o7777
            if chown(newPath, old.st_uid, old.st_gid) != 0 {
                var new = stat()
                let ownGroup = stat(newPath, &new) == 0 && new.st_gid == old.st_gid
                if !ownGroup && chown(newPath, UInt32.max, old.st_gid) != 0 { mode &= ~0o077 }
            }
            guard chmod(newPath, mode) == 0 else { throw .last }
        }
        guard systemRename(newPath, path) == 0 else { throw .last }
    }

    /// Makes `newPath` a second name of the file at `path` (`link(2)`).
    package static func link(_ path: String, as newPath: String) throws(Failure) {
        guard systemLink(path, newPath) == 0 else { throw .last }
    }

    /// Removes the file at `path` (`unlink(2)`); a file that is already gone is no failure.
    package static func removeFile(_ path: String) throws(Failure) {
        guard unlink(path) == 0 || errno == ENOENT else { throw .last }
    }

    /// Flushes the file at `path` to disk (`fsync(2)`), then its folder's entry for it (best
    /// effort: not every file system syncs a folder).
    package static func synchronize(_ path: String) throws(Failure) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw .last }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw .last }
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let directory = open(folder, O_RDONLY)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    /// What kind of file a path names.
    package enum FileKind: Sendable {
        case regular, directory, symbolicLink, other
    }

    /// The kind of file at `path` (`stat(2)`; with `followingLinks: false`, `lstat(2)`, which
    /// sees a symbolic link itself); nil when there is none.
    package static func kind(of path: String, followingLinks: Bool = true) -> FileKind? {
        var info = stat()
        guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regular
        case S_IFDIR: return .directory
        case S_IFLNK: return .symbolicLink
        default: return .other
        }
    }

    /// The device and inode of the file at `path`, nil when there is none (`stat(2)`).
    package static func deviceAndInode(of path: String) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// The absolute path of `path` with every symbolic link resolved, nil when it does not exist
    /// (`realpath(3)`).
    package static func realPath(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// Opens (creating it when missing) the lock file at `path` for `flock(2)`; the descriptor
    /// is closed on exec. `Failure` with `ENOENT` when its folder does not exist.
    package static func openLockFile(_ path: String) throws(Failure) -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .last }
        return descriptor
    }

    /// Takes an exclusive `flock(2)` on `descriptor` without waiting; false when another open
    /// file holds it.
    package static func tryLockExclusively(_ descriptor: Int32) -> Bool {
        flock(descriptor, LOCK_EX | LOCK_NB) == 0
    }

    /// Releases the `flock(2)` on `descriptor` and closes it.
    package static func unlockAndClose(_ descriptor: Int32) {
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Opens the file at `path` for reading and writing without creating it (`open(2)`, closed
    /// on exec): a descriptor that can hold read and write record locks.
    package static func openExisting(_ path: String) throws(Failure) -> Int32 {
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw .last }
        return descriptor
    }

    /// True where ``tryLockRange(_:exclusive:start:length:)`` takes open file description locks
    /// (Linux's `F_OFD_SETLK`), which only closing that descriptor releases.
    package static var hasDescriptorLocks: Bool {
        #if os(Linux)
        return true
        #else
        return false
        #endif
    }

    /// Takes a record lock on `length` bytes at `start` of the file open as `descriptor`, without
    /// waiting: a write lock when `exclusive`, else a read lock. False when another holder's lock
    /// conflicts. On Linux the lock belongs to the open file description (`F_OFD_SETLK`): closing
    /// another descriptor of the same file does not release it, and it conflicts with every
    /// process's POSIX record locks (SQLite's), this process's own included.
    package static func tryLockRange(
        _ descriptor: Int32, exclusive: Bool, start: Int64, length: Int64
    ) throws(Failure) -> Bool {
        var lock = flock()
        lock.l_type = Int16(exclusive ? F_WRLCK : F_RDLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(start)
        lock.l_len = off_t(length)
        lock.l_pid = 0
        #if os(Linux)
        let command: Int32 = 37  // F_OFD_SETLK (fcntl.h, _GNU_SOURCE)
        #else
        let command = F_SETLK
        #endif
        guard fcntl(descriptor, command, &lock) == 0 else {
            if errno == EAGAIN || errno == EACCES { return false }
            throw .last
        }
        return true
    }

    /// Reads up to `count` bytes at `offset` of the file open as `descriptor` (`pread(2)`).
    package static func readBytes(_ descriptor: Int32, at offset: Int64, count: Int) throws(Failure) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let n = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        guard n >= 0 else { throw .last }
        return Array(bytes.prefix(n))
    }

    /// Closes `descriptor`.
    package static func close(_ descriptor: Int32) {
        _ = systemClose(descriptor)
    }

    /// Closes `descriptor`, reporting a failed `close(2)` (a deferred write error on NFS or a
    /// full disk); an interrupted close is no failure (the descriptor is gone either way).
    package static func closeReporting(_ descriptor: Int32) throws(Failure) {
        guard systemClose(descriptor) == 0 || errno == EINTR else { throw .last }
    }

    /// Opens the file at `path` for reading (`open(2)`, closed on exec).
    package static func openForReading(_ path: String) throws(Failure) -> Int32 {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .last }
        return descriptor
    }

    /// How an existing file is treated when opened for writing.
    package enum WriteMode: Sendable {
        /// Emptied first (`O_TRUNC`).
        case replace
        /// Written at its end (`O_APPEND`).
        case append
        /// Written from its start without emptying it (a FIFO or a device).
        case overwrite
    }

    /// Opens (creating it with mode 0644 when missing) the file at `path` for writing (`open(2)`,
    /// closed on exec).
    package static func openForWriting(_ path: String, mode: WriteMode) throws(Failure) -> Int32 {
        let extra: Int32
        switch mode {
        case .replace: extra = O_TRUNC
        case .append: extra = O_APPEND
        case .overwrite: extra = 0
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | extra, 0o644)
        guard descriptor >= 0 else { throw .last }
        return descriptor
    }

    /// The size of the regular file open as `descriptor` (`fstat(2)`); nil for a pipe, a device
    /// or anything else that is not a regular file.
    package static func regularFileSize(_ descriptor: Int32) -> Int64? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// Reads up to `count` bytes from `descriptor` into `buffer` (`read(2)`, retried when a
    /// signal interrupts it); returns how many, 0 at the end.
    package static func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawPointer, count: Int
    ) throws(Failure)
        -> Int
    {
        while true {
            let n = systemRead(descriptor, buffer, count)
            if n >= 0 { return n }
            if errno != EINTR { throw .last }
        }
    }

    /// The whole regular file at `path`, or nil when it cannot be opened, is not a regular file
    /// (a FIFO would never end) or is larger than `limit` bytes. Small documents (Xcode models,
    /// property lists) are read with this rather than FileManager's, which leaks its buffer on
    /// an empty file on Linux (found by the XML fuzz target).
    package static func contents(atPath path: String, limit: Int = 1 << 30) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        guard let size = regularFileSize(descriptor), size <= Int64(limit) else { return nil }
        var data = [UInt8](repeating: 0, count: Int(size))
        var filled = 0
        let complete: Bool = data.withUnsafeMutableBytes { buffer in
            while filled < buffer.count, let base = buffer.baseAddress {
                guard let n = try? read(descriptor, into: base + filled, count: buffer.count - filled), n > 0 else {
                    return false
                }
                filled += n
            }
            return true
        }
        return complete ? data : nil
    }

    /// Writes every byte of `bytes` to `descriptor` (`write(2)`, repeated after a short write and
    /// when a signal interrupts it).
    package static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) throws(Failure) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let n = systemWrite(descriptor, base + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw .last
            }
            offset += n
        }
    }

    /// Forces what was written to `descriptor` to the disk (`fsync(2)`). A pipe or a device,
    /// which cannot be synced, is no failure: returns false for them.
    @discardableResult
    package static func synchronize(descriptor: Int32) throws(Failure) -> Bool {
        guard fsync(descriptor) != 0 else { return true }
        guard errno == EINVAL || errno == EROFS else { throw .last }
        return false
    }

    /// This process's id.
    package static var processID: Int32 { getpid() }

    /// False when no process `pid` runs any more (`kill(pid, 0)` fails with `ESRCH`).
    package static func processRuns(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }
}

// The C functions whose names `FileIO`'s members reuse, reached from outside the enum.
private func systemRename(_ source: String, _ destination: String) -> Int32 { rename(source, destination) }
private func systemLink(_ path: String, _ newPath: String) -> Int32 { link(path, newPath) }
private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
