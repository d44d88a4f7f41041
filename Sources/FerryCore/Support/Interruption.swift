import Synchronization

/// A request to stop (SIGINT, SIGTERM), honoured where ferry can stop cleanly: an import step
/// checks it between records and rolls back (or, with `atomic: false`, keeps the batches it
/// committed).
///
/// The signal handler records the signal; ``check()`` throws a `cancelled` error once one was
/// recorded. Outside ``honouring(_:)`` nothing checks, so the handler is told to exit at once;
/// so it is for a second SIGINT. Either way the store stays consistent: SQLite's journal rolls an
/// unfinished transaction back when the store is next opened.
package enum Interruption {
    private static let received = Atomic<Int32>(0)
    private static let checkers = Atomic<Int>(0)

    /// The signal that asked ferry to stop, or nil.
    package static var signal: Int32? {
        let value = received.load(ordering: .acquiring)
        return value == 0 ? nil : value
    }

    /// Records `signal` from a signal handler (async-signal-safe: two atomic operations);
    /// false when the process should exit at once instead (nothing is checking, or this is a
    /// second SIGINT).
    package static func record(_ signal: Int32, isInterrupt: Bool) -> Bool {
        let previous = received.exchange(signal, ordering: .acquiringAndReleasing)
        if previous != 0 && isInterrupt { return false }
        return checkers.load(ordering: .acquiring) > 0
    }

    /// Runs `body`, during which a signal is checked for (by ``check()``) instead of ending the
    /// process at once.
    package static func honouring<T>(_ body: () throws -> T) rethrows -> T {
        checkers.add(1, ordering: .acquiringAndReleasing)
        defer { checkers.subtract(1, ordering: .acquiringAndReleasing) }
        return try body()
    }

    /// Throws `cancelled` (with `message` after the signal's name) when a signal was recorded.
    package static func check(_ message: @autoclosure () -> String) throws(FerryError) {
        guard let signal else { return }
        throw FerryError(.cancelled, "interrupted by \(name(of: signal)): \(message())")
    }

    /// `SIGINT`, `SIGTERM`, or `signal N`.
    package static func name(of signal: Int32) -> String {
        switch signal {
        case 2: return "SIGINT"
        case 15: return "SIGTERM"
        default: return "signal \(signal)"
        }
    }
}
