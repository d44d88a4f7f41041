import Foundation

/// Golden files: expected output kept beside the tests, re-recorded with
/// `FERRY_RECORD_SNAPSHOTS=1` (then review the diff).
public enum Golden {
    /// Nil when `text` equals the file at `file` (or was just recorded there), else what is
    /// wrong, with the text received.
    public static func mismatch(_ text: String, file: URL) throws -> String? {
        if ProcessInfo.processInfo.environment["FERRY_RECORD_SNAPSHOTS"] == "1" {
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: file, atomically: true, encoding: .utf8)
            return nil
        }
        guard let expected = try? String(contentsOf: file, encoding: .utf8) else {
            return "no golden file \(file.lastPathComponent); record it with FERRY_RECORD_SNAPSHOTS=1"
        }
        return text == expected ? nil : "\(file.lastPathComponent) differs from its golden file; received:\n\(text)"
    }
}
