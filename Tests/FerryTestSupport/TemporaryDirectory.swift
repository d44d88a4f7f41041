import Foundation

/// A fresh directory under the system temporary directory, removed when the value is released.
public final class TemporaryDirectory: @unchecked Sendable {
    public let url: URL
    public var path: String { url.path }

    public init(_ label: String = "ferry-test") {
        let base = URL(fileURLWithPath: NSTemporaryDirectory())
        url = base.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of a file inside the directory.
    public func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes text to a file inside the directory and returns its path.
    @discardableResult
    public func write(_ name: String, _ contents: String) throws -> String {
        let path = file(name)
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Writes bytes to a file inside the directory and returns its path.
    @discardableResult
    public func write(_ name: String, bytes: [UInt8]) throws -> String {
        let path = file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Paths of the repository and the shared folder beside it, found from this source file.
public enum TestPaths {
    /// The package root (the folder holding Package.swift).
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// `../shared/data` beside the project (where CI puts the conformance suites), or nil.
    public static var sharedData: URL? {
        let candidates = [
            packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data"),
            URL(fileURLWithPath: "/work/shared/data"),
        ]
        return candidates.first { FileManager.default.fileExists(atPath: $0.path) }
    }
}
