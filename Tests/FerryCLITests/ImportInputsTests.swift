import FerryTestSupport
import Foundation
import Testing

/// Real-world inputs through the real binary: values inference must not change, tab- and
/// semicolon-separated files, null words, blanks before quotes, headers that are not identifiers.
@Suite("ferry import: real-world inputs")
struct ImportInputsTests {
    @Test("inference keeps leading zeros, signs and JSON strings; the stored text is the input's")
    func losslessInference() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let csv = try dir.write("places.csv", "zip,phone,price,count\n02134,+70951234567,14.90,7\n00501,+1,3.5,8\n")
        let result = try runFerry(["import", csv, "--store", store])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.hasPrefix("inferred places: zip string, phone string, price double, count int64\n"),
            "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT zip, phone, count FROM places ORDER BY ferry_pk") == [
                ["02134", "+70951234567", "7"], ["00501", "+1", "8"],
            ])

        let json = try dir.write(
            "towns.json",
            #"[{"zip": "01001", "price": "14.90", "n": 1, "note": ""}, {"zip": "02134", "price": "3.00", "n": 2, "note": "x"}]"#
        )
        let towns = try runFerry(["import", json, "--store", store])
        #expect(towns.exitCode == 0, "\(towns)")
        #expect(towns.stdout.hasPrefix("inferred towns: zip string, price string, n int64, note string\n"), "\(towns)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT zip, price, note FROM towns ORDER BY ferry_pk") == [
                ["01001", "14.90", ""], ["02134", "3.00", "x"],
            ])
    }

    @Test(
        "headers that are not identifiers: one naming rule, printed; --type by header; a second import maps them again")
    func headerNames() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let csv = try dir.write(
            "Kundenübersicht 2024.csv", "First Name,Price ($),,id,ID,2nd\nAnn,12.5,x,1,2,b\nBob,3,y,2,3,c\n")
        let result = try runFerry([
            "import", csv, "--store", store, "--type", "First Name=string", "--type", "id=int32",
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.hasPrefix(
                #"inferred kundenubersicht_2024: first_name string (from "First Name"), price double (from "Price ($)"), column_3 string, id int32, ID_2 int64 (from "ID"), _2nd string (from "2nd")"#
                    + "\n"), "\(result)")
        #expect(
            try StoreSnapshot.texts(
                store, "SELECT first_name, price, column_3, id, ID_2, _2nd FROM kundenubersicht_2024 ORDER BY ferry_pk")
                == [
                    ["Ann", "12.5", "x", "1", "2", "b"], ["Bob", "3.0", "y", "2", "3", "c"],
                ])
        let again = try runFerry(["import", csv, "--store", store, "--quiet"])
        #expect(again.exitCode == 0, "\(again)")
        #expect(
            try StoreSnapshot.integers(
                store, "SELECT count(*) FROM kundenubersicht_2024 WHERE first_name IS NOT NULL AND ID_2 IS NOT NULL")
                == [4])
    }

    @Test("--type or --unique for a column the input does not have exits 64 and creates nothing")
    func unknownColumns() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let people = Fixtures.path("data/people.csv")
        let type = try runFerry(["import", people, "--store", store, "--type", "agee=int16"])
        #expect(type.exitCode == 64, "\(type)")
        #expect(
            type.errorLines.first
                == "error: --type agee=…: the input has no column 'agee' (columns: id, email, name, age); did you mean 'age'?",
            "\(type)")
        let unique = try runFerry(["import", people, "--store", store, "--unique", "mail"])
        #expect(unique.exitCode == 64, "\(unique)")
        #expect(
            unique.errorLines.first?.hasPrefix("error: --unique mail: the input has no column 'mail'") == true,
            "\(unique)")
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test("--type on an entity the store already has applies only when it changes nothing, else it is refused")
    func typeOnExistingStore() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let people = Fixtures.path("data/people.csv")
        #expect(try runFerry(["import", people, "--store", store, "--quiet"]).exitCode == 0)
        let same = try runFerry(["import", people, "--store", store, "--type", "id=int64", "--quiet"])
        #expect(same.exitCode == 0, "\(same)")
        let changed = try runFerry(["import", people, "--store", store, "--type", "id=string"])
        #expect(changed.exitCode == 64, "\(changed)")
        #expect(changed.errorLines.first?.contains("the store already has people.id as int64") == true, "\(changed)")
        let unique = try runFerry(["import", people, "--store", store, "--unique", "id"])
        #expect(unique.exitCode == 64, "\(unique)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM people") == [12])
    }

    @Test(
        "--alter adds a later file's new columns to an inferred entity; without it they are named as not imported, or with --on-new-field error fail the import"
    )
    func alterAddsColumns() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let first = try dir.write("first.csv", "id,name\n1,a\n")
        let second = try dir.write("second.csv", "id,name,Zip Code,score\n2,b,02134,7\n")
        #expect(try runFerry(["import", first, "--store", store, "--entity", "t", "--quiet"]).exitCode == 0)
        let refused = try runFerry(["import", second, "--store", store, "--entity", "t", "--on-new-field", "error"])
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(
            refused.stderr.contains("second.csv:1: error: new fields 'Zip Code', 'score' in the source"), "\(refused)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM t") == [1])
        let plain = try runFerry(["import", second, "--store", store, "--entity", "t"])
        #expect(plain.exitCode == 0, "\(plain)")
        #expect(plain.stdout.contains("not imported (no attribute maps them): Zip Code, score"), "\(plain)")

        let dry = try runFerry(["import", second, "--store", store, "--entity", "t", "--alter", "--dry-run"])
        #expect(dry.exitCode == 0, "\(dry)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT name FROM pragma_table_info('t')") == [
                ["ferry_pk"], ["id"], ["name"],
            ])

        let altered = try runFerry(["import", second, "--store", store, "--entity", "t", "--alter"])
        #expect(altered.exitCode == 0, "\(altered)")
        #expect(
            altered.stdout.hasPrefix("added to t: zip_code string (from \"Zip Code\"), score int64\n"), "\(altered)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, name, zip_code, score FROM t ORDER BY ferry_pk") == [
                ["1", "a", nil, nil], ["2", "b", nil, nil], ["2", "b", "02134", "7"],
            ])
        let info = try jsonObject(text: try runFerry(["store", "info", store, "--json"]).stdout)
        #expect(info["version"] as? String == "2")
        // The recorded model has the new attributes: a later import maps them without --alter.
        let again = try runFerry(["import", second, "--store", store, "--entity", "t", "--quiet"])
        #expect(again.exitCode == 0, "\(again)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM t WHERE zip_code = '02134'") == [2])
    }

    @Test("tab-separated: .tsv and --format tsv read tabs; export to .tsv writes them")
    func tabSeparated() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let tsv = try dir.write("rows.tsv", "id\tname\tnote\n1\tSmith, Jane\ta\n2\tDoe\t\"x\ty\"\n")
        let result = try runFerry(["import", tsv, "--store", store])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.hasPrefix("inferred rows: id int64, name string, note string\n"), "\(result)")
        let piped = try runFerry(
            ["import", "-", "--format", "tsv", "--entity", "piped", "--store", store, "--quiet"],
            stdin: "a\tb\n1\tx,y\n")
        #expect(piped.exitCode == 0, "\(piped)")
        #expect(try StoreSnapshot.texts(store, "SELECT a, b FROM piped") == [["1", "x,y"]])

        let out = dir.file("out.tsv")
        let export = try runFerry(["export", "--store", store, "--entity", "rows", "--output", out, "--quiet"])
        #expect(export.exitCode == 0, "\(export)")
        #expect(
            try String(contentsOfFile: out, encoding: .utf8)
                == "id\tname\tnote\r\n1\tSmith, Jane\ta\r\n2\tDoe\t\"x\ty\"\r\n")
        let stdout = try runFerry(["export", "--store", store, "--entity", "piped", "--format", "tsv", "--quiet"])
        #expect(stdout.stdout == "a\tb\r\n1\tx,y\r\n", "\(stdout)")
    }

    @Test("the delimiter is detected and shown; a file whose columns match no attribute is an error, not empty rows")
    func detectedDelimiter() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let semicolons = try dir.write(
            "people.csv", "id;email;name;age\n1;ann@example.com;Ann;34\n2;bob@example.com;\"Bob; Jr\";41\n")
        let result = try runFerry(["import", semicolons, "--store", store])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.hasPrefix(
                "detected delimiter ';' in \(semicolons)\ninferred people: id int64, email string, name string, age int64\n"
            ), "\(result)")
        #expect(try StoreSnapshot.texts(store, "SELECT name FROM people ORDER BY id") == [["Ann"], ["Bob; Jr"]])

        // Forced to commas, no column matches the model: exit 1 with the columns, nothing written.
        let modelStore = dir.file("m.sqlite")
        let forced = try runFerry([
            "import", semicolons, "--store", modelStore, "--model", Fixtures.peopleModel, "--entity", "Person",
            "--delimiter", ",",
        ])
        #expect(forced.exitCode == 1, "\(forced)")
        #expect(
            forced.stderr.contains(
                "no column of \(semicolons) matches an attribute of Person (is the delimiter right?)"), "\(forced)")
        #expect(forced.stderr.contains("columns: id;email;name;age"), "\(forced)")
        let detected = try runFerry([
            "import", semicolons, "--store", modelStore, "--model", Fixtures.peopleModel, "--entity", "Person",
            "--quiet",
        ])
        #expect(detected.exitCode == 0, "\(detected)")
        #expect(try StoreSnapshot.integers(modelStore, "SELECT count(*) FROM Person") == [2])
    }

    @Test("null words: the default list for inferred imports, --null to replace it; quoted fields are never null")
    func nullWords() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let csv = try dir.write("m.csv", "id,value,note\n1,NA,N/A\n2,NULL,\"NA\"\n3,#N/A,-\n4,5,null\n5,,n/a\n")
        let result = try runFerry(["import", csv, "--store", store])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.hasPrefix("inferred m: id int64, value int64, note string\n"), "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT value, note FROM m ORDER BY id") == [
                [nil, nil], [nil, "NA"], [nil, "-"], ["5", nil], [nil, nil],
            ])

        let custom = try runFerry(["import", csv, "--store", store, "--entity", "custom", "--null", "-", "--null", ""])
        #expect(custom.exitCode == 0, "\(custom)")
        #expect(custom.stdout.hasPrefix("inferred custom: id int64, value string, note string\n"), "\(custom)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT value, note FROM custom ORDER BY id") == [
                ["NA", "N/A"], ["NULL", "NA"], ["#N/A", nil], ["5", "null"], [nil, "n/a"],
            ])
    }

    @Test(
        "--skip-initial-space reads a quote after a blank as a quoted field; without it the blank and quotes are data")
    func skipInitialSpace() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let csv = try dir.write("q.csv", "id, name, city\n1, \"Smith, Jane\", Zürich\n2, Doe, \"Bern\"\n")
        let skipped = try runFerry(["import", csv, "--store", store, "--skip-initial-space", "--quiet"])
        #expect(skipped.exitCode == 0, "\(skipped)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT name, city FROM q ORDER BY id") == [
                ["Smith, Jane", "Zürich"], ["Doe", "Bern"],
            ])
        let literal = try runFerry([
            "import", try dir.write("r.csv", "id,name\n1, \"x\"\n"), "--store", store, "--quiet",
        ])
        #expect(literal.exitCode == 0, "\(literal)")
        #expect(try StoreSnapshot.texts(store, "SELECT name FROM r") == [[" \"x\""]])
    }

    @Test("an unclosed quote and a ragged row are rejects within the budget; the records after them import")
    func recoverableErrors() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let csv = try dir.write("r.csv", "id,name\n1,a\n2,b,extra\n3,\"never closed\n4,d\n5,e\n")
        let rejects = dir.file("r.ndjson")
        let result = try runFerry([
            "import", csv, "--store", store, "--rejects", rejects, "--max-rejects", "2", "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, name FROM r ORDER BY id") == [
                ["1", "a"], ["4", "d"], ["5", "e"],
            ])
        let reasons = try lines(ofFile: rejects).map { try jsonObject(text: $0) }
        #expect(
            reasons.map { "\($0["line"] ?? ""):\($0["column"] ?? "") \($0["reason"] ?? "")" } == [
                "3:5 expected 2 fields but found 3",
                "4:3 quoted field is not closed before the end of the input (reading went on at the next line)",
            ])
        #expect(reasons.last?["raw"] as? String == "3,\"never closed")
    }

    @Test("--no-header with --columns, --quote, --trim and --date-format")
    func otherDialectFlags() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let csv = try dir.write("n.csv", "1,'a, b',  x  ,01.02.2024\n2,'c', y,31.12.2023\n")
        let result = try runFerry([
            "import", csv, "--store", store, "--no-header", "--columns", "id,name,code,day", "--quote", "'", "--trim",
            "--date-format", "dd.MM.yyyy",
            "--type", "day=date", "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, name, code, day FROM n ORDER BY id") == [
                ["1", "a, b", "x", "2024-02-01T00:00:00.000Z"], ["2", "c", "y", "2023-12-31T00:00:00.000Z"],
            ])
        let report = try dir.write(
            "report.csv", "Quarterly report\n\nregion;total\n# north is late\nsouth;12\neast;7\n")
        let skipped = try runFerry(["import", report, "--store", store, "--skip-lines", "2", "--comment", "#"])
        #expect(skipped.exitCode == 0, "\(skipped)")
        #expect(
            skipped.stdout.hasPrefix(
                "detected delimiter ';' in \(report)\ninferred report: region string, total int64\n"), "\(skipped)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT region, total FROM report ORDER BY ferry_pk") == [
                ["south", "12"], ["east", "7"],
            ])
        let prices = try dir.write("prices.csv", "sku;price;stock\nA;1.234,50;1.000\nB;0,99;12\n")
        let comma = try runFerry(["import", prices, "--store", store, "--decimal-comma", "--type", "price=decimal"])
        #expect(comma.exitCode == 0, "\(comma)")
        #expect(comma.stdout.contains("inferred prices: sku string, price decimal, stock int64\n"), "\(comma)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT price, stock FROM prices ORDER BY ferry_pk") == [
                ["1234.5", "1000"], ["0.99", "12"],
            ])
        let mixed = try dir.write("mixed.csv", "id,day\n1,01.02.2024\n2,2024-03-05\n3,5/6/2024\n")
        let rejects = dir.file("mixed.rejects")
        let dates = try runFerry([
            "import", mixed, "--store", store, "--date-format", "dd.MM.yyyy", "--date-format", "yyyy-MM-dd", "--type",
            "day=date",
            "--rejects", rejects, "--max-rejects", "1", "--quiet",
        ])
        #expect(dates.exitCode == 0, "\(dates)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, day FROM mixed ORDER BY id") == [
                ["1", "2024-02-01T00:00:00.000Z"], ["2", "2024-03-05T00:00:00.000Z"],
            ])
        #expect(try lines(ofFile: rejects).count == 1)
        let headerless = try dir.write("headerless.csv", "1,Ann,34\n2,Bob,41\n")
        let detected = try runFerry(["import", headerless, "--store", store])
        #expect(detected.exitCode == 0, "\(detected)")
        #expect(
            detected.stdout.hasPrefix(
                "detected no header row in \(headerless): columns column_1 … column_3\ninferred headerless: column_1 int64, column_2 string, column_3 int64\n"
            ), "\(detected)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM headerless") == [2])
        let noColumns = try runFerry(["import", csv, "--store", store, "--no-header"])
        #expect(noColumns.exitCode == 64)
        #expect(noColumns.errorLines.first == "error: --no-header needs --columns a,b,c to name the columns")
        let json = try dir.write("x.json", "[]")
        let misplaced = try runFerry(["import", json, "--store", store, "--delimiter", ";"])
        #expect(misplaced.exitCode == 64)
        let badQuote = try runFerry(["import", csv, "--store", store, "--quote", "ab"])
        #expect(badQuote.exitCode == 64)
        #expect(badQuote.errorLines.first == "error: --quote must be one character, got 'ab'")
    }
}

@Suite("ferry import: compressed and encoded files")
struct CompressedEncodedImportTests {
    @Test(
        "a .csv.gz imports like the CSV (entity from the name without both extensions); a ragged record is a located reject"
    )
    func gzipImport() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let path = dir.file("orders.csv.gz")
        let plain = try dir.write("plain.csv", "id,zip\n1,02134\n2,x,extra\n3,00501\n")
        let gzip = try runShell("gzip -c '\(plain)' > '\(path)'")
        #expect(gzip.exitCode == 0, "\(gzip)")
        let rejects = dir.file("r.ndjson")
        let result = try runFerry(["import", path, "--store", store, "--rejects", rejects, "--max-rejects", "1"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.hasPrefix("inferred orders: id int64, zip string\n"), "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, zip FROM orders ORDER BY id") == [
                ["1", "02134"], ["3", "00501"],
            ])
        let reject = try jsonObject(text: try #require(try lines(ofFile: rejects).first))
        #expect(reject["line"] as? Int == 3)
        #expect(reject["column"] as? Int == 5)
    }

    @Test("--encoding and the job key encoding convert the text; an unknown encoding exits 64")
    func encodings() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let latin = try dir.write(
            "people.csv",
            bytes: Array("id,name\n1,".utf8) + [0x5A, 0x6F, 0xEB] + Array("\n2,M".utf8) + [0xFC] + Array("ller\n".utf8))
        let result = try runFerry(["import", latin, "--store", store, "--encoding", "latin-1", "--quiet"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(try StoreSnapshot.texts(store, "SELECT name FROM people ORDER BY id") == [["Zoë"], ["Müller"]])

        // Read as UTF-8, the same bytes are rejected at their line and column.
        let rejects = dir.file("r.ndjson")
        let utf8 = try runFerry([
            "import", latin, "--store", dir.file("u.sqlite"), "--rejects", rejects, "--max-rejects", "5", "--quiet",
        ])
        #expect(utf8.exitCode == 0, "\(utf8)")
        #expect(try lines(ofFile: rejects).count == 2)

        let unknown = try runFerry(["import", latin, "--store", dir.file("x.sqlite"), "--encoding", "klingon"])
        #expect(unknown.exitCode == 64)
        #expect(unknown.errorLines.first?.hasPrefix("error: unknown encoding 'klingon'") == true, "\(unknown)")

        let model = try dir.write(
            "model.yml",
            "name: P\nversion: \"1\"\nentities:\n  Person:\n    attributes:\n      id: int64\n      name: string\n")
        let job = try dir.write(
            "job.yml",
            """
            job: latin
            store: \(dir.file("job.sqlite"))
            model: \(model)
            steps:
              - import:
                  source: \(latin)
                  entity: Person
                  encoding: windows-1252

            """)
        let run = try runFerry(["run", job, "--quiet"])
        #expect(run.exitCode == 0, "\(run)")
        #expect(
            try StoreSnapshot.texts(dir.file("job.sqlite"), "SELECT name FROM Person ORDER BY id") == [
                ["Zoë"], ["Müller"],
            ])
        let badJob = try dir.write(
            "bad.yml",
            try String(contentsOfFile: job, encoding: .utf8).replacingOccurrences(
                of: "windows-1252", with: "ebcdic-klingon"))
        let bad = try runFerry(["validate", badJob])
        #expect(bad.exitCode == 64, "\(bad)")
        #expect(bad.stderr.contains("\(badJob):8:17: error: unknown encoding 'ebcdic-klingon'"), "\(bad)")
    }
}
