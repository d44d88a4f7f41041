import FerryTestSupport
import Foundation
import Testing

/// Shell completions come from the same declarations as `ferry --help` (swift-argument-parser
/// generates them; `scripts/manual.sh` writes them with the man page): every command is in them,
/// and bash accepts the script.
@Suite("shell completions: generated from the command declarations", .serialized)
struct ShellCompletionTests {
    static let commands = [
        "run", "plan", "validate", "import", "export", "update", "delete", "copy", "migrate", "verify", "check",
        "model", "store", "mapping", "init",
    ]

    @Test("bash, zsh and fish scripts name every command; bash parses its script")
    func completions() throws {
        let help = try runFerry(["--help"])
        #expect(help.exitCode == 0, "\(help)")
        for command in Self.commands {
            #expect(help.stdout.contains("  \(command)"), "ferry --help lacks \(command)")
        }
        for shell in ["bash", "zsh", "fish"] {
            let script = try runFerry(["--generate-completion-script", shell])
            #expect(script.exitCode == 0, "\(shell): \(script)")
            for command in Self.commands {
                #expect(script.stdout.contains(command), "\(shell) completion lacks \(command)")
            }
        }
        let directory = TemporaryDirectory("ferry-cli-completion")
        let bash = try runFerry(["--generate-completion-script", "bash"])
        let path = directory.url.appendingPathComponent("ferry.bash").path
        try bash.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        let parsed = try runProgram("/bin/bash", ["-n", path])
        #expect(parsed.exitCode == 0, "bash -n: \(parsed)")
        // Sourced, it registers ferry's completion function.
        let registered = try runProgram("/bin/bash", ["-c", "source '\(path)' && complete -p ferry"])
        #expect(registered.exitCode == 0 && registered.stdout.contains("ferry"), "\(registered)")
    }
}
