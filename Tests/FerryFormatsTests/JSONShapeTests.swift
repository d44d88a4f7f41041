import FerryCore
@_spi(Testing) import FerryFormats
import FerryTestSupport
import Foundation
import Testing

/// `json: {shape: object | rows}`: records as members of an object (streamed member by
/// member, the member's name in a key field) and as arrays of values (a header row or given
/// columns), in JSON documents and NDJSON lines, at chunk sizes down to 1 byte.
@Suite("JSON readers: shapes")
struct JSONShapeTests {
    static let chunkSizes = [1, 2, 3, 7, 64, 1 << 18]

    func snapshotOf(_ reader: any RecordReader, path: String) throws -> [String] {
        snapshot(try readAll(reader), names: reader.fieldNames).map { $0.replacingOccurrences(of: path, with: "F") }
    }

    @Test(
        "an object of records: the member name goes to the key field; non-objects and a clashing member are located problems"
    )
    func objectShape() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write(
            "byid.json",
            """
            {"data": {"1001": {"name": "Ann", "tags": [1, 2]},
              "1002": {"name": "Bo"}, "1003": 5,
              "1004": {"id": "x"}, "1005": {}}}
            """)
        let expected = [
            #"#1 1:11 id=text(1001)@1:11 name=text(Ann)@1:28 tags=json([1,2])@1:43 raw="1001": {"name": "Ann", "tags": [1, 2]}"#,
            #"#2 2:3 id=text(1002)@2:3 name=text(Bo)@2:20 raw="1002": {"name": "Bo"}"#,
            #"#3 2:27 problem=F:2:27: error: expected a JSON object, found a number (record 3) raw="1003": 5"#,
            #"#4 3:3 problem=F:3:3: error: the record has a member 'id', the key field its name would go to (record 4) raw="1004": {"id": "x"}"#,
            #"#5 3:24 id=text(1005)@3:24 raw="1005": {}"#,
        ]
        for chunkSize in Self.chunkSizes {
            let reader = try JSONArrayReader(
                path: path, pointer: "/data", chunkSize: chunkSize, shape: .object(keyField: "id"))
            let got = try snapshotOf(reader, path: path)
            #expect(got == expected, "chunk size \(chunkSize): \(got)")
        }
        let array = try dir.write("array.json", "[{\"a\": 1}]")
        #expect(
            thrownText { _ = try readAll(JSONArrayReader(path: array, shape: .object(keyField: "id"))) }
                == "\(array):1:1: error: expected a JSON object of records at the top level, found an array")
    }

    @Test("an object of records streams: memory stays bounded by one record on a large file")
    func objectShapeStreams() throws {
        let dir = TemporaryDirectory()
        var text = "{"
        for id in 0..<20_000 { text += "\"\(id)\": {\"name\": \"item \(id)\", \"price\": \(id).5},\n" }
        text += "\"last\": {}}\n"
        let path = try dir.write("large.json", text)
        let reader = try JSONArrayReader(path: path, chunkSize: 64, shape: .object(keyField: "key"))
        var count = 0
        while let record = try reader.next() {
            count += 1
            #expect(record.problem == nil)
        }
        #expect(count == 20_001)
        #expect(reader.windowHighWater <= 256)
    }

    @Test(
        "arrays of values with a header row or given columns; a row of the wrong length and a non-array are located problems"
    )
    func rowsShape() throws {
        let dir = TemporaryDirectory()
        let json = try dir.write(
            "rows.json", "[[\"id\", \"name\"],\n [1, \"Ann\"], [2, \"Bo\", 3],\n {\"id\": 4}, [5, null]]")
        let expected = [
            "#1 2:2 id=number(1)@2:3 name=text(Ann)@2:6 raw=[1, \"Ann\"]",
            "#2 2:14 problem=F:2:14: error: expected 2 values (the header row's columns) but found 3 (record 2) raw=[2, \"Bo\", 3]",
            "#3 3:2 problem=F:3:2: error: expected a JSON array (a row), found an object (record 3) raw={\"id\": 4}",
            "#4 3:13 id=number(5)@3:14 name=null@3:17 raw=[5, null]",
        ]
        for chunkSize in Self.chunkSizes {
            let reader = try JSONArrayReader(path: json, chunkSize: chunkSize, shape: .rows(columns: nil))
            #expect(try snapshotOf(reader, path: json) == expected, "chunk size \(chunkSize)")
        }
        let ndjson = try dir.write(
            "rows.ndjson", "[\"id\", \"name\"]\n\n[1, \"Ann\"]\n[2]\n{\"id\": 3}\n[4, [\"x\"]]\n")
        let expectedLines = [
            "#1 3:1 id=number(1)@3:2 name=text(Ann)@3:5 raw=[1, \"Ann\"]",
            "#2 4:1 problem=F:4:1: error: expected 2 values (the header row's columns) but found 1 (record 2) raw=[2]",
            "#3 5:1 problem=F:5:1: error: expected a JSON array (a row), found an object (record 3) raw={\"id\": 3}",
            "#4 6:1 id=number(4)@6:2 name=json([\"x\"])@6:5 raw=[4, [\"x\"]]",
        ]
        for chunkSize in Self.chunkSizes {
            let reader = try NDJSONReader(path: ndjson, chunkSize: chunkSize, shape: .rows(columns: nil))
            #expect(try snapshotOf(reader, path: ndjson) == expectedLines, "chunk size \(chunkSize)")
        }
        let headerless = try dir.write("data.ndjson", "[1, \"a\"]\n[2, \"b\"]\n")
        let given = try NDJSONReader(path: headerless, chunkSize: 3, shape: .rows(columns: ["id", "name"]))
        #expect(
            try snapshotOf(given, path: headerless) == [
                "#1 1:1 id=number(1)@1:2 name=text(a)@1:5 raw=[1, \"a\"]",
                "#2 2:1 id=number(2)@2:2 name=text(b)@2:5 raw=[2, \"b\"]",
            ])
    }

    @Test("a header row that is not an array of distinct strings is a located error")
    func badHeaders() throws {
        let dir = TemporaryDirectory()
        let numbers = try dir.write("a.json", "[[\"id\", 2], [1, 2]]")
        #expect(
            thrownText { _ = try readAll(JSONArrayReader(path: numbers, shape: .rows(columns: nil))) }
                == "\(numbers):1:9: error: the header row must hold column names (strings), not a number")
        let twice = try dir.write("b.ndjson", "[\"id\", \"id\"]\n[1, 2]\n")
        #expect(
            thrownText { _ = try readAll(NDJSONReader(path: twice, shape: .rows(columns: nil))) }
                == "\(twice):1:8: error: duplicate column name 'id' in the header row")
        let object = try dir.write("c.json", "[{\"id\": 1}]")
        #expect(
            thrownText { _ = try readAll(JSONArrayReader(path: object, shape: .rows(columns: nil))) }
                == "\(object):1:2: error: the first element must be the header row (an array of column names), not an object"
        )
        #expect(
            thrownText { _ = try NDJSONReader(path: twice, shape: .object(keyField: "id")) }
                == "\(twice): error: the object shape applies to a JSON document, not to NDJSON")
    }
}

@Suite("JSON readers: paths into nested objects")
struct JSONPathFieldTests {
    @Test(
        "a registered dotted name reads nested members (strings decoded, numbers, booleans, nested text); an exact key wins; absent otherwise"
    )
    func paths() throws {
        let dir = TemporaryDirectory()
        let text = """
            [{"id": 1, "address": {"city": "Z\\u00fcrich \\"ZH\\"", "geo": {"lat": 47.37, "ok": true, "tags": ["a", {"b": 1}]}}},
             {"id": 2, "address": {"geo": null}},
             {"id": 3, "address": "none", "address.city": "direct"},
             {"id": 4, "address": {"zip": {"city": "inner"}, "city": null}}]
            """
        let json = try dir.write("p.json", text)
        let ndjson = try dir.write(
            "p.ndjson", text.dropFirst().dropLast().replacingOccurrences(of: "},\n {", with: "}\n{") + "\n")
        for chunkSize in [1, 2, 5, 64, 1 << 18] {
            for reader in [
                try JSONArrayReader(path: json, chunkSize: chunkSize) as any RecordReader,
                try NDJSONReader(path: ndjson, chunkSize: chunkSize),
            ] {
                let city = reader.fieldIndex(of: "address.city")
                let lat = reader.fieldIndex(of: "address.geo.lat")
                let ok = reader.fieldIndex(of: "address.geo.ok")
                let tags = reader.fieldIndex(of: "address.geo.tags")
                let missing = reader.fieldIndex(of: "address.geo.nothing")
                let records = try readAll(reader)
                #expect(
                    records.map { $0[city]?.value } == [.text("Zürich \"ZH\""), nil, .text("direct"), .null],
                    "chunk size \(chunkSize)")
                #expect(records.map { $0[lat]?.value } == [.number("47.37"), nil, nil, nil])
                #expect(records.map { $0[ok]?.value } == [.bool(true), nil, nil, nil])
                #expect(records.map { $0[tags]?.value } == [.json(#"["a",{"b":1}]"#), nil, nil, nil])
                #expect(records.allSatisfy { $0[missing] == nil })
                #expect(records.allSatisfy { $0.problem == nil })
            }
        }
    }

    @Test(
        "array elements by index: from the start and the end, through objects and nested arrays; absent beyond the end or on a non-array; an exact key wins"
    )
    func arrayElements() throws {
        let dir = TemporaryDirectory()
        let text = """
            [{"tags": ["red", "blue"], "contacts": [{"phone": "+41 1"}, {"phone": "+41 \\"2\\""}], "m": [[1, [2, 3]], [], {"k": [true]}]},
             {"tags": [], "contacts": {"phone": "x"}, "m": "no"},
             {"tags": ["a,b", {"x": [1, "]"]}, null], "tags[0]": "exact", "contacts": [], "m": [[9]]}]
            """
        let json = try dir.write("a.json", text)
        let ndjson = try dir.write(
            "a.ndjson", text.dropFirst().dropLast().replacingOccurrences(of: "},\n {", with: "}\n{") + "\n")
        for chunkSize in [1, 3, 64, 1 << 18] {
            for reader in [
                try JSONArrayReader(path: json, chunkSize: chunkSize) as any RecordReader,
                try NDJSONReader(path: ndjson, chunkSize: chunkSize),
            ] {
                let first = reader.fieldIndex(of: "tags[0]")
                let last = reader.fieldIndex(of: "tags[-1]")
                let second = reader.fieldIndex(of: "tags[1]")
                let beyond = reader.fieldIndex(of: "tags[3]")
                let beforeStart = reader.fieldIndex(of: "tags[-4]")
                let phone = reader.fieldIndex(of: "contacts[1].phone")
                let deep = reader.fieldIndex(of: "m[0][1][-1]")
                let member = reader.fieldIndex(of: "m[2].k[0]")
                let inner = reader.fieldIndex(of: "tags[1].x[1]")
                let records = try readAll(reader)
                #expect(
                    records.map { $0[first]?.value } == [.text("red"), nil, .text("exact")], "chunk size \(chunkSize)")
                #expect(records.map { $0[last]?.value } == [.text("blue"), nil, .null])
                #expect(records.map { $0[second]?.value } == [.text("blue"), nil, .json(#"{"x":[1,"]"]}"#)])
                #expect(records.allSatisfy { $0[beyond] == nil && $0[beforeStart] == nil })
                #expect(records.map { $0[phone]?.value } == [.text("+41 \"2\""), nil, nil])
                #expect(records.map { $0[deep]?.value } == [.number("3"), nil, nil])
                #expect(records.map { $0[member]?.value } == [.bool(true), nil, nil])
                #expect(records.map { $0[inner]?.value } == [nil, nil, .text("]")])
                #expect(records.allSatisfy { $0.problem == nil })
            }
        }
    }

    @Test("path syntax: members and indexes; plain keys; malformed brackets are errors naming the problem")
    func pathSyntax() {
        #expect(JSONFieldPath.parse("city") == nil)
        #expect(JSONFieldPath.parse("a..b") == nil)
        #expect(
            JSONFieldPath.parse("contacts[0].phone")
                == .success(JSONFieldPath(root: "contacts", rest: [.index(0), .member("phone")])))
        #expect(
            JSONFieldPath.parse("m[1][-1].k")
                == .success(JSONFieldPath(root: "m", rest: [.index(1), .index(-1), .member("k")])))
        #expect(JSONFieldPath.parse("a.b") == .success(JSONFieldPath(root: "a", rest: [.member("b")])))
        let problems: [(String, String)] = [
            ("tags[x]", "'[x]' is not an array index (a whole number, e.g. [0], or [-1] for the last element)"),
            ("tags[+1]", "'[+1]' is not an array index (a whole number, e.g. [0], or [-1] for the last element)"),
            ("tags[0", "'[' without ']'"),
            ("tags[0]x", "text after ']': 'x'"),
            ("a.b]", "']' without '['"),
            ("[0]", "a path starts with a key, e.g. tags[0]"),
            ("a.[0]", "an empty member before '['"),
        ]
        for (name, reason) in problems {
            #expect(
                JSONFieldPath.parse(name) == .failure(JSONFieldPath.PathError(name: name, reason: reason)), "\(name)")
        }
        #expect(
            JSONFieldPath.PathError(name: "t[", reason: "'[' without ']'").description
                == "'t[' is not a well-formed field path: '[' without ']'")
    }
}
