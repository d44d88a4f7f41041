import FerryPostgres
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@Suite(
    "PostgreSQL advisory locks: contention, timeout, release",
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresAdvisoryLockTests {
    /// A key no other test uses.
    private func freshKey() -> Int64 {
        PostgresConnection.advisoryLockKey(for: "ferry-test-" + UUID().uuidString)
    }

    @Test("lock keys are stable FNV-1a hashes of the name")
    func keys() {
        #expect(PostgresConnection.advisoryLockKey(for: "") == Int64(bitPattern: 0xcbf2_9ce4_8422_2325))
        #expect(PostgresConnection.advisoryLockKey(for: "a") == Int64(bitPattern: 0xaf63_dc4c_8601_ec8c))
        #expect(PostgresConnection.advisoryLockKey(for: "shop") != PostgresConnection.advisoryLockKey(for: "shoq"))
    }

    @Test("a second session cannot take a held lock and times out waiting, naming the lock")
    func contention() throws {
        let url = try PostgresTestServer.requireURL()
        let key = freshKey()
        let holder = try PostgresConnection(url)
        let waiter = try PostgresConnection(url)
        try holder.acquireAdvisoryLock(key, timeout: .seconds(1))
        #expect(try !waiter.tryAdvisoryLock(key))

        let clock = ContinuousClock()
        let start = clock.now
        let error = try #require(throws: PostgresError.self) {
            try waiter.acquireAdvisoryLock(key, timeout: .milliseconds(400), pollInterval: .milliseconds(50))
        }
        let waited = clock.now - start
        #expect(error.kind == .lockTimeout)
        #expect(error.message.contains("another session holds advisory lock \(key)"))
        #expect(waited >= .milliseconds(400) && waited < .seconds(5))

        #expect(try holder.releaseAdvisoryLock(key))
        try waiter.acquireAdvisoryLock(key, timeout: .seconds(1))
        #expect(try !holder.tryAdvisoryLock(key))
        #expect(try !holder.releaseAdvisoryLock(key), "releasing a lock one does not hold says so")
    }

    @Test("the wait loop takes the lock as soon as the other session lets go")
    func waitsForRelease() throws {
        let url = try PostgresTestServer.requireURL()
        let key = freshKey()
        let taken = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let holder = Thread {
            do {
                let connection = try PostgresConnection(url)
                try connection.acquireAdvisoryLock(key, timeout: .seconds(5))
                taken.signal()
                Thread.sleep(forTimeInterval: 0.3)
                connection.close()  // ending the session releases its locks
            } catch {
                failure.withLock { $0 = "\(error)" }
                taken.signal()
            }
        }
        holder.start()
        taken.wait()
        #expect(failure.withLock { $0 } == nil)
        let waiter = try PostgresConnection(url)
        #expect(try !waiter.tryAdvisoryLock(key))
        let clock = ContinuousClock()
        let start = clock.now
        try waiter.acquireAdvisoryLock(key, timeout: .seconds(10), pollInterval: .milliseconds(20))
        #expect(clock.now - start < .seconds(5))
    }
}
