import FerryCore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryFormats

/// `escape:` (MySQL/PostgreSQL text exports): the byte after the escape is literal, inside or
/// outside quotes, at every chunk size down to 1 byte, the same through `next()` and through
/// the fast path's `withFieldBytes`.
@Suite("CSV reader: escape character")
struct CSVEscapeTests {
    static let chunkSizes = [1, 2, 3, 5, 64, 1 << 18]
    static let text = """
        id,name,note
        1,"say \\"hi\\"",a\\,b
        2,\\N,"back\\\\slash"
        3,multi\\
        line,"q\\
        x"
        4,"x"\\y,z
        5,\\"quoted,"a""b"
        6,"\\N",\\\\N

        """

    func rendered(_ field: Field?) -> String {
        guard let field else { return "absent" }
        switch field.value {
        case .text(let text): return "\(text.debugDescription)@\(field.line):\(field.column)"
        case .null: return "null@\(field.line):\(field.column)"
        default: return "other"
        }
    }

    @Test("escaped quotes, delimiters, backslashes and line breaks; \\N unquoted is null; doubled quotes still work")
    func escapes() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("e.csv", Self.text)
        var options = CSVOptions()
        options.escape = UInt8(ascii: "\\")
        let expected = [
            #"#1 2 ["1"@2:1, "say \"hi\""@2:3, "a,b"@2:16] -"#,
            #"#2 3 ["2"@3:1, null@3:3, "back\\slash"@3:6] -"#,
            #"#3 4 ["3"@4:1, "multi\nline"@4:3, "q\nx"@5:6] -"#,
            // Text after a closing quote is read on as unquoted text (escapes included) and reported.
            "#4 7 [\"4\"@7:1, \"\\\"x\\\"y\"@7:3, \"z\"@7:9] \(path):7:6: error: unexpected text after the closing quote \" of a field (record 4)",
            #"#5 8 ["5"@8:1, "\"quoted"@8:3, "a\"b"@8:12] -"#,
            #"#6 9 ["6"@9:1, "N"@9:3, "\\N"@9:8] -"#,
        ]
        for chunkSize in Self.chunkSizes {
            let reader = CSVReader(input: try InputFile(path: path), options: options, chunkSize: chunkSize)
            var records: [String] = []
            while let record = try reader.next() {
                records.append(
                    "#\(record.number) \(record.line) [\(record.fields.map(rendered).joined(separator: ", "))] \(record.problem.map { "\($0)" } ?? "-")"
                )
            }
            #expect(records == expected, "chunk size \(chunkSize)")
            #expect(reader.fieldNames == ["id", "name", "note"])
        }
    }

    @Test("the fast path's field bytes are the general path's values, escapes undone, \\N null")
    func fastPathAgrees() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("e.csv", Self.text)
        var options = CSVOptions()
        options.escape = UInt8(ascii: "\\")
        for chunkSize in Self.chunkSizes {
            let general = CSVReader(input: try InputFile(path: path), options: options, chunkSize: chunkSize)
            let fast = CSVReader(input: try InputFile(path: path), options: options, chunkSize: chunkSize)
            var compared = 0
            while let record = try general.next() {
                #expect(try fast.advance())
                guard fast.currentRecordIsWellFormed, record.problem == nil else { continue }
                for index in 0..<3 {
                    let bytes: String? =
                        fast.fieldKind(index) == .null
                        ? nil : fast.withFieldBytes(index) { String(decoding: $0, as: UTF8.self) }
                    switch record.fields[index]?.value {
                    case .text(let text): #expect(bytes == text, "chunk size \(chunkSize), record \(record.number)")
                    case .null: #expect(bytes == nil, "chunk size \(chunkSize), record \(record.number)")
                    default: Issue.record("unexpected value")
                    }
                    compared += 1
                }
            }
            #expect(try !fast.advance())
            #expect(compared == 15)
        }
    }

    @Test("without an escape, a backslash is an ordinary byte; an escape that is the delimiter or the quote is refused")
    func noEscapeAndClashes() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("e.csv", "a,b\n\\N,x\\\n")
        let reader = CSVReader(input: try InputFile(path: path), options: CSVOptions(), chunkSize: 3)
        let record = try #require(try reader.next())
        #expect(record.fields.map { $0?.value } == [.text("\\N"), .text("x\\")])
        for clash in [",", "\""] {
            var options = CSVOptions()
            options.escape = UInt8(ascii: Unicode.Scalar(clash)!)
            let clashing = CSVReader(input: try InputFile(path: path), options: options)
            #expect(throws: FerryError.self) { try clashing.prepare() }
        }
    }
}
