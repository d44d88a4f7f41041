public import FerryCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The character encoding of an input: UTF-8 (the default), or any encoding iconv knows
/// (`latin-1`, `windows-1252`, `utf-16le`, `utf-16be`, `utf-32`, `shift_jis`, …). Readers see
/// UTF-8 whatever the file holds.
public struct TextEncoding: Sendable, Hashable, CustomStringConvertible {
    /// The name iconv is asked for.
    public let iconvName: String
    /// The name as the user wrote it.
    public let name: String

    /// UTF-8, what readers see: reading it converts nothing.
    public static let utf8 = TextEncoding(name: "utf-8", iconvName: "UTF-8")

    private init(name: String, iconvName: String) {
        self.name = name
        self.iconvName = iconvName
    }

    /// The encoding called `name` (case and `-`/`_` ignored for the common spellings).
    /// - Throws: `FerryError` (`usage`) when iconv does not know it.
    public init(named name: String) throws(FerryError) {
        let key = String(name.lowercased().map { $0 == "_" ? "-" : $0 })
        let aliases = [
            "utf8": "UTF-8", "utf-8": "UTF-8", "latin1": "ISO-8859-1", "latin-1": "ISO-8859-1",
            "iso-8859-1": "ISO-8859-1",
            "cp1252": "WINDOWS-1252", "windows-1252": "WINDOWS-1252", "win1252": "WINDOWS-1252",
            "utf16": "UTF-16", "utf-16": "UTF-16", "utf-16le": "UTF-16LE", "utf-16be": "UTF-16BE",
            "utf32": "UTF-32", "utf-32": "UTF-32", "utf-32le": "UTF-32LE", "utf-32be": "UTF-32BE",
        ]
        let iconvName = aliases[key] ?? name.uppercased()
        let probe = iconv_open("UTF-8", iconvName)
        guard probe != iconv_t(bitPattern: -1) else {
            throw FerryError(
                .usage,
                "unknown encoding '\(name)' (utf-8, utf-16le, utf-16be, utf-32, latin-1, windows-1252 or any name `iconv -l` lists)"
            )
        }
        iconv_close(probe)
        self.init(name: name, iconvName: iconvName)
    }

    /// The name as the user wrote it.
    public var description: String { name }

    var isUTF8: Bool { iconvName == "UTF-8" }

    /// The size of the encoding's code unit: an invalid sequence is skipped one unit at a time,
    /// so that the text after it is read in step again.
    var codeUnitSize: Int {
        let upper = iconvName.uppercased()
        if upper.hasPrefix("UTF-32") || upper.hasPrefix("UCS-4") { return 4 }
        if upper.hasPrefix("UTF-16") || upper.hasPrefix("UCS-2") { return 2 }
        return 1
    }

    /// The encoding a byte order mark at the start of `bytes` declares, and the mark's length
    /// (UTF-8's mark is left for the readers, which skip it).
    static func byteOrderMark(_ bytes: [UInt8]) -> (encoding: TextEncoding, length: Int)? {
        func starts(_ mark: [UInt8]) -> Bool { bytes.count >= mark.count && Array(bytes.prefix(mark.count)) == mark }
        if starts([0xFF, 0xFE, 0x00, 0x00]) { return (TextEncoding(name: "utf-32le", iconvName: "UTF-32LE"), 4) }
        if starts([0x00, 0x00, 0xFE, 0xFF]) { return (TextEncoding(name: "utf-32be", iconvName: "UTF-32BE"), 4) }
        if starts([0xFF, 0xFE]) { return (TextEncoding(name: "utf-16le", iconvName: "UTF-16LE"), 2) }
        if starts([0xFE, 0xFF]) { return (TextEncoding(name: "utf-16be", iconvName: "UTF-16BE"), 2) }
        return nil
    }
}

/// Converts another source from a text encoding to UTF-8 as it is read, through iconv.
///
/// A byte sequence that is not valid in the encoding becomes the byte 0xFF, which is never valid
/// UTF-8: the reader then rejects the record it is in, at its line and column, and goes on.
final class TranscodingSource: ByteSource {
    private let inner: any ByteSource
    private let converter: iconv_t
    private let codeUnitSize: Int
    private var input = PendingBytes(capacity: TranscodingSource.chunkSize)
    private var output: [UInt8]
    private var outStart = 0
    private var outEnd = 0

    static let chunkSize = 1 << 16

    init(_ inner: any ByteSource, encoding: TextEncoding, name: String) throws {
        self.inner = inner
        guard let converter = iconv_open("UTF-8", encoding.iconvName), converter != iconv_t(bitPattern: -1) else {
            throw FerryError(.usage, "unknown encoding '\(encoding.name)'", at: InputLocation(file: name))
        }
        self.converter = converter
        codeUnitSize = encoding.codeUnitSize
        // Room for the worst case: every input byte becoming four bytes of UTF-8.
        output = [UInt8](repeating: 0, count: Self.chunkSize * 4 + 8)
    }

    deinit { iconv_close(converter) }

    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        while outStart == outEnd {
            guard try convertMore() else { return 0 }
        }
        let n = min(count, outEnd - outStart)
        output.withUnsafeBytes { raw in
            if let base = raw.baseAddress { buffer.copyMemory(from: base + outStart, byteCount: n) }
        }
        outStart += n
        return n
    }

    /// Converts what is buffered (reading more first when needed); false at the end.
    private func convertMore() throws -> Bool {
        outStart = 0
        outEnd = 0
        try input.refill(from: inner)
        if input.isEmpty { return false }
        let sourceEnded = input.sourceEnded
        var invalid = false
        var left = 0
        input.withPending { pending in
            output.withUnsafeMutableBytes { outRaw in
                guard let inBase = pending.baseAddress, let outBase = outRaw.baseAddress else { return }
                var inPointer: UnsafeMutablePointer<CChar>? = inBase.assumingMemoryBound(to: CChar.self)
                var inLeft = pending.count
                var outPointer: UnsafeMutablePointer<CChar>? = outBase.assumingMemoryBound(to: CChar.self)
                var outLeft = outRaw.count
                let result = iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft)
                let failure = result == -1 ? errno : 0
                left = inLeft
                outEnd = outRaw.count - outLeft
                // EILSEQ: an invalid sequence; EINVAL: one cut off by the buffer's end, invalid
                // only when no more input follows.
                invalid = failure == EILSEQ || (failure == EINVAL && sourceEnded)
            }
        }
        input.start += input.count - left
        if invalid {
            output[outEnd] = 0xFF
            outEnd += 1
            input.start += min(input.count, codeUnitSize)
        }
        return true
    }
}
