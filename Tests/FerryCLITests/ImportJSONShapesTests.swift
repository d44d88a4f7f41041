import FerryTestSupport
import Foundation
import Testing

/// JSON shapes through the real binary: `--json-shape object|rows`, `--key-field`, `--columns`
/// and a job's `json: {shape, key_field, columns}`; inference sees the same shapes.
@Suite("ferry import: JSON shapes")
struct ImportJSONShapesTests {
    @Test("--json-shape object --key-field id: each member is a record, its name the id; inference includes the key")
    func objectShape() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let file = try dir.write(
            "customers.json", #"{"1001": {"name": "Ann", "age": 30}, "1002": {"name": "Bo", "age": 41}, "1003": [1]}"#)
        let rejects = dir.file("r.ndjson")
        let result = try runFerry([
            "import", file, "--json-shape", "object", "--key-field", "id", "--store", store, "--rejects", rejects,
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.hasPrefix("inferred customers: id string, name string, age int64\n"), "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, name, age FROM customers ORDER BY ferry_pk") == [
                ["1001", "Ann", "30"], ["1002", "Bo", "41"],
            ])
        let rejected = try lines(ofFile: rejects).map { try jsonObject(text: $0) }
        #expect(rejected.map { $0["reason"] as? String } == ["expected a JSON object, found an array"])
        #expect(rejected.map { $0["column"] as? Int } == [73])
    }

    @Test("--json-shape rows: a header row (JSON) or --columns (NDJSON); a short row is a located reject")
    func rowsShape() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let json = try dir.write("grid.json", #"[["id", "when"], [1, "2024-05-01"], [2, "2024-05-02"], [3]]"#)
        let rejects = dir.file("r.ndjson")
        let result = try runFerry(["import", json, "--json-shape", "rows", "--store", store, "--rejects", rejects])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.hasPrefix("inferred grid: id int64, when date\n"), "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, \"when\" FROM grid ORDER BY ferry_pk") == [
                ["1", "2024-05-01T00:00:00.000Z"], ["2", "2024-05-02T00:00:00.000Z"],
            ])
        #expect(
            try lines(ofFile: rejects).map { try jsonObject(text: $0)["reason"] as? String } == [
                "expected 2 values (the header row's columns) but found 1"
            ])

        let ndjson = try dir.write("lines.ndjson", "[1, \"a\"]\n[2, \"b\"]\n")
        let lines = try runFerry([
            "import", ndjson, "--json-shape", "rows", "--columns", "id,name", "--store", store, "--quiet",
        ])
        #expect(lines.exitCode == 0, "\(lines)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, name FROM lines ORDER BY ferry_pk") == [
                ["1", "a"], ["2", "b"],
            ])
    }

    @Test("a job's json: {shape, key_field, columns}; misplaced keys are located definition errors")
    func jobKeys() throws {
        let dir = TemporaryDirectory()
        _ = try dir.write("rates.json", #"{"rates": {"EUR": {"rate": 1.08}, "GBP": {"rate": 1.27}}}"#)
        _ = try dir.write(
            "model.yml",
            "entities:\n  Rate:\n    attributes:\n      code: {type: string, unique: true}\n      rate: decimal\n")
        let job = try dir.write(
            "job.yml",
            """
            store: out.sqlite
            model: model.yml
            steps:
              - import:
                  source: rates.json
                  entity: Rate
                  json: {pointer: /rates, shape: object, key_field: code}
            """)
        let result = try runFerry(["run", job, "--quiet"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(dir.file("out.sqlite"), "SELECT code, rate FROM Rate ORDER BY code") == [
                ["EUR", "1.08"], ["GBP", "1.27"],
            ])

        let bad = try dir.write(
            "bad.yml",
            """
            store: out2.sqlite
            model: model.yml
            steps:
              - import: {source: rates.json, entity: Rate, json: {shape: table}}
              - import: {source: rates.json, entity: Rate, json: {key_field: code}}
              - import: {source: a.ndjson, entity: Rate, json: {shape: object}}
              - import: {source: rates.json, entity: Rate, json: {shape: rows, columns: [a, a]}}
            """)
        _ = try dir.write("a.ndjson", "{}\n")
        let validate = try runFerry(["validate", bad])
        #expect(validate.exitCode == 64, "\(validate)")
        #expect(
            validate.errorLines == [
                "\(bad):4:62: error: unknown JSON shape 'table' (records, object, rows)",
                "\(bad):5:55: error: 'key_field' applies to 'shape: object' (an object whose members are the records)",
                "\(bad):6:60: error: 'shape: object' applies to a JSON document, not to NDJSON (whose lines are the records)",
                "\(bad):7:77: error: the columns of 'shape: rows' must be distinct, non-empty names",
            ], "\(validate)")
    }

    @Test("bad flags: an unknown shape, object for NDJSON, --key-field without object, shapes for CSV (64)")
    func badFlags() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let json = try dir.write("a.json", "[]")
        let ndjson = try dir.write("a.ndjson", "{}\n")
        let csv = try dir.write("a.csv", "a\n1\n")
        for (arguments, message) in [
            ([json, "--json-shape", "table"], "error: --json-shape must be records, object or rows, not 'table'"),
            (
                [ndjson, "--json-shape", "object"],
                "error: --json-shape object applies to a JSON document, not to NDJSON (whose lines are the records)"
            ),
            ([json, "--key-field", "id"], "error: --key-field applies to --json-shape object"),
            ([csv, "--json-shape", "rows"], "error: --json-shape and --key-field apply to JSON and NDJSON, not csv"),
        ] {
            let result = try runFerry(["import"] + arguments + ["--store", store])
            #expect(result.exitCode == 64, "\(arguments): \(result)")
            #expect(result.errorLines == [message], "\(arguments): \(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: store))
    }
}

@Suite("ferry import: nested JSON fields")
struct ImportNestedFieldsTests {
    @Test("--field city=address.city: inferred, named and imported; a job's fields: {city: address.city} with a model")
    func paths() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let file = try dir.write(
            "people.ndjson",
            """
            {"id": 1, "address": {"city": "Zürich", "geo": {"lat": 47.37}}}
            {"id": 2, "address": {"city": "Bern"}}
            {"id": 3}

            """)
        let result = try runFerry([
            "import", file, "--field", "city=address.city", "--field", "lat=address.geo.lat", "--store", store,
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.hasPrefix(
                #"inferred people: city string (from "address.city"), lat double (from "address.geo.lat"), id int64, address json"#
                    + "\n"), "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, quote(city), quote(lat) FROM people ORDER BY id") == [
                ["1", "'Zürich'", "47.37"], ["2", "'Bern'", "NULL"], ["3", "NULL", "NULL"],
            ])

        _ = try dir.write(
            "model.yml",
            "entities:\n  Person:\n    attributes:\n      id: int64\n      town: {type: string, optional: false}\n")
        let job = try dir.write(
            "job.yml",
            """
            store: out.sqlite
            model: model.yml
            steps:
              - import:
                  source: people.ndjson
                  entity: Person
                  fields: {town: address.city}
                  rejects: rejects.ndjson
                  max_rejects: 1
            """)
        let run = try runFerry(["run", job, "--quiet"])
        #expect(run.exitCode == 0, "\(run)")
        #expect(
            try StoreSnapshot.texts(dir.file("out.sqlite"), "SELECT id, town FROM Person ORDER BY id") == [
                ["1", "Zürich"], ["2", "Bern"],
            ])
        // The third record lacks the path: a required attribute, so it is a located reject.
        let reject = try jsonObject(text: try #require(try lines(ofFile: dir.file("rejects.ndjson")).first))
        #expect(reject["line"] as? Int == 3)

        let bad = try runFerry(["import", file, "--field", "city", "--store", dir.file("t.sqlite")])
        #expect(bad.exitCode == 64, "\(bad)")
        #expect(bad.errorLines == ["error: --field needs attribute=field, e.g. --field city=address.city; got 'city'"])
    }

    @Test(
        "array elements: --field first_tag=tags[0], fields: {phone: contacts[0].phone}; out of range is absent (a located reject when required); malformed paths exit 64"
    )
    func arrayElements() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s.sqlite")
        let file = try dir.write(
            "people.ndjson",
            """
            {"id": 1, "tags": ["vip", "new"], "contacts": [{"phone": "+41 44 000"}]}
            {"id": 2, "tags": [], "contacts": []}
            {"id": 3, "tags": ["solo"], "contacts": {"phone": "not an array"}}

            """)
        let result = try runFerry([
            "import", file, "--field", "first_tag=tags[0]", "--field", "last_tag=tags[-1]", "--field",
            "phone=contacts[0].phone", "--store", store,
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.hasPrefix(
                #"inferred people: first_tag string (from "tags[0]"), last_tag string (from "tags[-1]"), phone string (from "contacts[0].phone")"#
            ), "\(result)")
        #expect(
            try StoreSnapshot.texts(
                store, "SELECT id, quote(first_tag), quote(last_tag), quote(phone) FROM people ORDER BY id")
                == [
                    ["1", "'vip'", "'new'", "'+41 44 000'"], ["2", "NULL", "NULL", "NULL"],
                    ["3", "'solo'", "'solo'", "NULL"],
                ])

        _ = try dir.write(
            "model.yml",
            "entities:\n  Person:\n    attributes:\n      id: int64\n      phone: {type: string, optional: false}\n")
        let job = try dir.write(
            "job.yml",
            """
            store: out.sqlite
            model: model.yml
            steps:
              - import:
                  source: people.ndjson
                  entity: Person
                  fields: {phone: "contacts[0].phone"}
                  rejects: rejects.ndjson
                  max_rejects: 2
                  on_new_field: ignore   # the records' tags are not read
            """)
        let run = try runFerry(["run", job, "--quiet"])
        #expect(run.exitCode == 0, "\(run)")
        #expect(
            try StoreSnapshot.texts(dir.file("out.sqlite"), "SELECT id, phone FROM Person ORDER BY id") == [
                ["1", "+41 44 000"]
            ])
        let rejects = try lines(ofFile: dir.file("rejects.ndjson")).map { try jsonObject(text: $0) }
        #expect(rejects.map { $0["line"] as? Int } == [2, 3])
        #expect(rejects.allSatisfy { ($0["reason"] as? String)?.contains("phone is required") == true }, "\(rejects)")

        let badJob = try dir.write(
            "bad.yml",
            """
            store: out.sqlite
            model: model.yml
            steps:
              - import:
                  source: people.ndjson
                  entity: Person
                  fields: {phone: "contacts[first].phone"}
            """)
        let validate = try runFerry(["validate", badJob])
        #expect(validate.exitCode == 64, "\(validate)")
        #expect(
            validate.errorLines == [
                "\(badJob):7:16: error: 'contacts[first].phone' is not a well-formed field path: '[first]' is not an array index (a whole number, e.g. [0], or [-1] for the last element)"
            ],
            "\(validate)")
        let bad = try runFerry(["import", file, "--field", "x=tags[0", "--store", dir.file("t.sqlite")])
        #expect(bad.exitCode == 64, "\(bad)")
        #expect(
            bad.errorLines == ["error: --field x=tags[0: 'tags[0' is not a well-formed field path: '[' without ']'"])
        #expect(!FileManager.default.fileExists(atPath: dir.file("t.sqlite")))
    }
}
