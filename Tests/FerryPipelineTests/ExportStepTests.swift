import FerryCore
import FerryFormats
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@Suite("Export steps in jobs")
struct ExportStepTests {
    static let models = Fixtures.path("models/Shop")

    /// Writes a job with the given steps beside a customers CSV and returns its path.
    static func job(_ directory: TemporaryDirectory, steps: String) throws -> String {
        try directory.write(
            "customers.csv",
            "id,email,name,age,balance\n1,zoe@example.com,Zoë,41,12.50\n2,ann@example.org,,30,-0.1\n3,bob@example.com,\"Bob \"\"B\"\"\",55,1000\n"
        )
        return try directory.write(
            "job.yml",
            """
            job: export-test
            store: shop.sqlite
            model: \(models)
            steps:
              - import:
                  source: customers.csv
                  entity: Customer
            \(steps)
            """)
    }

    @Test("an export step is loaded with every key and located predicate, sort and fields")
    func loading() throws {
        let directory = TemporaryDirectory()
        let path = try Self.job(
            directory,
            steps: """
                  - export:
                      entity: Customer
                      where: age > 40 AND email ENDSWITH "example.com"
                      sort: [age:desc, email]
                      fields: id, email, name
                      limit: 10
                      offset: 2
                      output: out/customers.ndjson
                """)
        let job = try JobLoader().load(path: path, parameters: [:], environment: [:])
        guard job.steps.count == 2, case .export(let step) = job.steps[1] else {
            Issue.record("expected an export step")
            return
        }
        #expect(step.entity == "Customer")
        #expect(step.format == .ndjson)
        #expect(step.output == directory.url.appendingPathComponent("out/customers.ndjson").standardizedFileURL.path)
        #expect(step.sort.map(\.keyPath) == ["age", "email"] && step.sort.map(\.ascending) == [false, true])
        #expect(
            step.sort.map(\.location) == [
                InputLocation(file: path, line: 11, column: 14), InputLocation(file: path, line: 11, column: 24),
            ])
        #expect(step.fields?.map(\.keyPath) == ["id", "email", "name"])
        #expect(step.fields?.map(\.location?.column) == [15, 19, 26])
        #expect(step.limit == 10 && step.offset == 2)
        #expect(step.predicate == (try Predicate(format: "age > 40 AND email ENDSWITH \"example.com\"")))
        #expect(step.location == InputLocation(file: path, line: 8, column: 5))
    }

    @Test("bad export steps report every problem at its line and column")
    func loadingErrors() throws {
        let directory = TemporaryDirectory()
        let path = try Self.job(
            directory,
            steps: """
                  - export:
                      entity: Customer
                      where: "age > AND"
                      sort: age:down
                      limt: 3
                      output: customers.xlsx
                """)
        let errors = renderedErrors { _ = try JobLoader().load(path: path, parameters: [:], environment: [:]) }
        #expect(
            errors == [
                "\(path):10:21: error: expected a value after '>' but found 'AND'",
                "\(path):11:17: error: unknown sort direction 'down' (asc or desc)",
                "\(path):12:7: error: unknown key 'limt' in an export step; did you mean 'limit'?",
                "\(path):13:15: error: cannot tell the format of '\(directory.url.appendingPathComponent("customers.xlsx").standardizedFileURL.path)' from its extension; add 'format:' (csv, json, ndjson)",
            ])
    }

    @Test("the validator checks the entity, predicate, fields and sort keys against the model")
    func validation() throws {
        let directory = TemporaryDirectory()
        let path = try Self.job(
            directory,
            steps: """
                  - export:
                      entity: Customer
                      where: emial == "x"
                      fields: id, orders
                      format: csv
                  - export:
                      entity: Custmer
                      format: json
                  - export:
                      entity: Customer
                      sort: [nme]
                      format: json
                """)
        let job = try JobLoader().load(path: path, parameters: [:], environment: [:])
        let model = try ModelLoader().load(path: Self.models).current
        let errors = JobValidator().validate(job, model: model).map(\.description)
        #expect(
            errors == [
                "\(path):10:14: error: Customer has no attribute 'emial'; did you mean 'email'?",
                "\(path):11:19: error: 'orders' of Customer is a to-many relationship; only attributes and to-one relationships can be fetched or sorted by",
                "\(path):14:15: error: unknown entity 'Custmer' in model 'Shop'; did you mean 'Customer'?",
                "\(path):18:14: error: Customer has no attribute 'nme'; did you mean 'name'?",
            ])
    }

    @Test("a job exports after importing; the report counts records; a dry run writes nothing")
    func running() throws {
        let directory = TemporaryDirectory()
        let path = try Self.job(
            directory,
            steps: """
                  - export:
                      entity: Customer
                      where: age > 35
                      sort: balance:desc
                      fields: email, name, balance
                      output: out/old.csv
                """)
        let job = try JobLoader().load(path: path, parameters: [:], environment: [:])
        let model = try ModelLoader().load(path: Self.models).current
        let dry = JobRunner(job: job, model: model)
        dry.dryRun = true
        let dryReport = dry.run()
        #expect(dryReport.outcome == "dry_run")
        #expect(dryReport.steps.map(\.outcome) == [.dryRun, .dryRun])
        #expect(!FileManager.default.fileExists(atPath: directory.file("out/old.csv")))

        let report = JobRunner(job: job, model: model).run()
        #expect(report.outcome == "succeeded")
        let export = try #require(report.steps.last)
        #expect(export.kind == "export" && export.read == 2 && export.written == 2 && export.isBalanced)
        #expect(
            try String(contentsOfFile: directory.file("out/old.csv"), encoding: .utf8)
                == "email,name,balance\r\nbob@example.com,\"Bob \"\"B\"\"\",1000\r\nzoe@example.com,Zoë,12.5\r\n")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(export), as: UTF8.self)
        #expect(json.contains(#""kind":"export""#) && json.contains(#""read":2"#) && json.contains(#""written":2"#))
        // No temporary files are left beside the output.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("out")) == ["old.csv"])
    }
}
