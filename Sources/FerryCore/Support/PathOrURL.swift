/// Tells a URL (`postgresql://host/db`, `https://…`) from a file path, in one place: a URL is
/// never taken for a file, so ferry never creates `postgresql:/…` folders or files.
///
/// ```swift
/// PathOrURL("postgresql://db/shop").scheme    // "postgresql"
/// PathOrURL("out/shop.sqlite").scheme         // nil
/// ```
package struct PathOrURL: Sendable, Hashable {
    /// The text as the user wrote it.
    package var text: String

    package init(_ text: String) { self.text = text }

    /// The URL scheme, lowercased, when the text looks like a URL: `scheme://…` with an RFC 3986
    /// scheme of two or more characters (so `C:/x` is not one), or a database scheme such as
    /// `postgresql:` or `sqlite:` without the slashes. Nil for a file path.
    package var scheme: String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon]
        guard scheme.count >= 2, let first = scheme.unicodeScalars.first, first.isASCIILetter,
            scheme.unicodeScalars.allSatisfy({
                $0.isASCIILetter || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)
            })
        else { return nil }
        let lowered = scheme.lowercased()
        if text[colon...].hasPrefix("://") || Self.databaseSchemes.contains(lowered) { return lowered }
        return nil
    }

    /// True when the text is a URL rather than a file path.
    package var isURL: Bool { scheme != nil }

    /// The text for messages: a PostgreSQL URL without its password (`***`), anything else as
    /// written.
    package var shown: String {
        StoreLocation.serverEngine(text)?.driver.server?.shown(text) ?? StoreEngines.redactingPasswords(in: text)
    }

    static let databaseSchemes: Set<String> = [
        "postgres", "postgresql", "mysql", "mariadb", "sqlite", "sqlite3", "redis", "mongodb",
    ]

    /// Throws a usage error when a store location is not something this build can open: a URL
    /// other than a PostgreSQL one. SQLite `file:` URIs and `:memory:` are stores, not URLs to
    /// refuse; `postgresql://` and `postgres://` URLs are PostgreSQL stores.
    package static func requireStore(_ text: String, location: InputLocation? = nil) throws(FerryError) {
        let value = PathOrURL(text)
        guard let scheme = value.scheme, scheme != "file", !StoreLocation.namesDatabaseServer(text) else { return }
        if scheme == "postgres" || scheme == "postgresql" { throw StoreEngines.notRegistered(scheme: scheme) }
        throw FerryError(
            .usage,
            "store '\(text)' is a \(scheme): URL, not a file path; a store is a SQLite file path or a postgresql:// URL",
            at: location)
    }

    /// Throws a usage error when `text`, given as `role` (`--output`, `rejects`), is a URL:
    /// ferry reads and writes only files (and `-` for the standard streams).
    package static func requireFile(_ text: String, role: String, location: InputLocation? = nil) throws(FerryError) {
        guard let scheme = PathOrURL(text).scheme else { return }
        throw FerryError(.usage, "\(role) '\(text)' is a \(scheme): URL, not a file path", at: location)
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
