import FerryTestSupport
import Foundation
import Testing

/// Values that once escaped their place in SQL (issue 14): a string default whose quote hid
/// behind a prepending Unicode scalar, and text with a NUL byte that SQL functions cut short.
@Suite("Hostile values in models and data")
struct HostileValueTests {
    @Test("a string default with a quote after U+0600 stays a value: no statement of it runs")
    func defaultWithPrependedQuote() throws {
        let dir = TemporaryDirectory()
        // U+0600 ARABIC NUMBER SIGN is a prepending scalar: with the quote after it, one Character.
        let hostile = "\u{0600}'); CREATE TABLE pwned (x); --"
        let model = try dir.write(
            "model.yml",
            """
            name: Notes
            entities:
              Note:
                attributes:
                  id: {type: int64, optional: false, unique: true}
                  text: {type: string, default: "\\u0600'); CREATE TABLE pwned (x); --"}
                  tag: {type: string, default: "it's \\"quoted\\" \\u0301'"}
            """)
        let data = try dir.write("notes.csv", "id\n1\n2\n")
        let store = dir.file("notes.sqlite")

        let result = try runFerry(["import", data, "--store", store, "--model", model, "--entity", "Note", "--quiet"])

        #expect(result.exitCode == 0, "\(result)")
        #expect(try StoreSnapshot.texts(store, "SELECT name FROM sqlite_schema WHERE name = 'pwned'") == [])
        #expect(
            try StoreSnapshot.texts(store, "SELECT text, tag FROM Note ORDER BY id") == [
                [hostile, "it's \"quoted\" \u{0301}'"], [hostile, "it's \"quoted\" \u{0301}'"],
            ])
        let verified = try runFerry(["verify", store, "--model", model, "--checks", "all", "--quiet"])
        #expect(verified.exitCode == 0, "\(verified)")
    }

    @Test("predicates compare text with a NUL byte whole: 'a\\0b' is not ==[c] 'A'")
    func nulByteInText() throws {
        let dir = TemporaryDirectory()
        let model = try dir.write(
            "model.yml",
            """
            name: People
            entities:
              Person:
                attributes:
                  id: {type: int64, optional: false, unique: true}
                  name: string
            """)
        let data = try dir.write(
            "people.ndjson",
            """
            {"id": 1, "name": "a\\u0000b"}
            {"id": 2, "name": "A"}
            {"id": 3, "name": "a\\u0000"}
            """)
        let store = dir.file("people.sqlite")
        let imported = try runFerry([
            "import", data, "--store", store, "--model", model, "--entity", "Person", "--quiet",
        ])
        #expect(imported.exitCode == 0, "\(imported)")

        let deleted = try runFerry([
            "delete", "--store", store, "--entity", "Person", "--where", #"name ==[c] "A""#, "--quiet",
        ])

        #expect(deleted.exitCode == 0, "\(deleted)")
        #expect(try StoreSnapshot.integers(store, "SELECT id FROM Person ORDER BY id") == [1, 3])
        let exported = try runFerry([
            "export", "--store", store, "--entity", "Person", "--where",
            #"name BEGINSWITH[c] "A" AND name ENDSWITH "b""#, "--format", "ndjson",
        ])
        #expect(exported.exitCode == 0, "\(exported)")
        #expect(exported.stdout == #"{"id":1,"name":"a\u0000b"}"# + "\n", "\(exported)")
    }
}
