import Synchronization

/// How far a reader is through its input file, for the progress line's percent and time left:
/// bytes taken from the file (compressed bytes for compressed input, so the fraction is that of
/// the file on disk) out of the file's size when it has one (not for standard input or a pipe).
///
/// The reader's thread adds to it and the display reads it from another, so the count is atomic.
public final class InputProgress: Sendable {
    /// The file's size in bytes, or nil when it has none (a pipe, standard input).
    public let totalBytes: Int64?
    private let read = Atomic<Int64>(0)

    /// A count of 0 bytes read of a file of `totalBytes` (nil: size unknown).
    package init(totalBytes: Int64?) {
        self.totalBytes = totalBytes
    }

    /// Bytes read from the file so far.
    public var bytesRead: Int64 { read.load(ordering: .relaxed) }

    /// The part of the file read, 0…1, or nil when the size is unknown.
    public var fraction: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(1, Double(bytesRead) / Double(totalBytes))
    }

    func add(_ count: Int) {
        read.add(Int64(count), ordering: .relaxed)
    }
}
