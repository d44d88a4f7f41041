import FerryCore

/// A file (or standard input) read in chunks through `read(2)`, for the streaming readers.
///
/// Compressed input (gzip, zstd, bzip2, xz) is recognised by its first bytes and decompressed as
/// it is read; text in another encoding (a declared one, or UTF-16/32 with a byte order mark) is
/// converted to UTF-8. Readers always see UTF-8 text, so every line and column they report is
/// one of the decompressed text.
///
/// Holds no more than the caller's buffer and one chunk per decoder: readers keep their own
/// bounded window and refill it.
package final class InputFile {
    /// The name used in error locations: the path as given, or `<stdin>`.
    package let name: String
    /// The compression found at the start of the input, if any.
    package private(set) var compression: Compression?
    /// The encoding the input is converted from: the declared one, or one a byte order mark
    /// declared; nil for UTF-8.
    package private(set) var encoding: TextEncoding?
    /// How much of the file has been read, out of its size.
    package let progress: InputProgress
    private var source: any ByteSource

    /// Opens `path` for reading; `-` reads standard input.
    /// - Parameter encoding: the input's encoding; nil reads UTF-8 unless a UTF-16 or UTF-32
    ///   byte order mark says otherwise.
    package init(path: String, encoding: TextEncoding? = nil) throws {
        let file: DescriptorSource
        if path == "-" {
            name = "<stdin>"
            progress = InputProgress(totalBytes: nil)
            file = DescriptorSource(descriptor: 0, owned: false, name: name, progress: progress)
        } else {
            name = path
            let fd: Int32
            do throws(FileIO.Failure) {
                fd = try FileIO.openForReading(path)
            } catch {
                // A missing input is sysexits' EX_NOINPUT (exit 66), like a pattern matching no file.
                throw FerryError(
                    error.isMissingFile ? .noInput : .io, "cannot open '\(path)': \(error)",
                    at: InputLocation(file: path))
            }
            progress = InputProgress(totalBytes: FileIO.regularFileSize(fd))
            file = DescriptorSource(descriptor: fd, owned: true, name: path, progress: progress)
        }
        source = file
        let magic = try PrefixedSource.peek(source, count: Compression.magicLength)
        source = PrefixedSource(prefix: magic, rest: source)
        if let compression = Compression(magic: magic) {
            self.compression = compression
            source = try DecompressingSource(source, compression: compression, name: name)
        }
        if let encoding, !encoding.isUTF8 {
            self.encoding = encoding
            source = try TranscodingSource(source, encoding: encoding, name: name)
        } else if encoding == nil {
            let start = try PrefixedSource.peek(source, count: 4)
            if let (declared, length) = TextEncoding.byteOrderMark(start) {
                self.encoding = declared
                source = try TranscodingSource(
                    PrefixedSource(prefix: Array(start.dropFirst(length)), rest: source), encoding: declared, name: name
                )
            } else {
                source = PrefixedSource(prefix: start, rest: source)
            }
        }
    }

    /// Reads up to `count` bytes into `buffer`; returns the number read, 0 at the end.
    package func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        try source.read(into: buffer, count: count)
    }

    /// Appends up to `chunkSize` bytes to `buffer`; returns the number appended, 0 at the end.
    package func append(to buffer: inout [UInt8], chunkSize: Int = 1 << 18) throws -> Int {
        let start = buffer.count
        buffer.reserveCapacity(start + chunkSize)
        var appended = 0
        var failure: (any Error)?
        buffer.append(contentsOf: repeatElement(0, count: chunkSize))
        buffer.withUnsafeMutableBytes { raw in
            do {
                guard let base = raw.baseAddress else { return }
                appended = try read(into: base + start, count: chunkSize)
            } catch {
                failure = error
            }
        }
        buffer.removeLast(chunkSize - appended)
        if let failure { throw failure }
        return appended
    }

}

/// A file descriptor read with `read(2)`, retried on EINTR.
final class DescriptorSource: ByteSource {
    private let descriptor: Int32
    private let owned: Bool
    private let name: String
    private let progress: InputProgress

    init(descriptor: Int32, owned: Bool, name: String, progress: InputProgress) {
        self.descriptor = descriptor
        self.owned = owned
        self.name = name
        self.progress = progress
    }

    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        do {
            let n = try FileIO.read(descriptor, into: buffer, count: count)
            progress.add(n)
            return n
        } catch {
            throw FerryError(.io, "cannot read '\(name)': \(error)", at: InputLocation(file: name))
        }
    }

    deinit {
        if owned { FileIO.close(descriptor) }
    }
}
