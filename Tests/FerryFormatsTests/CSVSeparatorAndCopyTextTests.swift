import FerryCore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryFormats

/// Delimiters and record terminators of several bytes, and PostgreSQL COPY text, at every chunk
/// size down to 1 byte (a separator split between two reads), the same through `next()` and
/// through the fast path's `withFieldBytes`.
@Suite("CSV reader: multi-byte separators and COPY text")
struct CSVSeparatorAndCopyTextTests {
    static let chunkSizes = [1, 2, 3, 5, 64, 1 << 18]

    /// Every record as `#number line [fields] problem`, read through `next()`; and checks that the
    /// fast path's bytes of each well-formed record are the same values.
    func read(_ path: String, _ options: CSVOptions, chunkSize: Int) throws -> [String] {
        let reader = CSVReader(input: try InputFile(path: path), options: options, chunkSize: chunkSize)
        let fast = CSVReader(input: try InputFile(path: path), options: options, chunkSize: chunkSize)
        var records: [String] = []
        while let record = try reader.next() {
            records.append(
                "#\(record.number) \(record.line) [\(record.fields.map(CSVEscapeTests().rendered).joined(separator: ", "))] \(record.problem.map { "\($0)" } ?? "-")"
            )
            #expect(try fast.advance(), "chunk size \(chunkSize)")
            guard fast.currentRecordIsWellFormed, record.problem == nil else { continue }
            for (index, field) in record.fields.enumerated() {
                let bytes: String? =
                    fast.fieldKind(index) == .null
                    ? nil : fast.withFieldBytes(index) { String(decoding: $0, as: UTF8.self) }
                switch field?.value {
                case .text(let text): #expect(bytes == text, "chunk size \(chunkSize), record \(record.number)")
                case .null: #expect(bytes == nil, "chunk size \(chunkSize), record \(record.number)")
                default: Issue.record("unexpected value")
                }
            }
        }
        #expect(try !fast.advance(), "chunk size \(chunkSize)")
        return records
    }

    /// Reads `path` at every chunk size and compares the records with `expected`.
    func expectAtEveryChunkSize(_ path: String, _ options: CSVOptions, _ expected: [String]) throws {
        for chunkSize in Self.chunkSizes {
            let records = try read(path, options, chunkSize: chunkSize)
            #expect(records == expected, "chunk size \(chunkSize)")
        }
    }

    @Test(
        "a delimiter of two bytes: quotes still hold it, a lone first byte is text, a quote after a closing quote is a problem"
    )
    func twoByteDelimiter() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("d.csv", "id||name||note\n1||\"a || b\"||x|y\n2||||\"q\"\"\"\n3||\"z\"|w||v\n")
        var options = CSVOptions()
        options.delimiter = UInt8(ascii: "|")
        options.delimiterSequence = Array("||".utf8)
        let expected = [
            #"#1 2 ["1"@2:1, "a || b"@2:4, "x|y"@2:14] -"#,
            #"#2 3 ["2"@3:1, null@3:4, "q\""@3:6] -"#,
            "#3 4 [\"3\"@4:1, \"\\\"z\\\"|w\"@4:4, \"v\"@4:11] \(path):4:7: error: unexpected text after the closing quote \" of a field (record 3)",
        ]
        try expectAtEveryChunkSize(path, options, expected)
    }

    @Test(
        "a record terminator of its own: line breaks are field bytes, lines count terminators, skip_lines and comments follow it"
    )
    func recordTerminator() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("t.txt", "title~~id::name~~1::a~b:c~~2::\"c~~d\"~~3::x\ny~~")
        var options = CSVOptions()
        options.delimiter = UInt8(ascii: ":")
        options.delimiterSequence = Array("::".utf8)
        options.recordTerminator = Array("~~".utf8)
        options.skipLines = 1
        // `~~` ends records and `::` splits fields: a lone `~` or `:` is text.
        let expected = [
            #"#1 3 ["1"@3:1, "a~b:c"@3:4] -"#,
            #"#2 4 ["2"@4:1, "c~~d"@4:4] -"#,
            #"#3 6 ["3"@6:1, "x\ny"@6:4] -"#,
        ]
        try expectAtEveryChunkSize(path, options, expected)
        var single = CSVOptions()
        single.recordTerminator = [UInt8(ascii: "~")]
        single.comment = UInt8(ascii: "#")
        single.skipLines = 1
        let path2 = try dir.write("t2.txt", "title~id,name~#note~1,two\nlines~2,\"x~y\"~3,\r~")
        let expected2 = [
            #"#1 4 ["1"@4:1, "two\nlines"@4:3] -"#,
            #"#2 5 ["2"@5:1, "x~y"@5:3] -"#,
            // A terminator inside quotes counts a line, as a line break inside quotes does.
            #"#3 7 ["3"@7:1, "\r"@7:3] -"#,
        ]
        try expectAtEveryChunkSize(path2, single, expected2)
    }

    @Test("a lone CR ends records; a record terminator of two bytes split across reads")
    func carriageReturnAndTwoByteTerminator() throws {
        let dir = TemporaryDirectory()
        var cr = CSVOptions()
        cr.recordTerminator = [13]
        let path = try dir.write("cr.csv", "a,b\r1,x\ny\r2,\"p\rq\"\r")
        let expected = [
            #"#1 2 ["1"@2:1, "x\ny"@2:3] -"#,
            #"#2 3 ["2"@3:1, "p\rq"@3:3] -"#,
        ]
        try expectAtEveryChunkSize(path, cr, expected)
        var pair = CSVOptions()
        pair.recordTerminator = Array("$$".utf8)
        let path2 = try dir.write("pair.csv", "a,b$$1,$x$$2,\"$$\"$$3,$")
        let expected2 = [
            #"#1 2 ["1"@2:1, "$x"@2:3] -"#,
            #"#2 3 ["2"@3:1, "$$"@3:3] -"#,
            #"#3 5 ["3"@5:1, "$"@5:3] -"#,
        ]
        try expectAtEveryChunkSize(path2, pair, expected2)
    }

    @Test("clashing separators are refused: the same first byte, the quote inside one")
    func clashes() {
        var options = CSVOptions()
        options.delimiterSequence = Array("~|".utf8)
        options.delimiter = UInt8(ascii: "~")
        options.recordTerminator = Array("~".utf8)
        #expect(options.delimiterQuoteProblem != nil)
        options.recordTerminator = nil
        options.delimiterSequence = Array("\"|".utf8)
        options.delimiter = UInt8(ascii: "\"")
        #expect(options.delimiterQuoteProblem != nil)
        options.delimiterSequence = Array("||".utf8)
        options.delimiter = UInt8(ascii: "|")
        #expect(options.delimiterQuoteProblem == nil)
        #expect(CSVOptions.separatorBytes("\\r\\n") == [13, 10])
        #expect(CSVOptions.separatorBytes("tab") == [9])
        #expect(CSVOptions.separatorBytes("") == nil)
        #expect(CSVOptions.separatorBytes("123456789") == nil)
    }

    @Test("COPY text: escapes, \\N, empty strings, hex and octal, an escaped delimiter and line break, the end marker")
    func copyText() throws {
        let dir = TemporaryDirectory()
        let text =
            "id\tname\tnote\n"
            + "1\ta\\tb\\nc\t\\\\x\n"
            + "2\t\\N\t\n"
            + "3\tcaf\\xc3\\xa9\t\\101\\102\n"
            + "4\tcol\\\tumn\tline\\\nbreak\n"
            + "5\t\\b\\f\\r\\v\t\\x4\n"
            + "\\.\n"
            + "6\tnot\tread\n"
        let path = try dir.write("c.copy", text)
        var options = CSVOptions()
        options.readCopyText()
        options.hasHeader = true
        let expected = [
            #"#1 2 ["1"@2:1, "a\tb\nc"@2:3, "\\x"@2:11] -"#,
            #"#2 3 ["2"@3:1, null@3:3, ""@3:6] -"#,
            #"#3 4 ["3"@4:1, "café"@4:3, "AB"@4:15] -"#,
            #"#4 5 ["4"@5:1, "col\tumn"@5:3, "line\nbreak"@5:12] -"#,
            "#5 7 [\"5\"@7:1, \("\u{08}\u{0C}\r\u{0B}".debugDescription)@7:3, \("\u{04}".debugDescription)@7:12] -",
        ]
        try expectAtEveryChunkSize(path, options, expected)
    }

    @Test("COPY text: bad escapes are located problems of their record, and reading goes on")
    func copyTextBadEscapes() throws {
        let dir = TemporaryDirectory()
        let text = "1\tab\\qc\n2\t\\xZ\n3\tx\\Ny\n4\t\\Nz\n5\tok\n6\tend\\"
        let path = try dir.write("bad.copy", text)
        var options = CSVOptions()
        options.readCopyText()
        options.columns = ["id", "v"]
        let expected = [
            #"#1 1 ["1"@1:1, "abqc"@1:3] \#(path):1:5: error: unknown escape \q (pgcopy knows \b \f \n \r \t \v \\, \xHH, \NNN octal and \N) (record 1)"#,
            #"#2 2 ["2"@2:1, "xZ"@2:3] \#(path):2:3: error: \x needs a hex digit after it (record 2)"#,
            #"#3 3 ["3"@3:1, "xNy"@3:3] \#(path):3:4: error: \N (null) must be the whole field (record 3)"#,
            #"#4 4 ["4"@4:1, "Nz"@4:3] \#(path):4:3: error: \N (null) must be the whole field (record 4)"#,
            #"#5 5 ["5"@5:1, "ok"@5:3] -"#,
            #"#6 6 ["6"@6:1, "end\\"@6:3] \#(path):6:6: error: a backslash ends the input (record 6)"#,
        ]
        try expectAtEveryChunkSize(path, options, expected)
    }
}
