import FerryCore

/// The order of an Xcode model package's versions, which the package does not record
/// (COREDATA.md §1.1): by `userDefinedModelVersionIdentifier` when every version has a distinct
/// one, else by folder name in natural order (`Model 9` before `Model 10`). A bundle index
/// (`model.yml` listing the `.xcdatamodel` folders) overrides both.
enum XcodeVersionOrder {
    /// `versions` oldest first.
    static func ordered(_ versions: [ObjectModel]) -> [ObjectModel] {
        let identifiers = versions.compactMap(\.versionIdentifier)
        if identifiers.count == versions.count, Set(identifiers).count == identifiers.count {
            return versions.sorted { naturallyPrecedes($0.versionIdentifier ?? "", $1.versionIdentifier ?? "") }
        }
        return versions.sorted { naturallyPrecedes($0.version, $1.version) }
    }

    /// Natural order: runs of digits compare as numbers, other text case-insensitively, a prefix
    /// first (`Model` < `Model 2` < `Model 10`); ties broken by plain comparison.
    static func naturallyPrecedes(_ a: String, _ b: String) -> Bool {
        let (ca, cb) = (chunks(a), chunks(b))
        for (x, y) in zip(ca, cb) where x != y {
            switch (x, y) {
            case (.number(let m, _), .number(let n, _)) where m != n:
                return m.count != n.count ? m.count < n.count : m < n
            case (.number(_, let m), .number(_, let n)): return m < n
            case (.number, .text): return true
            case (.text, .number): return false
            case (.text(let s), .text(let t)):
                return s.lowercased() != t.lowercased() ? s.lowercased() < t.lowercased() : s < t
            }
        }
        return ca.count != cb.count ? ca.count < cb.count : a < b
    }

    private enum Chunk: Equatable {
        /// Digits without leading zeros, and as written.
        case number(String, String)
        case text(String)
    }

    private static func chunks(_ text: String) -> [Chunk] {
        var result: [Chunk] = []
        var current = ""
        var inDigits = false
        func flush() {
            guard !current.isEmpty else { return }
            if inDigits {
                let trimmed = current.drop { $0 == "0" }
                result.append(.number(trimmed.isEmpty ? "0" : String(trimmed), current))
            } else {
                result.append(.text(current))
            }
            current = ""
        }
        for character in text {
            let isDigit = character.isASCII && character.isNumber
            if isDigit != inDigits {
                flush()
                inDigits = isDigit
            }
            current.append(character)
        }
        flush()
        return result
    }
}
