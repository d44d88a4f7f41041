/// The one redaction of passwords written into PostgreSQL URLs: every place ferry names a store or
/// a source (messages, logs, reports, the run log, the process title) goes through it.
extension PostgresURL {
    /// The URL `text` without its password, for messages: its ``description`` when it parses;
    /// when it does not (a malformed URL is still named in the error saying so), the text with
    /// every password in it replaced by `***` (``redactingPasswords(in:)``).
    public static func redacted(_ text: String) -> String {
        guard isPostgresURL(text) else { return redactingPasswords(in: text) }
        // The description too: it keeps a `Password=` parameter (not libpq's keyword) as written.
        guard let url = try? PostgresURL(text) else { return redactingPasswords(in: text) }
        return redactingPasswords(in: url.description)
    }

    /// `text` with the password of every `postgresql://` or `postgres://` URL in it replaced by
    /// `***`: the part after the user name's `:` in `user:password@host` (the last `@` before the
    /// URL's path, as the parser reads it), and the value of each `password=` query parameter.
    /// A URL ends at white space, a quote or a backquote, `<` or `>`. Text without such a URL
    /// is returned unchanged, byte for byte.
    public static func redactingPasswords(in text: String) -> String {
        let bytes = Array(text.utf8)
        // URL schemes are ASCII: matched case-insensitively byte by byte.
        let lower = bytes.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
        guard lower.firstRange(of: Array("postgres".utf8)) != nil else { return text }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            guard let schemeLength = schemeLength(in: lower, at: index) else {
                output.append(bytes[index])
                index += 1
                continue
            }
            var end = index + schemeLength
            while end < bytes.count, !isURLEnd(bytes[end]) { end += 1 }
            output += redactOne(Array(bytes[index..<end]), schemeLength: schemeLength)
            index = end
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static let schemes: [[UInt8]] = [Array("postgresql://".utf8), Array("postgres://".utf8)]

    private static func schemeLength(in lower: [UInt8], at index: Int) -> Int? {
        for scheme in schemes where lower.count - index >= scheme.count {
            if lower[index..<(index + scheme.count)].elementsEqual(scheme) { return scheme.count }
        }
        return nil
    }

    private static func isURLEnd(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "'"),
            UInt8(ascii: "\""), UInt8(ascii: "`"), UInt8(ascii: "<"), UInt8(ascii: ">"):
            return true
        default:
            return false
        }
    }

    /// One URL's bytes (scheme included) with its passwords replaced by `***`. Where the URL is
    /// malformed (a raw `/`, `?` or `@` in the password), more is hidden rather than less.
    private static func redactOne(_ url: [UInt8], schemeLength: Int) -> [UInt8] {
        let stars = Array("***".utf8)
        let rest = Array(url[schemeLength...])
        let mark = rest.firstIndex(of: UInt8(ascii: "?")) ?? rest.count
        // The user information ends at the last `@` before the query (or, when a raw `?` in the
        // password hides it there, at the first `@` after it); the password starts after its `:`.
        let at = rest[..<mark].lastIndex(of: UInt8(ascii: "@")) ?? rest.firstIndex(of: UInt8(ascii: "@"))
        var head = rest
        var queryStart = mark
        if let at, let colon = rest[..<at].firstIndex(of: UInt8(ascii: ":")) {
            head = Array(rest[...colon]) + stars + Array(rest[at...])
            queryStart = (rest[at...].firstIndex(of: UInt8(ascii: "?")) ?? rest.count) - (at - colon - 1) + stars.count
        }
        var result = Array(url[..<schemeLength])
        guard queryStart < head.count else { return result + head }
        result += head[..<queryStart]
        let key = Array("password=".utf8)
        var parts: [[UInt8]] = []
        for pair in head[(queryStart + 1)...].split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            let lowered = pair.prefix(key.count).map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
            parts.append(lowered.elementsEqual(key) ? key + stars : Array(pair))
        }
        return result + [UInt8(ascii: "?")] + Array(parts.joined(separator: [UInt8(ascii: "&")]))
    }
}
