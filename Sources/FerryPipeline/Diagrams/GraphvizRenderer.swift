import FerryCore
import Foundation

/// Draws DOT text as SVG with Graphviz's `dot -Tsvg`, found on `PATH`.
package enum GraphvizRenderer {
    /// The `dot` executable on `path` (the `PATH` variable's value), or nil when there is none.
    package static func dotExecutable(path: String? = ProcessInfo.processInfo.environment["PATH"]) -> String? {
        for folder in (path ?? "").split(separator: ":") where !folder.isEmpty {
            let candidate = (String(folder) as NSString).appendingPathComponent("dot")
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The SVG that `dot` (the executable at `executable`) draws from `dot` text.
    ///
    /// Throws a usage error saying to install Graphviz (or to choose Mermaid or DOT output) when
    /// `executable` is nil, and an error with Graphviz's message when it refuses the text.
    package static func svg(fromDOT dot: String, executable: String?) throws -> String {
        guard let executable else {
            throw FerryError(
                .usage,
                "--format svg needs Graphviz's 'dot' on PATH, and there is none: install graphviz (apt-get install graphviz, brew install graphviz), or use --format mermaid or --format dot"
            )
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ferry-graph-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("model.dot")
        let output = folder.appendingPathComponent("model.svg")
        let errors = folder.appendingPathComponent("dot.stderr")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(dot.utf8).write(to: input)
            _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["-Tsvg", "-o", output.path, input.path]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: errors)
            try process.run()
            process.waitUntilExit()
            let message = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            guard process.terminationStatus == 0 else {
                throw FerryError(
                    .internal,
                    "\(executable) -Tsvg refused the diagram (exit \(process.terminationStatus)): \(message.trimmingCharacters(in: .whitespacesAndNewlines))"
                )
            }
            return try String(contentsOf: output, encoding: .utf8)
        } catch let error as FerryError {
            throw error
        } catch {
            throw FerryError(.io, "cannot run \(executable) -Tsvg: \(error.localizedDescription)")
        }
    }
}
