import FerryCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An input read line by line in a bounded window: each line is handed out as a range of the
/// window (without its LF or CRLF, and without a UTF-8 byte order mark on the first line),
/// valid until the next call. A line longer than the record limit is a located error, found
/// without reading more than the limit into memory.
final class LineWindow {
    let window: ByteWindow
    private let name: String
    private let maxLineBytes: Int
    /// Window index of the start of the next line.
    private var lineStart = 0
    private var finished = false
    /// The 1-based number of the line last returned.
    private(set) var lineNumber = 0

    init(input: InputFile, chunkSize: Int, maxLineBytes: Int) {
        window = ByteWindow(input: input, chunkSize: chunkSize)
        name = input.name
        self.maxLineBytes = max(1, maxLineBytes)
    }

    /// The next line as `[start, end)` of ``ByteWindow/base``, or nil at the end of the input.
    /// - Parameter record: the number the line's record would have, for the error of a line
    ///   that is too long.
    func nextLine(record: Int) throws -> (start: Int, end: Int)? {
        guard !finished else { return nil }
        var searchFrom = lineStart
        var newline = -1
        while true {
            let available = window.end - searchFrom
            if available > 0, let found = memchr(window.base + searchFrom, 0x0A, available) {
                newline = window.base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                break
            }
            searchFrom = window.end
            if searchFrom - lineStart > maxLineBytes { throw tooLong(line: lineNumber + 1, record: record) }
            let (shift, read) = try window.refill(keeping: lineStart)
            lineStart -= shift
            searchFrom -= shift
            if read == 0 { break }
        }
        let lineEnd = newline >= 0 ? newline : window.end
        if newline < 0 {
            finished = true
            if lineEnd == lineStart { return nil }
        }
        var start = lineStart
        lineStart = newline >= 0 ? newline + 1 : lineEnd
        lineNumber += 1
        if lineEnd - start > maxLineBytes { throw tooLong(line: lineNumber, record: record) }
        let base = window.base
        var stop = lineEnd
        if stop > start && base[stop - 1] == 0x0D { stop -= 1 }
        if lineNumber == 1 && stop - start >= 3 && base[start] == 0xEF && base[start + 1] == 0xBB
            && base[start + 2] == 0xBF
        {
            start += 3
        }
        return (start, stop)
    }

    private func tooLong(line: Int, record: Int) -> FerryError {
        FerryError(
            .invalidInput, "record is longer than \(RecordLimits.describe(maxLineBytes))",
            at: InputLocation(file: name, line: line, column: 1, record: record))
    }
}
