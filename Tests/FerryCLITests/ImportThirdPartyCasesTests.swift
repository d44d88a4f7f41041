import FerryTestSupport
import Foundation
import Testing

/// Cases a third-party CSV/JSON suite found ferry silently wrong on, and the options its peers
/// (csvkit, pgloader) have, through the real binary (issue 27).
@Suite("ferry import: third-party cases")
struct ImportThirdPartyCasesTests {
    @Test("True/False and TRUE/FALSE (csvkit, spreadsheets) are inferred as booleans; mixed case stays text")
    func booleanSpellings() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let csv = try dir.write("flags.csv", "id,flag,shout,odd\n1,True,TRUE,tRuE\n2,False,FALSE,false\n3,,TRUE,true\n")
        let result = try runFerry(["import", csv, "--store", store])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.hasPrefix("inferred flags: id int64, flag bool, shout bool, odd string\n"), "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT flag, shout, odd FROM flags ORDER BY id") == [
                ["1", "1", "tRuE"], ["0", "0", "false"], [nil, "1", "true"],
            ])
    }

    @Test("a quoted field followed by blanks and text is a located reject, with \" and with a sniffed ' quote")
    func textAfterQuoteAndBlanks() throws {
        let dir = TemporaryDirectory()
        for (name, quote) in [("double", "\""), ("single", "'")] {
            let store = dir.file("\(name).sqlite")
            let rejects = dir.file("\(name).ndjson")
            let q = quote
            let csv = try dir.write(
                "\(name).csv",
                "id,name,city\n1,\(q)Ann\(q),\(q)Oslo\(q)\n2,\(q)Bob\(q)  jr,\(q)Rome\(q)\n3,\(q)Cy\(q),x\n")
            let result = try runFerry([
                "import", csv, "--store", store, "--entity", "people", "--rejects", rejects, "--max-rejects", "5",
            ])
            #expect(result.exitCode == 0, "\(result)")
            #expect(
                try StoreSnapshot.texts(store, "SELECT id, name, city FROM people ORDER BY id") == [
                    ["1", "Ann", "Oslo"], ["3", "Cy", "x"],
                ], "\(name)")
            let rejected = try lines(ofFile: rejects).map { try jsonObject(text: $0) }
            #expect(rejected.count == 1, "\(name): \(rejected)")
            #expect(rejected.first?["line"] as? Int == 3, "\(name)")
            #expect(rejected.first?["column"] as? Int == 8, "\(name)")
            #expect(
                rejected.first?["reason"] as? String == "unexpected text after the closing quote \(q) of a field",
                "\(name)")
        }
    }

    @Test("a CSV quoted with ' is sniffed for its quote: delimiters and doubled quotes inside quotes are text")
    func sniffedSingleQuote() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let csv = try dir.write("names.csv", "id;name;note\n1;'Smith; Ann';'it''s'\n2;'O''Brien';plain\n")
        let result = try runFerry(["import", csv, "--store", store])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("detected quote ' in \(csv)\n"), "\(result)")
        #expect(result.stdout.contains("detected delimiter ';' in \(csv)\n"), "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT name, note FROM names ORDER BY id") == [
                ["Smith; Ann", "it's"], ["O'Brien", "plain"],
            ])
        // An apostrophe inside text quotes nothing: a file without quoted fields keeps the double quote.
        let plain = try dir.write("plain.csv", "id,name\n1,O'Brien\n2,D'Arcy\n")
        let other = try runFerry(["import", plain, "--store", store])
        #expect(other.exitCode == 0, "\(other)")
        #expect(!other.stdout.contains("detected quote"), "\(other)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT name FROM plain ORDER BY id") == [["O'Brien"], ["D'Arcy"]])
    }

    @Test("--trim with --null '': a field of blanks is null; a quoted one is taken literally")
    func trimmedBlanksAreNull() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let csv = try dir.write("t.csv", "id,name,n\n1,   ,  \n2, Ann , 7 \n3,\"  \",\n")
        let result = try runFerry(["import", csv, "--store", store, "--trim", "--null", ""])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT quote(name), quote(n) FROM t ORDER BY id") == [
                ["NULL", "NULL"], ["'Ann'", "'7'"], ["'  '", "NULL"],
            ])
    }

    @Test("--type naming a --field attribute types it (CSV header, JSON path)")
    func typeOfMappedField() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let json = try dir.write(
            "places.json", #"[{"address": {"zip": 2134}, "n": 1}, {"address": {"zip": 501}, "n": 2}]"#)
        let result = try runFerry([
            "import", json, "--store", store, "--field", "zip=address.zip", "--type", "zip=string",
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("zip string"), "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT typeof(zip), zip FROM places ORDER BY n") == [
                ["text", "2134"], ["text", "501"],
            ])
        let csv = try dir.write("customers.csv", "Customer No,name\n007,Ann\n012,Bob\n")
        let typed = try runFerry([
            "import", csv, "--store", store, "--field", "id=Customer No", "--type", "id=int64",
        ])
        #expect(typed.exitCode == 0, "\(typed)")
        #expect(typed.stdout.contains("inferred customers: id int64 (from \"Customer No\"), name string"), "\(typed)")
        #expect(try StoreSnapshot.texts(store, "SELECT id FROM customers ORDER BY id") == [["7"], ["12"]])
    }

    @Test("a glob's format comes from its first file, as documented: nightly/day* of .csv files is CSV")
    func globFormatFromFirstFile() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("nightly"), withIntermediateDirectories: true)
        try dir.write("nightly/day1.csv", "id,name\n1,Ann\n")
        try dir.write("nightly/day2.csv", "id,name\n2,Bob\n")
        let store = dir.file("s.sqlite")
        let result = try runFerry(["import", dir.file("nightly/day*"), "--store", store, "--entity", "people"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(try StoreSnapshot.texts(store, "SELECT name FROM people ORDER BY id") == [["Ann"], ["Bob"]])
        let job = try dir.write(
            "job.yml",
            """
            store: job.sqlite
            model: m.yml
            steps:
              - import: {source: "nightly/day*", entity: Person}
            """)
        try dir.write("m.yml", "entities:\n  Person:\n    attributes:\n      id: int64\n      name: string\n")
        let run = try runFerry(["run", job])
        #expect(run.exitCode == 0, "\(run)")
        #expect(try StoreSnapshot.integers(dir.file("job.sqlite"), "SELECT count(*) FROM Person") == [2])
        // Files of two formats under one pattern: named, refused.
        try dir.write("nightly/day3.json", "[]")
        let mixed = try runFerry(["import", dir.file("nightly/day*"), "--store", dir.file("m.sqlite")])
        #expect(mixed.exitCode == 64, "\(mixed)")
        #expect(mixed.stderr.contains("day3.json' is not a .csv file like '"), "\(mixed)")
    }

    @Test("a file named [table].csv is that file; \\[ escapes a glob character")
    func literalGlobCharacters() throws {
        let dir = TemporaryDirectory()
        let literal = try dir.write("[table].csv", "id,name\n1,literal\n")
        // The pattern [table].csv would match t.csv.
        try dir.write("t.csv", "id,name\n2,pattern\n")
        let store = dir.file("s.sqlite")
        let result = try runFerry(["import", literal, "--store", store])
        #expect(result.exitCode == 0, "\(result)")
        #expect(try StoreSnapshot.texts(store, "SELECT name FROM \"table\"") == [["literal"]])
        let escaped = try runFerry([
            "import", dir.file("\\[table\\].csv"), "--store", dir.file("e.sqlite"), "--entity", "escaped",
        ])
        #expect(escaped.exitCode == 0, "\(escaped)")
        #expect(try StoreSnapshot.texts(dir.file("e.sqlite"), "SELECT name FROM escaped") == [["literal"]])
        // The pattern itself, where no such file exists, still matches by pattern.
        try FileManager.default.removeItem(atPath: literal)
        let pattern = try runFerry(["import", literal, "--store", dir.file("p.sqlite"), "--entity", "p"])
        #expect(pattern.exitCode == 0, "\(pattern)")
        #expect(try StoreSnapshot.texts(dir.file("p.sqlite"), "SELECT name FROM p") == [["pattern"]])
    }

    @Test(
        "fixed-width lines shorter than the layout: rejected by default, padded with --short-lines pad or short_lines: pad"
    )
    func shortFixedWidthLines() throws {
        let dir = TemporaryDirectory()
        let file = try dir.write("bank.txt", "001Ann       Paris   \n002Bob\n003\n004Cy        Oslo    \n")
        let columns = "id:1:3,name:4:10,city:14:8"
        let rejected = try runFerry([
            "import", file, "--format", "fixed", "--columns", columns, "--store", dir.file("r.sqlite"),
            "--rejects", dir.file("r.ndjson"),
        ])
        #expect(rejected.exitCode == 0, "\(rejected)")
        #expect(try StoreSnapshot.integers(dir.file("r.sqlite"), "SELECT count(*) FROM bank") == [2])
        let padded = try runFerry([
            "import", file, "--format", "fixed", "--columns", columns, "--short-lines", "pad", "--store",
            dir.file("p.sqlite"),
        ])
        #expect(padded.exitCode == 0, "\(padded)")
        let expected: [[String?]] = [
            ["001", "Ann", "Paris"], ["002", "Bob", nil], ["003", nil, nil], ["004", "Cy", "Oslo"],
        ]
        #expect(
            try StoreSnapshot.texts(dir.file("p.sqlite"), "SELECT id, name, city FROM bank ORDER BY id") == expected)
        try dir.write(
            "m.yml",
            "entities:\n  Account:\n    attributes:\n      id: string\n      name: string\n      city: string\n")
        let job = try dir.write(
            "job.yml",
            """
            store: job.sqlite
            model: m.yml
            steps:
              - import:
                  source: bank.txt
                  format: fixed
                  entity: Account
                  fixed:
                    short_lines: pad
                    columns:
                      - {name: id, start: 1, width: 3}
                      - {name: name, start: 4, width: 10}
                      - {name: city, start: 14, width: 8}
            """)
        let run = try runFerry(["run", job])
        #expect(run.exitCode == 0, "\(run)")
        #expect(
            try StoreSnapshot.texts(dir.file("job.sqlite"), "SELECT id, name, city FROM Account ORDER BY id")
                == expected)
        let bad = try runFerry([
            "import", file, "--format", "fixed", "--columns", columns, "--short-lines", "fill", "--store",
            dir.file("b.sqlite"),
        ])
        #expect(bad.exitCode == 64, "\(bad)")
        #expect(bad.errorLines.first == "error: --short-lines must be reject or pad, not 'fill'", "\(bad)")
    }

    @Test("timestamps keep their microseconds (patterns, Unix seconds, lists of formats)")
    func microseconds() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let csv = try dir.write(
            "events.csv",
            "id,at,unix\n1,01/03/2024 10:00:00.123456,1709287200.123456\n2,01/03/2024 10:00:00.5,1709287200.5\n")
        let result = try runFerry([
            "import", csv, "--store", store, "--type", "at=date", "--type", "unix=date", "--date-format",
            "dd/MM/yyyy HH:mm:ss.S", "--date-format", "unix",
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT at, unix FROM events ORDER BY id") == [
                ["2024-03-01T10:00:00.123456Z", "2024-03-01T10:00:00.123456Z"],
                ["2024-03-01T10:00:00.500Z", "2024-03-01T10:00:00.500Z"],
            ])
    }

    @Test(
        "--timezone and timezone: read zone-less dates in a zone (daylight saving included); dates with a zone keep it")
    func timeZones() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let csv = try dir.write(
            "events.csv",
            "id,at\n1,2024-03-01 10:00:00\n2,2024-07-01 10:00:00.250\n3,2024-07-01T10:00:00Z\n4,2024-07-01T10:00:00.123456\n"
        )
        let result = try runFerry(["import", csv, "--store", store, "--timezone", "Europe/Berlin"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("at date"), "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT at FROM events ORDER BY id") == [
                ["2024-03-01T09:00:00.000Z"], ["2024-07-01T08:00:00.250Z"], ["2024-07-01T10:00:00.000Z"],
                ["2024-07-01T08:00:00.123456Z"],
            ])
        try dir.write("m.yml", "entities:\n  Event:\n    attributes:\n      id: int64\n      at: date\n")
        let job = try dir.write(
            "job.yml",
            """
            store: job.sqlite
            model: m.yml
            steps:
              - import: {source: events.csv, entity: Event, timezone: "-05:00", date_format: [dd.MM.yyyy, iso8601]}
            """)
        let run = try runFerry(["run", job])
        #expect(run.exitCode == 0, "\(run)")
        #expect(
            try StoreSnapshot.texts(dir.file("job.sqlite"), "SELECT at FROM Event ORDER BY id") == [
                ["2024-03-01T15:00:00.000Z"], ["2024-07-01T15:00:00.250Z"], ["2024-07-01T10:00:00.000Z"],
                ["2024-07-01T15:00:00.123456Z"],
            ])
        let bad = try runFerry(["import", csv, "--store", dir.file("b.sqlite"), "--timezone", "Mars/Olympus"])
        #expect(bad.exitCode == 64, "\(bad)")
        #expect(
            bad.errorLines.first?.hasPrefix("error: --timezone: 'Mars/Olympus' is not a time zone") == true, "\(bad)")
    }

    @Test("--quoted-empty null and quoted_empty: null read \"\" as null; the default keeps the empty string")
    func quotedEmptyAsNull() throws {
        let dir = TemporaryDirectory()
        let csv = try dir.write("q.csv", "id,name\n1,\"\"\n2,\n3,\"x\"\n")
        let plain = try runFerry(["import", csv, "--store", dir.file("a.sqlite")])
        #expect(plain.exitCode == 0, "\(plain)")
        #expect(
            try StoreSnapshot.texts(dir.file("a.sqlite"), "SELECT quote(name) FROM q ORDER BY id") == [
                ["''"], ["NULL"], ["'x'"],
            ])
        let null = try runFerry(["import", csv, "--store", dir.file("b.sqlite"), "--quoted-empty", "null"])
        #expect(null.exitCode == 0, "\(null)")
        #expect(
            try StoreSnapshot.texts(dir.file("b.sqlite"), "SELECT quote(name) FROM q ORDER BY id") == [
                ["NULL"], ["NULL"], ["'x'"],
            ])
        try dir.write(
            "m.yml", "entities:\n  Q:\n    attributes:\n      id: int64\n      name: {type: string, optional: false}\n")
        let job = try dir.write(
            "job.yml",
            """
            store: job.sqlite
            model: m.yml
            steps:
              - import: {source: q.csv, entity: Q, csv: {quoted_empty: null}, rejects: r.ndjson, max_rejects: 5}
            """)
        let run = try runFerry(["run", job])
        #expect(run.exitCode == 0, "\(run)")
        #expect(try StoreSnapshot.texts(dir.file("job.sqlite"), "SELECT name FROM Q") == [["x"]])
        #expect(try lines(ofFile: dir.file("r.ndjson")).count == 2)
    }
}
