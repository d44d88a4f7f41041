import FerryPostgres

/// The process's own command line as `ps` and `/proc/PID/cmdline` show it: each argument holding
/// a PostgreSQL URL with a password is rewritten in place, once ferry has read its arguments, to
/// its form without the password (`PostgresURL.redactingPasswords`), padded with NUL bytes (an
/// argument's bytes cannot grow). Other arguments are left as they are.
enum ProcessTitle {
    static func redactPasswords() {
        let count = Int(CommandLine.argc)
        for index in 1..<max(count, 1) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let original = String(cString: argument)
            let redacted = PostgresURL.redactingPasswords(in: original)
            guard redacted != original else { continue }
            let length = original.utf8.count
            var bytes = Array(redacted.utf8.prefix(length))
            bytes += Array(repeating: 0, count: length - bytes.count)
            for (offset, byte) in bytes.enumerated() { argument[offset] = CChar(bitPattern: byte) }
        }
    }
}
