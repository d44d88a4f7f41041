import FerryCore
@_spi(Testing) import FerryFormats
import FerryTestSupport
import Foundation
import Testing

@Suite("NDJSON reader")
struct NDJSONReaderTests {
    static let chunkSizes = [1, 2, 3, 7, 64, 1 << 18]

    @Test("CRLF line ends, blank lines counted, last line without a line break")
    func crlfAndBlankLines() throws {
        let expected = [
            #"#1 1:1 id=number(1)@1:8 name=text(Ada)@1:19 raw={"id": 1, "name": "Ada"}"#,
            #"#2 3:1 id=number(2)@3:8 name=text(Bo)@3:19 raw={"id": 2, "name": "Bo"}"#,
            #"#3 5:1 id=number(3)@5:22 name=text(Cy)@5:10 raw={"name": "Cy", "id": 3}"#,
        ]
        for chunkSize in Self.chunkSizes {
            let reader = try NDJSONReader(path: jsonFixture("crlf.ndjson"), chunkSize: chunkSize)
            #expect(snapshot(try readAll(reader), names: reader.fieldNames) == expected, "chunk size \(chunkSize)")
            #expect(try reader.next() == nil)
        }
    }

    @Test("bad lines in the middle are located problem records; reading continues")
    func badLines() throws {
        let path = jsonFixture("bad-lines.ndjson")
        let expected = [
            #"#1 1:1 id=number(1)@1:8 raw={"id": 1}"#,
            "#2 2:1 problem=\(path):2:10: error: expected a string key, found '}' (record 2) raw={\"id\": 2,}",
            "#3 4:1 problem=\(path):4:1: error: expected a JSON object, found a number (record 3) raw=42",
            "#4 5:1 problem=\(path):5:10: error: lone surrogate \\uD800 in a string (record 4) raw={\"id\": \"x\\ud800\"}",
            "#5 6:1 problem=\(path):6:11: error: unexpected '{' after the JSON value (record 5) raw={\"id\": 3} {\"id\": 4}",
            #"#6 7:1 id=number(5)@7:8 raw={"id": 5}"#,
        ]
        for chunkSize in Self.chunkSizes {
            let reader = try NDJSONReader(path: path, chunkSize: chunkSize)
            #expect(snapshot(try readAll(reader), names: reader.fieldNames) == expected, "chunk size \(chunkSize)")
        }
    }

    @Test("values, nested JSON, duplicate keys and changing key order")
    func values() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write(
            "values.ndjson",
            #"""
              {"a": 1.10, "b": "é\u00e9", "c": {"x": [1, 2.50, "y"]}, "a": -0}  
            {"c": null, "b": true, "d": 1e400}
            {"d": 12345678901234567890}

            """#)
        let reader = try NDJSONReader(path: path)
        let b = reader.fieldIndex(of: "b")
        let records = try readAll(reader)
        #expect(reader.fieldNames == ["b", "a", "c", "d"])
        #expect(records.count == 3)
        #expect(
            records[0].column == 3
                && records[0].raw == #"{"a": 1.10, "b": "é\u00e9", "c": {"x": [1, 2.50, "y"]}, "a": -0}"#)
        #expect(records[0][1]?.value == .number("-0"))
        #expect(records[0][b]?.value == .text("éé"))
        #expect(records[0][2]?.value == .json(#"{"x":[1,2.50,"y"]}"#))
        #expect(
            records[1][b]?.value == .bool(true) && records[1][2]?.value == .null
                && records[1][3]?.value == .number("1e400"))
        #expect(records[2][3]?.value == .number("12345678901234567890") && records[2][b] == nil)
    }

    @Test("invalid UTF-8 on a line is a problem, not a replacement")
    func invalidUTF8() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write(
            "bytes.ndjson", bytes: Array(#"{"a": "x"#.utf8) + [0xFF] + Array("\"}\n{\"a\": 1}\n".utf8))
        let records = try readAll(try NDJSONReader(path: path))
        #expect(records.count == 2)
        #expect(records[0].problem?.description == "\(path):1:9: error: invalid UTF-8 byte 0xFF in a string (record 1)")
        #expect(records[1].problem == nil)
    }

    @Test("empty input and only blank lines give no records", arguments: ["", "\n", "\r\n  \n\t\n"])
    func empty(text: String) throws {
        let dir = TemporaryDirectory()
        let reader = try NDJSONReader(path: try dir.write("empty.ndjson", text))
        #expect(try reader.next() == nil)
        #expect(try reader.next() == nil)
    }

    @Test("a missing file is an I/O error")
    func missingFile() {
        #expect(
            thrownText { _ = try NDJSONReader(path: "/nonexistent/x.ndjson") }
                == "/nonexistent/x.ndjson: error: cannot open '/nonexistent/x.ndjson': No such file or directory")
    }

    @Test("many lines read with a small chunk size keep the window small; long lines grow it")
    func boundedWindow() throws {
        let dir = TemporaryDirectory()
        var text = ""
        for i in 0..<20_000 { text += #"{"id": \#(i), "name": "name-\#(i)", "ok": true}"# + "\n" }
        let path = try dir.write("many.ndjson", text)
        let reader = try NDJSONReader(path: path, chunkSize: 64)
        var count = 0
        while let record = try reader.next() {
            #expect(record.problem == nil)
            count += 1
        }
        #expect(count == 20_000)
        #expect(reader.windowHighWater <= 256)

        let long = String(repeating: "x", count: 10_000)
        let longPath = try dir.write("long.ndjson", "{\"s\": \"\(long)\"}\n{\"s\": \"y\"}\n")
        let longReader = try NDJSONReader(path: longPath, chunkSize: 64)
        let records = try readAll(longReader)
        #expect(records.map { $0[0]?.value } == [.text(long), .text("y")])
    }
}
