import CFerryCompression
import Foundation

/// A decoded PNG image (8-bit grey, RGB or RGBA, not interlaced: what Chromium's screenshots
/// are), enough to say whether a picture shows something.
public struct PNGImage: Sendable {
    /// Width and height in pixels.
    public let width: Int, height: Int
    /// Bytes per pixel (1 grey, 2 grey and alpha, 3 RGB, 4 RGBA).
    public let bytesPerPixel: Int
    /// The pixels, row by row, unfiltered.
    public let pixels: [UInt8]

    /// Decodes `data`; throws on anything but an 8-bit, non-interlaced PNG.
    public init(data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.count > 8, bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] else {
            throw Failure(description: "not a PNG file")
        }
        func integer(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        var offset = 8
        var header: (width: Int, height: Int, depth: UInt8, colour: UInt8, interlace: UInt8)?
        var compressed: [UInt8] = []
        while offset + 8 <= bytes.count {
            let length = integer(offset)
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            let body = offset + 8
            guard body + length <= bytes.count else { throw Failure(description: "chunk \(type) is cut short") }
            if type == "IHDR" {
                header = (integer(body), integer(body + 4), bytes[body + 8], bytes[body + 9], bytes[body + 12])
            } else if type == "IDAT" {
                compressed += bytes[body..<body + length]
            } else if type == "IEND" {
                break
            }
            offset = body + length + 4  // and the CRC
        }
        guard let header, header.depth == 8, header.interlace == 0,
            let channels = [0: 1, 4: 2, 2: 3, 6: 4][Int(header.colour)]
        else { throw Failure(description: "not an 8-bit, non-interlaced grey, RGB or RGBA PNG") }
        let stride = header.width * channels
        var raw = [UInt8](repeating: 0, count: header.height * (stride + 1))
        var rawLength = uLongf(raw.count)
        let status = raw.withUnsafeMutableBufferPointer { output in
            compressed.withUnsafeBufferPointer { input in
                uncompress(output.baseAddress, &rawLength, input.baseAddress, uLong(input.count))
            }
        }
        guard status == Z_OK, Int(rawLength) == raw.count else {
            throw Failure(description: "the image data does not inflate to its size (zlib status \(status))")
        }
        width = header.width
        height = header.height
        bytesPerPixel = channels
        pixels = try Self.unfilter(raw, rows: header.height, stride: stride, bytesPerPixel: channels)
    }

    /// The rows without their filter bytes, each filter (None, Sub, Up, Average, Paeth) undone.
    static func unfilter(_ raw: [UInt8], rows: Int, stride: Int, bytesPerPixel: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: rows * stride)
        for row in 0..<rows {
            let filter = raw[row * (stride + 1)]
            let input = row * (stride + 1) + 1
            let start = row * stride
            for column in 0..<stride {
                let left = column >= bytesPerPixel ? Int(out[start + column - bytesPerPixel]) : 0
                let up = row > 0 ? Int(out[start - stride + column]) : 0
                let upLeft = row > 0 && column >= bytesPerPixel ? Int(out[start - stride + column - bytesPerPixel]) : 0
                let predictor: Int
                switch filter {
                case 0: predictor = 0
                case 1: predictor = left
                case 2: predictor = up
                case 3: predictor = (left + up) / 2
                case 4:
                    let estimate = left + up - upLeft
                    let (toLeft, toUp, toUpLeft) = (abs(estimate - left), abs(estimate - up), abs(estimate - upLeft))
                    predictor = toLeft <= toUp && toLeft <= toUpLeft ? left : toUp <= toUpLeft ? up : upLeft
                default: throw Failure(description: "row \(row) has an unknown filter \(filter)")
                }
                out[start + column] = UInt8(truncatingIfNeeded: Int(raw[input + column]) + predictor)
            }
        }
        return out
    }

    /// How many pixels have each colour (the colour as its bytes, packed in an integer).
    public var colourCounts: [UInt32: Int] {
        var counts: [UInt32: Int] = [:]
        var index = 0
        while index < pixels.count {
            var colour: UInt32 = 0
            for channel in 0..<bytesPerPixel { colour = colour << 8 | UInt32(pixels[index + channel]) }
            counts[colour, default: 0] += 1
            index += bytesPerPixel
        }
        return counts
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }
}
