import FerryTestSupport
import Foundation
import Testing

/// The PostgreSQL fast path's fallback, logged: a batch whose direct `COPY` into the table hits a
/// constraint goes through the staging table, and `FERRY_LOG_LEVEL=debug` says so with the reason.
@Suite(
    "PostgreSQL diagnostics (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresDiagnosticsLogTests {
    static let model = """
        version: "1"
        entities:
          Employee:
            attributes:
              id: {type: int64, optional: false, unique: true}
              name: {type: string, optional: false}
        """

    @Test("a batch whose direct COPY hits a unique constraint is logged at debug as going through the staging table")
    func copyFallsBackToStaging() throws {
        let directory = TemporaryDirectory("ferry-pg-log")
        try directory.write("model.yml", Self.model)
        try directory.write("people.csv", "id,name\n1,Ada\n2,Grace\n3,Edsger\n2,Twice\n4,Barbara\n")
        let (url, drop) = try PostgresImportCLITests.freshStore("log")
        defer { drop() }
        let arguments = [
            "import", "people.csv", "--store", url, "--model", "model.yml", "--entity", "Employee",
            "--rejects", "rejects.ndjson", "--max-rejects", "10", "--quiet",
        ]
        let result = try runFerry(arguments, cwd: directory.path, env: ["FERRY_LOG_LEVEL": "debug"])
        #expect(result.exitCode == 0, "\(result)")
        let line = try #require(
            result.stderr.split(separator: "\n").first { $0.contains("go through the staging table") }, "\(result)")
        #expect(line.contains(" debug ferry.postgres"), "\(line)")
        #expect(line.contains("5 row(s) for "), "\(line)")
        #expect(line.hasSuffix("a constraint stopped the direct COPY"), "\(line)")
        let rejects = try String(contentsOfFile: directory.file("rejects.ndjson"), encoding: .utf8)
        #expect(rejects.split(separator: "\n").count == 1, "\(rejects)")
    }
}
