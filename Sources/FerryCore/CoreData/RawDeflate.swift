import CFerryCompression

/// Raw DEFLATE (RFC 1951, no zlib or gzip header), the compression of Core Data's
/// `Z_MODELCACHE` (COREDATA.md, Appendix A: inflate with `windowBits` −15).
package enum RawDeflate {
    /// Compresses `bytes` as one raw DEFLATE stream (zlib's best compression, `windowBits` −15:
    /// no header, no checksum), the form of the `Z_MODELCACHE` blobs Core Data writes.
    package static func deflate(_ bytes: [UInt8]) throws -> [UInt8] {
        var stream = z_stream()
        guard cferry_deflate_init(&stream, Z_BEST_COMPRESSION, -15) == Z_OK else {
            throw FerryError(.internal, "zlib cannot start compressing")
        }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 16)
        let status: Int32 = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { buffer in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = buffer.baseAddress
                stream.avail_out = uInt(buffer.count)
                return CFerryCompression.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else {
            throw FerryError(.internal, "zlib could not compress \(bytes.count) bytes (status \(status))")
        }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }

    /// Inflates `bytes`, refusing output beyond `limit` bytes (a hostile blob cannot exhaust
    /// memory) and input that is truncated, corrupt or followed by trailing bytes. `source`
    /// names the data in errors.
    package static func inflate(_ bytes: [UInt8], limit: Int, source: String) throws -> [UInt8] {
        let tooLarge: Int32 = -1000
        var stream = z_stream()
        guard cferry_inflate_init(&stream, -15) == Z_OK else {
            throw FerryError(.internal, "\(source): zlib cannot start")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let status: Int32 = bytes.withUnsafeBufferPointer { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { buffer -> (Int32, Int) in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = uInt(buffer.count)
                    let status = CFerryCompression.inflate(&stream, Z_NO_FLUSH)
                    return (status, buffer.count - Int(stream.avail_out))
                }
                if produced > 0 {
                    guard output.count + produced <= limit else { return tooLarge }
                    output.append(contentsOf: chunk[0..<produced])
                }
                if status != Z_OK { return status }
                if produced == 0 && stream.avail_in == 0 { return Z_BUF_ERROR }
            }
        }
        switch status {
        case Z_STREAM_END:
            guard stream.avail_in == 0 else {
                throw FerryError(
                    .invalidInput,
                    "\(source) is corrupt: \(stream.avail_in) bytes follow the end of the compressed data")
            }
            return output
        case tooLarge:
            throw FerryError(.invalidInput, "\(source) inflates to more than \(limit) bytes; refused")
        case Z_BUF_ERROR:
            throw FerryError(.invalidInput, "\(source) is truncated: the compressed data ends early")
        default:
            let detail = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
            throw FerryError(.invalidInput, "\(source) is not valid raw DEFLATE data: \(detail)")
        }
    }
}
