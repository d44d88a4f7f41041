import FerryTestSupport
import Foundation
import Testing

/// `ferry export` through the built binary (`swift build` first).
@Suite("ferry export (CLI)", .serialized)
struct ExportCommandTests {
    static let model = TestPaths.packageRoot.appendingPathComponent("scripts/bench/customers.yml").path

    static let csv = """
        id,uuid,email,name,age,balance,created_at,active,notes
        1,6f1c2d3e-0000-4000-8000-000000000002,zoe@example.com,Zoë,41,123456789012345678901234567890.5,1969-07-20T20:17:40.123Z,true,"say ""hi"", then
        bye"
        2,,ann@example.org,"",30,-0.1,2024-02-29T23:59:59.999Z,false,
        3,,bob@example.com,Bob,55,0,,,"🚢 日本"

        """

    @Test("CSV out of one store and into another gives the same export")
    func roundTrip() throws {
        let directory = TemporaryDirectory()
        try directory.write("in.csv", Self.csv)
        let imported = try runFerry(
            ["import", "in.csv", "--store", "a.sqlite", "--entity", "customers", "--model", Self.model, "--quiet"],
            cwd: directory.path)
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        for format in ["csv", "ndjson", "json"] {
            let first = try runFerry(
                ["export", "--store", "a.sqlite", "--entity", "customers", "--format", format, "--quiet"],
                cwd: directory.path)
            #expect(first.exitCode == 0, "\(first.stderr)")
            #expect(first.stderr.isEmpty)
            if format == "csv" {
                try directory.write("out.csv", first.stdout)
                let again = try runFerry(
                    [
                        "import", "out.csv", "--store", "b.sqlite", "--entity", "customers", "--model", Self.model,
                        "--quiet",
                    ], cwd: directory.path)
                #expect(again.exitCode == 0, "\(again.stderr)")
                let second = try runFerry(
                    ["export", "--store", "b.sqlite", "--entity", "customers", "--format", "csv", "--output", "b.csv"],
                    cwd: directory.path)
                #expect(second.exitCode == 0)
                #expect(
                    second.stderr == "step 1 export customers to b.csv, read 3, written 3 in "
                        + (second.stderr.split(separator: " in ").last.map(String.init) ?? ""))
                #expect(try String(contentsOfFile: directory.file("b.csv"), encoding: .utf8) == first.stdout)
                #expect(
                    first.stdout.hasPrefix(
                        "id,uuid,email,name,age,balance,created_at,active,notes\r\n1,6f1c2d3e-0000-4000-8000-000000000002,zoe@example.com,Zoë,41,123456789012345678901234567890.5,1969-07-20T20:17:40.123Z,true,\"say \"\"hi\"\", then\nbye\"\r\n2,,ann@example.org,\"\",30,-0.1,"
                    ))
            }
            if format == "ndjson" {
                #expect(first.stdout.split(separator: "\n").count == 3)
                #expect(first.stdout.contains(#""balance":123456789012345678901234567890.5"#))
            }
        }
        let page = try runFerry(
            [
                "export", "--store", "a.sqlite", "--entity", "customers", "--format", "csv", "--where",
                "age > 40 AND email ENDSWITH \"example.com\"",
                "--sort", "age:desc", "--fields", "email,age", "--limit", "1", "--offset", "1", "--quiet",
            ], cwd: directory.path)
        #expect(page.stdout == "email,age\r\nzoe@example.com,41\r\n")
    }

    @Test("usage and predicate errors name the option and column")
    func errors() throws {
        let directory = TemporaryDirectory()
        try directory.write("in.csv", Self.csv)
        _ = try runFerry(
            ["import", "in.csv", "--store", "a.sqlite", "--entity", "customers", "--model", Self.model, "--quiet"],
            cwd: directory.path)
        func run(_ extra: [String]) throws -> ProcessResult {
            try runFerry(["export", "--store", "a.sqlite", "--entity", "customers"] + extra, cwd: directory.path)
        }
        var result = try run(["--format", "csv", "--where", "age > 40 AND emial ENDSWITH 'x'"])
        #expect(result.exitCode == 64)
        #expect(result.stderr == "--where:1:14: error: customers has no attribute 'emial'; did you mean 'email'?\n")
        result = try run(["--format", "csv", "--where", "age >"])
        #expect(result.stderr == "--where:1:6: error: expected a value after '>' but found end of input\n")
        result = try run(["--format", "csv", "--fields", "id,nmae"])
        #expect(result.stderr == "--fields:1:4: error: customers has no attribute 'nmae'; did you mean 'name'?\n")
        result = try run(["--format", "csv", "--sort", "agee:desc"])
        #expect(result.stderr == "--sort:1:1: error: customers has no attribute 'agee'; did you mean 'age'?\n")
        result = try run([])
        #expect(result.exitCode == 64)
        #expect(result.stderr == "error: --format is needed when writing to standard output (csv, json, ndjson)\n")
        result = try run(["--format", "xml"])
        #expect(result.stderr == "error: unknown format 'xml' (csv, json, ndjson)\n")
        result = try runFerry(
            ["export", "--store", "a.sqlite", "--entity", "Customer", "--format", "csv"], cwd: directory.path)
        #expect(
            result.stderr == "--entity: error: unknown entity 'Customer' in model 'bench'; did you mean 'customers'?\n")
        result = try run(["--format", "csv", "--dry-run", "--report", "report.json"])
        #expect(result.exitCode == 0 && result.stdout.isEmpty)
        let report = try String(contentsOfFile: directory.file("report.json"), encoding: .utf8)
        #expect(
            report.contains(#""outcome" : "dry_run""#) && report.contains(#""read" : 3"#)
                && report.contains(#""written" : 0"#))
    }
}
