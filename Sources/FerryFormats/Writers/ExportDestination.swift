import FerryCore
import Foundation

/// Where an export writes, decided once before the first byte.
///
/// A regular file (or a new one) is written under a hidden temporary name beside it and renamed
/// into place when the export succeeded, so a failed export never leaves a truncated file; a
/// symlink is followed, and the file it points to is the one replaced. Anything else, a FIFO,
/// a character device such as `/dev/stdout` or `/dev/null`, standard output (`-`), is written in
/// place: renaming over it would turn a device or a pipe into a regular file.
public struct ExportDestination: Sendable {
    /// The output as the user named it (`-` for standard output).
    public let path: String
    /// The file the bytes go to: the temporary file, or the output itself when in place.
    let writePath: String
    /// The file the temporary file replaces; nil when written in place.
    let target: String?

    /// Decides how to write `path`.
    /// - Throws: a usage error when `path` is a URL or an existing folder.
    public init(_ path: String) throws {
        self.path = path
        if path == "-" {
            writePath = "-"
            target = nil
            return
        }
        try PathOrURL.requireFile(path, role: "output")
        if let kind = FileIO.kind(of: path) {
            if kind == .directory {
                throw FerryError(.usage, "output '\(path)' is a folder; name a file", at: InputLocation(file: path))
            }
            if kind != .regular {
                writePath = path
                target = nil
                return
            }
        }
        let resolved = Self.followingSymlinks(path)
        let url = URL(fileURLWithPath: resolved)
        target = resolved
        writePath =
            url.deletingLastPathComponent().appendingPathComponent(
                ".\(url.lastPathComponent).ferry-\(FileIO.processID)"
            ).path
        Self.removeAbandonedFiles(of: url)
    }

    /// Removes the hidden temporary files that killed exports to `url` left beside it
    /// (`.NAME.ferry-PID` of a process that no longer runs); a running export's file stays.
    static func removeAbandonedFiles(of url: URL) {
        let folder = url.deletingLastPathComponent().path
        let prefix = ".\(url.lastPathComponent).ferry-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count)), pid != FileIO.processID, !FileIO.processRuns(pid)
            else { continue }
            StoreFiles.removeWorkFile((folder as NSString).appendingPathComponent(name))
        }
    }

    /// True when the output is written as it goes (standard output, a FIFO, a device).
    public var isInPlace: Bool { target == nil }

    /// Opens the file to write; errors name the user's output, never the temporary file.
    public func open(capacity: Int = 1 << 16) throws -> OutputFile {
        try OutputFile(path: writePath, name: path, truncate: target != nil, capacity: capacity)
    }

    /// Puts a finished temporary file in place of the output (nothing to do when in place).
    public func commit() throws {
        guard let target else { return }
        do {
            try FileIO.replace(target, with: writePath)
        } catch {
            discard()
            throw FerryError(
                .io, "cannot write '\(path)': \(error); the file was not changed", at: InputLocation(file: path))
        }
    }

    /// Removes the temporary file of a failed export; the output keeps its old content.
    public func discard() {
        guard target != nil else { return }
        // Best effort: the export's own error is the one reported; a temporary file that cannot be
        // removed stays hidden beside the output (and is logged).
        StoreFiles.removeWorkFile(writePath)
    }

    /// The file a chain of symlinks ends at (which may not exist yet), else `path` itself.
    static func followingSymlinks(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            guard FileIO.kind(of: current, followingLinks: false) == .symbolicLink,
                let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: current)
            else { return current }
            current =
                destination.hasPrefix("/")
                ? destination
                : URL(fileURLWithPath: current).deletingLastPathComponent().appendingPathComponent(destination).path
        }
        return current
    }
}
