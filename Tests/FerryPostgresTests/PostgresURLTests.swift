import FerryPostgres
import Testing

@Suite("PostgreSQL URL: parsing, recognition, redaction")
struct PostgresURLTests {
    @Test("user, host, port, database and schema come apart; schema is not a libpq keyword")
    func full() throws {
        let url = try PostgresURL("postgresql://ferry@db.example.com:6543/shop?schema=ferry")
        #expect(url.user == "ferry")
        #expect(url.password == nil)
        #expect(url.host == "db.example.com")
        #expect(url.port == 6543)
        #expect(url.database == "shop")
        #expect(url.schema == "ferry")
        #expect(url.parameters.isEmpty)
        #expect(url.description == "postgresql://ferry@db.example.com:6543/shop?schema=ferry")
    }

    @Test("postgres:// and any letter case of the scheme are accepted")
    func schemes() throws {
        #expect(try PostgresURL("postgres://u@h/d") == PostgresURL("postgresql://u@h/d"))
        #expect(try PostgresURL("POSTGRESQL://u@h/d").host == "h")
    }

    @Test("every part may be left to libpq's defaults")
    func minimal() throws {
        let url = try PostgresURL("postgresql://")
        #expect(url.user == nil && url.host == nil && url.port == nil && url.database == nil)
        #expect(url.description == "postgresql://")
        let portOnly = try PostgresURL("postgres://:5433")
        #expect(portOnly.port == 5433 && portOnly.host == nil)
    }

    @Test("host= names a Unix socket directory; %-escapes are undone")
    func socketDirectory() throws {
        let url = try PostgresURL("postgresql://me@/shop%20data?host=%2Fvar%2Frun%2Fpostgresql&port=5433")
        #expect(url.host == "/var/run/postgresql")
        #expect(url.port == 5433)
        #expect(url.database == "shop data")
        #expect(url.description == "postgresql://me@:5433/shop%20data?host=%2Fvar%2Frun%2Fpostgresql")
    }

    @Test("an IPv6 host is written in brackets")
    func ipv6() throws {
        let url = try PostgresURL("postgresql://u@[::1]:5432/d")
        #expect(url.host == "::1")
        #expect(url.port == 5432)
        #expect(url.description == "postgresql://u@[::1]:5432/d")
    }

    @Test("other query parameters are kept, in order, for libpq")
    func libpqParameters() throws {
        let url = try PostgresURL("postgresql://u@h/d?sslmode=disable&application_name=ferry%20job&schema=s")
        #expect(url.parameters.map(\.key) == ["sslmode", "application_name"])
        #expect(url.parameters.map(\.value) == ["disable", "ferry job"])
        #expect(url.schema == "s")
    }

    @Test(
        "ferry adds connect_timeout=10 and TCP keepalives when the URL has none; a URL parameter, or PGCONNECT_TIMEOUT, wins"
    )
    func timeoutDefaults() throws {
        func keywords(_ text: String, _ environment: [String: String] = [:]) throws -> [String: String] {
            Dictionary(
                try PostgresURL(text).connectionKeywords(environment: environment).map { ($0.key, $0.value) },
                uniquingKeysWith: { first, _ in first })
        }
        let plain = try keywords("postgresql://u@h/d?schema=s")
        #expect(plain["connect_timeout"] == "10")
        #expect(plain["keepalives"] == "1")
        #expect(plain["keepalives_idle"] == "30")
        #expect(plain["keepalives_interval"] == "10")
        #expect(plain["keepalives_count"] == "3")
        #expect(plain["schema"] == nil)
        let set = try keywords("postgresql://u@h/d?connect_timeout=3&keepalives_idle=5&keepalives=0")
        #expect(set["connect_timeout"] == "3")
        #expect(set["keepalives_idle"] == "5")
        #expect(set["keepalives"] == "0")
        #expect(set["keepalives_count"] == "3")
        let fromEnvironment = try keywords("postgresql://u@h/d", ["PGCONNECT_TIMEOUT": "4"])
        #expect(fromEnvironment["connect_timeout"] == nil, "libpq reads PGCONNECT_TIMEOUT itself")
        // The defaults are not part of the URL ferry shows.
        #expect(try PostgresURL("postgresql://u@h/d").description == "postgresql://u@h/d")
    }

    @Test("a password in the URL is kept for libpq but never shown")
    func passwordRedacted() throws {
        let url = try PostgresURL("postgresql://alice:s%40cret:x@h:1/d?password=other")
        #expect(url.user == "alice")
        #expect(url.password == "other")
        #expect(!url.description.contains("cret"))
        #expect(!url.description.contains("other"))
        #expect(url.description == "postgresql://alice:***@h:1/d")
        let plain = try PostgresURL("postgresql://alice:p@ss@h/d")
        #expect(plain.password == "p@ss")
        #expect(plain.host == "h")
        #expect(String(describing: plain) == "postgresql://alice:***@h/d")
    }

    @Test(
        "malformed URLs are refused, naming the part",
        arguments: [
            ("mysql://u@h/d", "must start with postgresql:// or postgres://"),
            ("postgresql://u@h:0/d", "the port '0' is not a number from 1 to 65535"),
            ("postgresql://u@h:70000/d", "the port '70000' is not a number from 1 to 65535"),
            ("postgresql://u@h:54x/d", "the port '54x' is not a number from 1 to 65535"),
            ("postgresql://u@h:/d", "the port '' is not a number from 1 to 65535"),
            ("postgresql://u@h/d?port=-1", "the port '-1' is not a number from 1 to 65535"),
            ("postgresql://u%zz@h/d", "the user name has a malformed %-escape"),
            ("postgresql://u@h/d%ff", "the database name is not valid UTF-8"),
            ("postgresql://u@h/d/e", "the database name 'd/e' contains '/'"),
            ("postgresql://u@h/d?schema", "the query parameter 'schema' has no '=value'"),
            ("postgresql://u@h/d?schema=", "schema= is empty"),
            ("postgresql://u@h/d?=x", "a query parameter has an empty name"),
            ("postgresql://u@h1,h2/d", "several hosts ('h1,h2') are not supported"),
            ("postgresql://u@[::1/d", "lacks its closing ']'"),
            ("postgresql://u@h/d#frag", "unexpected fragment '#frag'"),
        ])
    func malformed(text: String, cause: String) throws {
        let error = try #require(throws: PostgresError.self) { try PostgresURL(text) }
        #expect(error.kind == .invalidURL)
        #expect(error.message.hasPrefix("invalid PostgreSQL URL: "))
        #expect(error.message.contains(cause), "\(error.message)")
    }

    @Test(
        "recognizes PostgreSQL URLs and nothing else",
        arguments: [
            ("postgresql://u@h/d", true), ("postgres://h", true), ("PostgreSQL://h", true),
            ("postgresql://", true), ("out/shop.sqlite", false), ("postgresql:/h/d", false),
            ("postgres", false), ("./postgres://x", false), ("", false), ("sqlite://x", false),
            (" postgresql://h", false),
        ])
    func recognition(text: String, isURL: Bool) {
        #expect(PostgresURL.isPostgresURL(text) == isURL)
    }

    @Test(
        "passwords are redacted in any text, in URLs too malformed to parse as well; text without one is unchanged",
        arguments: [
            (
                "error: 'postgresql://u:s3cret@h:5432/d?schema=x' failed",
                "error: 'postgresql://u:***@h:5432/d?schema=x' failed"
            ),
            ("POSTGRES://u:s3cret@h/d", "POSTGRES://u:***@h/d"),
            ("postgresql://u:s3cret%zz@h/d", "postgresql://u:***@h/d"),
            ("postgresql://u:s3/cret@h/d", "postgresql://u:***@h/d"),
            ("postgresql://u:s3?cret@h/d?schema=x", "postgresql://u:***@h/d?schema=x"),
            ("postgresql://u:s3@cret@h/d#frag", "postgresql://u:***@h/d#frag"),
            ("postgresql://u@h/d?Password=s3cret&schema=x", "postgresql://u@h/d?password=***&schema=x"),
            (
                "a postgresql://u:s3cret@h/d and \"postgres://v:s3cret@k\"",
                "a postgresql://u:***@h/d and \"postgres://v:***@k\""
            ),
            ("postgresql://u@h/d?schema=x", "postgresql://u@h/d?schema=x"),
            ("no URL: u:s3cret@h", "no URL: u:s3cret@h"),
            ("Zoë postgresql://ü:s3cret@h/d 🚢", "Zoë postgresql://ü:***@h/d 🚢"),
        ])
    func redactingPasswords(text: String, expected: String) {
        #expect(PostgresURL.redactingPasswords(in: text) == expected)
        #expect(!PostgresURL.redacted(text).contains("s3cret") || !text.contains("postgres"))
    }
}
