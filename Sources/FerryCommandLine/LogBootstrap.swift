import FerryPostgres
import Logging
import Synchronization

/// The command line's one `LoggingSystem.bootstrap`: swift-log's standard-error handler at the
/// level `--verbose` (`-v`) and `FERRY_LOG_LEVEL` choose, `warning` by default so that a normal
/// run's output is unchanged.
enum LogBootstrap {
    /// The environment variable that sets the level: `trace`, `debug`, `info`, `notice`,
    /// `warning`, `error` or `critical`.
    static let environmentVariable = "FERRY_LOG_LEVEL"

    /// The level for a run: `FERRY_LOG_LEVEL` when set, else `debug` with `--verbose`, else
    /// `warning`. `--verbose` never raises a more detailed `FERRY_LOG_LEVEL` (trace stays trace).
    /// An unknown level is a usage error naming the variable, the value and the valid levels.
    static func level(environment: String?, verbose: Bool) throws(LogLevelError) -> Logger.Level {
        let fallback: Logger.Level = verbose ? .debug : .warning
        guard let environment, !environment.isEmpty else { return fallback }
        guard let level = Logger.Level(rawValue: environment.lowercased()) else {
            throw LogLevelError(value: environment)
        }
        return verbose ? min(level, .debug) : level
    }

    /// Splits the global `--verbose` / `-v` flag off the arguments (before a `--`); the rest go
    /// to the command.
    static func verboseFlag(in arguments: [String]) -> (verbose: Bool, rest: [String]) {
        var verbose = false
        var rest: [String] = []
        var afterTerminator = false
        for argument in arguments {
            if !afterTerminator, argument == "--verbose" || argument == "-v" {
                verbose = true
                continue
            }
            if argument == "--" { afterTerminator = true }
            rest.append(argument)
        }
        return (verbose, rest)
    }

    /// Whether `bootstrap(level:)` already ran in this process (swift-log allows one bootstrap).
    private static let bootstrapped = Mutex(false)

    /// Installs the standard-error handler at `level` before any command runs; a second call in
    /// the same process (a program that runs `FerryCommandLine.main` twice) keeps the first.
    static func bootstrap(level: Logger.Level) {
        let first = bootstrapped.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return RedactingLogHandler(handler)
        }
    }
}

/// `FERRY_LOG_LEVEL` holds something that is not a swift-log level.
struct LogLevelError: Error, CustomStringConvertible {
    /// The value as given.
    var value: String

    var description: String {
        let levels = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
        return "\(LogBootstrap.environmentVariable)='\(value)' is not a log level; use one of \(levels)"
    }
}

/// A log handler passing every message and metadata value through
/// `PostgresURL.redactingPasswords` before the wrapped handler writes it: no password written
/// into a store's or a source's URL reaches a log.
struct RedactingLogHandler<Wrapped: LogHandler>: LogHandler {
    var wrapped: Wrapped

    init(_ wrapped: Wrapped) { self.wrapped = wrapped }

    var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.message = Logger.Message(stringLiteral: PostgresURL.redactingPasswords(in: event.message.description))
        event.metadata = event.metadata?.mapValues { .string(PostgresURL.redactingPasswords(in: "\($0)")) }
        wrapped.log(event: event)
    }
}
