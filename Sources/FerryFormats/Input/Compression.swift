/// The compressed formats ferry reads, recognised by their first bytes (so `data.csv.gz`,
/// a `.gz` without its extension and a compressed standard input all work).
public enum Compression: String, Sendable, Hashable, CaseIterable {
    /// gzip (`.gz`), Zstandard (`.zst`), bzip2 (`.bz2`) and xz (`.xz`).
    case gzip, zstd, bzip2, xz

    /// The format whose magic number starts `bytes`, or nil for uncompressed input.
    public init?(magic bytes: [UInt8]) {
        func starts(_ magic: [UInt8]) -> Bool {
            bytes.count >= magic.count && Array(bytes.prefix(magic.count)) == magic
        }
        if starts([0x1F, 0x8B]) {
            self = .gzip
        } else if starts([0x28, 0xB5, 0x2F, 0xFD]) {
            self = .zstd
        } else if starts([0x42, 0x5A, 0x68]) {
            self = .bzip2
        } else if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) {
            self = .xz
        } else {
            return nil
        }
    }

    /// The format a file extension names (`gz`, `zst`, `bz2`, `xz`), or nil.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "gz", "gzip": self = .gzip
        case "zst", "zstd": self = .zstd
        case "bz2": self = .bzip2
        case "xz": self = .xz
        default: return nil
        }
    }

    /// The longest magic number.
    static let magicLength = 6
}
