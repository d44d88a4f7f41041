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

    /// The third-party samples folder (`FERRY_TEST_SHARED_DATA`, else `../shared/data` beside the
    /// repository, where CI puts it), or nil when it is not there: see ``SharedData``.
    public static var sharedData: URL? { SharedData.root }
}

/// The third-party samples folder: real apps' Core Data models and stores, JSONTestSuite and
/// csv-spectrum, kept beside the repository (`../shared/data`) rather than in it.
///
/// A clone without it still passes its tests: the suites that read it are skipped, with
/// ``skipReason`` naming what is missing. Under `CI=true` they run and fail instead, so CI can
/// never pass by skipping them.
public enum SharedData {
    public static let variable = "FERRY_TEST_SHARED_DATA"

    /// `$FERRY_TEST_SHARED_DATA`, else `../shared/data` beside the repository, if it exists.
    public static var root: URL? {
        let given = ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 }
        let candidate =
            given.map { URL(fileURLWithPath: $0) }
            ?? TestPaths.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data")
        return FileManager.default.fileExists(atPath: candidate.path) ? candidate.standardizedFileURL : nil
    }

    /// Whether the suites that read the folder must run: it is there, or this is CI.
    public static var shouldRun: Bool {
        root != nil || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// Why those suites were skipped, for the `.enabled(if:)` trait.
    public static var skipReason: String {
        let expected = TestPaths.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data")
        return "the third-party samples (real Core Data apps, JSONTestSuite, csv-spectrum) are not at "
            + "\(expected.standardizedFileURL.path): put them there or set \(variable) to run these tests"
    }
}
