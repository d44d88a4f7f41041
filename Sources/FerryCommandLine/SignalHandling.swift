import FerryCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// SIGINT and SIGTERM: an import step stops between records and rolls back (exit 130 / 143,
/// see ``Interruption``); anywhere else, or at a second SIGINT, ferry exits at once with the
/// same code, leaving SQLite's journal to restore the store.
enum SignalHandling {
    static func install() {
        for number in [SIGINT, SIGTERM] {
            _ = signal(number) { received in
                guard !Interruption.record(received, isInterrupt: received == SIGINT) else { return }
                let note: StaticString = "\nferry: stopped at once; an unfinished step is rolled back when the store is next opened\n"
                _ = write(2, note.utf8Start, note.utf8CodeUnitCount)
                _exit(128 + received)
            }
        }
    }
}
