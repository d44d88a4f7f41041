import FerryCore
import FerryFormats
import Foundation

/// The one rule that turns a source's field names (CSV headers, JSON keys) and file names into
/// entity and attribute names when a model is inferred:
///
/// 1. A name that is already an identifier (ASCII letters, digits and `_`, not starting with a
///    digit) and not reserved is kept as it is: `sku`, `firstName`, `in_stock`.
/// 2. Any other name is folded: accents are removed (`Café` → `Cafe`), letters are lower-cased,
///    and every run of other characters becomes one `_`, trimmed at both ends:
///    `First Name` → `first_name`, `Price ($)` → `price`, `a/b` → `a_b`.
/// 3. A name left empty becomes `column_N` (N its 1-based position); a name starting with a digit
///    or with a reserved prefix (`ferry_`, `sqlite_`) gets a leading `_`: `2024 total` → `_2024_total`.
/// 4. A name equal (ignoring case) to an earlier one gets `_2`, `_3`, …: `id, ID` → `id, ID_2`.
///
/// The source field keeps its original name, so `--type "First Name=string"` and job mappings
/// still use the header as written.
package enum AttributeNaming {
    /// Attribute names for field names, in the same order, all distinct.
    package static func attributeNames(for fieldNames: [String]) -> [String] {
        var taken = Set<String>()
        var result: [String] = []
        for (index, field) in fieldNames.enumerated() {
            let base = identifier(field, fallback: "column_\(index + 1)")
            var name = base
            var suffix = 2
            while taken.contains(name.lowercased()) {
                name = "\(base)_\(suffix)"
                suffix += 1
            }
            taken.insert(name.lowercased())
            result.append(name)
        }
        return result
    }

    /// An entity name from a file's base name (without its format and compression extensions):
    /// `orders-2024.csv.gz` → `orders_2024`,
    /// `Kundenübersicht.csv` → `kundenubersicht`; `records` when nothing usable is left.
    package static func entityName(fromPath path: String) -> String {
        var url = URL(fileURLWithPath: path)
        if Compression(pathExtension: url.pathExtension) != nil { url = url.deletingPathExtension() }
        var base = url.deletingPathExtension().lastPathComponent
        if SourceFiles.isPattern(path) {
            // A glob is named by what its files share (`orders-*.csv` → orders), else by their
            // folder (`nightly/*.csv` → nightly).
            // An escaped character (`\[`) is itself.
            base = base.replacing(/\\.|\[[^\]]*\]|[*?]/) { match in
                match.output.first == "\\" ? match.output.dropFirst() : " "
            }
            if identifier(base, fallback: "").isEmpty { base = url.deletingLastPathComponent().lastPathComponent }
        }
        return identifier(base, fallback: "records")
    }

    /// One name under rules 1–3.
    package static func identifier(_ name: String, fallback: String) -> String {
        if ModelChecker.isIdentifier(name) && !isReserved(name) { return name }
        let folded = name.folding(
            options: [.diacriticInsensitive, .widthInsensitive, .caseInsensitive],
            locale: Locale(identifier: "en_US_POSIX"))
        var result = ""
        var pendingSeparator = false
        for byte in folded.utf8 {
            let isAlphanumeric = (byte >= 97 && byte <= 122) || (byte >= 65 && byte <= 90) || (byte >= 48 && byte <= 57)
            if isAlphanumeric {
                if pendingSeparator && !result.isEmpty { result.append("_") }
                pendingSeparator = false
                result.append(Character(UnicodeScalar(byte >= 65 && byte <= 90 ? byte + 32 : byte)))
            } else {
                pendingSeparator = true
            }
        }
        if result.isEmpty { return fallback }
        if let first = result.utf8.first, first >= 48 && first <= 57 { result = "_" + result }
        if isReserved(result) { result = "_" + result }
        return result
    }

    private static func isReserved(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return ModelChecker.reservedPrefixes.contains { lowered.hasPrefix($0) }
    }
}
