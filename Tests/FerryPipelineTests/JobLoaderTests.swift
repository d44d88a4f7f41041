import FerryCore
import FerryFormats
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@Suite("JobLoader")
struct JobLoaderTests {
    static let jobs = URL(fileURLWithPath: Fixtures.path("jobs"))
    static func resolved(_ relative: String) -> String {
        jobs.appendingPathComponent(relative).standardizedFileURL.path
    }

    @Test("the reference job loads with paths, parameters and options")
    func referenceJob() throws {
        let path = Fixtures.path("jobs/import-shop.yml")
        let job = try JobLoader().load(path: path, parameters: [:], environment: [:])
        #expect(job.name == "nightly")
        #expect(job.description == "Load the shop")
        #expect(job.store.path == Self.resolved("../out/shop.sqlite"))
        #expect(job.store.create)
        #expect(job.store.location == InputLocation(file: path, line: 3, column: 8))
        #expect(job.modelPath == Self.resolved("../models/Shop"))
        #expect(job.steps.count == 2)
        guard case .import(let customers) = job.steps[0], case .import(let orders) = job.steps[1] else {
            Issue.record("expected two imports")
            return
        }
        #expect(customers.location == InputLocation(file: path, line: 9, column: 5))
        #expect(customers.source == Self.resolved("../data/customers.csv"))
        #expect(customers.format == .csv)
        #expect(customers.entity == "Customer")
        #expect(customers.entityLocation == InputLocation(file: path, line: 11, column: 15))
        #expect(customers.fields.map(\.attribute) == ["id", "email", "created_at", "active", "name"])
        #expect(customers.fields[0].source == .field("customer_id"))
        #expect(customers.fields[0].location == InputLocation(file: path, line: 13, column: 9))
        #expect(customers.fields[1].trim == true)
        #expect(customers.fields[2].dateFormat?.description == "dd/MM/yyyy HH:mm")
        #expect(customers.fields[3].trueWords == ["yes", "y"])
        #expect(customers.fields[3].falseWords == ["no", "n"])
        #expect(customers.fields[4].source == .constant("NZ nobody"))
        #expect(customers.coercion.nullTokens == ["", "NULL", "n/a"])
        #expect(customers.csv.delimiter == UInt8(ascii: ";"))
        #expect(customers.csv.hasHeader == false)
        #expect(customers.csv.columns == ["customer_id", "email", "signed_up", "active"])
        #expect(customers.rejectsPath == Self.resolved("../out/customers.rejects.ndjson"))
        #expect(customers.maxRejects == .count(10))
        #expect(customers.onConflict == .error)

        #expect(orders.format == .ndjson)
        #expect(orders.coercion.nullTokens == [])
        #expect(
            orders.relationships == [
                RelationshipMapping(
                    relationship: "customer", field: "customer_id", match: "id", missing: .null,
                    location: InputLocation(file: path, line: 26, column: 9))
            ])
        #expect(orders.onConflict == .update)
        #expect(orders.maxRejects == .percent(2.5))
        #expect(orders.rejectsPath == "-")
        #expect(orders.batchSize == 500)
        #expect(orders.atomic == false)
        #expect(
            JobValidator().validate(job, model: try ModelLoader().load(path: job.modelPath ?? "").current).map(
                \.description) == [])
    }

    @Test("--param wins over the environment, which wins over params:")
    func precedence() throws {
        let path = Fixtures.path("jobs/import-shop.yml")
        func source(_ parameters: [String: String], _ environment: [String: String]) throws -> String {
            let job = try JobLoader().load(path: path, parameters: parameters, environment: environment)
            guard case .import(let step) = job.steps[0] else { return "" }
            return step.source
        }
        #expect(try source([:], [:]) == Self.resolved("../data/customers.csv"))
        #expect(try source([:], ["data": "/env"]) == "/env/customers.csv")
        #expect(try source(["data": "/param"], ["data": "/env"]) == "/param/customers.csv")
        let job = try JobLoader().load(path: path, parameters: ["who": "me"], environment: ["region": "US"])
        guard case .import(let step) = job.steps[0] else { return }
        #expect(step.fields[4].source == .constant("US me"))
    }

    @Test("every problem of a broken job, located, with suggestions")
    func broken() {
        let file = Fixtures.path("jobs/broken.yml")
        #expect(
            renderedErrors { _ = try JobLoader().load(path: file, parameters: [:], environment: [:]) } == [
                "\(file):1:35: error: expected a boolean for 'create' but found 'maybe'",
                "\(file):4:5: error: unknown step 'improt'; did you mean 'import'?",
                "\(file):7:7: error: unknown key 'count' in a verify step; did you mean 'counts'?",
                "\(file):9:15: error: undefined parameter 'nowhere'\n  give --param nowhere=VALUE, set the environment variable nowhere, or add nowhere under params:",
                "\(file):11:7: error: unknown key 'fromat' in an import step; did you mean 'format'?",
                "\(file):12:20: error: 'max_rejects' allows rejected records but the step has no 'rejects' file: they would be lost",
                "\(file):13:20: error: 'upsert' is not a valid 'on_conflict' (one of error, update, keep, replace)",
                "\(file):14:19: error: 'batch_size' must be at least 1, not 0",
                "\(file):15:20: error: unsupported letter 'Q' in date pattern 'yyyy-QQ'\n  supported: yyyy yy MM M MMM dd d HH H hh h mm ss S… a EEE X XXX Z, and 'quoted' literals",
                "\(file):19:24: error: 'delimiter' must be one to 8 characters, not ''",
                "\(file):19:36: error: 'header: false' needs 'columns: [...]' to name the columns",
                "\(file):20:7: error: 'json' options apply only to the json and ndjson formats, not csv",
                "\(file):20:23: error: a JSON pointer starts with '/' (e.g. /data/items), not 'data'",
                "\(file):21:20: error: expected a count or a percentage like \"1%\" for 'max_rejects' but found 'lots'",
                "\(file):22:5: error: a step has one key, its kind, but found 'import', 'source' (indent the step's keys under its kind)",
            ])
    }

    @Test("format from the extension, tsv, standard input and unknown extensions")
    func formats() throws {
        let directory = TemporaryDirectory()
        let path = try directory.write(
            "job.yml",
            """
            store: ":memory:"
            steps:
              - import: {source: a.tsv, entity: E}
              - import: {source: a.JSONL, entity: E}
              - import: {source: "-", entity: E, format: json, json: {pointer: /items}}
            """)
        let job = try JobLoader().load(path: path, parameters: [:], environment: [:])
        #expect(job.name == "job")
        #expect(job.store.isInMemory)
        let steps = job.steps.compactMap { step -> ImportStep? in
            if case .import(let s) = step { return s } else { return nil }
        }
        #expect(steps.map(\.format) == [.csv, .ndjson, .json])
        #expect(steps[0].csv.delimiter == 9)
        #expect(steps[2].source == "-")
        #expect(steps[2].jsonPointer == "/items")

        let bad = try directory.write(
            "bad.yml",
            """
            store: out.sqlite
            steps:
              - import: {source: a.xml, entity: E}
              - import: {source: "-", entity: E}
              - import: {source: a.csv, entity: E, format: xsl}
              - import: {source: a.csv}
            """)
        #expect(
            renderedErrors { _ = try JobLoader().load(path: bad, parameters: [:], environment: [:]) } == [
                "\(bad):3:22: error: cannot tell the format of 'a.xml' from its extension; add 'format:' (csv, json, ndjson)",
                "\(bad):4:22: error: cannot tell the format of standard input; add 'format:' (csv, json, ndjson)",
                "\(bad):5:48: error: unknown format 'xsl' (csv, json, ndjson, fixed, pgcopy)",
                "\(bad):6:5: error: the import step needs 'entity'",
            ])
    }

    @Test("input keys: compressed sources, encoding, csv skip_lines, comment and skip_initial_space; tsv exports")
    func inputKeys() throws {
        let directory = TemporaryDirectory()
        let path = try directory.write(
            "job.yml",
            """
            store: ":memory:"
            steps:
              - import:
                  source: nightly.csv.gz
                  entity: E
                  encoding: windows-1252
                  csv: {skip_lines: 2, comment: "#", skip_initial_space: true}
              - import: {source: rows.tsv.zst, entity: E}
              - import: {source: d.csv, entity: E, date_format: [dd.MM.yyyy, iso8601]}
              - export: {entity: E, output: out.tsv}
              - export: {entity: E, output: "-", format: tsv}
            """)
        let job = try JobLoader().load(path: path, parameters: [:], environment: [:])
        let imports = job.steps.compactMap { step -> ImportStep? in
            if case .import(let s) = step { return s } else { return nil }
        }
        #expect(imports.map(\.format) == [.csv, .csv, .csv])
        #expect(imports[2].coercion.dateFormat.description == "dd.MM.yyyy, iso8601")
        #expect(
            Coercion.parseDate("31.12.2023", format: imports[2].coercion.dateFormat)
                == Coercion.parseDate("2023-12-31", format: .iso8601))
        #expect(imports[0].encoding?.iconvName == "WINDOWS-1252")
        #expect(imports[0].csv.skipLines == 2)
        #expect(imports[0].csv.comment == UInt8(ascii: "#"))
        #expect(imports[0].csv.skipInitialSpace)
        #expect(imports[0].csv.delimiter == UInt8(ascii: ","))
        #expect(imports[1].csv.delimiter == 9)
        let exports = job.steps.compactMap { step -> ExportStep? in
            if case .export(let s) = step { return s } else { return nil }
        }
        #expect(exports.map(\.csvDelimiter) == [9, 9])

        let bad = try directory.write(
            "bad.yml",
            """
            store: out.sqlite
            steps:
              - import: {source: a.csv, entity: E, encoding: nope-1}
              - import: {source: a.csv, entity: E, csv: {skip_lines: -1, comment: "##"}}
            """)
        let errors = renderedErrors { _ = try JobLoader().load(path: bad, parameters: [:], environment: [:]) } ?? []
        #expect(errors.count == 3, "\(errors)")
        #expect(errors.first?.hasPrefix("\(bad):3:50: error: unknown encoding 'nope-1'") == true, "\(errors)")
    }

    @Test("YAML syntax errors, missing files and missing keys")
    func fileProblems() throws {
        let directory = TemporaryDirectory()
        let syntax = try directory.write("syntax.yml", "store: a\nsteps:\n  - import: [\n")
        #expect(
            renderedErrors { _ = try JobLoader().load(path: syntax, parameters: [:], environment: [:]) } == [
                "\(syntax):4:1: error: did not find expected node content (while parsing a flow node at line 4, column 1)\n    - import: [\n  ^"
            ])
        let missing = directory.file("missing.yml")
        #expect(
            renderedErrors { _ = try JobLoader().load(path: missing, parameters: [:], environment: [:]) } == [
                "\(missing): error: cannot read '\(missing)': No such file or directory"
            ])
        let empty = try directory.write("empty.yml", "descripton: x\n")
        #expect(
            renderedErrors { _ = try JobLoader().load(path: empty, parameters: [:], environment: [:]) } == [
                "\(empty):1:1: error: unknown key 'descripton' in the job; did you mean 'description'?",
                "\(empty):1:1: error: the job has no 'store' (a path or \":memory:\")",
                "\(empty):1:1: error: the job has no 'steps'",
            ])
    }
}

@Suite("JobValidator")
struct JobValidatorTests {
    @Test("entities, attributes, constants, relationship mappings")
    func againstModel() throws {
        let file = Fixtures.path("jobs/invalid-for-model.yml")
        let job = try JobLoader().load(path: file, parameters: [:], environment: [:])
        let model = try ModelLoader().load(path: job.modelPath ?? "").current
        #expect(
            JobValidator().validate(job, model: model).map(\.description) == [
                "\(file):6:15: error: unknown entity 'Custmer' in model 'Shop'; did you mean 'Customer'?",
                "\(file):11:9: error: 'Customer' has no attribute 'emial'; did you mean 'email'?",
                "\(file):12:9: error: 'orders' is a relationship of 'Customer'; map it under 'relationships'",
                "\(file):13:9: error: constant for 'Customer.age' is not a valid int16: 'old' is not an integer",
                "\(file):19:9: error: 'Order' has no relationship 'custmer'; did you mean 'customer'?",
                "\(file):20:9: error: 'match: name' needs 'Customer.name' to be unique on its own (unique: true)",
                "\(file):25:9: error: 'Customer.orders' is to-many; 'relationships:' resolves only to-one relationships (a JSON source's nested arrays link to-many ones with 'nested: true')",
                "\(file):30:9: error: 'Customer' has no attribute 'nam' to match; did you mean 'name'?",
            ])
    }

    @Test("update and replace need a uniqueness constraint")
    func conflictPolicy() throws {
        let directory = TemporaryDirectory()
        try directory.write("log.yml", "entities:\n  Log:\n    attributes:\n      line: string\n")
        let jobPath = try directory.write(
            "job.yml",
            """
            store: ":memory:"
            model: log.yml
            steps:
              - import: {source: a.csv, entity: Log, on_conflict: keep}
              - import: {source: a.csv, entity: Log, on_conflict: replace}
            """)
        let job = try JobLoader().load(path: jobPath, parameters: [:], environment: [:])
        let model = try ModelLoader().load(path: try #require(job.modelPath)).current
        #expect(
            JobValidator().validate(job, model: model).map(\.description) == [
                "\(jobPath):5:55: error: 'on_conflict: replace' needs a uniqueness constraint on 'Log' to find the existing object"
            ])
    }
}

@Suite("JobLoader: $name in step predicates")
struct JobPredicateParameterTests {
    @Test("$name takes --param, else the environment, else params:, typed as a literal")
    func substitution() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write(
            "job.yml",
            """
            store: s.sqlite
            model: m.yml
            params: {min_age: "40", label: "VIP"}
            steps:
              - export: {entity: Customer, where: "age >= $min_age AND name == $label AND active == $flag", format: csv, output: out.csv}
              - delete: {entity: Customer, where: "age < $min_age"}
            """)
        let job = try JobLoader().load(path: path, parameters: ["flag": "true"], environment: ["label": "gold"])
        guard case .export(let export) = job.steps[0], let predicate = export.predicate,
            case .delete(let delete) = job.steps[1]
        else {
            Issue.record("unexpected steps \(job.steps)")
            return
        }
        let gold = PredicateRecord(values: ["age": .integer(41), "name": .string("gold"), "active": .bool(true)])
        let young = PredicateRecord(values: ["age": .integer(39), "name": .string("gold"), "active": .bool(true)])
        #expect(try predicate.evaluate(on: gold))
        #expect(try !predicate.evaluate(on: young))
        #expect(try delete.predicate.evaluate(on: young))
        let overridden = try JobLoader().load(
            path: path, parameters: ["flag": "true", "min_age": "20"], environment: ["label": "gold"])
        guard case .export(let cheaper) = overridden.steps[0], let second = cheaper.predicate else { return }
        #expect(try second.evaluate(on: young))
    }
}

@Suite("JobLoader: nested parameter defaults")
struct JobNestedDefaultTests {
    @Test(
        "${a:-${b:-x}/y} is a when given, else the default with its own references replaced; an unterminated nested reference is an error"
    )
    func nestedDefaults() throws {
        let dir = TemporaryDirectory()
        try dir.write("m.yml", "version: \"1\"\nentities:\n  Customer:\n    attributes:\n      id: int64\n")
        let path = try dir.write(
            "job.yml",
            """
            store: {path: "${store:-${out:-/srv/out}/shop.sqlite}"}
            model: m.yml
            steps:
              - export: {entity: Customer, format: csv, output: "${out:-/srv/out}/c.csv"}
            """)
        #expect(
            try JobLoader().load(path: path, parameters: [:], environment: [:]).store.path == "/srv/out/shop.sqlite")
        #expect(
            try JobLoader().load(path: path, parameters: ["out": "/tmp/o"], environment: [:]).store.path
                == "/tmp/o/shop.sqlite")
        let url = "postgresql://app@db/shop?schema=shop"
        #expect(
            try JobLoader().load(path: path, parameters: ["store": url, "out": "/tmp/o"], environment: [:]).store.path
                == url)
        let broken = try dir.write(
            "broken.yml",
            """
            store: {path: "${store:-${out/shop.sqlite}"}
            model: m.yml
            steps:
              - export: {entity: Customer, format: csv, output: c.csv}
            """)
        #expect(throws: (any Error).self) { try JobLoader().load(path: broken, parameters: [:], environment: [:]) }
        do {
            _ = try JobLoader().load(path: broken, parameters: [:], environment: [:])
        } catch {
            #expect("\(error)".contains("unterminated '${'"), "\(error)")
        }
    }
}
