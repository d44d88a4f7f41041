import FerryTestSupport
import Foundation
import Testing

/// libpq is opened on the first PostgreSQL connection, not when ferry starts.
@Suite("libpq loaded on first use (CLI)")
struct LibpqLoadingTests {
    #if os(Linux)
    @Test("a SQLite import never maps libpq (glibc's loader lists every library it opens)")
    func sqliteRunDoesNotLoadLibpq() throws {
        let directory = TemporaryDirectory()
        let csv = try directory.write("c.csv", "id,name\n1,Ann\n2,Bo\n")
        let result = try runFerry(
            ["import", csv, "--store", directory.file("s.sqlite"), "--entity", "Person"], env: ["LD_DEBUG": "libs"])
        #expect(result.exitCode == 0, "\(result.stderr.suffix(2000))")
        #expect(result.stderr.contains("libsqlite3"))
        #expect(!result.stderr.contains("libpq"))
    }
    #endif

    @Test("without libpq, a PostgreSQL store fails with a clear error naming the library; nothing crashes")
    func missingLibpq() throws {
        let result = try runFerry(
            ["store", "info", "postgresql://ferry@127.0.0.1:1/none?schema=s"],
            env: ["FERRY_LIBPQ": "/nonexistent/libpq.so.5"])
        #expect(!result.wasSignaled)
        #expect(result.exitCode != 0)
        #expect(
            result.stderr.contains(
                "error: cannot connect to postgresql://ferry@127.0.0.1:1/none?schema=s: libpq, PostgreSQL's client library, could not be loaded (FERRY_LIBPQ=/nonexistent/libpq.so.5: "
            ))
        #expect(result.stderr.contains("install it (Debian and Ubuntu: apt-get install libpq5"))
        #expect(!result.stderr.contains("Backtrac"))
    }
}
