import Foundation

/// Graphviz's `dot` on `PATH`, for the tests that check it accepts ferry's DOT text: without it,
/// those tests are skipped with ``skipReason``, except under `CI=true`, where they run and fail.
public enum Graphviz {
    /// The `dot` executable on `PATH`, or nil.
    public static var executable: String? { executableOnPath(["dot"]) }

    /// Whether the Graphviz tests must run: `dot` is there, or this is CI.
    public static var shouldRun: Bool { executable != nil || ProcessInfo.processInfo.environment["CI"] == "true" }

    /// Why they were skipped.
    public static let skipReason = "Graphviz's dot is not on PATH (Debian: apt-get install graphviz)"

    /// The SVG `dot -Tsvg` draws from `text`; throws when there is no `dot` or it refuses the text.
    public static func svg(_ text: String) throws -> String {
        guard let executable else { throw Missing(description: "CI=true but \(skipReason)") }
        let result = try FerryProcess(["-Tsvg"], stdin: text, executable: executable).wait(timeout: .seconds(120))
        guard result.exitCode == 0 else {
            throw Missing(description: "dot -Tsvg refused the text (exit \(result.exitCode)): \(result.stderr)")
        }
        return result.stdout
    }

    struct Missing: Error, CustomStringConvertible {
        var description: String
    }
}

/// The first of `names` found as an executable in a folder of `PATH` (each name tried through
/// every folder before the next name), or nil: how the tests find the optional tools they drive.
public func executableOnPath(_ names: [String]) -> String? {
    let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
    for name in names {
        for folder in folders where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
            return "\(folder)/\(name)"
        }
    }
    return nil
}
