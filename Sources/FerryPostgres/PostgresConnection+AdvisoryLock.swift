import Foundation

// MARK: - Advisory locks

extension PostgresConnection {
    /// A stable 64-bit advisory-lock key for a name (FNV-1a over its UTF-8), so every ferry
    /// process derives the same key for the same store.
    public static func advisoryLockKey(for name: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    /// Takes the session-level advisory lock `key` if no other session holds it.
    public func tryAdvisoryLock(_ key: Int64) throws(PostgresError) -> Bool {
        // A script (the key written in), so that statements held for the session's next one
        // travel with it.
        try scriptResult("SELECT pg_try_advisory_lock(\(key))").rows[0].bool(0)
    }

    /// Takes the session-level advisory lock `key`, retrying every `pollInterval` while another
    /// session holds it; throws ``PostgresError`` (kind `.lockTimeout`) after `timeout`.
    public func acquireAdvisoryLock(
        _ key: Int64, timeout: Duration, pollInterval: Duration = .milliseconds(50)
    ) throws(PostgresError) {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            if try tryAdvisoryLock(key) { return }
            let now = clock.now
            guard now < deadline else {
                throw PostgresError(
                    kind: .lockTimeout,
                    message: "another session holds advisory lock \(key) on \(url); "
                        + "gave up after \(timeout)")
            }
            let pause = min(pollInterval, deadline - now)
            Thread.sleep(
                forTimeInterval: Double(pause.components.seconds)
                    + Double(pause.components.attoseconds) / 1e18)
        }
    }

    /// Releases a session-level advisory lock this session holds; false if it held none.
    @discardableResult
    public func releaseAdvisoryLock(_ key: Int64) throws(PostgresError) -> Bool {
        try execute("SELECT pg_advisory_unlock($1)", [.integer(key)]).rows[0].bool(0)
    }
}
