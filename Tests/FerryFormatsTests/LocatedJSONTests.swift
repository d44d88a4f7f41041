import FerryCore
import FerryFormats
import FerryTestSupport
import Foundation
import Testing

/// ``LocatedJSON`` reads a record's nested value with the line and column of every part, from
/// the record's raw bytes (JSON arrays across lines, NDJSON lines), decoding strings exactly.
@Suite("LocatedJSON: nested values with their positions")
struct LocatedJSONTests {
    func describe(_ value: LocatedJSON) -> String {
        switch value.content {
        case .object(let members):
            return "{"
                + members.map { "\($0.key)@\($0.value.line):\($0.value.column)=\(describe($0.value))" }.joined(
                    separator: ",") + "}"
        case .array(let items):
            return "[" + items.map { "@\($0.line):\($0.column)=\(describe($0))" }.joined(separator: ",") + "]"
        case .scalar(let field): return render(field)
        }
    }

    @Test("a JSON array's record: nested objects and arrays over several lines keep each part's line and column")
    func acrossLines() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write(
            "a.json",
            "[\n  {\"id\": 1,\n   \"pets\": [ {\"name\": \"R\\u00e9x \\\"a\\\"\"},\n     7, null, true, -1.5e3 ] }\n]\n"
        )
        let reader = try JSONArrayReader(path: path)
        let record = try #require(try reader.next())
        let field = try #require(record[reader.fieldIndex(of: "pets")])
        let value = try #require(LocatedJSON.value(of: field, in: record))
        #expect(value.line == 3 && value.column == 12)
        #expect(
            describe(value)
                == "[@3:14={name@3:23=text(Réx \"a\")},@4:6=number(7),@4:9=null,@4:15=bool(true),@4:21=number(-1.5e3)]")
        #expect(value.compactText == "[{\"name\":\"Réx \\\"a\\\"\"},7,null,true,-1.5e3]")
    }

    @Test("an NDJSON line: positions on that line; a scalar field is its own value; compact text of a nested member")
    func ndjsonLine() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write(
            "a.ndjson", "{\"id\": 1}\n{\"id\": 2, \"company\": {\"id\": 10, \"tags\": [\"a\", {\"x\": {}}]}}\n")
        let reader = try NDJSONReader(path: path)
        _ = try reader.next()
        let record = try #require(try reader.next())
        let companyField = try #require(record[reader.fieldIndex(of: "company")])
        let company = try #require(LocatedJSON.value(of: companyField, in: record))
        #expect(company.line == 2 && company.column == 22)
        #expect(company["id"]?.column == 29)
        #expect(company["tags"]?.field.value == .json("[\"a\",{\"x\":{}}]"))
        #expect(company["missing"] == nil)
        let idField = try #require(record[reader.fieldIndex(of: "id")])
        let id = try #require(LocatedJSON.value(of: idField, in: record))
        #expect(describe(id) == "number(2)")
    }

    @Test("a field whose raw bytes are not at hand is read from its compact text, every part located at the field")
    func fromCompactText() throws {
        let record = SourceRecord(number: 1, line: 5, column: 3, fields: [], raw: "")
        let field = Field(value: .json("{\"a\":[1,\"\\n\"]}"), line: 5, column: 9)
        let value = try #require(LocatedJSON.value(of: field, in: record))
        #expect(describe(value) == "{a@5:9=[@5:9=number(1),@5:9=text(\n)]}")
    }
}
