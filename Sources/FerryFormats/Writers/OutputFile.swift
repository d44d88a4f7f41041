import FerryCore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A buffered writer to a file or standard output, flushed in large blocks.
public final class OutputFile {
    public let name: String
    private var descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    private let capacity: Int

    /// Creates (truncates) `path`; `-` writes standard output.
    public init(path: String, append: Bool = false, capacity: Int = 1 << 16) throws {
        self.capacity = capacity
        buffer.reserveCapacity(capacity)
        if path == "-" {
            name = "<stdout>"
            descriptor = 1
            ownsDescriptor = false
            return
        }
        name = path
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            try? FileManager.default.createDirectory(atPath: String(path[..<slash]), withIntermediateDirectories: true)
        }
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC)
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else {
            throw FerryError(.io, "cannot write '\(path)': \(String(cString: strerror(errno)))", at: InputLocation(file: path))
        }
        descriptor = fd
        ownsDescriptor = true
    }

    @inline(__always)
    public func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(bytes: $0) }
    }

    public func write(bytes: UnsafeBufferPointer<UInt8>) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= capacity { try flush() }
    }

    @inline(__always)
    public func write(byte: UInt8) throws {
        buffer.append(byte)
        if buffer.count >= capacity { try flush() }
    }

    /// Writes what is buffered to the file.
    public func flush() throws {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { raw in
                #if canImport(Glibc)
                    Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                #else
                    Darwin.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                #endif
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw FerryError(.io, "cannot write '\(name)': \(String(cString: strerror(errno)))", at: InputLocation(file: name))
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
            throw FerryError(.io, "cannot write '\(name)' to the disk: \(String(cString: strerror(errno)))", at: InputLocation(file: name))
        }
    }

    /// Flushes and closes the file; an error of the close itself (a full disk can surface only
    /// there) is thrown, never swallowed.
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
                throw FerryError(.io, "cannot write '\(name)': \(String(cString: strerror(errno)))", at: InputLocation(file: name))
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
public enum JSONText {
    /// A JSON string literal for `text`, escaping quotes, backslashes and control characters.
    public static func quote(_ text: String) -> String {
        JSONEscaping.quote(text)
    }
}
