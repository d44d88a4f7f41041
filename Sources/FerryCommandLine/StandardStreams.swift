import FerryPostgres

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ferry's only writer of messages to standard output and standard error.
///
/// A message that cannot be written (a cron log on a full disk, `2>/dev/full`, a closed stream,
/// a reader that went away) is dropped: losing a message must never stop or crash a run that is
/// writing a store. (`FileHandle.write` traps on such errors.)
enum StandardStreams {
    /// Called once at start-up: a closed standard descriptor is reopened read-only on
    /// `/dev/null`, so that no store, rejects or output file is ever opened as descriptor 1 or 2
    /// and then written to as if it were a terminal, while writing to it still fails (an export
    /// to a closed standard output is an error, not data silently thrown away). `SIGPIPE` is
    /// ignored, so a closed pipe is a write error instead of killing the process mid-step.
    static func prepare() {
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", O_RDONLY)
            if opened >= 0, opened != descriptor {
                _ = dup2(opened, descriptor)
                _ = close(opened)
            }
        }
        signal(SIGPIPE, SIG_IGN)
    }

    /// Writes `text` to standard error; false when it could not be written.
    @discardableResult
    static func error(_ text: String) -> Bool { write(text, to: 2) }

    /// Writes `text` to standard output; false when it could not be written.
    @discardableResult
    static func output(_ text: String) -> Bool {
        fflush(nil)  // after anything `print` buffered
        return write(text, to: 1)
    }

    /// Every message passes `PostgresURL.redactingPasswords`: no password written into a store's
    /// or a source's URL reaches a terminal or a log.
    private static func write(_ text: String, to descriptor: Int32) -> Bool {
        var text = PostgresURL.redactingPasswords(in: text)
        return text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                guard let base = bytes.baseAddress else { return true }
                #if canImport(Glibc)
                let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
                #else
                let written = Darwin.write(descriptor, base + offset, bytes.count - offset)
                #endif
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }
}

/// The commands' `print`: Swift's, through ``StandardStreams/output(_:)`` (so through its
/// redaction of passwords in PostgreSQL URLs). Declared in this module, it is the `print` every
/// command calls.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    StandardStreams.output(items.map { "\($0)" }.joined(separator: separator) + terminator)
}
