import ArgumentParser
import FerryCore
import FerryPostgresStore
import Foundation

/// ferry's command line as a library, so that a program of your own can run it with your
/// migration policies registered (see `samples/custom-policy/`):
///
/// ```swift
/// import FerryCommandLine
/// import FerryCore
///
/// PolicyRegistry.shared.register("PhoneNormalizer") { PhoneNormalizer() }
/// FerryCommandLine.main()
/// ```
public enum FerryCommandLine {
    /// The registry that `ferry migrate` and the migrate steps of `ferry run` take policies and
    /// stage hooks from, while ``main(arguments:registry:)`` runs.
    @TaskLocal public static var registry: PolicyRegistry = .shared

    /// Parses the arguments (default: the process's), runs the command and, on failure, exits
    /// the process with the command's exit code, exactly as the `ferry` executable does; returns
    /// after a successful command. Bootstraps swift-log once (see `LogBootstrap`): `--verbose`
    /// (`-v`) anywhere before `--` logs at `debug`, `FERRY_LOG_LEVEL` sets any level; an unknown
    /// level exits with 64.
    ///
    /// - Parameters:
    ///   - arguments: the arguments after the program name; nil for the process's own.
    ///   - registry: where mapping files' `policy:` names and stage hooks are looked up.
    public static func main(arguments: [String]? = nil, registry: PolicyRegistry = .shared) {
        // Before anything parses a store's name: a postgresql:// URL is a store only once its
        // engine is registered.
        PostgreSQLEngine.register()
        StandardStreams.prepare()
        SignalHandling.install()
        let (verbose, rest) = LogBootstrap.verboseFlag(in: arguments ?? Array(CommandLine.arguments.dropFirst()))
        // Read: what `ps` shows of the process's own arguments no longer holds a password.
        if arguments == nil { ProcessTitle.redactPasswords() }
        do {
            let environment = ProcessInfo.processInfo.environment[LogBootstrap.environmentVariable]
            LogBootstrap.bootstrap(level: try LogBootstrap.level(environment: environment, verbose: verbose))
        } catch {
            Console.printError("error: \(error)")
            exit(ExitStatus.configuration)
        }
        $registry.withValue(registry) {
            Ferry.main(rest)
        }
    }
}
