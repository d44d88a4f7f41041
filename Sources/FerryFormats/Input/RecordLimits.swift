/// The bound on one record's bytes that every reader applies, so that one enormous record (a
/// quote never closed in CSV, a 1 GB string in JSON, a line without end in NDJSON) is a located
/// error while memory stays bounded, instead of reading it whole.
@usableFromInline package enum RecordLimits {
    /// 64 MiB, far above any real record.
    @usableFromInline package static let defaultMaxRecordBytes = 64 * 1024 * 1024

    /// `64 MiB`, or `1000 bytes` for a limit that is not a whole number of MiB.
    static func describe(_ bytes: Int) -> String {
        let mib = 1024 * 1024
        return bytes % mib == 0 ? "\(bytes / mib) MiB" : "\(bytes) bytes"
    }
}
