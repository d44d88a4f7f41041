import FerryCore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : truncate ? O_TRUNC : 0)
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else {
            throw FerryError(
                .io, "cannot write '\(shownName)': \(String(cString: strerror(errno)))",
                at: InputLocation(file: shownName))
        }
        descriptor = fd
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
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                #if canImport(Glibc)
                return Glibc.write(descriptor, base + offset, raw.count - offset)
                #else
                return Darwin.write(descriptor, base + offset, raw.count - offset)
                #endif
            }
            if n < 0 {
                if errno == EINTR { continue }
                let reason = errno == ENOSPC ? "no space left on the device" : String(cString: strerror(errno))
                buffer.removeAll(keepingCapacity: true)
                throw FerryError(.io, "cannot write '\(name)': \(reason)", at: InputLocation(file: name))
            }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes what is buffered and forces it to the disk (`fsync(2)`), so that what was written
    /// survives a crash from here on. Pipes and devices, which cannot be synced, are only flushed.
    public func synchronize() throws {
        try flush()
        guard descriptor >= 0, fsync(descriptor) != 0 else { return }
        guard errno == EINVAL || errno == EROFS else {
            throw FerryError(
                .io, "cannot write '\(name)' to the disk: \(String(cString: strerror(errno)))",
                at: InputLocation(file: name))
        }
    }

    /// Flushes and closes the file; a failed `close(2)` (a deferred write error on NFS or a
    /// full disk) is an error too.
    public func close() throws {
        try flush()
        if ownsDescriptor, descriptor >= 0 {
            #if canImport(Glibc)
            let result = Glibc.close(descriptor)
            #else
            let result = Darwin.close(descriptor)
            #endif
            descriptor = -1
            if result != 0 && errno != EINTR {
                throw FerryError(
                    .io, "cannot write '\(name)': \(String(cString: strerror(errno)))", at: InputLocation(file: name))
            }
        }
    }

    deinit {
        try? flush()
        if ownsDescriptor, descriptor >= 0 {
            #if canImport(Glibc)
            _ = Glibc.close(descriptor)
            #else
            _ = Darwin.close(descriptor)
            #endif
        }
    }
}

/// JSON text helpers for writers.
package enum JSONText {
    /// A JSON string literal for `text`, escaping quotes, backslashes and control characters.
    package static func quote(_ text: String) -> String {
        JSONEscaping.quote(text)
    }
}
