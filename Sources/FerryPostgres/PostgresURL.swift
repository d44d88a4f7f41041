import Foundation

/// A parsed `postgresql://` (or `postgres://`) store URL.
///
/// ```
/// postgresql://user@host:port/database?schema=ferry
/// postgresql://user@/database?host=/var/run/postgresql      (Unix socket directory)
/// ```
///
/// The password is never taken from anywhere ferry prints: libpq reads it from `PGPASSWORD` or
/// `~/.pgpass` (`PGPASSFILE`, or the `passfile=` parameter). A password written into the URL
/// is accepted, as libpq accepts it, but ``description`` and every error show it as `***`.
/// Query parameters other than `schema` are libpq connection keywords (`host`, `port`,
/// `sslmode`, `sslrootcert`, `connect_timeout`, `keepalives_idle`, `application_name`,
/// `passfile`, …), checked by libpq; ``defaultConnectionParameters`` fills in the timeouts a
/// URL leaves out.
public struct PostgresURL: Sendable, Hashable, CustomStringConvertible {
    /// The role to log in as; nil lets libpq choose (`PGUSER`, then the operating-system user).
    public var user: String?
    /// The password written into the URL, if any (discouraged; never printed).
    public var password: String?
    /// A host name, an IP address, or (starting with `/`) a Unix socket directory; nil lets
    /// libpq choose (`PGHOST`, then its default socket directory).
    public var host: String?
    /// The TCP port, or the number in the socket file's name; nil lets libpq choose.
    public var port: Int?
    /// The database; nil lets libpq choose (`PGDATABASE`, then the user name).
    public var database: String?
    /// The `schema=` parameter: the PostgreSQL schema a store lives in; not a libpq keyword.
    public var schema: String?
    /// Other libpq connection keywords from the query string, in order.
    public var parameters: [(key: String, value: String)]

    /// Whether `text` names a PostgreSQL server rather than a file: it starts with
    /// `postgresql://` or `postgres://` (any letter case).
    public static func isPostgresURL(_ text: String) -> Bool {
        scheme(of: text) != nil
    }

    /// Parses a URL; throws ``PostgresError`` (kind `.invalidURL`) naming the offending part.
    public init(_ text: String) throws(PostgresError) {
        guard let scheme = Self.scheme(of: text) else {
            throw .invalidURL("it must start with postgresql:// or postgres://")
        }
        var rest = Substring(text.dropFirst(scheme.count))
        parameters = []
        if let fragment = rest.firstIndex(of: "#") {
            throw .invalidURL("unexpected fragment '\(rest[fragment...])'")
        }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var authority = rest
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            let path = rest[rest.index(after: slash)...]
            if path.contains("/") {
                throw .invalidURL("the database name '\(path)' contains '/'")
            }
            database = path.isEmpty ? nil : try Self.decode(path, part: "database name")
        }
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = try Self.decode(userInfo[..<colon], part: "user name")
                password = try Self.decode(userInfo[userInfo.index(after: colon)...], part: "password")
            } else {
                user = try Self.decode(userInfo, part: "user name")
            }
            if user?.isEmpty == true { user = nil }
        }
        try parseHostAndPort(authority)
        try parseQuery(query)
    }

    /// The URL with the password replaced by `***`: safe for messages and logs.
    public var description: String {
        var text = "postgresql://"
        if let user { text += Self.encode(user) }
        if password != nil { text += ":***" }
        if user != nil || password != nil { text += "@" }
        if let host, !host.hasPrefix("/") {
            text += host.contains(":") ? "[\(host)]" : Self.encode(host)
        }
        if let port { text += ":\(port)" }
        if let database { text += "/" + Self.encode(database) }
        var query: [String] = []
        if let host, host.hasPrefix("/") { query.append("host=" + Self.encode(host)) }
        if let schema { query.append("schema=" + Self.encode(schema)) }
        for (key, value) in parameters {
            query.append(key + "=" + (key == "password" ? "***" : Self.encode(value)))
        }
        if !query.isEmpty { text += "?" + query.joined(separator: "&") }
        return text
    }

    /// The libpq keywords and values for `PQconnectdbParams`, `schema` left out, with
    /// ``defaultConnectionParameters`` the URL does not set itself.
    package var connectionKeywords: [(key: String, value: String)] {
        connectionKeywords(environment: ProcessInfo.processInfo.environment)
    }

    /// What ferry sets when the URL does not, so that a server that never answers, or a network
    /// that silently drops the connection, ends in an error rather than a hang: the whole
    /// connection attempt given up after 10 seconds (libpq's default is to wait forever), and TCP
    /// keepalives probing an idle connection after 30 seconds, every 10 seconds, declaring it
    /// dead after 3 unanswered probes. A URL parameter of the same name (or, for
    /// `connect_timeout`, the `PGCONNECT_TIMEOUT` variable) wins.
    public static let defaultConnectionParameters: [(key: String, value: String)] = [
        ("connect_timeout", "10"), ("keepalives", "1"), ("keepalives_idle", "30"),
        ("keepalives_interval", "10"), ("keepalives_count", "3"),
    ]

    /// The libpq keywords, the defaults decided against `environment` (libpq's own variables).
    package func connectionKeywords(environment: [String: String]) -> [(key: String, value: String)] {
        var keywords: [(key: String, value: String)] = []
        if let user { keywords.append(("user", user)) }
        if let password { keywords.append(("password", password)) }
        if let host { keywords.append(("host", host)) }
        if let port { keywords.append(("port", String(port))) }
        if let database { keywords.append(("dbname", database)) }
        keywords.append(contentsOf: parameters)
        for (key, value) in Self.defaultConnectionParameters where !parameters.contains(where: { $0.key == key }) {
            if key == "connect_timeout", environment["PGCONNECT_TIMEOUT"]?.isEmpty == false { continue }
            keywords.append((key, value))
        }
        return keywords
    }

    /// Equal when every part is, parameters in order.
    public static func == (lhs: PostgresURL, rhs: PostgresURL) -> Bool {
        lhs.user == rhs.user && lhs.password == rhs.password && lhs.host == rhs.host
            && lhs.port == rhs.port && lhs.database == rhs.database && lhs.schema == rhs.schema
            && lhs.parameters.elementsEqual(rhs.parameters) { $0 == $1 }
    }

    /// Hashes the URL's text.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(description)
    }

    // MARK: - Parsing

    private static func scheme(of text: String) -> String? {
        for scheme in ["postgresql://", "postgres://"] where text.lowercased().hasPrefix(scheme) {
            return scheme
        }
        return nil
    }

    private mutating func parseHostAndPort(_ authority: Substring) throws(PostgresError) {
        var hostPart = authority
        var portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw .invalidURL("the IPv6 address '\(authority)' lacks its closing ']'")
            }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else {
                    throw .invalidURL("unexpected '\(after)' after the IPv6 address")
                }
                portPart = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        if hostPart.contains(",") {
            throw .invalidURL("several hosts ('\(hostPart)') are not supported")
        }
        host = hostPart.isEmpty ? nil : try Self.decode(hostPart, part: "host")
        if let portPart {
            port = try Self.port(portPart)
        }
    }

    private mutating func parseQuery(_ query: Substring) throws(PostgresError) {
        guard !query.isEmpty else { return }
        for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
            guard let equals = pair.firstIndex(of: "=") else {
                throw .invalidURL("the query parameter '\(pair)' has no '=value'")
            }
            let key = try Self.decode(pair[..<equals], part: "query parameter name")
            let value = try Self.decode(pair[pair.index(after: equals)...], part: "value of '\(key)'")
            switch key {
            case "schema":
                guard !value.isEmpty else { throw .invalidURL("schema= is empty") }
                if let problem = PostgresIdentifier.problem(with: value) {
                    throw .invalidURL("the schema name (schema=) cannot be used: \(problem)")
                }
                schema = value
            case "host":
                host = value.isEmpty ? nil : value
            case "port":
                port = try Self.port(Substring(value))
            case "user":
                user = value.isEmpty ? nil : value
            case "dbname":
                database = value.isEmpty ? nil : value
            case "password":
                password = value
            case "":
                throw .invalidURL("a query parameter has an empty name")
            default:
                parameters.append((key, value))
            }
        }
    }

    private static func port(_ text: Substring) throws(PostgresError) -> Int {
        guard !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber),
            let port = Int(text), (1...65535).contains(port)
        else {
            throw .invalidURL("the port '\(text)' is not a number from 1 to 65535")
        }
        return port
    }

    /// Undoes percent-encoding; a malformed escape or invalid UTF-8 is an error.
    private static func decode(_ text: Substring, part: String) throws(PostgresError) -> String {
        guard text.contains("%") else { return String(text) }
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            let hex = utf8.prefix(2)
            guard hex.count == 2, let value = UInt8(String(decoding: hex, as: UTF8.self), radix: 16)
            else {
                throw .invalidURL("the \(part) has a malformed %-escape")
            }
            bytes.append(value)
            utf8 = utf8.dropFirst(2)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw .invalidURL("the \(part) is not valid UTF-8 once %-escapes are undone")
        }
        // libpq takes C strings: a NUL would silently end the value there.
        guard !bytes.contains(0) else { throw .invalidURL("the \(part) contains a NUL byte (%00)") }
        return decoded
    }

    /// Percent-encodes everything but unreserved characters (RFC 3986).
    private static func encode(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return encoded
    }
}
