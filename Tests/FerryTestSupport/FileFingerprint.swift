import FerryCore
import Foundation

/// The bytes (SHA-256) and modification time of a store file and each companion that exists
/// (`-wal`, `-shm`, `-journal`): equal fingerprints before and after a command prove that it
/// neither wrote nor created any of them.
public enum FileFingerprint {
    public static func of(_ path: String) throws -> [String: String] {
        var result: [String: String] = [:]
        for file in [path] + StoreFiles.companions(of: path) {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: file) else { continue }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            result[file] = "\(SHA256.hexString(SHA256.hash([UInt8](bytes)))) \(modified)"
        }
        return result
    }
}
