import Foundation

/// One spelling for each JSON value, so that the same JSON compares equal however it was
/// written: object keys sorted, no insignificant blanks, escapes decoded, numbers as one number
/// (`1e2` and `100`). PostgreSQL's `jsonb` rewrites the text a SQLite store keeps as written;
/// checksums hash this form (``EntityChecksum``) so that both backends agree.
enum CanonicalJSON {
    /// The canonical text of `json`, or nil when it is not valid JSON (then hashed as written).
    static func text(_ json: String) -> String? {
        guard let value = try? JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed]),
            let data = try? JSONSerialization.data(
                withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
