import ArgumentParser
import FerryCore

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
    /// after a successful command.
    ///
    /// - Parameters:
    ///   - arguments: the arguments after the program name; nil for the process's own.
    ///   - registry: where mapping files' `policy:` names and stage hooks are looked up.
    public static func main(arguments: [String]? = nil, registry: PolicyRegistry = .shared) {
        StandardStreams.prepare()
        SignalHandling.install()
        $registry.withValue(registry) {
            Ferry.main(arguments)
        }
    }
}
