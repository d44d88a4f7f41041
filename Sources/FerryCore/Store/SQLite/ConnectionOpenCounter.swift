import Synchronization

/// Counts the SQLite connections opened by the code a task runs while the counter is bound to
/// ``Connection/openCounter`` (not those of threads the code starts, such as the concurrent
/// integrity check's). Lets tests prove how many connections an operation opens.
package final class ConnectionOpenCounter: Sendable {
    private let opened = Atomic<Int>(0)

    package init() {}

    /// Connections opened so far.
    package var count: Int { opened.load(ordering: .relaxed) }

    func connectionOpened() { opened.add(1, ordering: .relaxed) }
}

extension Connection {
    /// The counter the current task's connection openings are counted on (nil: not counted).
    @TaskLocal package static var openCounter: ConnectionOpenCounter?
}
