import FerryCore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryFormats

@Suite("Fixed-width reader")
struct FixedWidthReaderTests {
    static let chunkSizes = [1, 2, 3, 7, 64, 1 << 18]
    static let layout = FixedWidthLayout(columns: [
        .init(name: "id", start: 1, width: 5), .init(name: "name", start: 6, width: 10),
        .init(name: "amount", start: 16, width: 7),
    ])

    func read(
        _ text: String, layout: FixedWidthLayout = layout, nullTokens: Set<String> = [""], chunkSize: Int,
        encoding: TextEncoding? = nil
    ) throws -> (FixedWidthReader, [String]) {
        let dir = TemporaryDirectory()
        let path = try dir.write(bytes: Array(text.utf8), encoding: encoding)
        let reader = FixedWidthReader(
            input: try InputFile(path: path, encoding: encoding), layout: layout, nullTokens: nullTokens,
            chunkSize: chunkSize)
        let records = try readAll(reader)
        return (
            reader, snapshot(records, names: reader.fieldNames).map { $0.replacingOccurrences(of: path, with: "F") }
        )
    }

    @Test(
        "fields are trimmed columns of characters (é and 😀 count one each); CRLF, blank lines and a missing last line break"
    )
    func columns() throws {
        // id: characters 1–5, name: 6–15, amount: 16–22.
        let first = "00001" + "Ann       " + "  12.50"
        let second = "   42" + "Zoë😀      " + "  -3.00"
        let last = "00004" + " Bo Li    " + "      7"
        let text = first + "\r\n\n" + second + "\r\n  \r\n00003         \n" + last
        let expected = [
            "#1 1:1 id=text(00001)@1:1 name=text(Ann)@1:6 amount=text(12.50)@1:16 raw=\(first)",
            // 😀 is 4 bytes and ë 2: the amount's character 16 is byte 20.
            "#2 3:1 id=text(42)@3:1 name=text(Zoë😀)@3:6 amount=text(-3.00)@3:20 raw=\(second)",
            "#3 5:1 problem=F:5:15: error: the line has 14 characters but the layout needs 22: column 'name' is characters 6–15 (record 3) raw=00003         ",
            "#4 6:1 id=text(00004)@6:1 name=text(Bo Li)@6:6 amount=text(7)@6:16 raw=\(last)",
        ]
        for chunkSize in Self.chunkSizes {
            let (reader, records) = try read(text, chunkSize: chunkSize)
            #expect(records == expected, "chunk size \(chunkSize)")
            #expect(reader.fieldNames == ["id", "name", "amount"])
            #expect(reader.hasField("name") && !reader.hasField("other"))
        }
    }

    @Test("empty columns and null words read as null; skip_lines skips a title and a ruler whatever they hold")
    func nullsAndSkippedLines() throws {
        let layout = FixedWidthLayout(
            columns: [.init(name: "code", start: 1, width: 3), .init(name: "note", start: 5, width: 4)], skipLines: 2)
        let text = "REPORT\n---+----\nA1  NA  \n     x  \nB2      \n"
        let expected = [
            "#1 3:1 code=text(A1)@3:1 note=null@3:5 raw=A1  NA  ",
            "#2 4:1 code=null@4:1 note=text(x)@4:5 raw=     x  ",
            "#3 5:1 code=text(B2)@5:1 note=null@5:5 raw=B2      ",
        ]
        for chunkSize in Self.chunkSizes {
            #expect(
                try read(text, layout: layout, nullTokens: ["", "NA"], chunkSize: chunkSize).1 == expected,
                "chunk size \(chunkSize)")
        }
    }

    @Test("located problems: a short line, text after the last column, invalid UTF-8; the next lines still read")
    func problems() throws {
        let good = "00001" + "Ann       " + "  12.50"
        let extra = "00002" + "Bob       " + "    1.5" + "   xx"
        let padded = "00004" + "Di        " + "   4.00" + "   "
        let bytes: [UInt8] = Array("\(good)\n\(extra)\n00003Cy".utf8) + [0xFF] + Array("        9.00\n\(padded)\n".utf8)
        let dir = TemporaryDirectory()
        let path = try dir.write("bad.txt", bytes: bytes)
        let expected = [
            "#1 1:1 id=text(00001)@1:1 name=text(Ann)@1:6 amount=text(12.50)@1:16 raw=\(good)",
            "#2 2:1 problem=F:2:26: error: text after the last column (character 26 of a 22-character layout): 'xx' (record 2) raw=\(extra)",
            "#3 3:1 problem=F:3:8: error: invalid UTF-8 (byte 0xFF) (record 3) raw=00003Cy\u{FFFD}        9.00",
            "#4 4:1 id=text(00004)@4:1 name=text(Di)@4:6 amount=text(4.00)@4:16 raw=\(padded)",
        ]
        for chunkSize in Self.chunkSizes {
            let reader = FixedWidthReader(
                input: try InputFile(path: path), layout: Self.layout, nullTokens: [""], chunkSize: chunkSize)
            let records = snapshot(try readAll(reader), names: reader.fieldNames).map {
                $0.replacingOccurrences(of: path, with: "F")
            }
            #expect(records == expected, "chunk size \(chunkSize)")
        }
    }

    @Test("latin-1 text lines up by characters once decoded; a line longer than the record limit is a located error")
    func encodingAndLimit() throws {
        let dir = TemporaryDirectory()
        let latin1: [UInt8] = Array("00001Gr".utf8) + [0xFC] + Array("n      ".utf8) + Array("  12.50\n".utf8)
        let path = try dir.write("latin.txt", bytes: latin1)
        for chunkSize in Self.chunkSizes {
            let reader = FixedWidthReader(
                input: try InputFile(path: path, encoding: try TextEncoding(named: "latin-1")), layout: Self.layout,
                nullTokens: [""], chunkSize: chunkSize)
            let records = try readAll(reader)
            #expect(records.count == 1)
            #expect(records.first?.problem == nil)
            #expect(
                records.first?.fields.compactMap { $0?.value } == [.text("00001"), .text("Grün"), .text("12.50")],
                "chunk size \(chunkSize)")
        }
        let long = try dir.write("long.txt", "00001Ann         12.50\n" + String(repeating: "x", count: 100) + "\n")
        let reader = FixedWidthReader(
            input: try InputFile(path: long), layout: Self.layout, nullTokens: [""], chunkSize: 8, maxRecordBytes: 50)
        #expect(
            thrownText { _ = try readAll(reader) } == "\(long):2:1: error: record is longer than 50 bytes (record 2)")
    }

    @Test("a layout's problems are named: overlaps, repeated names, starts and widths below 1; --columns syntax")
    func layoutProblems() throws {
        let layout = FixedWidthLayout(columns: [
            .init(name: "a", start: 1, width: 5), .init(name: "b", start: 5, width: 2),
            .init(name: "a", start: 10, width: 1), .init(name: "c", start: 0, width: 0),
        ])
        #expect(
            layout.problems() == [
                "column 'a' is named twice", "column 'c' starts at 0; positions start at 1",
                "column 'c' has width 0; a column is at least 1 character wide",
                "columns 'a' (1–5) and 'b' (5–6) overlap",
            ])
        #expect(FixedWidthLayout(columns: []).problems() == ["a fixed-width layout needs at least one column"])
        #expect(
            try FixedWidthLayout.parse("id:1:5, name : 6 : 20") == [
                .init(name: "id", start: 1, width: 5), .init(name: "name", start: 6, width: 20),
            ])
        #expect(
            thrownText { _ = try FixedWidthLayout.parse("id:1:5,name:6") }
                == "error: a fixed-width column is name:start:width (1-based start, e.g. id:1:5,name:6:20), not 'name:6'"
        )
        let dir = TemporaryDirectory()
        let path = try dir.write("x.txt", "abc\n")
        #expect(
            thrownText { _ = try readAll(FixedWidthReader(path: path, layout: layout)) }?.hasPrefix(
                "\(path): error: column 'a' is named twice;") == true)
    }
}

extension TemporaryDirectory {
    /// Writes `bytes` to a fresh file (its name tells the encoding, for failure messages).
    fileprivate func write(bytes: [UInt8], encoding: TextEncoding?) throws -> String {
        try write("data-\(encoding.map { "\($0)" } ?? "utf8").txt", bytes: bytes)
    }
}
