import Foundation

/// The other processes that hold (or wait for) a record lock on a file, read from Linux's
/// `/proc/locks`: how a migration learns that an app or a `sqlite3` shell has a WAL store open
/// (every connection to a WAL database keeps a read lock on its `-shm` for as long as it is open).
package enum LockHolders {
    /// A process holding or waiting for a lock on the file.
    package struct Holder: Equatable, CustomStringConvertible {
        package var pid: Int32
        /// The program's name (`/proc/PID/comm`), when readable.
        package var command: String?

        package var description: String { command.map { "pid \(pid) (\($0))" } ?? "pid \(pid)" }
    }

    /// The processes other than this one with a POSIX record lock on the file at `path` (held or
    /// requested), in pid order; empty where `/proc/locks` does not exist (not Linux) or the file
    /// does not. Open file description locks are not attributed to a process and are skipped.
    package static func others(of path: String) -> [Holder] {
        var info = stat()
        guard stat(path, &info) == 0,
            let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8)
        else { return [] }
        let device = UInt64(info.st_dev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        let own = getpid()
        var pids = Set<Int32>()
        for line in table.split(separator: "\n") {
            // "1: POSIX  ADVISORY  READ 3385 fd:01:1053 128 128", "1: -> POSIX …" for a waiter.
            let fields = line.split(separator: " ").filter { $0 != "->" }
            guard fields.count >= 6, fields[1] == "POSIX", let pid = Int32(fields[4]), pid > 0, pid != own
            else { continue }
            let identity = fields[5].split(separator: ":")
            guard identity.count == 3, UInt64(identity[0], radix: 16) == major,
                UInt64(identity[1], radix: 16) == minor, UInt64(identity[2]) == UInt64(info.st_ino)
            else { continue }
            pids.insert(pid)
        }
        return pids.sorted().map { pid in
            let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            return Holder(pid: pid, command: command)
        }
    }
}
