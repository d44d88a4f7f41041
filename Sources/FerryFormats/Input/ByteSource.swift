#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A stream of bytes read in chunks: a file descriptor, or a decoder (decompression, text
/// encoding) stacked on another source. ``InputFile`` builds the stack; readers see only bytes.
protocol ByteSource: AnyObject {
    /// Reads up to `count` bytes into `buffer`; returns the number read, 0 only at the end.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int
}

/// Bytes already read (to recognise a format by its first bytes), then the rest of a source.
final class PrefixedSource: ByteSource {
    private var prefix: [UInt8]
    private var offset = 0
    private let rest: any ByteSource

    init(prefix: [UInt8], rest: any ByteSource) {
        self.prefix = prefix
        self.rest = rest
    }

    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        guard offset < prefix.count else { return try rest.read(into: buffer, count: count) }
        let n = min(count, prefix.count - offset)
        prefix.withUnsafeBytes { raw in
            if let base = raw.baseAddress { buffer.copyMemory(from: base + offset, byteCount: n) }
        }
        offset += n
        return n
    }

    /// Reads up to `count` first bytes of `source` (fewer only at its end), for sniffing.
    static func peek(_ source: any ByteSource, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = try bytes.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return try source.read(into: base + filled, count: count - filled)
            }
            if n == 0 { break }
            filled += n
        }
        bytes.removeLast(count - filled)
        return bytes
    }
}

/// The bytes a decoder has read from its source and not yet decoded: `bytes[start..<end]`.
struct PendingBytes {
    private(set) var bytes: [UInt8]
    var start = 0
    private(set) var end = 0
    /// The source returned 0: nothing more will come.
    private(set) var sourceEnded = false

    init(capacity: Int) {
        bytes = [UInt8](repeating: 0, count: capacity)
    }

    var isEmpty: Bool { start == end }
    var count: Int { end - start }
    var isFull: Bool { start == 0 && end == bytes.count }

    /// Moves the pending bytes to the front and reads more after them.
    mutating func refill(from source: any ByteSource) throws {
        guard !sourceEnded else { return }
        if start > 0 {
            let (from, length) = (start, end - start)
            bytes.withUnsafeMutableBytes { raw in
                if let base = raw.baseAddress { base.copyMemory(from: base + from, byteCount: length) }
            }
            end = length
            start = 0
        }
        let filled = end
        guard filled < bytes.count else { return }
        let n = try bytes.withUnsafeMutableBytes { raw -> Int in
            guard let base = raw.baseAddress else { return 0 }
            return try source.read(into: base + filled, count: raw.count - filled)
        }
        if n == 0 { sourceEnded = true }
        end += n
    }

    /// Calls `body` with the pending bytes.
    mutating func withPending<T>(_ body: (UnsafeMutableRawBufferPointer) throws -> T) rethrows -> T {
        let (from, to) = (start, end)
        return try bytes.withUnsafeMutableBytes { try body(UnsafeMutableRawBufferPointer(rebasing: $0[from..<to])) }
    }
}
