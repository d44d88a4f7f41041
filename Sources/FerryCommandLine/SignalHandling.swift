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
        // A launcher may have blocked the signals (the mask is inherited across exec): unblock
        // them, so that a stop request reaches ferry. A signal the launcher set to be ignored
        // (a background job of a non-interactive shell) stays ignored, as for any Unix tool.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        for number in [SIGINT, SIGTERM] { sigaddset(&blocked, number) }
        sigprocmask(SIG_UNBLOCK, &blocked, nil)
        for number in [SIGINT, SIGTERM] {
            var current = sigaction()
            if sigaction(number, nil, &current) == 0, isIgnored(current) { continue }
            _ = signal(number) { received in
                guard !Interruption.record(received, isInterrupt: received == SIGINT) else { return }
                let note: StaticString =
                    "\nferry: stopped at once; an unfinished step is rolled back when the store is next opened\n"
                _ = write(2, note.utf8Start, note.utf8CodeUnitCount)
                _exit(128 + received)
            }
        }
    }

    private static func isIgnored(_ action: sigaction) -> Bool {
        #if canImport(Glibc)
        let handler = action.__sigaction_handler.sa_handler
        #else
        let handler = action.__sigaction_u.__sa_handler
        #endif
        guard let handler else { return false }  // SIG_DFL is a null pointer
        return unsafeBitCast(handler, to: Int.self) == 1  // SIG_IGN
    }
}
