import FerryCore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryFormats

// MARK: - Helpers

/// A record as plain comparable values.
private struct Rec: Equatable, CustomStringConvertible {
    var number: Int
    var line: Int
    var column: Int
    var fields: [Field?]
    var raw: String
    var problem: String?

    var description: String {
        let values = fields.map { field -> String in
            guard let field else { return "absent" }
            return "\(field.value)@\(field.line):\(field.column)"
        }
        return "#\(number) \(line):\(column) \(values) raw=\(raw.debugDescription) problem=\(problem ?? "-")"
    }
}

/// Everything a reader yields: the records, then the error that stopped it (if any).
private struct Outcome: Equatable {
    var names: [String]
    var records: [Rec]
    var error: String?
}

private func read(
    _ path: String, _ options: CSVOptions = CSVOptions(), chunkSize: Int = CSVReader.defaultChunkSize
) -> Outcome {
    var outcome = Outcome(names: [], records: [], error: nil)
    do {
        let reader = CSVReader(input: try InputFile(path: path), options: options, chunkSize: chunkSize)
        try reader.prepare()
        outcome.names = reader.fieldNames
        while let record = try reader.next() {
            outcome.records.append(
                Rec(
                    number: record.number, line: record.line, column: record.column, fields: record.fields,
                    raw: record.raw, problem: record.problem?.description
                )
            )
        }
    } catch {
        outcome.error = "\(error)"
    }
    return outcome
}

private func text(_ value: String, _ line: Int, _ column: Int) -> Field {
    Field(value: .text(value), line: line, column: column)
}

private func null(_ line: Int, _ column: Int) -> Field {
    Field(value: .null, line: line, column: column)
}

private let fixtures = TestPaths.packageRoot.appendingPathComponent("Tests/FerryFormatsTests/Fixtures/csv")
private func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name).path }

private let spectrum = TestPaths.sharedData?.appendingPathComponent("csv-spectrum")
private let spectrumNames: [String] = {
    guard let spectrum else { return [] }
    let files =
        (try? FileManager.default.contentsOfDirectory(atPath: spectrum.appendingPathComponent("csvs").path)) ?? []
    return files.filter { $0.hasSuffix(".csv") }.map { String($0.dropLast(4)) }.sorted()
}()

// MARK: - Conformance

@Suite(
    "CSVReader: csv-spectrum conformance", .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
struct CSVSpectrumTests {
    @Test("the suite is present")
    func present() {
        #expect(spectrumNames.count == 12)
    }

    @Test("parses to the expected JSON", arguments: spectrumNames)
    func conforms(name: String) throws {
        let base = try #require(spectrum)
        let csv = base.appendingPathComponent("csvs/\(name).csv").path
        let jsonData = try Data(contentsOf: base.appendingPathComponent("json/\(name).json"))
        let json = try JSONSerialization.jsonObject(with: jsonData)
        // location_coordinates.json is one object, not an array, and its phone number is wrong.
        var expected: [[String: String]]
        var ignored: Set<String> = []
        if let array = json as? [[String: String]] {
            expected = array
        } else {
            expected = [try #require(json as? [String: String])]
            ignored = ["Contact Phone Number"]
        }
        let outcome = read(csv, CSVOptions(nullTokens: []))
        #expect(outcome.error == nil)
        var actual: [[String: String]] = []
        // Its coordinates hold unquoted `"` (inch marks): they read literally, with no problem.
        for record in outcome.records {
            #expect(record.problem == nil)
            var object: [String: String] = [:]
            for (index, name) in outcome.names.enumerated() where !ignored.contains(name) {
                guard case .text(let value)? = record.fields[index]?.value else {
                    Issue.record("field \(name) of record \(record.number) is not text")
                    continue
                }
                object[name] = value
            }
            actual.append(object)
        }
        for name in ignored { for index in expected.indices { expected[index][name] = nil } }
        #expect(actual == expected)
    }

    @Test("every chunk boundary gives the same records", arguments: [1, 2, 3, 7, 64])
    func chunkBoundaries(chunkSize: Int) throws {
        let base = try #require(spectrum)
        for name in spectrumNames {
            let path = base.appendingPathComponent("csvs/\(name).csv").path
            let options = CSVOptions(nullTokens: [])
            #expect(read(path, options, chunkSize: chunkSize) == read(path, options), "\(name)")
        }
    }
}

// MARK: - Reading

@Suite("CSVReader: reading")
struct CSVReaderTests {
    static let fixtureCases: [(String, CSVOptions)] = [
        ("mixed.csv", CSVOptions()),
        ("tabs.tsv", CSVOptions(delimiter: UInt8(ascii: "\t"), quote: UInt8(ascii: "'"))),
        ("cr-only.csv", CSVOptions()),
        ("bad-records.csv", CSVOptions()),
        ("unterminated.csv", CSVOptions()),
    ]

    @Test("fixtures read the same at every chunk size", arguments: [1, 2, 3, 7, 64])
    func fixtureChunks(chunkSize: Int) {
        for (name, options) in Self.fixtureCases {
            #expect(read(fixture(name), options, chunkSize: chunkSize) == read(fixture(name), options), "\(name)")
        }
    }

    @Test("quotes, CRLF, BOM, blank lines, null vs empty, UTF-8 and locations")
    func mixed() {
        let outcome = read(fixture("mixed.csv"))
        #expect(outcome.error == nil)
        #expect(outcome.names == ["id", "name", "note", "city"])
        #expect(
            outcome.records == [
                Rec(
                    number: 1, line: 2, column: 1,
                    fields: [
                        text("1", 2, 1), text("Smith, Jane", 2, 3), text("said \"hi\"", 2, 17), text("Zürich", 2, 31),
                    ],
                    raw: "1,\"Smith, Jane\",\"said \"\"hi\"\"\",Zürich"
                ),
                Rec(
                    number: 2, line: 4, column: 1,
                    fields: [text("2", 4, 1), null(4, 3), text("", 4, 4), null(4, 7)],
                    raw: "2,,\"\","
                ),
                Rec(
                    number: 3, line: 5, column: 1,
                    fields: [
                        text("3", 5, 1), text("multi\r\nline, \"quoted\"\nfield", 5, 3), text("x", 7, 8),
                        text("日本", 7, 10),
                    ],
                    raw: "3,\"multi\r\nline, \"\"quoted\"\"\nfield\",x,日本"
                ),
                Rec(
                    number: 4, line: 8, column: 1,
                    fields: [text("4", 8, 1), text("plain", 8, 3), text("a\rb", 8, 9), text("end", 9, 4)],
                    raw: "4,plain,\"a\rb\",end"
                ),
            ]
        )
    }

    @Test("tab delimiter and ' quote")
    func tabs() {
        let options = CSVOptions(delimiter: UInt8(ascii: "\t"), quote: UInt8(ascii: "'"))
        let outcome = read(fixture("tabs.tsv"), options)
        #expect(outcome.error == nil)
        #expect(outcome.names == ["id", "name", "note"])
        #expect(
            outcome.records.map(\.fields) == [
                [text("1", 2, 1), text("A", 2, 3), text("x\ty", 2, 5)],
                [text("2", 3, 1), null(3, 3), text("", 3, 4)],
            ])
    }

    @Test("lone CR terminates records and counts lines")
    func crOnly() {
        let outcome = read(fixture("cr-only.csv"))
        #expect(outcome.error == nil)
        #expect(
            outcome.records.map(\.fields) == [
                [text("1", 2, 1), text("2", 2, 3)],
                [text("3", 4, 1), text("x\ry", 4, 3)],
            ])
        #expect(outcome.records.map(\.line) == [2, 4])
    }

    @Test("no header: columns name the fields, the first line is data")
    func columnsWithoutHeader() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("data.csv", "1,2\n3,4\n")
        let outcome = read(path, CSVOptions(hasHeader: false, columns: ["x", "y"]))
        #expect(outcome.names == ["x", "y"])
        #expect(
            outcome.records.map(\.fields) == [[text("1", 1, 1), text("2", 1, 3)], [text("3", 2, 1), text("4", 2, 3)]])
        #expect(outcome.records.map(\.number) == [1, 2])
    }

    @Test("columns replace the header's names")
    func columnsReplaceHeader() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("data.csv", "a,b\n1,2\n")
        let outcome = read(path, CSVOptions(columns: ["x", "y"]))
        #expect(outcome.names == ["x", "y"])
        #expect(outcome.records.map(\.fields) == [[text("1", 2, 1), text("2", 2, 3)]])
    }

    @Test("null tokens apply to unquoted fields only")
    func nullTokens() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("data.csv", "a,b,c,d,e\nNULL,\"NULL\",\\N,,\"\"\n")
        let outcome = read(path, CSVOptions(nullTokens: ["", "NULL", "\\N"]))
        #expect(
            outcome.records.map(\.fields) == [
                [null(2, 1), text("NULL", 2, 6), null(2, 13), null(2, 16), text("", 2, 17)]
            ])
        let none = read(path, CSVOptions(nullTokens: []))
        #expect(
            none.records.map(\.fields) == [
                [text("NULL", 2, 1), text("NULL", 2, 6), text("\\N", 2, 13), text("", 2, 16), text("", 2, 17)]
            ])
    }

    @Test("the last record may or may not end with a line break")
    func trailingNewline() throws {
        let dir = TemporaryDirectory()
        for (index, contents) in ["a,b\n1,x\n2,", "a,b\n1,x\n2,\n", "a,b\r\n1,x\r\n2,\r\n", "a,b\r1,x\r2,\r"]
            .enumerated()
        {
            let path = try dir.write("data\(index).csv", contents)
            let outcome = read(path)
            #expect(outcome.error == nil)
            #expect(
                outcome.records.map(\.fields) == [[text("1", 2, 1), text("x", 2, 3)], [text("2", 3, 1), null(3, 3)]],
                "\(index)")
            #expect(outcome.records.map(\.raw) == ["1,x", "2,"])
        }
        let quoted = try dir.write("quoted.csv", "a\n\"\"")
        #expect(read(quoted).records.map(\.fields) == [[text("", 2, 1)]])
    }

    @Test("blank lines are skipped but counted, also before the header")
    func blankLines() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("data.csv", "\n\na\n\n1\r\n\r\n\r2\n\n")
        let outcome = read(path)
        #expect(outcome.names == ["a"])
        #expect(outcome.records.map(\.fields) == [[text("1", 5, 1)], [text("2", 8, 1)]])
        #expect(outcome.records.map(\.number) == [1, 2])
    }

    @Test("an empty file has no fields and no records")
    func emptyFile() throws {
        let dir = TemporaryDirectory()
        let outcome = read(try dir.write("empty.csv", ""))
        #expect(outcome == Outcome(names: [], records: [], error: nil))
        let bomOnly = read(try dir.write("bom.csv", bytes: [0xEF, 0xBB, 0xBF]))
        #expect(bomOnly == Outcome(names: [], records: [], error: nil))
    }

    @Test("field indexes: columns first, other names after, asked before or after prepare")
    func fieldIndexes() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("data.csv", "a,b\n1,2\n")
        let reader = try CSVReader(path: path, options: CSVOptions())
        #expect(reader.fieldIndex(of: "zzz") == 2)
        #expect(reader.fieldIndex(of: "b") == 1)
        try reader.prepare()
        #expect(reader.hasField("a"))
        #expect(!reader.hasField("zzz"))
        let record = try #require(try reader.next())
        #expect(record[2] == nil)
        #expect(record[0] == text("1", 2, 1))
        #expect(reader.currentLocation == InputLocation(file: path, line: 2, column: 1, record: 1))
        #expect(try reader.next()?.number == nil)
        #expect(try reader.next()?.number == nil)
    }

    @Test("a long file read with a small chunk keeps the window small")
    func streaming() throws {
        let dir = TemporaryDirectory()
        var contents = "id,name,note\n"
        for index in 1...100_000 {
            contents += "\(index),\"name \(index), with comma\",\"a \"\"quoted\"\" note\"\n"
        }
        let path = try dir.write("big.csv", contents)
        #expect(contents.utf8.count > 4_000_000)
        let reader = CSVReader(input: try InputFile(path: path), options: CSVOptions(), chunkSize: 4096)
        var count = 0
        while let record = try reader.next() {
            count += 1
            #expect(record.problem == nil)
        }
        #expect(count == 100_000)
        #expect(reader.highWaterMark <= 8192)

        // One record of 1 MB: the window grows to hold it, no more.
        let long = String(repeating: "x", count: 1_000_000)
        let longPath = try dir.write("long.csv", "a,b\n1,\"\(long)\"\n2,3\n")
        let longReader = CSVReader(input: try InputFile(path: longPath), options: CSVOptions(), chunkSize: 4096)
        let first = try #require(try longReader.next())
        #expect(first[1] == text(long, 2, 3))
        #expect(try longReader.next()?[1] == text("3", 3, 3))
        #expect(longReader.highWaterMark >= 1_000_000)
        #expect(longReader.highWaterMark <= 2_100_000)
    }
}

// MARK: - Bad input

@Suite("CSVReader: bad input")
struct CSVReaderBadInputTests {
    @Test("record-level problems are returned with the record, and reading goes on")
    func recordProblems() {
        let path = fixture("bad-records.csv")
        let outcome = read(path)
        #expect(outcome.error == nil)
        #expect(
            outcome.records.map(\.problem) == [
                "\(path):2:4: error: expected 3 fields but found 2 (record 1)",
                "\(path):3:7: error: expected 3 fields but found 4 (record 2)",
                nil,  // a quote inside an unquoted field is literal
                "\(path):5:7: error: unexpected text after the closing quote \" of a field (record 4)",
                "\(path):6:5: error: invalid UTF-8 (byte 0xFF) in field 'c' (record 5)",
                nil,
            ])
        #expect(
            outcome.records.map(\.raw) == [
                "1,2", "1,2,3,4", "1,x\"y,3", "1,\"ab\"c,3", "1,2,\u{FFFD}\u{FFFD}", "7,8,9",
            ])
        // A short record has its present fields, a long one only the columns.
        #expect(outcome.records[0].fields == [text("1", 2, 1), text("2", 2, 3)])
        #expect(outcome.records[1].fields.count == 3)
        #expect(outcome.records[2].fields[1] == text("x\"y", 4, 3))
        #expect(outcome.records[3].fields[1] == text("\"ab\"c", 5, 3))
        #expect(outcome.records[5].fields == [text("7", 7, 1), text("8", 7, 3), text("9", 7, 5)])
    }

    @Test("invalid UTF-8 inside a multi-line quoted field points at the bad byte")
    func invalidUTF8MultiLine() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("data.csv", bytes: Array("a,b\n1,\"x\r\ny".utf8) + [0xC3, 0x28] + Array("\"\n".utf8))
        let outcome = read(path)
        #expect(
            outcome.records.map(\.problem) == ["\(path):3:2: error: invalid UTF-8 (byte 0xC3) in field 'b' (record 1)"])
        // An overlong encoding and a surrogate are invalid too.
        let overlong = try dir.write(
            "overlong.csv", bytes: Array("a\n".utf8) + [0xC0, 0xAF, 0x0A, 0xED, 0xA0, 0x80, 0x0A])
        #expect(
            read(overlong).records.map(\.problem) == [
                "\(overlong):2:1: error: invalid UTF-8 (byte 0xC0) in field 'a' (record 1)",
                "\(overlong):3:1: error: invalid UTF-8 (byte 0xED) in field 'a' (record 2)",
            ])
    }

    @Test(
        "an unterminated quote rejects its record, pointing where the quote opened; reading goes on at the next line",
        arguments: [1, 2, 3, 7, 65536])
    func unterminated(chunkSize: Int) {
        let path = fixture("unterminated.csv")
        let outcome = read(path, chunkSize: chunkSize)
        #expect(outcome.error == nil)
        #expect(outcome.records.map(\.number) == [1, 2, 3])
        #expect(
            outcome.records.map(\.problem) == [
                nil,
                "\(path):3:3: error: quoted field is not closed before the end of the input (reading went on at the next line) (record 2)",
                nil,
            ])
        #expect(outcome.records[1].raw == "4,\"unterminated,5")
        #expect(outcome.records[2].fields == [text("6", 4, 1), text("7", 4, 3), text("8", 4, 5)])
        // CRLF after the quote's line, and a quote on the last line without a line break.
        let dir = TemporaryDirectory()
        let crlf = (try? dir.write("crlf.csv", "a,b\r\n1,\"x\r\n2,y\r\n\r\n3,z")) ?? ""
        let records = read(crlf, chunkSize: chunkSize).records
        #expect(records.map(\.line) == [2, 3, 5])
        #expect(records.map { $0.problem != nil } == [true, false, false])
        #expect(records.count == 3 && records[1].fields == [text("2", 3, 1), text("y", 3, 3)])
        let last = (try? dir.write("last.csv", "a,b\n1,\"z")) ?? ""
        #expect(
            read(last, chunkSize: chunkSize).records.map(\.problem) == [
                "\(last):2:3: error: quoted field is not closed before the end of the input (reading went on at the next line) (record 1)"
            ])
    }

    @Test("a record longer than the limit is fatal")
    func tooLong() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("data.csv", "a,b\n1,2\n3,\"" + String(repeating: "y,\n", count: 2000))
        let reader = CSVReader(
            input: try InputFile(path: path), options: CSVOptions(), chunkSize: 64, maxRecordBytes: 1000)
        #expect(try reader.next()?.number == 1)
        let error = #expect(throws: FerryError.self) { try reader.next() }
        #expect(
            error?.description
                == "\(path):3:3: error: record is longer than 1000 bytes (is a quote not closed?) (record 2)")
        #expect(error?.code == .invalidInput)
        #expect(reader.highWaterMark <= 2048)
    }

    @Test(
        "a header with a duplicate or empty name is fatal",
        arguments: [
            ("a,b,a\n1,2,3\n", "1:5: error: duplicate column name 'a' in the header"),
            ("a,\"\",c\n", "1:3: error: column 2 of the header has an empty name"),
            ("\n\"a\nb\",,c\n", "3:4: error: column 2 of the header has an empty name"),
            ("a,\"b", "1:3: error: quoted field is not closed before the end of the input"),
        ])
    func badHeader(contents: String, expected: String) throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("data.csv", contents)
        let reader = try CSVReader(path: path, options: CSVOptions())
        let error = #expect(throws: FerryError.self) { try reader.prepare() }
        #expect(error?.description == "\(path):\(expected)")
        #expect(error?.code == .invalidInput)
        // The error sticks.
        let again = #expect(throws: FerryError.self) { try reader.next() }
        #expect(again?.description == error?.description)
    }

    @Test("bad options are definition errors")
    func badOptions() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("data.csv", "a\n")
        let cases: [(CSVOptions, String)] = [
            (CSVOptions(hasHeader: false), "CSV without a header row needs 'columns' to name its fields"),
            (CSVOptions(columns: ["x", "x"]), "duplicate column name 'x' in 'columns'"),
            (CSVOptions(columns: [""]), "empty column name in 'columns'"),
            (
                CSVOptions(delimiter: UInt8(ascii: "\"")),
                "CSV delimiter and quote must be two different characters other than a line break"
            ),
        ]
        for (options, message) in cases {
            let error = #expect(throws: FerryError.self) { try CSVReader(path: path, options: options).prepare() }
            #expect(error?.description == "\(path): error: \(message)")
            #expect(error?.code == .invalidDefinition)
        }
    }

    @Test("a missing file is a missing input (exit 66); another unreadable path an I/O error")
    func missingFile() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("missing.csv")
        let error = #expect(throws: FerryError.self) { try CSVReader(path: path, options: CSVOptions()) }
        #expect(error?.description == "\(path): error: cannot open '\(path)': No such file or directory")
        #expect(error?.code == .noInput)
        // A path through a file (not a folder) is not missing: it cannot be opened at all.
        let file = try dir.write("plain.txt", "x")
        let through = #expect(throws: FerryError.self) {
            try CSVReader(path: file + "/inside.csv", options: CSVOptions())
        }
        #expect(through?.code == .io)
    }
}
