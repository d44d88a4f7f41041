import FerryTestSupport
import Foundation
import Testing

/// Fixed-width text through the real binary: `--format fixed --columns`, a job's `fixed:` key,
/// compressed and latin-1 files, located rejects and the definition errors.
@Suite("ferry import: fixed-width text")
struct ImportFixedWidthTests {
    /// id 1–5, name 6–15, amount 16–22, a title line first.
    static let text =
        "BANK EXPORT 2024-05-01\n" + "00001" + "Ann Smith " + "  12.50\n" + "00002" + "Zoë       " + "   3.00\n"
        + "00003Bob\n" + "00004" + "Cy        " + "   1.00" + "  !!\n"

    @Test(
        "--format fixed --columns name:start:width: trimmed columns, inferred types, short lines and text past the layout are located rejects"
    )
    func commandLine() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let file = try dir.write("bank.txt", Self.text)
        let rejects = dir.file("r.ndjson")
        let result = try runFerry([
            "import", file, "--format", "fixed", "--columns", "id:1:5,name:6:10,amount:16:7", "--skip-lines", "1",
            "--store", store, "--rejects", rejects,
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.hasPrefix("inferred bank: id string, name string, amount double\n"), "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, name, amount FROM bank ORDER BY ferry_pk") == [
                ["00001", "Ann Smith", "12.5"], ["00002", "Zoë", "3.0"],
            ])
        let rejected = try lines(ofFile: rejects).map { try jsonObject(text: $0) }
        #expect(rejected.map { $0["line"] as? Int } == [4, 5])
        #expect(rejected.map { $0["column"] as? Int } == [9, 25])
        #expect(
            rejected.first?["reason"] as? String
                == "the line has 8 characters but the layout needs 22: column 'name' is characters 6–15")
        #expect(
            rejected.last?["reason"] as? String
                == "text after the last column (character 25 of a 22-character layout): '!!'")
    }

    @Test("a job's fixed: key; a gzip and a latin-1 file read alike; a model's types are applied to the trimmed text")
    func job() throws {
        let dir = TemporaryDirectory()
        let plain = try dir.write("plain.txt", Self.text)
        let convert = try runShell("iconv -f utf-8 -t latin1 '\(plain)' | gzip -c > '\(dir.file("bank.txt.gz"))'")
        #expect(convert.exitCode == 0, "\(convert)")
        _ = try dir.write(
            "model.yml",
            "entities:\n  Entry:\n    attributes:\n      id: {type: int64, unique: true}\n      name: string\n      amount: decimal\n"
        )
        let job = try dir.write(
            "job.yml",
            """
            store: out.sqlite
            model: model.yml
            steps:
              - import:
                  source: bank.txt.gz
                  format: fixed
                  encoding: latin-1
                  fixed:
                    skip_lines: 1
                    columns:
                      - {name: id, start: 1, width: 5}
                      - {name: name, start: 6, width: 10}
                      - {name: amount, start: 16, width: 7}
                  entity: Entry
                  rejects: rejects.ndjson
                  max_rejects: 2
            """)
        let result = try runFerry(["run", job, "--quiet"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(dir.file("out.sqlite"), "SELECT id, name, amount FROM Entry ORDER BY id") == [
                ["1", "Ann Smith", "12.5"], ["2", "Zoë", "3"],
            ])
        #expect(try lines(ofFile: dir.file("rejects.ndjson")).count == 2)
    }

    @Test(
        "bad layouts and flags: located definition errors (64), usage errors (64); fixed-width is not an export format")
    func badDefinitions() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let file = try dir.write("bank.txt", Self.text)
        _ = try dir.write("model.yml", "entities:\n  Entry:\n    attributes:\n      id: int64\n")
        let job = try dir.write(
            "job.yml",
            """
            store: out.sqlite
            model: model.yml
            steps:
              - import:
                  source: bank.txt
                  format: fixed
                  fixed:
                    columns:
                      - {name: id, start: 1, width: 5}
                      - {name: name, start: 4, width: 10}
                      - {name: x, start: 0, width: 2}
                  entity: Entry
              - import:
                  source: bank.txt
                  format: fixed
                  entity: Entry
              - import:
                  source: bank.txt
                  fixed: {columns: [{name: id, start: 1, width: 5}]}
                  entity: Entry
            """)
        let validate = try runFerry(["validate", job])
        #expect(validate.exitCode == 64, "\(validate)")
        #expect(
            validate.errorLines == [
                "\(job):9:11: error: columns 'id' (1–5) and 'name' (4–13) overlap",
                "\(job):11:30: error: 'start' must be at least 1, not 0",
                "\(job):15:15: error: 'format: fixed' needs 'fixed: {columns: [{name: id, start: 1, width: 5}, …]}' to say where the fields are",
                "\(job):19:7: error: 'fixed' options apply only to the fixed format, not csv",
            ], "\(validate)")

        let missing = try runFerry(["import", file, "--format", "fixed", "--store", store])
        #expect(missing.exitCode == 64, "\(missing)")
        #expect(
            missing.errorLines == [
                "error: --format fixed needs --columns name:start:width,… to say where the fields are (1-based, e.g. --columns id:1:5,name:6:20)"
            ])
        let syntax = try runFerry(["import", file, "--format", "fixed", "--columns", "id:1", "--store", store])
        #expect(syntax.exitCode == 64, "\(syntax)")
        #expect(
            syntax.errorLines == [
                "error: a fixed-width column is name:start:width (1-based start, e.g. id:1:5,name:6:20), not 'id:1'"
            ])
        let overlap = try runFerry([
            "import", file, "--format", "fixed", "--columns", "id:1:5,name:5:3", "--store", store,
        ])
        #expect(overlap.exitCode == 64, "\(overlap)")
        #expect(overlap.errorLines == ["error: --columns: columns 'id' (1–5) and 'name' (5–7) overlap"])
        let delimiter = try runFerry([
            "import", file, "--format", "fixed", "--columns", "id:1:5", "--delimiter", ";", "--store", store,
        ])
        #expect(delimiter.exitCode == 64, "\(delimiter)")
        #expect(!FileManager.default.fileExists(atPath: store))

        #expect(try runFerry(["import", Fixtures.path("data/people.csv"), "--store", store, "--quiet"]).exitCode == 0)
        let export = try runFerry([
            "export", "--store", store, "--entity", "people", "--format", "fixed", "--output", dir.file("out.txt"),
        ])
        #expect(export.exitCode == 64, "\(export)")
        #expect(
            export.errorLines == [
                "error: ferry exports csv, tsv, json or ndjson; fixed-width text is read, not written"
            ])
        let exportJob = try dir.write(
            "export.yml",
            "store: out.sqlite\nmodel: model.yml\nsteps:\n  - export: {entity: Entry, output: out.txt, format: fixed}\n"
        )
        let exportValidate = try runFerry(["validate", exportJob])
        #expect(exportValidate.exitCode == 64, "\(exportValidate)")
        #expect(
            exportValidate.errorLines.first?.hasSuffix(
                "error: ferry exports csv, tsv, json or ndjson; fixed-width text is read, not written") == true,
            "\(exportValidate)")
    }
}
