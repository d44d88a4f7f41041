import FerryCore
import Foundation

/// A source file as an interrupted import had read it: recorded with every committed batch and
/// checked before the import resumes (see ``SourceFingerprint``).
struct SourceIdentity: Codable, Hashable {
    var path: String
    /// The file's size in bytes.
    var size: Int64
    /// The file's modification time, in nanoseconds since 1970 (reported, not decisive).
    var modified: Int64
    /// How many bytes from the start of the file the hash covers: what the reader had taken
    /// from the disk (the whole file once it is read to its end).
    var hashedBytes: Int64
    /// SHA-256 of those bytes, in hex.
    var sha256: String
}

/// Hashes a source file's bytes (as they are on disk: compressed bytes for compressed input) up
/// to where the import's reader has read, so that an interrupted import can later tell whether
/// the part it consumed is still the same.
///
/// The hash grows with the reading, batch by batch (each byte is hashed once), from a
/// descriptor of its own: readers are not slowed down or changed. The rule for a resume: the
/// size must be the same and the hash of the consumed prefix must match; the modification time
/// alone (a `touch`, a copy) does not refuse a resume.
final class SourceFingerprint {
    let path: String
    private let descriptor: Int32
    private let size: Int64
    private let modified: Int64
    private var hasher = SHA256()
    private var hashedBytes: Int64 = 0
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)

    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw FerryError(
                .io, "cannot open '\(path)': \(String(cString: strerror(errno)))", at: InputLocation(file: path))
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            close(descriptor)
            throw FerryError(
                .io, "cannot read '\(path)': \(String(cString: strerror(errno)))", at: InputLocation(file: path))
        }
        size = Int64(status.st_size)
        modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
    }

    deinit { close(descriptor) }

    /// The identity as far as the file is hashed.
    var identity: SourceIdentity {
        SourceIdentity(
            path: path, size: size, modified: modified, hashedBytes: hashedBytes,
            sha256: SHA256.hexString(hasher.finalize()))
    }

    /// Hashes on up to `bytes` bytes from the start (or the end of the file, when sooner).
    func hash(upTo bytes: Int64) throws {
        let end = min(bytes, size)
        while hashedBytes < end {
            let wanted = Int(min(Int64(buffer.count), end - hashedBytes))
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, wanted, off_t(hashedBytes)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let reason = count < 0 ? String(cString: strerror(errno)) : "it ends before its recorded size"
                throw FerryError(.io, "cannot read '\(path)': \(reason)", at: InputLocation(file: path))
            }
            hasher.update(buffer[0..<count])
            hashedBytes += Int64(count)
        }
    }

    /// Hashes the whole file (it was read to its end).
    func hashToEnd() throws { try hash(upTo: size) }

    /// Checks that the file is still the one `recorded` describes, hashing it as far as the
    /// record did; throws a located refusal naming what changed.
    func check(against recorded: SourceIdentity) throws {
        let location = InputLocation(file: path)
        let refusal = { (change: String) in
            FerryError(
                .usage, "cannot resume: \(change) since the interrupted import read it", at: location,
                notes: [
                    "resuming would mix rows of two different files; run the import again without --resume (with on_conflict: update or replace, rows already imported are updated)"
                ])
        }
        if size != recorded.size {
            throw refusal(
                size > recorded.size
                    ? "the file grew from \(recorded.size) to \(size) bytes"
                    : "the file shrank from \(recorded.size) to \(size) bytes")
        }
        try hash(upTo: recorded.hashedBytes)
        if hashedBytes != recorded.hashedBytes || identity.sha256 != recorded.sha256 {
            let when =
                modified == recorded.modified
                ? "" : " (modified \(Self.describe(modified)), was \(Self.describe(recorded.modified)))"
            throw refusal("the first \(recorded.hashedBytes) bytes of the file changed\(when)")
        }
    }

    private static func describe(_ nanoseconds: Int64) -> String {
        DateCoding.format(nanoseconds / 1_000_000)
    }
}

/// The identities of the files an import step has opened, in order, each hashed as far as it
/// was read: the files done to their end, the one being read up to its reader's position.
final class SourceTrail {
    private var finished: [SourceIdentity] = []
    private var current: SourceFingerprint?

    /// A trail for an import that starts at the beginning.
    init() {}

    /// A trail for an import that resumes after reading the `recorded` files: each is checked
    /// (refusing when one changed), and the last one goes on being hashed from where it was.
    init(checking recorded: [SourceIdentity]) throws {
        for (position, identity) in recorded.enumerated() {
            let fingerprint = try SourceFingerprint(path: identity.path)
            try fingerprint.check(against: identity)
            if position == recorded.count - 1 {
                current = fingerprint
            } else {
                finished.append(fingerprint.identity)
            }
        }
    }

    /// The files so far, for a checkpoint.
    var identities: [SourceIdentity] { finished + (current.map { [$0.identity] } ?? []) }

    /// Follows the reading: `openedFiles` are the files opened so far in order, and the last one
    /// has been read up to `bytesRead` (nil when its reader cannot tell, or when every file is
    /// done: it is then hashed to its end).
    func update(openedFiles: [String], bytesRead: Int64?) throws {
        let known = finished.count + (current == nil ? 0 : 1)
        for path in openedFiles.dropFirst(known) {
            if let current {
                try current.hashToEnd()
                finished.append(current.identity)
            }
            current = try SourceFingerprint(path: path)
        }
        if let bytesRead { try current?.hash(upTo: bytesRead) } else { try current?.hashToEnd() }
    }
}
