internal import CFerryCompression
import FerryCore

/// Decompresses another source as it is read: memory stays at one input and one output chunk,
/// and readers see the decompressed bytes, so every line and column they report is one of the
/// decompressed text. Concatenated streams (`cat a.gz b.gz`) read as one.
final class DecompressingSource: ByteSource {
    private let inner: any ByteSource
    private var codec: any DecompressionCodec
    private let compression: Compression
    private let name: String
    private var input = PendingBytes(capacity: DecompressingSource.chunkSize)
    /// The current stream ended; more input starts another one.
    private var streamEnded = false

    static let chunkSize = 1 << 16

    init(_ inner: any ByteSource, compression: Compression, name: String) throws {
        self.inner = inner
        self.compression = compression
        self.name = name
        codec = try Self.makeCodec(compression, name: name)
    }

    private static func makeCodec(_ compression: Compression, name: String) throws -> any DecompressionCodec {
        switch compression {
        case .gzip: return try GzipCodec(name: name)
        case .zstd: return try ZstdCodec(name: name)
        case .bzip2: return try Bzip2Codec(name: name)
        case .xz: return try XZCodec(name: name)
        }
    }

    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        guard count > 0 else { return 0 }
        while true {
            if input.isEmpty { try input.refill(from: inner) }
            if streamEnded {
                // Another stream follows (concatenated files), or the input ends here.
                guard !input.isEmpty else { return 0 }
                codec = try Self.makeCodec(compression, name: name)
                streamEnded = false
            }
            let finishing = input.sourceEnded
            let step = try input.withPending { pending in
                try codec.decode(
                    UnsafeRawBufferPointer(pending), into: UnsafeMutableRawBufferPointer(start: buffer, count: count),
                    finishing: finishing)
            }
            input.start += step.consumed
            if step.ended { streamEnded = true }
            if step.produced > 0 { return step.produced }
            if step.ended || step.consumed > 0 { continue }
            // No progress: the codec needs more input than is buffered.
            if input.sourceEnded {
                throw FerryError(
                    .invalidInput,
                    "the \(compression.rawValue) data ends before its stream does (is the file cut short?)",
                    at: InputLocation(file: name))
            }
            if input.isFull {
                throw FerryError(
                    .invalidInput, "cannot decompress the \(compression.rawValue) data", at: InputLocation(file: name))
            }
            try input.refill(from: inner)
        }
    }
}

/// What one call of a codec did.
struct DecompressionStep {
    var consumed: Int
    var produced: Int
    /// The compressed stream ended (its trailer was read).
    var ended: Bool
}

/// One decompression library, driven in steps.
protocol DecompressionCodec {
    /// Decompresses from `input` into `output`. `finishing` says no input follows `input`.
    mutating func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, finishing: Bool
    ) throws -> DecompressionStep
}

private func corrupt(_ format: String, _ name: String, _ detail: String) -> FerryError {
    FerryError(.invalidInput, "cannot decompress the \(format) data: \(detail)", at: InputLocation(file: name))
}

// MARK: - gzip (zlib)

final class GzipCodec: DecompressionCodec {
    private var stream = z_stream()
    private let name: String

    init(name: String) throws {
        self.name = name
        // 15 + 32: a gzip or zlib header, detected.
        guard cferry_inflate_init(&stream, 15 + 32) == Z_OK else { throw corrupt("gzip", name, "zlib cannot start") }
    }

    deinit { inflateEnd(&stream) }

    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, finishing: Bool
    ) throws -> DecompressionStep {
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        stream.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(output.count)
        let status = inflate(&stream, Z_NO_FLUSH)
        let step = DecompressionStep(
            consumed: input.count - Int(stream.avail_in), produced: output.count - Int(stream.avail_out),
            ended: status == Z_STREAM_END)
        if status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR {
            let detail = stream.msg.map { String(cString: $0) } ?? "error \(status)"
            throw corrupt("gzip", name, detail)
        }
        return step
    }
}

// MARK: - zstd

final class ZstdCodec: DecompressionCodec {
    private let stream: OpaquePointer
    private let name: String

    init(name: String) throws {
        self.name = name
        guard let stream = ZSTD_createDStream() else { throw corrupt("zstd", name, "zstd cannot start") }
        self.stream = stream
        ZSTD_initDStream(stream)
    }

    deinit { ZSTD_freeDStream(stream) }

    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, finishing: Bool
    ) throws -> DecompressionStep {
        var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        var outBuffer = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        let result = ZSTD_decompressStream(stream, &outBuffer, &inBuffer)
        if ZSTD_isError(result) != 0 {
            throw corrupt("zstd", name, String(cString: ZSTD_getErrorName(result)))
        }
        return DecompressionStep(consumed: inBuffer.pos, produced: outBuffer.pos, ended: result == 0)
    }
}

// MARK: - bzip2

final class Bzip2Codec: DecompressionCodec {
    private var stream = bz_stream()
    private let name: String

    init(name: String) throws {
        self.name = name
        guard BZ2_bzDecompressInit(&stream, 0, 0) == BZ_OK else { throw corrupt("bzip2", name, "bzip2 cannot start") }
    }

    deinit { BZ2_bzDecompressEnd(&stream) }

    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, finishing: Bool
    ) throws -> DecompressionStep {
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: CChar.self))
        stream.avail_in = UInt32(input.count)
        stream.next_out = output.baseAddress?.assumingMemoryBound(to: CChar.self)
        stream.avail_out = UInt32(output.count)
        let status = BZ2_bzDecompress(&stream)
        guard status == BZ_OK || status == BZ_STREAM_END else { throw corrupt("bzip2", name, "error \(status)") }
        return DecompressionStep(
            consumed: input.count - Int(stream.avail_in), produced: output.count - Int(stream.avail_out),
            ended: status == BZ_STREAM_END)
    }
}

// MARK: - xz (liblzma)

final class XZCodec: DecompressionCodec {
    private var stream = lzma_stream()
    private let name: String

    init(name: String) throws {
        self.name = name
        guard lzma_stream_decoder(&stream, UInt64.max, 0) == LZMA_OK else {
            throw corrupt("xz", name, "liblzma cannot start")
        }
    }

    deinit { lzma_end(&stream) }

    func decode(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, finishing: Bool
    ) throws -> DecompressionStep {
        stream.next_in = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        stream.avail_in = input.count
        stream.next_out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        stream.avail_out = output.count
        let status = lzma_code(&stream, finishing ? LZMA_FINISH : LZMA_RUN)
        let step = DecompressionStep(
            consumed: input.count - stream.avail_in, produced: output.count - stream.avail_out,
            ended: status == LZMA_STREAM_END)
        switch status {
        case LZMA_OK, LZMA_STREAM_END, LZMA_BUF_ERROR: return step
        case LZMA_DATA_ERROR, LZMA_FORMAT_ERROR: throw corrupt("xz", name, "the data is corrupt")
        default: throw corrupt("xz", name, "error \(status.rawValue)")
        }
    }
}
