#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A bounded, contiguous window over a file's bytes, refilled one chunk at a time.
///
/// Bytes `[0, end)` of ``base`` are valid. A refill drops the bytes before a `keep` index
/// (shifting the rest to the front) and appends one chunk, so a token or record that began
/// before the refill stays contiguous. The window only grows when a single kept span (one
/// token, or one record whose raw text is wanted) is larger than it.
final class ByteWindow {
    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private(set) var capacity: Int
    /// Number of valid bytes from ``base``.
    @exclusivity(unchecked) private(set) var end = 0
    /// Absolute offset in the input of `base[0]`.
    @exclusivity(unchecked) private(set) var offset = 0
    /// True once the input returned end of file.
    @exclusivity(unchecked) private(set) var atEnd = false
    /// The largest capacity the window ever had (for tests of bounded memory).
    @exclusivity(unchecked) private(set) var highWater: Int

    let chunkSize: Int
    private let input: InputFile

    init(input: InputFile, chunkSize: Int) {
        self.input = input
        self.chunkSize = max(1, chunkSize)
        capacity = max(16, 2 * self.chunkSize)
        highWater = capacity
        base = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
    }

    deinit { base.deallocate() }

    /// Drops the bytes before `keep`, then reads one chunk after the kept bytes.
    ///
    /// Returns how far the kept bytes moved toward the front (callers subtract it from their
    /// indexes) and how many bytes were read (0 at the end of the input).
    func refill(keeping keep: Int) throws -> (shift: Int, read: Int) {
        if atEnd { return (0, 0) }
        let kept = end - keep
        if keep > 0 {
            if kept > 0 { memmove(base, base + keep, kept) }
            offset += keep
            end = kept
        }
        if capacity - end < chunkSize {
            var newCapacity = capacity * 2
            while newCapacity - end < chunkSize { newCapacity *= 2 }
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
            if end > 0 { grown.update(from: base, count: end) }
            base.deallocate()
            base = grown
            capacity = newCapacity
            highWater = max(highWater, newCapacity)
        }
        let read = try input.read(into: base + end, count: chunkSize)
        if read == 0 { atEnd = true }
        end += read
        return (keep, read)
    }
}
