import FerryTestSupport
import Foundation
import Testing

/// `--format pgcopy` (PostgreSQL COPY text), multi-character delimiters, record terminators and
/// per-field time zones through the real binary, on the command line and in jobs.
@Suite("ferry import: COPY text, separators, per-field time zones")
struct ImportCopyTextAndSeparatorsTests {
    /// A `COPY … TO` file: escapes, `\N`, an empty string, a bad escape (line 4) and the end marker.
    static let copy =
        "1\tAnn\tline one\\nline two\n2\t\\N\tcaf\\xc3\\xa9 \\101\n3\tCid\t\n4\tDee\tbad \\q here\n\\.\n9\tnot\tread\n"

    /// A model of one entity `Row` with `id` and `name`.
    static let rowModel = "entities:\n  Row:\n    attributes:\n      id: int64\n      name: string\n"

    /// Writes `dump.txt` (COPY text with a header row and `|` between fields), the `Row` model and
    /// `job.yml` importing the dump into `out.sqlite`, followed by the steps `then`; returns the
    /// job's path.
    static func pipeDumpJob(in dir: TemporaryDirectory, then steps: String = "") throws -> String {
        _ = try dir.write("dump.txt", "id|name\n1|a\\|b\n2|\\N\n")
        _ = try dir.write("model.yml", rowModel)
        return try dir.write(
            "job.yml",
            """
            store: out.sqlite
            model: model.yml
            steps:
              - import: {source: dump.txt, format: pgcopy, entity: Row, csv: {header: true, delimiter: "|"}}

            """ + steps)
    }

    @Test(
        "--format pgcopy: escapes undone, \\N null, empty text kept, a bad escape a located reject, \\. ends the data")
    func commandLine() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let file = try dir.write("people.copy", Self.copy)
        let rejects = dir.file("r.ndjson")
        let result = try runFerry([
            "import", file, "--format", "pgcopy", "--columns", "id,name,note", "--store", store, "--entity", "people",
            "--rejects", rejects, "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, quote(name), quote(note) FROM people ORDER BY id") == [
                ["1", "'Ann'", "'line one\nline two'"], ["2", "NULL", "'café A'"], ["3", "'Cid'", "''"],
            ])
        let rejected = try lines(ofFile: rejects).map { try jsonObject(text: $0) }
        #expect(rejected.map { $0["line"] as? Int } == [4])
        #expect(rejected.map { $0["column"] as? Int } == [11])
        #expect(
            rejected.map { $0["reason"] as? String } == [
                "unknown escape \\q (pgcopy knows \\b \\f \\n \\r \\t \\v \\\\, \\xHH, \\NNN octal and \\N)"
            ])
    }

    @Test(
        "a pgcopy step is named pgcopy, not csv: in ferry plan (text, JSON, HTML), in the JSON run report of ferry run and ferry import, in a refusal"
    )
    func namedPgcopy() throws {
        let dir = TemporaryDirectory()
        let job = try Self.pipeDumpJob(in: dir, then: "  - import: {source: rows.csv, entity: Row}\n")
        _ = try dir.write("rows.csv", "id,name\n3,c\n")
        let text = try runFerry(["plan", job])
        #expect(text.exitCode == 0, "\(text)")
        #expect(text.stdout.contains("   format pgcopy\n"), "\(text)")
        #expect(text.stdout.contains("   format csv\n"), "the CSV step keeps its name: \(text)")
        let json = try runFerry(["plan", job, "--format", "json"])
        #expect(json.exitCode == 0, "\(json)")
        let planned = try #require(try jsonObject(text: json.stdout)["steps"] as? [[String: Any]])
        #expect(planned.map { $0["format"] as? String } == ["pgcopy", "csv"], "\(planned)")
        let html = try runFerry(["plan", job, "--format", "html"])
        #expect(html.exitCode == 0, "\(html)")
        #expect(html.stdout.contains("<li>format pgcopy</li>"), "\(html)")
        #expect(HTMLCheck.problems(in: html.stdout) == [])

        let report = dir.file("run.json")
        let run = try runFerry(["run", job, "--quiet", "--report", report])
        #expect(run.exitCode == 0, "\(run)")
        let steps = try #require(try jsonObject(file: report)["steps"] as? [[String: Any]])
        #expect(steps.map { $0["format"] as? String } == ["pgcopy", "csv"], "\(steps)")

        let imported = dir.file("import.json")
        let direct = try runFerry([
            "import", dir.file("dump.txt"), "--format", "pgcopy", "--header", "--delimiter", "|", "--store",
            dir.file("direct.sqlite"), "--entity", "Row", "--quiet", "--report", imported,
        ])
        #expect(direct.exitCode == 0, "\(direct)")
        let importSteps = try #require(try jsonObject(file: imported)["steps"] as? [[String: Any]])
        #expect(importSteps.first?["format"] as? String == "pgcopy", "\(importSteps)")

        // An option of another format names the format the user gave.
        let refused = try runFerry([
            "import", dir.file("dump.txt"), "--format", "pgcopy", "--header", "--short-lines", "pad", "--store",
            dir.file("x.sqlite"), "--entity", "Row",
        ])
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(
            refused.stderr.contains("--short-lines applies to fixed-width text (--format fixed), not pgcopy"),
            "\(refused)")
    }

    @Test(
        "format: pgcopy in a job, with a header row and another delimiter; without columns or header it is refused (64)"
    )
    func job() throws {
        let dir = TemporaryDirectory()
        let job = try Self.pipeDumpJob(in: dir)
        let result = try runFerry(["run", job, "--quiet"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(dir.file("out.sqlite"), "SELECT id, quote(name) FROM Row ORDER BY id") == [
                ["1", "'a|b'"], ["2", "NULL"],
            ])

        let noColumns = try dir.write(
            "nocolumns.yml",
            """
            store: out2.sqlite
            model: model.yml
            steps:
              - import: {source: dump.txt, format: pgcopy, entity: Row}
            """)
        let refused = try runFerry(["validate", noColumns])
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(
            refused.errorLines == [
                "\(noColumns):4:40: error: 'format: pgcopy' has no header row unless 'csv: {header: true}' says so: name the columns with 'csv: {columns: [...]}'"
            ], "\(refused)")
        let quoted = try dir.write(
            "quoted.yml",
            """
            store: out3.sqlite
            model: model.yml
            steps:
              - import: {source: dump.txt, format: pgcopy, entity: Row, csv: {header: true, quote: "'"}}
            """)
        let quoteRefused = try runFerry(["validate", quoted])
        #expect(quoteRefused.exitCode == 64, "\(quoteRefused)")
        #expect(quoteRefused.errorLines.first?.contains("quote") == true, "\(quoteRefused)")
        let flags = try runFerry([
            "import", dir.file("dump.txt"), "--format", "pgcopy", "--quote", "'", "--store", dir.file("x.sqlite"),
        ])
        #expect(flags.exitCode == 64, "\(flags)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.sqlite")))
    }

    @Test("--delimiter '||' and --record-terminator '~': quotes still hold both; a job says the same with csv: keys")
    func separators() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let file = try dir.write("wide.txt", "id||name||note~1||Ann||\"a || b~c\"~2||Bob||two\nlines~3||C|d||x~")
        let result = try runFerry([
            "import", file, "--delimiter", "||", "--record-terminator", "~", "--store", store, "--entity", "wide",
            "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, name, note FROM wide ORDER BY id") == [
                ["1", "Ann", "a || b~c"], ["2", "Bob", "two\nlines"], ["3", "C|d", "x"],
            ])

        _ = try dir.write("model.yml", Self.rowModel)
        _ = try dir.write("mac.csv", "id::name\r1::\"x::y\"\r2::bad\r")
        let job = try dir.write(
            "job.yml",
            """
            store: out.sqlite
            model: model.yml
            steps:
              - import: {source: mac.csv, entity: Row, csv: {delimiter: "::", record_terminator: "\\\\r"}}
            """)
        let run = try runFerry(["run", job, "--quiet"])
        #expect(run.exitCode == 0, "\(run)")
        #expect(
            try StoreSnapshot.texts(dir.file("out.sqlite"), "SELECT id, name FROM Row ORDER BY id") == [
                ["1", "x::y"], ["2", "bad"],
            ])
    }

    @Test("separators that clash are refused at their key (64); a record with too few fields is located in terminators")
    func separatorErrors() throws {
        let dir = TemporaryDirectory()
        _ = try dir.write("model.yml", Self.rowModel)
        _ = try dir.write("t.csv", "id,name;1,a;2;3,c;")
        let clash = try dir.write(
            "clash.yml",
            """
            store: out.sqlite
            model: model.yml
            steps:
              - import: {source: t.csv, entity: Row, csv: {delimiter: ";;", record_terminator: ";"}}
            """)
        let validate = try runFerry(["validate", clash])
        #expect(validate.exitCode == 64, "\(validate)")
        #expect(
            validate.errorLines == [
                "\(clash):4:84: error: the CSV delimiter and the record terminator must start with two different characters"
            ], "\(validate)")
        let long = try runFerry([
            "import", dir.file("t.csv"), "--delimiter", "123456789", "--store", dir.file("x.sqlite"),
        ])
        #expect(long.exitCode == 64, "\(long)")
        #expect(long.errorLines == ["error: --delimiter must be one to 8 characters, got '123456789'"], "\(long)")

        let rejects = dir.file("r.ndjson")
        let result = try runFerry([
            "import", dir.file("t.csv"), "--record-terminator", ";", "--store", dir.file("s.sqlite"), "--entity", "t",
            "--rejects", rejects, "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(dir.file("s.sqlite"), "SELECT id, name FROM t ORDER BY id") == [
                ["1", "a"], ["3", "c"],
            ])
        let rejected = try lines(ofFile: rejects).map { try jsonObject(text: $0) }
        #expect(rejected.map { $0["line"] as? Int } == [3])
        #expect(rejected.map { $0["reason"] as? String } == ["expected 2 fields but found 1"])
    }

    @Test("timezone: per field replaces the step's for zone-less dates; a bad zone is refused at its key (64)")
    func perFieldTimeZone() throws {
        let dir = TemporaryDirectory()
        _ = try dir.write("orders.csv", "id,created,pickup\n1,2024-07-01 10:00,2024-07-01 10:00\n")
        _ = try dir.write(
            "model.yml",
            "entities:\n  Order:\n    attributes:\n      id: int64\n      created: date\n      pickup: date\n")
        let job = try dir.write(
            "job.yml",
            """
            store: out.sqlite
            model: model.yml
            steps:
              - import:
                  source: orders.csv
                  entity: Order
                  timezone: UTC
                  date_format: "yyyy-MM-dd HH:mm"
                  fields:
                    pickup: {timezone: Europe/Berlin}
            """)
        let result = try runFerry(["run", job, "--quiet"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(dir.file("out.sqlite"), "SELECT created, pickup FROM \"Order\"") == [
                ["2024-07-01T10:00:00.000Z", "2024-07-01T08:00:00.000Z"]
            ])

        let bad = try dir.write(
            "bad.yml",
            """
            store: out2.sqlite
            model: model.yml
            steps:
              - import:
                  source: orders.csv
                  entity: Order
                  fields:
                    pickup: {timezone: Mars/Olympus}
            """)
        let refused = try runFerry(["validate", bad])
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(
            refused.errorLines == [
                "\(bad):8:28: error: 'Mars/Olympus' is not a time zone: give an IANA zone such as Europe/Berlin, America/New_York or UTC, or an offset such as +02:00"
            ], "\(refused)")
    }
}
