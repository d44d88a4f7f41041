import FerryCore
import FerryFormats
@_spi(Testing) import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@Suite("Import runner")
struct ImportRunnerTests {
    static let fixtures = TestPaths.packageRoot.appendingPathComponent("Tests/FerryPipelineTests/Fixtures/import")

    func typesModel() throws -> ObjectModel {
        try ModelLoader().load(path: Self.fixtures.appendingPathComponent("types.yml").path).current
    }

    func dump(_ store: Store, _ entity: String) throws -> [[DatabaseValue]] {
        try store.withConnection { try $0.rows("SELECT * FROM \(SQL.quote(entity)) ORDER BY ferry_pk") }
    }

    func importTypes(fastPath: Bool, dir: TemporaryDirectory) throws -> (StepReport, [[DatabaseValue]], String) {
        let store = try Store.open(at: dir.file(fastPath ? "fast.sqlite" : "general.sqlite"), model: try typesModel())
        var step = ImportStep(
            source: Self.fixtures.appendingPathComponent("types.csv").path, format: .csv, entity: "Thing")
        step.rejectsPath = dir.file(fastPath ? "fast.rejects" : "general.rejects")
        step.maxRejects = .unlimited
        let runner = ImportStepRunner(step: step, store: store)
        runner.allowsFastPath = fastPath
        let report = try runner.run()
        return (report, try dump(store, "Thing"), try String(contentsOfFile: step.rejectsPath!, encoding: .utf8))
    }

    @Test("the CSV fast path and the general path give the same rows, counts and rejects")
    func fastPathMatchesGeneralPath() throws {
        let dir = TemporaryDirectory()
        let fast = try importTypes(fastPath: true, dir: dir)
        let general = try importTypes(fastPath: false, dir: dir)
        #expect(fast.0.read == general.0.read)
        #expect(fast.0.inserted == general.0.inserted)
        #expect(fast.0.rejected == general.0.rejected)
        #expect(fast.1 == general.1)
        #expect(fast.2 == general.2)
        #expect(fast.0.read == 20)
        #expect(fast.0.isBalanced)
    }

    func importJSONTypes(
        _ format: DataFormat, fastPath: Bool, dir: TemporaryDirectory
    ) throws -> (report: StepReport, rows: [[DatabaseValue]], rejects: String, fast: Int) {
        let name = "\(format.rawValue)-\(fastPath ? "fast" : "general")"
        let store = try Store.open(at: dir.file(name + ".sqlite"), model: try typesModel())
        var step = ImportStep(
            source: Self.fixtures.appendingPathComponent("types.\(format.rawValue)").path, format: format,
            entity: "Thing")
        if format == .json { step.jsonPointer = "/rows" }
        // The fixture's records carry a key no attribute reads (zzz).
        step.drift.newField = .ignore
        step.rejectsPath = dir.file(name + ".rejects")
        step.maxRejects = .unlimited
        let runner = ImportStepRunner(step: step, store: store)
        runner.allowsFastPath = fastPath
        let report = try runner.run()
        return (
            report, try dump(store, "Thing"), try String(contentsOfFile: step.rejectsPath!, encoding: .utf8),
            runner.fastPathRecords
        )
    }

    /// `record line:column field: reason` for each line of a rejects file.
    static func reasons(_ rejects: String) -> [String] {
        rejects.split(separator: "\n").compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                return nil
            }
            return
                "\(object["record"] ?? "?") \(object["line"] ?? "?"):\(object["column"] ?? "?") \(object["field"] ?? "-"): \(object["reason"] ?? "")"
        }
    }

    @Test(
        "the JSON fast path and the general path give the same rows, counts and rejects",
        arguments: [DataFormat.ndjson, .json])
    func jsonFastPathMatchesGeneralPath(format: DataFormat) throws {
        let dir = TemporaryDirectory()
        let fast = try importJSONTypes(format, fastPath: true, dir: dir)
        let general = try importJSONTypes(format, fastPath: false, dir: dir)
        #expect(fast.report.read == general.report.read)
        #expect(fast.report.inserted == general.report.inserted)
        #expect(fast.report.rejected == general.report.rejected)
        #expect(fast.rows == general.rows)
        #expect(fast.rejects == general.rejects)
        #expect(fast.report.isBalanced)
        // Inserted records go through the fast path, except the one with `"id":31, "small":12.0` (an
        // integral number with a fraction is left to the general path, as in CSV); with it off, none.
        #expect(fast.fast == 9)
        #expect(general.fast == 0)
        #expect(
            (fast.report.read, fast.report.inserted, fast.report.rejected)
                == (format == .ndjson ? (39, 10, 29) : (38, 10, 28)))
    }

    @Test("JSON values of every kind are coerced like CSV text; bad ones are rejected with located reasons")
    func jsonCoercionAndReasons() throws {
        let dir = TemporaryDirectory()
        let (_, rows, rejects, _) = try importJSONTypes(.ndjson, fastPath: true, dir: dir)
        // Record 1: numbers, strings, true, a nested object.
        #expect(
            rows[0][1...] == [
                .integer(1), .integer(12), .real(1.5), .real(2.25), .text("10.5"), .text("Ana"), .text("AB-1"),
                .integer(1),
                .text("2024-01-31T10:00:00.000Z"), .text("7c9e6679-7425-40de-944b-e07fc1f90ae7"),
                .text("https://x.io/a"),
                .text(#"{"a":[1,2]}"#), .blob(Array("hello".utf8)), .text("first"),
            ])
        // Record 2: numbers as strings, an escaped string, nulls (defaults apply).
        #expect(
            rows[1][1...] == [
                .integer(2), .integer(-5), .real(0), .real(1000), .text("0"), .text("Zoë, B"), .null, .integer(1),
                .text("2024-01-31T00:00:00.000Z"), .text("7c9e6679-7425-40de-944b-e07fc1f90ae7"), .null, .text("[]"),
                .null, .text("none"),
            ])
        // Record 4 has only an id: absent keys get their defaults.
        #expect(
            rows[3][1...] == [.integer(4)] + Array(repeating: .null, count: 6) + [.integer(0)]
                + Array(repeating: .null, count: 5) + [.text("none")])
        // true into a string and false into json; a nested array into a string; a nested object into json.
        #expect(rows[4][6] == .text("true") && rows[4][12] == .text("false"))
        #expect(rows[5][6] == .text(#"[1,"\""]"#))
        #expect(rows[5][12] == .text(#"{"n":null,"s":"t\u0001","d":-1.5e-3,"b":[true,false]}"#))
        // An empty string stays empty; escapes are decoded.
        #expect(rows[6][14] == .text("") && rows[6][11] == .text("https://x.io/é"))
        #expect(rows[8][10] == .text("7c9e6679-7425-40de-944b-e07fc1f90af7") && rows[8][14] == .text("tab\there"))
        #expect(
            Self.reasons(rejects) == [
                "5 5:17 small: small 501 is greater than the maximum 500",
                "6 6:17 ratio: ratio: 'abc' is not a number",
                "7 7:18 single: single: 1e39 is out of range for float",
                "8 8:17 price: price -1 is less than the minimum 0",
                "9 9:16 name: name is longer than 8 (11)",
                "10 11:19 name: name is longer than 8 (9)",
                "11 12:17 code: code does not match the pattern [A-Z]{2}-[0-9]+",
                "12 13:17 flag: flag: 'maybe' is not a boolean (expected one of 0, 1, f, false, n, no, off, on, t, true, y, yes)",
                "13 14:17 flag: flag: '2' is not a boolean (expected one of 0, 1, f, false, n, no, off, on, t, true, y, yes)",
                "14 15:17 seen: seen: '2024-02-30' is not a date in format iso8601",
                "15 16:18 token: token: 'not-a-uuid' is not a UUID",
                "16 17:17 site: site: 'no scheme' is not an absolute URI",
                "17 18:18 extra: extra: '{bad json' is not valid JSON",
                "18 19:17 blob: blob: 'not base64!' is not base64 binary data",
                "19 20:7 id: another Thing already has the same id (uniqueness constraint)",
                "20 21:7 id: id is required",
                "21 22:1 id: id is required",
                "22 23:18 small: small: expected int16 but found a boolean",
                "23 24:18 small: small: expected int16 but found a JSON object",
                "26 27:17 name: name is longer than 8 (14)",
                "28 29:1 -: expected a JSON object, found an array",
                "29 30:1 -: expected a JSON object, found a number",
                "30 31:20 -: expected a value, found '}'",
                "31 32:33 -: unexpected 'x' after the JSON value",
                "32 33:39 seen: seen: '1700000000' is not a date in format iso8601",
                "35 36:7 id: id: '3.5' is not an integer",
                "36 37:18 small: small: '99999999999999999999' is not an integer",
                "37 38:19 single: single: 'NaN' is not a number",
                "39 40:29 site: site: expected uri but found a boolean",
            ])
    }

    @Test("values are coerced to their canonical stored forms, bad ones rejected with reasons")
    func coercionAndReasons() throws {
        let dir = TemporaryDirectory()
        let (report, rows, rejects) = try importTypes(fastPath: true, dir: dir)
        #expect(report.inserted == 5)
        #expect(report.rejected == 15)
        // Row 1: every type in its canonical form.
        #expect(
            rows[0][1...] == [
                .integer(1), .integer(12), .real(1.5), .real(2.25), .text("10.5"), .text("Ana"), .text("AB-1"),
                .integer(1),
                .text("2024-01-31T10:00:00.000Z"), .text("7c9e6679-7425-40de-944b-e07fc1f90ae7"),
                .text("https://x.io/a"),
                .text("{\"a\": [1, 2]}"), .blob(Array("hello".utf8)), .text("first"),
            ])
        // Row 2: unquoted empty fields are null (defaults apply); a quoted empty string stays "".
        #expect(rows[1][8] == .integer(1))  // flag: yes
        #expect(rows[1][14] == .text("none"))  // label default
        #expect(rows[1][7] == .null)  // code empty → null
        // Row 3: quoted "" is an empty string, 007.100 is canonical 7.1, dates before 1970.
        #expect(rows[2][6] == .text(""))
        #expect(rows[2][5] == .text("7.1"))
        #expect(rows[2][9] == .text("1969-12-31T23:59:59.999Z"))
        // Row 17: integral 12.0, 1e2 decimals, Y, offsets and undashed UUIDs.
        let last = rows[rows.count - 2]
        #expect(last[2] == .integer(12))
        #expect(last[5] == .text("100"))
        #expect(last[9] == .text("2024-01-31T06:00:00.000Z"))
        #expect(last[10] == .text("7c9e6679-7425-40de-944b-e07fc1f90af6"))
        let reasons = rejects.split(separator: "\n").compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                return nil
            }
            return "\(object["record"] ?? "?") \(object["field"] ?? "-"): \(object["reason"] ?? "")"
        }
        #expect(
            reasons == [
                "4 small: small 501 is greater than the maximum 500",
                "5 ratio: ratio: 'abc' is not a number",
                "6 single: single: 1e39 is out of range for float",
                "7 price: price -1 is less than the minimum 0",
                "8 name: name is longer than 8 (11)",
                "9 code: code does not match the pattern [A-Z]{2}-[0-9]+",
                "10 flag: flag: 'maybe' is not a boolean (expected one of 0, 1, f, false, n, no, off, on, t, true, y, yes)",
                "11 seen: seen: '2024-02-30' is not a date in format iso8601",
                "12 token: token: 'not-a-uuid' is not a UUID",
                "13 site: site: 'no scheme' is not an absolute URI",
                "14 extra: extra: '{bad json' is not valid JSON",
                "15 blob: blob: 'not base64!' is not base64 binary data",
                "16 id: another Thing already has the same id (uniqueness constraint)",
                "17 -: expected 14 fields but found 6",
            ] + ["18 id: id is required"])
    }
}

@Suite("Import runner: JSON, conflicts, references, budgets")
struct ImportRunnerSemanticsTests {
    let dir = TemporaryDirectory()

    func shop() throws -> Store { try Store.open(at: dir.file("shop.sqlite"), model: SampleModels.shop()) }

    func run(_ step: ImportStep, on store: Store) throws -> StepReport {
        try ImportStepRunner(step: step, store: store).run()
    }

    @Test("update with NDJSON changes only the keys a record has; absent keys keep their values")
    func updateKeepsAbsentKeys() throws {
        let store = try shop()
        let first = try dir.write("a.ndjson", #"{"id": 1, "email": "a@x.io", "name": "Ana", "age": 40}"# + "\n")
        _ = try run(ImportStep(source: first, format: .ndjson, entity: "Customer"), on: store)
        let second = try dir.write(
            "b.ndjson", #"{"id": 1, "age": 41}"# + "\n" + #"{"id": 2, "email": "b@x.io"}"# + "\n")
        var step = ImportStep(source: second, format: .ndjson, entity: "Customer")
        step.onConflict = .update
        let report = try run(step, on: store)
        #expect((report.read, report.inserted, report.updated) == (2, 1, 1))
        let rows = try store.withConnection {
            try $0.rows("SELECT id, email, name, age, balance FROM Customer ORDER BY id")
        }
        #expect(
            rows == [
                [.integer(1), .text("a@x.io"), .text("Ana"), .integer(41), .text("0")],
                [.integer(2), .text("b@x.io"), .null, .null, .text("0")],
            ])
    }

    @Test(
        "JSON references give the same rows and rejects on the fast and the general path",
        arguments: RelationshipMapping.Missing.allCases)
    func jsonReferencesBothPaths(missing: RelationshipMapping.Missing) throws {
        let customers = try dir.write(
            "c.ndjson", #"{"id": 1, "email": "a@x.io"}"# + "\n" + #"{"id": 2, "email": "b@x.io"}"# + "\n")
        let orders = try dir.write(
            "o.ndjson",
            [
                #"{"number": "A-1", "total": "9.50", "customer_id": 1}"#,
                #"{"number": "A-2", "customer_id": "2"}"#,
                #"{"number": "A-3", "customer_id": 9}"#,
                #"{"number": "A-4"}"#,
                #"{"number": "A-5", "customer_id": null}"#,
                #"{"number": "A-6", "customer_id": true}"#,
                #"{"number": "A-7", "customer_id": [1]}"#,
                #"{"number": "A-8", "customer_id": 1.0, "total": 3}"#,
            ].joined(separator: "\n") + "\n")
        var results: [(report: StepReport, rows: [[DatabaseValue]], rejects: [String], fast: Int)] = []
        for fastPath in [true, false] {
            let store = try Store.open(at: dir.file("refs-\(missing)-\(fastPath).sqlite"), model: SampleModels.shop())
            _ = try run(ImportStep(source: customers, format: .ndjson, entity: "Customer"), on: store)
            var step = ImportStep(source: orders, format: .ndjson, entity: "Order")
            step.relationships = [
                RelationshipMapping(relationship: "customer", field: "customer_id", match: "id", missing: missing)
            ]
            step.rejectsPath = dir.file("refs-\(missing)-\(fastPath).rejects")
            step.maxRejects = .unlimited
            let runner = ImportStepRunner(step: step, store: store)
            runner.allowsFastPath = fastPath
            let report = try runner.run()
            let rows = try store.withConnection { try $0.rows(#"SELECT * FROM "Order" ORDER BY ferry_pk"#) }
            results.append(
                (
                    report, rows,
                    ImportRunnerTests.reasons(try String(contentsOfFile: step.rejectsPath!, encoding: .utf8)),
                    runner.fastPathRecords
                ))
        }
        let (fast, general) = (results[0], results[1])
        #expect(fast.rows == general.rows)
        #expect(fast.rejects == general.rejects)
        #expect((fast.report.inserted, fast.report.rejected) == (general.report.inserted, general.report.rejected))
        #expect(fast.fast == fast.report.inserted && general.fast == 0)
        #expect(
            fast.rows.map { [$0[1], $0[3]] } == [
                [.text("A-1"), .integer(1)], [.text("A-2"), .integer(2)], [.text("A-8"), .integer(1)],
            ])
        let unresolved = missing == .reject ? "Order.customer: no Customer with id = 9" : "customer is required"
        let absent = missing == .reject ? "customer: the record has no field 'customer_id'" : "customer is required"
        #expect(
            fast.rejects == [
                "3 3:34 customer_id: \(unresolved)",
                "4 4:1 customer_id: \(absent)",
                "5 5:34 customer_id: customer is required",
                "6 6:34 customer_id: customer: expected int64 but found a boolean",
                "7 7:34 customer_id: customer: expected int64 but found a JSON array",
            ])
    }

    @Test("a reference to a missing object rejects the record, or leaves it empty when allowed")
    func missingReferences() throws {
        let store = try shop()
        _ = try run(
            ImportStep(source: try dir.write("c.csv", "id,email\n1,a@x.io\n"), format: .csv, entity: "Customer"),
            on: store)
        let orders = try dir.write("o.csv", "number,customer_id\nA-1,1\nA-2,9\n")
        var step = ImportStep(source: orders, format: .csv, entity: "Order")
        step.relationships = [RelationshipMapping(relationship: "customer", field: "customer_id", match: "id")]
        step.rejectsPath = dir.file("o.rejects")
        step.maxRejects = .count(1)
        let report = try run(step, on: store)
        #expect((report.inserted, report.rejected) == (1, 1))
        let reject = try String(contentsOfFile: dir.file("o.rejects"), encoding: .utf8)
        #expect(
            reject
                == #"{"record":2,"line":3,"column":5,"field":"customer_id","reason":"Order.customer: no Customer with id = 9","raw":"A-2,9"}"#
                + "\n")
    }

    @Test("going over the reject budget fails the step and rolls it back entirely")
    func budgetRollsBack() throws {
        let store = try shop()
        let file = try dir.write("c.csv", "id,email\n1,a@x.io\n2,bad\n3,c@x.io\n4,worse\n")
        var step = ImportStep(source: file, format: .csv, entity: "Customer")
        step.rejectsPath = dir.file("c.rejects")
        step.maxRejects = .count(1)
        let failure = try #require(throws: ImportStepFailure.self) { try run(step, on: store) }
        #expect("\(failure)".contains("more than 1 record was rejected; the step was rolled back"))
        #expect(failure.report.read == 4)
        #expect(failure.report.isBalanced)
        #expect(try store.withConnection { try $0.scalar("SELECT count(*) FROM Customer") } == .integer(0))
        let runs = try store.withConnection { try $0.rows("SELECT outcome, read, rejected FROM ferry_runs") }
        #expect(runs == [[.text("failed"), .integer(4), .integer(2)]])
    }

    @Test("without a rejects file, the first bad record fails the step with its location")
    func noRejectsFile() throws {
        let store = try shop()
        let file = try dir.write("c.csv", "id,email\n1,a@x.io\nx,b@x.io\n")
        let failure = try #require(throws: ImportStepFailure.self) {
            try run(ImportStep(source: file, format: .csv, entity: "Customer"), on: store)
        }
        #expect("\(failure)".hasPrefix("\(file):3:1: error: id: 'x' is not an integer (record 2)"))
        #expect(try store.withConnection { try $0.scalar("SELECT count(*) FROM Customer") } == .integer(0))
    }

    @Test("a checkpointed import (atomic: false) commits whole batches")
    func checkpointed() throws {
        let store = try shop()
        var text = "id,email\n"
        for i in 1...25 { text += "\(i),\(i == 23 ? "broken" : "c\(i)@x.io")\n" }
        var step = ImportStep(source: try dir.write("c.csv", text), format: .csv, entity: "Customer")
        step.atomic = false
        step.batchSize = 10
        #expect(throws: ImportStepFailure.self) { try run(step, on: store) }
        #expect(try store.withConnection { try $0.scalar("SELECT count(*) FROM Customer") } == .integer(20))
    }

    @Test("a dry run counts everything and changes nothing")
    func dryRun() throws {
        let store = try shop()
        let runner = ImportStepRunner(
            step: ImportStep(source: try dir.write("c.csv", "id,email\n1,a@x.io\n"), format: .csv, entity: "Customer"),
            store: store)
        runner.dryRun = true
        let report = try runner.run()
        #expect(report.outcome == .dryRun)
        #expect(report.inserted == 1)
        #expect(try store.withConnection { try $0.scalar("SELECT count(*) FROM Customer") } == .integer(0))
    }
}

@Suite("Import runner: fields nothing maps")
struct ImportIgnoredFieldsTests {
    @Test("source fields no attribute maps are listed, never dropped silently")
    func ignoredFields() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(at: dir.file("shop.sqlite"), model: SampleModels.shop())
        let file = try dir.write(
            "c.ndjson",
            #"{"id": 1, "email": "a@x.io"}"# + "\n" + #"{"id": 2, "email": "b@x.io", "nickname": "bee"}"# + "\n")
        var step = ImportStep(source: file, format: .ndjson, entity: "Customer")
        step.drift.newField = .ignore
        let report = try ImportStepRunner(step: step, store: store).run()
        #expect(report.inserted == 2)
        #expect(report.ignoredFields == ["nickname"])
        #expect(report.drift == [SchemaDrift(field: "nickname", change: .new, file: file, line: 2, action: .ignored)])
        let csv = try dir.write("c.csv", "id,email,shoe_size\n3,c@x.io,44\n")
        var csvStep = ImportStep(source: csv, format: .csv, entity: "Customer")
        csvStep.drift.newField = .ignore
        let csvReport = try ImportStepRunner(step: csvStep, store: store).run()
        #expect(csvReport.ignoredFields == ["shoe_size"])
        #expect(
            csvReport.drift == [SchemaDrift(field: "shoe_size", change: .new, file: csv, line: 1, action: .ignored)])
    }
}
