import FerryCore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryFormats

/// Reads every record of `text` with `options` at a chunk size: names, then per record the
/// values (nil for null) with their quoted flag and position, or the problem.
private func readAll(_ text: String, _ options: CSVOptions, chunkSize: Int) throws -> (names: [String], rows: [String])
{
    let dir = TemporaryDirectory()
    let path = try dir.write("in.csv", text)
    let reader = CSVReader(input: try InputFile(path: path), options: options, chunkSize: chunkSize)
    try reader.prepare()
    var rows: [String] = []
    while let record = try reader.next() {
        if let problem = record.problem {
            rows.append(
                "problem: \(problem.message) at \(problem.location?.line ?? 0):\(problem.location?.column ?? 0)")
            continue
        }
        rows.append(
            record.fields.map { field -> String in
                guard let field else { return "absent" }
                let value: String
                switch field.value {
                case .null: value = "null"
                case .text(let text): value = "'\(text)'"
                default: value = "\(field.value)"
                }
                return "\(value)\(field.quoted ? "q" : "")@\(field.line):\(field.column)"
            }.joined(separator: " "))
    }
    return (reader.fieldNames, rows)
}

@Suite("CSV dialects: initial blanks, unusable headers, delimiter detection")
struct CSVDialectTests {
    @Test(
        "skip_initial_space: blanks before a field are dropped, so a quote after them opens a quoted field",
        arguments: [1, 2, 3, 5, 64, 65536])
    func skipInitialSpace(chunkSize: Int) throws {
        let text = "a, b,  c\n1, \"x, y\",   \n2,\"\",  \"q\"\"r\"\n"
        var options = CSVOptions()
        options.skipInitialSpace = true
        let result = try readAll(text, options, chunkSize: chunkSize)
        #expect(result.names == ["a", "b", "c"])
        #expect(
            result.rows == [
                "'1'@2:1 'x, y'q@2:4 null@2:14",
                "'2'@3:1 ''q@3:3 'q\"r'q@3:8",
            ])
        // Without the option the blanks and the quotes are data.
        let literal = try readAll("a,b\n1, \"x\"\n", CSVOptions(), chunkSize: chunkSize)
        #expect(literal.rows == ["'1'@2:1 ' \"x\"'@2:3"])
    }

    @Test(
        "renamesUnusableHeaders names blank columns by position and numbers repeated names", arguments: [1, 4, 65536])
    func unusableHeaders(chunkSize: Int) throws {
        var options = CSVOptions()
        options.renamesUnusableHeaders = true
        let result = try readAll("id,,name,id,,id\n1,2,3,4,5,6\n", options, chunkSize: chunkSize)
        #expect(result.names == ["id", "column_2", "name", "id_2", "column_5", "id_3"])
        #expect(result.rows == ["'1'@2:1 '2'@2:3 '3'@2:5 '4'@2:7 '5'@2:9 '6'@2:11"])
        // Off by default: a job maps fields by name, so an ambiguous header is an error.
        #expect(throws: FerryError.self) { try readAll("id,id\n1,2\n", CSVOptions(), chunkSize: chunkSize) }
    }

    @Test(
        "skip_lines drops a preamble whatever it holds; comment lines are skipped but counted",
        arguments: [1, 2, 3, 7, 65536])
    func preambleAndComments(chunkSize: Int) throws {
        let text =
            "Report \"Q1\", 2024\r\n\r\n# generated\nid,name\n1,a\n# a comment, with \"quotes\n2,\"x\n# not a comment\"\n#\n3,c"
        var options = CSVOptions()
        options.skipLines = 2
        options.comment = UInt8(ascii: "#")
        let result = try readAll(text, options, chunkSize: chunkSize)
        #expect(result.names == ["id", "name"])
        #expect(result.rows == ["'1'@5:1 'a'@5:3", "'2'@7:1 'x\n# not a comment'q@7:3", "'3'@10:1 'c'@10:3"])
        // More lines to skip than the input has: no header, no records.
        options.skipLines = 50
        #expect(try readAll(text, options, chunkSize: chunkSize).names == [])
    }

    @Test(
        "header detection: the first row is data only when every column's first value has the kind of the values below")
    func headerDetection() {
        func count(_ text: String, _ delimiter: Character = ",", complete: Bool = true) -> Int? {
            CSVDialectSniffer.headerlessColumnCount(
                Array(text.utf8), delimiter: UInt8(ascii: delimiter.unicodeScalars.first ?? ","), isComplete: complete)
        }
        #expect(count("1,Ann,34\n2,Bob,41\n") == 3)
        #expect(count("1;\"Smith; Ann\";2024-01-01\n2;Bob;2024-02-01", ";") == 3)
        #expect(count("id,name,age\n1,Ann,34\n2,Bob,41\n") == nil)
        #expect(count("2023,2024\n1,2\n3,4\n") == 2)
        #expect(count("name,city\nAnn,Bern\nBob,Chur\n") == nil)
        #expect(count("id,amount\n1,2.5\n") == nil)
        #expect(count("1,2.5\n2,x\n") == nil)
        #expect(count("1,Ann\n") == nil)
        #expect(count("") == nil)
        #expect(count("1,\n2,\n") == nil)
    }

    @Test("a comment character equal to the delimiter or quote is refused")
    func badComment() {
        var options = CSVOptions()
        options.comment = UInt8(ascii: ",")
        #expect(throws: FerryError.self) { try readAll("a,b\n", options, chunkSize: 4) }
    }

    @Test("the delimiter is the candidate that splits every line alike, most fields winning")
    func sniffing() {
        func sniff(_ text: String, complete: Bool = true) -> String? {
            CSVDialectSniffer.sniffDelimiter(Array(text.utf8), isComplete: complete).map { String(UnicodeScalar($0)) }
        }
        #expect(sniff("a,b,c\n1,2,3\n") == ",")
        #expect(sniff("a;b;c\n1;2;3\n4;5;6") == ";")
        #expect(sniff("a\tb\n1\t2\n") == "\t")
        #expect(sniff("a|b|c\r\n1|2|3\r\n") == "|")
        // Commas inside quotes do not count; the semicolon splits every line alike.
        #expect(sniff("name;note\n\"Smith, J\";\"a, b, c\"\n\"Doe\";x\n") == ";")
        // A decimal comma in a semicolon file: the comma count varies, the semicolon's does not.
        #expect(sniff("id;price\n1;1,5\n2;20\n3;3,25\n") == ";")
        // A quoted line break does not end a line.
        #expect(sniff("a;b\n\"x\ny\";2\n") == ";")
        // A cut-off last line is not compared.
        #expect(sniff("a;b\n1;2\n3", complete: false) == ";")
        // Nothing consistent: no guess (the caller keeps its default).
        #expect(sniff("just one column\nvalue\n") == nil)
        #expect(sniff("a,b;c\n1;2;3\n4,5,6\n") == nil)
        #expect(sniff("") == nil)
        // A preamble and comment lines do not count.
        let preamble = Array("Sales report, 2024\n# note; more\na;b\n1;2\n".utf8)
        #expect(
            CSVDialectSniffer.sniffDelimiter(preamble, isComplete: true, skipLines: 1, comment: UInt8(ascii: "#"))
                == UInt8(ascii: ";"))
    }

    @Test("the quote is ' only when fields are quoted with it and none with a double quote")
    func quoteSniffing() {
        func sniff(_ text: String, complete: Bool = true, skipLines: Int = 0) -> String {
            String(
                UnicodeScalar(
                    CSVDialectSniffer.sniffQuote(Array(text.utf8), isComplete: complete, skipLines: skipLines)))
        }
        #expect(sniff("id,name\n1,'Smith, Ann'\n2,'O''Brien'\n") == "'")
        #expect(sniff("id;name\n1; 'x' ;2\n") == "\"")  // blanks after the closing quote: not a quoted field
        #expect(sniff("id;name\n1; 'x';2\n") == "'")  // blanks before the opening quote are allowed
        #expect(sniff("id,name\n1,O'Brien\n2,D'Arcy's\n") == "\"")  // apostrophes quote nothing
        #expect(sniff("id,a,b\n1,'x',\"y\"\n") == "\"")  // both: RFC 4180's double quote
        #expect(sniff("id,a\n1,plain\n") == "\"")
        #expect(sniff("") == "\"")
        // A cut-off last line and skipped lines are not looked at.
        #expect(sniff("id,a\n1,x\n2,'y'", complete: false) == "\"")
        #expect(sniff("'title'\nid,a\n1,x\n", skipLines: 1) == "\"")
    }
}
