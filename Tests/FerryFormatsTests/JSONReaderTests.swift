import FerryCore
@_spi(Testing) import FerryFormats
import FerryTestSupport
import Foundation
import Testing

@Suite("JSON array reader")
struct JSONReaderTests {
    static let chunkSizes = [1, 2, 3, 7, 64, 1 << 18]

    // MARK: - Values and locations

    @Test("values map to text, exact numbers, bools, null and compact JSON")
    func values() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write(
            "values.json",
            #"""
            [
             {"s": "a\"b\\c\/d\n", "n": 1.10, "big": 1e400, "neg": -0, "int": 12345678901234567890,
              "t": true, "f": false, "z": null, "o": {"k" : [1, {"x": "é\t"}], "e": {}, "a": []},
              "u": "\u00e9\ud83d\ude00\u0000", "dup": 1, "dup": "last", "exp": -1.5E-7}
            ]
            """#)
        let reader = try JSONArrayReader(path: path)
        let records = try readAll(reader)
        try #require(records.count == 1)
        let record = records[0]
        #expect(record.problem == nil)
        #expect(value(record, "s", in: reader) == .text("a\"b\\c/d\n"))
        #expect(value(record, "n", in: reader) == .number("1.10"))
        #expect(value(record, "big", in: reader) == .number("1e400"))
        #expect(value(record, "neg", in: reader) == .number("-0"))
        #expect(value(record, "int", in: reader) == .number("12345678901234567890"))
        #expect(value(record, "exp", in: reader) == .number("-1.5E-7"))
        #expect(value(record, "t", in: reader) == .bool(true))
        #expect(value(record, "f", in: reader) == .bool(false))
        #expect(value(record, "z", in: reader) == .null)
        #expect(value(record, "o", in: reader) == .json(#"{"k":[1,{"x":"é\t"}],"e":{},"a":[]}"#))
        #expect(value(record, "u", in: reader) == .text("é😀\u{0}"))
        #expect(value(record, "dup", in: reader) == .text("last"))
        #expect(reader.fieldNames == ["s", "n", "big", "neg", "int", "t", "f", "z", "o", "u", "dup", "exp"])
        #expect(record.line == 2 && record.column == 2)
        let n = try #require(record[1])
        #expect(n.line == 2 && n.column == 29)
        let o = try #require(record[8])
        #expect(o.line == 3 && o.column == 42)
        #expect(record.raw.hasPrefix(#"{"s": "a\"b\\c\/d\n", "n": 1.10,"#))
        #expect(record.raw.hasSuffix(#""exp": -1.5E-7}"#))
    }

    @Test("a top-level array: records, field locations and raw text")
    func topLevel() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write(
            "top.json", "[\n  {\"id\": 1, \"name\": \"Ada\"},\n  {\"name\": \"Bo\", \"id\": 2, \"x\": [1]}\n]\n")
        let reader = try JSONArrayReader(path: path)
        let records = try readAll(reader)
        #expect(
            snapshot(records, names: reader.fieldNames) == [
                #"#1 2:3 id=number(1)@2:10 name=text(Ada)@2:21 raw={"id": 1, "name": "Ada"}"#,
                #"#2 3:3 id=number(2)@3:24 name=text(Bo)@3:12 x=json([1])@3:32 raw={"name": "Bo", "id": 2, "x": [1]}"#,
            ])
        #expect(try reader.next() == nil)
    }

    @Test("an empty array has no records", arguments: ["[]", "  [ \n ]  \n", "\u{FEFF}[]"])
    func emptyArray(text: String) throws {
        let dir = TemporaryDirectory()
        let reader = try JSONArrayReader(path: try dir.write("empty.json", text))
        #expect(try reader.next() == nil)
        #expect(reader.fieldNames.isEmpty)
    }

    @Test("field indexes registered before reading are filled; new keys get new indexes")
    func fieldIndexes() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write(
            "fields.json", #"[{"id": 1, "extra": true, "n\u0061me": "x"}, {"b": 1, "id": 2}, {"c": 3}]"#)
        let reader = try JSONArrayReader(path: path)
        #expect(reader.fieldIndex(of: "name") == 0)
        #expect(reader.fieldIndex(of: "id") == 1)
        #expect(reader.fieldIndex(of: "missing") == 2)
        #expect(reader.fieldIndex(of: "id") == 1)
        #expect(!reader.hasField("id"))
        let records = try readAll(reader)
        #expect(reader.fieldNames == ["name", "id", "missing", "extra", "b", "c"])
        #expect(reader.hasField("id") && reader.hasField("extra") && reader.hasField("name"))
        #expect(!reader.hasField("missing"))
        #expect(records[0][0]?.value == .text("x"))
        #expect(records[0][1]?.value == .number("1"))
        #expect(records[0][2] == nil)
        #expect(records[1][1]?.value == .number("2"))
        #expect(records[1][4]?.value == .number("1"))
        #expect(records[2][1] == nil && records[2][5]?.value == .number("3"))
    }

    // MARK: - Problems and errors

    @Test("elements that are not objects are problem records; reading continues")
    func nonObjectElements() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("mixed.json", #"[{"a": 1}, 42, "x", [1, [2]], null, {"a": 2}]"#)
        let reader = try JSONArrayReader(path: path)
        #expect(
            snapshot(try readAll(reader), names: reader.fieldNames) == [
                #"#1 1:2 a=number(1)@1:8 raw={"a": 1}"#,
                "#2 1:12 problem=\(path):1:12: error: expected a JSON object, found a number (record 2) raw=42",
                "#3 1:16 problem=\(path):1:16: error: expected a JSON object, found a string (record 3) raw=\"x\"",
                "#4 1:21 problem=\(path):1:21: error: expected a JSON object, found an array (record 4) raw=[1, [2]]",
                "#5 1:31 problem=\(path):1:31: error: expected a JSON object, found null (record 5) raw=null",
                #"#6 1:37 a=number(2)@1:43 raw={"a": 2}"#,
            ])
    }

    @Test("a malformed document is a thrown error with location and record number")
    func malformed() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("bad.json", "[\n  {\"a\": 1},\n  {\"a\": 2,, \"b\": 3}\n]\n")
        let reader = try JSONArrayReader(path: path)
        #expect(try reader.next()?.number == 1)
        #expect(
            thrownText { _ = try reader.next() } == "\(path):3:11: error: expected a string key, found ',' (record 2)")
    }

    @Test(
        "exact error texts for broken documents",
        arguments: [
            ("[{\"a\":1}] x", "1:11: error: unexpected 'x' after the JSON value"),
            ("[{\"a\":1},", "1:10: error: expected a value, found end of input (record 2)"),
            ("", "1:1: error: expected a value, found end of input"),
            ("[{\"a\": \"\\ud800\"}]", "1:9: error: lone surrogate \\uD800 in a string (record 1)"),
            ("[{\"a\": \"\\udc00\\ud800\"}]", "1:9: error: lone surrogate \\uDC00 in a string (record 1)"),
            ("[{\"a\": \"x\\q\"}]", "1:10: error: invalid escape '\\q' in a string (record 1)"),
            ("[{\"a\": 01}]", "1:8: error: invalid number: leading zeros are not allowed (record 1)"),
            ("[{\"a\": 1.}]", "1:10: error: invalid number: expected a digit after '.' (record 1)"),
            ("[{\"a\": tru}]", "1:8: error: invalid literal (expected 'true') (record 1)"),
            (
                "[{\"a\": \"tab\there\"}]",
                "1:12: error: control character U+0009 in a string must be escaped (record 1)"
            ),
            (
                "[\n{\"a\": 1}\n{\"a\": 2}]",
                "3:1: error: expected ',' or ']' after an array element, found '{' (record 2)"
            ),
            ("[{\"a\" 1}]", "1:7: error: expected ':' after an object key, found '1' (record 1)"),
            ("[{'a': 1}]", "1:3: error: expected a string key, found \"'\" (record 1)"),
        ])
    func errorTexts(text: String, expected: String) throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("broken.json", text)
        for chunkSize in [1, 3, 1 << 18] {
            let reader = try JSONArrayReader(path: path, chunkSize: chunkSize)
            #expect(thrownText { _ = try readAll(reader) } == "\(path):\(expected)")
        }
    }

    @Test("invalid UTF-8 in a string is a located error, never replaced")
    func invalidUTF8() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("utf8.json", bytes: Array(#"[{"a": "x"#.utf8) + [0xC3, 0x28] + Array(#""}]"#.utf8))
        let reader = try JSONArrayReader(path: path)
        #expect(
            thrownText { _ = try readAll(reader) }
                == "\(path):1:10: error: invalid UTF-8 sequence in a string (record 1)")
    }

    @Test("nesting deeper than the limit is a located error, not a crash")
    func depthLimit() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("deep.json", "[{\"a\":" + String(repeating: "[", count: 100_000))
        let reader = try JSONArrayReader(path: path)
        #expect(
            thrownText { _ = try readAll(reader) }
                == "\(path):1:517: error: JSON nesting is deeper than 512 levels (record 1)")
        let shallow = try dir.write(
            "shallow.json", "[{\"a\":" + String(repeating: "[", count: 500) + String(repeating: "]", count: 500) + "}]")
        #expect(try readAll(JSONArrayReader(path: shallow)).count == 1)
    }

    @Test("a missing file is an I/O error")
    func missingFile() {
        #expect(
            thrownText { _ = try JSONArrayReader(path: "/nonexistent/x.json") }
                == "/nonexistent/x.json: error: cannot open '/nonexistent/x.json': No such file or directory")
    }

    // MARK: - JSON pointer

    @Test(
        "a JSON pointer selects the record array",
        arguments: [
            (
                "/data/items",
                [
                    #"#1 10:7 id=number(1)@10:14 name=text(Ada)@10:25 tags=json(["x","y"])@10:40 raw={"id": 1, "name": "Ada", "tags": ["x", "y"]}"#,
                    #"#2 11:7 id=number(2)@11:14 name=text(Graceé)@11:25 tags=json([])@11:48 raw={"id": 2, "name": "Grace\u00e9", "tags": []}"#,
                ]
            ),
            ("/a~1b/c~0d", [#"#1 3:19 id=number(9)@3:26 raw={"id": 9}"#]),
            (
                "/pages/1/rows",
                [#"#1 6:15 id=number(1)@6:22 raw={"id": 1}"#, #"#2 6:26 id=number(2)@6:33 raw={"id": 2}"#]
            ),
        ])
    func pointer(pointer: String, expected: [String]) throws {
        for chunkSize in Self.chunkSizes {
            let reader = try JSONArrayReader(path: jsonFixture("nested.json"), pointer: pointer, chunkSize: chunkSize)
            #expect(snapshot(try readAll(reader), names: reader.fieldNames) == expected, "chunk size \(chunkSize)")
        }
    }

    @Test(
        "a JSON pointer that does not lead to an array is a located error",
        arguments: [
            ("/data/nope", "8:11: error: JSON pointer '/data/nope' not found: the object at '/data' has no key 'nope'"),
            ("/nope", "1:1: error: JSON pointer '/nope' not found: the object at the document has no key 'nope'"),
            ("/data/total", "13:14: error: JSON pointer '/data/total' is a string, not an array"),
            ("/data", "8:11: error: JSON pointer '/data' is an object, not an array"),
            (
                "/pages/5/rows",
                "4:12: error: JSON pointer '/pages/5/rows' not found: the array at '/pages' has 2 elements"
            ),
            (
                "/pages/01",
                "4:12: error: JSON pointer '/pages/01' not found: '01' is not an array index ('/pages' is an array)"
            ),
            (
                "/data/total/x",
                "13:14: error: JSON pointer '/data/total/x' not found: '/data/total' is a string, not an object or array"
            ),
            ("", "1:1: error: expected a JSON array of records at the top level, found an object"),
        ])
    func pointerErrors(pointer: String, expected: String) throws {
        let path = jsonFixture("nested.json")
        let reader = try JSONArrayReader(path: path, pointer: pointer, chunkSize: 5)
        #expect(thrownText { _ = try reader.next() } == "\(path):\(expected)")
    }

    @Test("a malformed JSON pointer is rejected when the reader is made")
    func pointerSyntax() {
        let path = jsonFixture("nested.json")
        #expect(
            thrownText { _ = try JSONArrayReader(path: path, pointer: "data/items") }
                == "\(path): error: invalid JSON pointer 'data/items': it must be empty or start with '/'")
        #expect(
            thrownText { _ = try JSONArrayReader(path: path, pointer: "/a~2") }
                == "\(path): error: invalid JSON pointer '/a~2': '~' must be followed by 0 or 1")
    }

    @Test("the rest of the document after the record array is still checked")
    func trailingDocument() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("tail.json", #"{"items": [{"a": 1}], "more": [1, 2,]}"#)
        let reader = try JSONArrayReader(path: path, pointer: "/items")
        #expect(try reader.next()?.number == 1)
        #expect(thrownText { _ = try reader.next() } == "\(path):1:37: error: expected a value, found ']'")
    }

    // MARK: - Chunk boundaries and streaming

    static let boundaryDocument = #"""
        {"skip": {"s": "\u00e9\"]", "n": [1, -2.5e+10, {"}": "{"}]},
         "rows": [
          {"id": 12345678901234567890, "name": "Zoë 😀 日本語", "esc": "a\nb\u0041\ud83d\ude00\\", "n": -0.000e-0},
          {"name": "", "id": 2, "nested": {"a": [true, false, null, "x\"y"], "b": {}}, "t": true},
          7,
          {"long": "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz", "z": null}
         ]
        }
        """#

    @Test("the same records and locations whatever the chunk size")
    func chunkBoundaries() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("boundary.json", Self.boundaryDocument)
        let expected = try {
            let reader = try JSONArrayReader(path: path, pointer: "/rows")
            return snapshot(try readAll(reader), names: reader.fieldNames)
        }()
        #expect(expected.count == 4)
        #expect(expected[0].contains("name=text(Zoë 😀 日本語)@3:40"))
        #expect(expected[0].contains("esc=text(a\nbA😀\\)"))
        #expect(expected[1].contains(#"nested=json({"a":[true,false,null,"x\"y"],"b":{}})"#))
        for chunkSize in Self.chunkSizes {
            let reader = try JSONArrayReader(path: path, pointer: "/rows", chunkSize: chunkSize)
            #expect(snapshot(try readAll(reader), names: reader.fieldNames) == expected, "chunk size \(chunkSize)")
        }
    }

    @Test("a large array read with a small chunk size keeps the window small")
    func boundedWindow() throws {
        let dir = TemporaryDirectory()
        var text = "[\n"
        for i in 0..<20_000 {
            text += #"{"id": \#(i), "name": "name-\#(i)", "tags": [1, 2, 3]},"# + "\n"
        }
        text += "{}]\n"
        let path = try dir.write("large.json", text)
        let reader = try JSONArrayReader(path: path, chunkSize: 64)
        var count = 0
        while let record = try reader.next() {
            count += 1
            #expect(record.problem == nil)
        }
        #expect(count == 20_001)
        #expect(text.utf8.count > 1_000_000)
        #expect(reader.windowHighWater <= 256)
    }
}
