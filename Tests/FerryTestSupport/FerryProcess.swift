import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a finished `ferry` process left behind.
public struct ProcessResult: Sendable, CustomStringConvertible {
    public var exitCode: Int32
    public var stdout: String
    public var stderr: String
    /// True when the process was ended by a signal (then `exitCode` is the signal number).
    public var wasSignaled: Bool

    public init(exitCode: Int32, stdout: String, stderr: String, wasSignaled: Bool) {
        self.exitCode = exitCode
        self.stdout = stdout
        self.stderr = stderr
        self.wasSignaled = wasSignaled
    }

    public var description: String {
        "exit \(exitCode)\(wasSignaled ? " (signal)" : "")\n--- stdout\n\(stdout)--- stderr\n\(stderr)"
    }
}

/// A failure to run the binary at all (missing, timed out), with a message for the test log.
public struct FerryProcessError: Error, CustomStringConvertible {
    public var description: String
}

/// Finds the built `ferry` executable: `$FERRY_BINARY`, else beside the test bundle (SwiftPM puts
/// the test runner and the products in the same folder), else `.build/debug/ferry` of the package.
public enum FerryBinary {
    public static var path: String? {
        var candidates: [String] = []
        if let given = ProcessInfo.processInfo.environment["FERRY_BINARY"], !given.isEmpty { candidates.append(given) }
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent("ferry").path)
        }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(
                URL(fileURLWithPath: bundle.bundlePath).deletingLastPathComponent().appendingPathComponent("ferry").path
            )
        }
        candidates.append(TestPaths.packageRoot.appendingPathComponent(".build/debug/ferry").path)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Another executable of the package built beside `ferry` (`ferry-test-policies`), or an
    /// error telling how to build it.
    public static func sibling(_ name: String) throws -> String {
        let path = ((try require() as NSString).deletingLastPathComponent as NSString).appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw FerryProcessError(
                description: "\(name) was not built beside ferry (\(path)); run `swift build --build-tests`")
        }
        return path
    }

    /// The binary's path, or an error telling how to build it.
    public static func require() throws -> String {
        guard let path else {
            throw FerryProcessError(
                description:
                    "the ferry executable was not found beside the tests or at .build/debug/ferry; run `swift build` first (or set FERRY_BINARY)"
            )
        }
        return path
    }
}

/// A `ferry` process started in the background (for kill and concurrency tests).
public final class FerryProcess: @unchecked Sendable {
    // @unchecked: `process` is only waited on and signalled, both thread-safe.
    public let process: Process
    private let stdoutFile: String
    private let stderrFile: String
    private let stdinFile: String?

    /// Starts `ferry args…` with its output going to temporary files; with `executable`, that
    /// program instead (`/bin/sh -c '… ferry …'` for redirections, limits and terminals).
    public init(
        _ arguments: [String], cwd: String? = nil, env: [String: String]? = nil, stdin: String? = nil,
        executable: String? = nil
    ) throws {
        let binary = try executable ?? FerryBinary.require()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = "dumb"
        for (key, value) in env ?? [:] { environment[key] = value }
        process.environment = environment
        let token = UUID().uuidString
        stdoutFile = NSTemporaryDirectory() + "/ferry-out-\(token)"
        stderrFile = NSTemporaryDirectory() + "/ferry-err-\(token)"
        _ = FileManager.default.createFile(atPath: stdoutFile, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrFile, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutFile))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrFile))
        if let stdin {
            let inputFile = NSTemporaryDirectory() + "/ferry-in-\(token)"
            try stdin.write(toFile: inputFile, atomically: false, encoding: .utf8)
            process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inputFile))
            stdinFile = inputFile
        } else {
            process.standardInput = FileHandle.nullDevice
            stdinFile = nil
        }
        self.process = process
        try process.run()
        // The child has its own copies of the descriptors now.
        for handle in [process.standardOutput, process.standardError, process.standardInput] {
            if let handle = handle as? FileHandle, handle !== FileHandle.nullDevice { try? handle.close() }
        }
    }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// Sends SIGKILL: no handler, no cleanup, exactly like `kill -9` or the OOM killer.
    public func kill() {
        sendSignal(pid, SIGKILL)
    }

    /// Sends `signal` (SIGINT, SIGTERM…), as Ctrl-C or `kill` would.
    public func send(_ signal: Int32) {
        sendSignal(pid, signal)
    }

    /// Waits for the process to end (killing it after `timeout`) and collects its output.
    public func wait(timeout: Duration = .seconds(120)) throws -> ProcessResult {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        var timedOut = false
        if process.isRunning {
            timedOut = true
            kill()
        }
        process.waitUntilExit()
        let out = (try? String(contentsOfFile: stdoutFile, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: stdoutFile)
        try? FileManager.default.removeItem(atPath: stderrFile)
        if let stdinFile { try? FileManager.default.removeItem(atPath: stdinFile) }
        if timedOut {
            throw FerryProcessError(
                description:
                    "ferry \(process.arguments?.joined(separator: " ") ?? "") did not finish within \(timeout)\n\(err)")
        }
        return ProcessResult(
            exitCode: process.terminationStatus, stdout: out, stderr: err,
            wasSignaled: process.terminationReason == .uncaughtSignal)
    }
}

private func sendSignal(_ pid: Int32, _ signal: Int32) {
    _ = kill(pid, signal)
}

/// Runs `ferry args…` to the end and returns its exit code and output.
///
/// `TERM` is set to `dumb` so the output is the plain lines cron would see.
public func runFerry(
    _ arguments: [String], cwd: String? = nil, env: [String: String]? = nil, stdin: String? = nil,
    timeout: Duration = .seconds(120)
) throws -> ProcessResult {
    try FerryProcess(arguments, cwd: cwd, env: env, stdin: stdin).wait(timeout: timeout)
}

/// Runs `/bin/sh -c script ferry args…` to the end: the script runs the binary as `"$0" "$@"`
/// under whatever it sets up first (`ulimit`, `trap`, redirections).
public func runFerryInShell(
    _ script: String, _ arguments: [String], cwd: String? = nil, env: [String: String]? = nil,
    timeout: Duration = .seconds(120)
) throws -> ProcessResult {
    try FerryProcess(["-c", script, try FerryBinary.require()] + arguments, cwd: cwd, env: env, executable: "/bin/sh")
        .wait(timeout: timeout)
}

/// Runs another program (`/bin/sh`, `/usr/bin/sqlite3`, `gzip`) to the end, the same way as
/// ``runFerry(_:cwd:env:stdin:timeout:)``: the one process runner of the tests.
public func runProgram(
    _ executable: String, _ arguments: [String], cwd: String? = nil, env: [String: String]? = nil,
    timeout: Duration = .seconds(120)
) throws -> ProcessResult {
    try FerryProcess(arguments, cwd: cwd, env: env, executable: executable).wait(timeout: timeout)
}

/// Runs `/bin/sh -c command` to the end.
public func runShell(_ command: String, cwd: String? = nil, timeout: Duration = .seconds(120)) throws -> ProcessResult {
    try runProgram("/bin/sh", ["-c", command], cwd: cwd, timeout: timeout)
}
