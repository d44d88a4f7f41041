import FerryCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file (or standard input) read in chunks through `read(2)`, for the streaming readers.
///
/// Holds no more than the caller's buffer: readers keep their own bounded window and refill it.
public final class InputFile {
    /// The name used in error locations: the path as given, or `<stdin>`.
    public let name: String
    private var descriptor: Int32
    private let ownsDescriptor: Bool

    /// Opens `path` for reading; `-` reads standard input.
    public init(path: String) throws {
        if path == "-" {
            name = "<stdin>"
            descriptor = 0
            ownsDescriptor = false
            return
        }
        name = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw FerryError(.io, "cannot open '\(path)': \(reason)", at: InputLocation(file: path))
        }
        descriptor = fd
        ownsDescriptor = true
    }

    /// Reads up to `count` bytes into `buffer` at `offset`; returns the number read, 0 at the end.
    public func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        while true {
            #if canImport(Glibc)
                let n = Glibc.read(descriptor, buffer, count)
            #else
                let n = Darwin.read(descriptor, buffer, count)
            #endif
            if n >= 0 { return n }
            if errno == EINTR { continue }
            let reason = String(cString: strerror(errno))
            throw FerryError(.io, "cannot read '\(name)': \(reason)", at: InputLocation(file: name))
        }
    }

    /// Appends up to `chunkSize` bytes to `buffer`; returns the number appended, 0 at the end.
    public func append(to buffer: inout [UInt8], chunkSize: Int = 1 << 18) throws -> Int {
        let start = buffer.count
        buffer.reserveCapacity(start + chunkSize)
        var appended = 0
        var failure: (any Error)?
        buffer.append(contentsOf: repeatElement(0, count: chunkSize))
        buffer.withUnsafeMutableBytes { raw in
            do {
                appended = try read(into: raw.baseAddress! + start, count: chunkSize)
            } catch {
                failure = error
            }
        }
        buffer.removeLast(chunkSize - appended)
        if let failure { throw failure }
        return appended
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }
}
