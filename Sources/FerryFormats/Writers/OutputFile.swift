import FerryCore
import Foundation

/// A buffered writer to a file or standard output, flushed in large blocks.
public final class OutputFile {
    /// The label used in errors: the path as the user gave it, or `<stdout>`.
    public let name: String
    private var descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    private let capacity: Int

    /// Creates (truncates) `path`, and its folder when missing; `-` writes standard output.
    ///
    /// - Parameters:
    ///   - path: the file to write, or `-` for standard output.
    ///   - name: the file as errors name it (default: `path`); a temporary file written in place
    ///     of the user's file is named as the user's file.
    ///   - truncate: false to write into an existing non-regular file (a FIFO, a device) without
    ///     `O_TRUNC`.
    ///   - append: add to the end of an existing file instead of replacing it.
    ///   - capacity: the buffer's size in bytes; writes reach the file in blocks of about this size.
    /// - Throws: a usage error when `path` is a URL; an I/O error naming the file otherwise.
    public init(
        path: String, name: String? = nil, append: Bool = false, truncate: Bool = true, capacity: Int = 1 << 16
    ) throws {
        self.capacity = capacity
        buffer.reserveCapacity(capacity)
        if path == "-" {
            self.name = "<stdout>"
            descriptor = 1
            ownsDescriptor = false
            return
        }
        let shownName = name ?? path
        self.name = shownName
        try PathOrURL.requireFile(shownName, role: "output")
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            try? FileManager.default.createDirectory(atPath: String(path[..<slash]), withIntermediateDirectories: true)
        }
        do {
            descriptor = try FileIO.openForWriting(path, mode: append ? .append : truncate ? .replace : .overwrite)
        } catch {
            throw FerryError(.io, "cannot write '\(shownName)': \(error)", at: InputLocation(file: shownName))
        }
        ownsDescriptor = true
    }

    /// Writes `text` as UTF-8 (buffered).
    @inline(__always)
    public func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(bytes: $0) }
    }

    /// Writes bytes (buffered).
    public func write(bytes: UnsafeBufferPointer<UInt8>) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= capacity { try flush() }
    }

    /// Writes one byte (buffered).
    @inline(__always)
    public func write(byte: UInt8) throws {
        buffer.append(byte)
        if buffer.count >= capacity { try flush() }
    }

    /// Writes what is buffered to the file.
    public func flush() throws {
        defer { buffer.removeAll(keepingCapacity: true) }
        let failure = buffer.withUnsafeBytes { raw -> FileIO.Failure? in
            do throws(FileIO.Failure) {
                try FileIO.write(descriptor, raw)
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            let reason = failure.isNoSpace ? "no space left on the device" : failure.description
            throw FerryError(.io, "cannot write '\(name)': \(reason)", at: InputLocation(file: name))
        }
    }

    /// Flushes what is buffered and forces it to the disk (`fsync(2)`), so that what was written
    /// survives a crash from here on. Pipes and devices, which cannot be synced, are only flushed.
    public func synchronize() throws {
        try flush()
        guard descriptor >= 0 else { return }
        do {
            try FileIO.synchronize(descriptor: descriptor)
        } catch {
            throw FerryError(.io, "cannot write '\(name)' to the disk: \(error)", at: InputLocation(file: name))
        }
    }

    /// Flushes and closes the file; a failed `close(2)` (a deferred write error on NFS or a
    /// full disk) is an error too.
    public func close() throws {
        try flush()
        if ownsDescriptor, descriptor >= 0 {
            let closing = descriptor
            descriptor = -1
            do {
                try FileIO.closeReporting(closing)
            } catch {
                throw FerryError(.io, "cannot write '\(name)': \(error)", at: InputLocation(file: name))
            }
        }
    }

    deinit {
        try? flush()
        if ownsDescriptor, descriptor >= 0 { FileIO.close(descriptor) }
    }
}

/// JSON text helpers for writers.
package enum JSONText {
    /// A JSON string literal for `text`, escaping quotes, backslashes and control characters.
    package static func quote(_ text: String) -> String {
        JSONEscaping.quote(text)
    }
}
