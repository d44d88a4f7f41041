import FerryCore
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A remote server's faults before the first byte of data, through the built binary: TLS
/// (`sslmode=require`, `verify-ca`, `verify-full` with `sslrootcert=`) against a server of the
/// test's own with a certificate from a CA made at test time with `openssl`, and a server that
/// accepts the TCP connection but never answers. Every failure names the store (its password as
/// `***`) and the cause, and leaves nothing written.
@Suite(
    "PostgreSQL over TLS, and a server that never answers (CLI)", .serialized,
    .enabled(if: DurablePostgresServer.shouldRun, Comment(rawValue: DurablePostgresServer.skipReason)))
struct PostgresTLSCLITests {
    /// A test's setup (openssl, a socket) that did not work.
    struct SetupFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// A CA and a server certificate it signed, made with `openssl` in `directory`.
    struct Certificates {
        let authority: String
        let otherAuthority: String
        let serverCertificate: String
        let serverKey: String

        init(in directory: TemporaryDirectory) throws {
            func openssl(_ arguments: [String]) throws {
                let result = try runProgram("/usr/bin/env", ["openssl"] + arguments, cwd: directory.path)
                guard result.exitCode == 0 else { throw SetupFailure(description: "openssl: \(result)") }
            }
            for name in ["ca", "other-ca"] {
                try openssl([
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=ferry test \(name)",
                    "-keyout", "\(name).key", "-out", "\(name).crt",
                ])
            }
            try openssl([
                "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "server.key", "-out",
                "server.csr",
            ])
            _ = try directory.write("server.ext", "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
            try openssl([
                "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days",
                "2", "-extfile", "server.ext", "-out", "server.crt",
            ])
            authority = directory.file("ca.crt")
            otherAuthority = directory.file("other-ca.crt")
            serverCertificate = directory.file("server.crt")
            serverKey = directory.file("server.key")
        }
    }

    static func importArguments(into url: String, csv: String) -> [String] {
        ["import", csv, "--store", url, "--model", Fixtures.peopleModel, "--entity", "Person", "--quiet"]
    }

    /// Whether the schema exists on the server, asked over a connection that needs no TLS.
    static func schemaExists(_ schema: String, on server: DurablePostgresServer) throws -> Bool {
        let session = try Store.inspectionSession(at: server.url + "?schema=public&sslmode=disable").session
        return try session.scalar("SELECT count(*) FROM pg_namespace WHERE nspname = ?", [.text(schema)])?.int64 == 1
    }

    @Test(
        "verify-full, verify-ca and require import over TLS; a wrong CA, or a certificate for another host, fails naming the store and the TLS cause before anything is written"
    )
    func tlsModes() throws {
        let directory = TemporaryDirectory("ferry-pg-tls")
        let certificates = try Certificates(in: directory)
        let server = try DurablePostgresServer(
            startOptions: ["--ssl", certificates.serverCertificate, certificates.serverKey])
        let csv = try directory.write("people.csv", bytes: BigFiles.csv(ids: 1...20))
        let base = try PostgresURL(server.url)
        let port = try #require(base.port)
        let database = try #require(base.database)
        func url(host: String = "127.0.0.1", _ schema: String, _ parameters: String) -> String {
            "postgresql://ferry:S3cretTls@\(host):\(port)/\(database)?schema=\(schema)&\(parameters)"
        }

        let verified = url("tls_full", "sslmode=verify-full&sslrootcert=\(certificates.authority)")
        let imported = try runFerry(Self.importArguments(into: verified, csv: csv))
        #expect(imported.exitCode == 0, "\(imported)")
        let export = try runFerry([
            "export", "--store", verified, "--entity", "Person", "--format", "csv", "--fields", "id", "--quiet",
        ])
        #expect(export.exitCode == 0, "\(export)")
        #expect(export.stdout.split(whereSeparator: \.isNewline).count == 21, "\(export)")
        let byName = try runFerry(
            Self.importArguments(
                into: url(
                    host: "localhost", "tls_localhost", "sslmode=verify-full&sslrootcert=\(certificates.authority)"),
                csv: csv))
        #expect(byName.exitCode == 0, "the certificate names localhost too: \(byName)")
        let required = try runFerry(Self.importArguments(into: url("tls_require", "sslmode=require"), csv: csv))
        #expect(required.exitCode == 0, "\(required)")

        let wrongCA = try runFerry(
            Self.importArguments(
                into: url("tls_wrong_ca", "sslmode=verify-full&sslrootcert=\(certificates.otherAuthority)"), csv: csv))
        #expect(wrongCA.exitCode == 1, "\(wrongCA)")
        #expect(wrongCA.stderr.contains("cannot connect to postgresql://ferry:***@127.0.0.1:\(port)"), "\(wrongCA)")
        #expect(wrongCA.stderr.contains("tls_wrong_ca"), "the error names the store: \(wrongCA)")
        #expect(wrongCA.stderr.contains("certificate verify failed"), "the TLS cause: \(wrongCA)")
        #expect(!(wrongCA.stdout + wrongCA.stderr).contains("S3cretTls"), "\(wrongCA)")
        #expect(try !Self.schemaExists("tls_wrong_ca", on: server), "nothing was written")

        // The certificate names 127.0.0.1 and localhost; the URL's host is another name
        // (hostaddr= reaches the same server): verify-full refuses, verify-ca does not check names.
        let otherHost = "sslrootcert=\(certificates.authority)&hostaddr=127.0.0.1"
        let wrongHost = try runFerry(
            Self.importArguments(
                into: url(host: "db.invalid", "tls_wrong_host", "sslmode=verify-full&" + otherHost), csv: csv))
        #expect(wrongHost.exitCode == 1, "\(wrongHost)")
        #expect(wrongHost.stderr.contains("tls_wrong_host"), "\(wrongHost)")
        #expect(wrongHost.stderr.contains("does not match host name \"db.invalid\""), "\(wrongHost)")
        #expect(!(wrongHost.stdout + wrongHost.stderr).contains("S3cretTls"), "\(wrongHost)")
        #expect(try !Self.schemaExists("tls_wrong_host", on: server), "nothing was written")
        let caOnly = try runFerry(
            Self.importArguments(
                into: url(host: "db.invalid", "tls_ca_only", "sslmode=verify-ca&" + otherHost), csv: csv))
        #expect(caOnly.exitCode == 0, "\(caOnly)")
        #expect(try Self.schemaExists("tls_ca_only", on: server))
    }

    @Test(
        "sslmode=require against a server without TLS fails naming the store and the cause; nothing is written",
        .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
    func requireWithoutTLS() throws {
        let directory = TemporaryDirectory("ferry-pg-notls")
        let csv = try directory.write("people.csv", bytes: BigFiles.csv(ids: 1...5))
        let plain = try PostgresTestServer.requireURL()
        let schema = "tls_required_\(UUID().uuidString.lowercased().prefix(8))"
        let result = try runFerry(Self.importArguments(into: plain + "?schema=\(schema)&sslmode=require", csv: csv))
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("cannot connect to \(plain)"), "\(result)")
        #expect(result.stderr.contains(schema), "\(result)")
        #expect(result.stderr.contains("server does not support SSL, but SSL was required"), "\(result)")
        let session = try Store.inspectionSession(at: plain + "?schema=public").session
        let exists = try session.scalar("SELECT count(*) FROM pg_namespace WHERE nspname = ?", [.text(schema)])?.int64
        #expect(exists == 0, "nothing was written")
    }

    /// A loopback TCP port that accepts connections (the kernel completes the handshake) and
    /// never answers: what a stuck server, or a firewall that swallows packets after the
    /// handshake, looks like to libpq. Closed on release.
    final class SilentListener {
        let descriptor: Int32
        let port: Int

        init() throws {
            #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
            #endif
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    bind(descriptor, socketAddress, length) == 0 && listen(descriptor, 16) == 0
                        && getsockname(descriptor, socketAddress, &length) == 0
                }
            }
            guard descriptor >= 0, bound else {
                let reason = String(cString: strerror(errno))
                if descriptor >= 0 { close(descriptor) }
                throw SetupFailure(description: "cannot listen on loopback: \(reason)")
            }
            self.descriptor = descriptor
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(descriptor) }
    }

    @Test(
        "a server that accepts the connection but never answers: ferry gives up after connect_timeout (the URL's, or its default of 10 seconds) with a clear error, not a hang"
    )
    func silentServerTimesOut() throws {
        let listener = try SilentListener()
        let directory = TemporaryDirectory("ferry-pg-silent")
        let csv = try directory.write("people.csv", bytes: BigFiles.csv(ids: 1...5))
        let store = "postgresql://ferry:S3cretWait@127.0.0.1:\(listener.port)/ferry_test?schema=silent"
        for (parameter, seconds) in [("&connect_timeout=2", 2), ("", 10)] {
            let started = ContinuousClock.now
            let result = try runFerry(Self.importArguments(into: store + parameter, csv: csv), timeout: .seconds(60))
            let took = ContinuousClock.now - started
            #expect(result.exitCode == 1, "\(result)")
            #expect(took >= .seconds(seconds) && took < .seconds(seconds + 8), "gave up after \(took)")
            #expect(
                result.stderr.contains("cannot connect to postgresql://ferry:***@127.0.0.1:\(listener.port)"),
                "\(result)")
            #expect(result.stderr.contains("timeout expired"), "\(result)")
            #expect(result.stderr.contains("connect_timeout=\(seconds) seconds"), "\(result)")
            #expect(!(result.stdout + result.stderr).contains("S3cretWait"), "\(result)")
        }
    }
}
