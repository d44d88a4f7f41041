import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@Suite("Expectations files and verify steps")
struct VerifyStepTests {
    @Test("a broken expectations file reports every problem at its line and column")
    func brokenFile() throws {
        let path = Fixtures.path("expectations/broken.yml")
        let errors = renderedErrors { _ = try ExpectationsLoader().load(path: path) }
        #expect(
            errors == [
                "\(path):1:9: error: 'some' is not a valid 'checks' (one of all, cheap, none)",
                "\(path):3:14: error: unknown key 'at_leest' in count of 'Customer'; did you mean 'at_least'?",
                "\(path):4:19: error: 'equals: imported' refers to import steps of a job; it only works in a job's verify step",
                "\(path):5:22: error: 'between' needs low ≤ high, not [5, 1]",
                "\(path):7:5: error: an assertion needs exactly one of count, at_least, at_most, between",
                "\(path):8:51: error: expected a percentage from 0% to 100% for 'at_most' but found '120%'",
                "\(path):10:29: error: 'key' needs at least one attribute, e.g. {id: 42}",
            ])
    }

    @Test("expectations are checked against the model, with located errors")
    func checkedAgainstModel() throws {
        let path = Fixtures.path("expectations/shop.yml")
        let expectations = try ExpectationsLoader().load(path: path)
        #expect(expectations.checks == .cheap)
        let (_, problems) = expectations.checks(model: SampleModels.shop())
        #expect(
            problems.map(\.description) == [
                "\(path):5:3: error: unknown entity 'Custmer' in model 'Shop'; did you mean 'Customer'?",
                "\(path):7:31: error: Customer has no attribute 'emial'; did you mean 'email'?",
                "\(path):10:63: error: 'abc' is not a valid int16 for 'Customer.age': 'abc' is not an integer",
                "\(path):10:74: error: 'Customer' has no attribute 'nmae'; did you mean 'name'?",
            ])
    }

    @Test("resolved expectations run: counts, percentages, records by key")
    func resolvedRun() throws {
        let dir = TemporaryDirectory()
        let file = try dir.write(
            "expect.yml",
            """
            checks: none
            counts: {Customer: 2, Order: {between: [0, 1]}}
            assertions:
              - {entity: Customer, where: "age > 100", at_most: "10%"}
            records:
              - {entity: Customer, key: {id: 2}, expect: {name: Bob, balance: "0.0", joined: null}}
            """)
        let (checks, problems) = try ExpectationsLoader().load(path: file).checks(model: SampleModels.shop())
        #expect(problems.isEmpty)
        let store = try Store.open(at: dir.file("s.sqlite"), model: SampleModels.shop())
        try store.write {
            try $0.execute(
                "INSERT INTO Customer(id, email, name, age, balance, active) VALUES (1, 'a@x', 'Ann', 120, '1', 1), (2, 'b@x', 'Bob', 3, '0', 1)"
            )
        }
        let report = Verifier(model: store.model).run(checks, on: store)
        #expect(
            report.results.map(\.name) == [
                "count Customer", "count Order", "assertion Customer: age > 100", "record Customer(id = 2)",
            ])
        #expect(report.results.map(\.outcome) == [.passed, .passed, .failed, .passed])
        #expect(report.results[2].message == "1 of 2 Customer rows match 'age > 100', expected at most 10%")
    }

    /// A job of two imports of customers and a verify step, in a temporary folder.
    func job(_ dir: TemporaryDirectory, verify: String, importOptions: String = "") throws -> Job {
        try dir.write("a.csv", "id,email,name\n1,a@x,Ann\n2,b@x,Bob\n")
        try dir.write("b.csv", "id,email,name\n3,c@x,Cy\n")
        let path = try dir.write(
            "job.yml",
            """
            store: store.sqlite
            steps:
              - import: {source: a.csv, entity: Customer\(importOptions)}
              - import: {source: b.csv, entity: Customer}
              - verify:
            \(verify)
            """)
        return try JobLoader().load(path: path, environment: [:])
    }

    @Test("a passing verify step: counts equal what the imports accounted for")
    func passingStep() throws {
        let dir = TemporaryDirectory()
        let job = try job(
            dir,
            verify: """
                      counts: {Customer: {equals: imported}, Order: 0}
                      assertions: [{entity: Customer, where: "email ENDSWITH '@x'", count: 3}]
                """)
        #expect(JobValidator().validate(job, model: SampleModels.shop()).isEmpty)
        let report = JobRunner(job: job, model: SampleModels.shop()).run()
        #expect(report.failure == nil, "\(report.steps.compactMap(\.error))")
        #expect(report.steps.map(\.kind) == ["import", "import", "verify"])
        let auto = try #require(report.steps[0].verification)
        #expect(
            auto.results.map(\.name) == [
                "count Customer", "foreign_key_check Customer", "unique Customer(id)", "unique Customer(email)",
                "model_hash",
            ])
        #expect(auto.results[0].message == "2 rows (expected exactly 2, 0 before the step + 2 inserted)")
        #expect(
            report.steps[1].verification?.results[0].message
                == "3 rows (expected exactly 3, 2 before the step + 1 inserted)")
        let verify = try #require(report.steps[2].verification)
        #expect(verify.succeeded)
        #expect(
            verify.results.first { $0.name == "count Customer" }?.message
                == "3 rows (expected exactly 3, imported by steps 1, 2)")
        #expect(verify.store == dir.file("store.sqlite"))
        #expect(report.verificationReports.count == 3)
    }

    @Test("a failing verify step fails the run with exit code 3 and keeps every result")
    func failingStep() throws {
        let dir = TemporaryDirectory()
        let job = try job(
            dir,
            verify: """
                      checks: cheap
                      counts: {Customer: 4}
                      assertions: [{entity: Customer, where: "name BEGINSWITH 'B'", count: 0}]
                """, importOptions: ", verify: false")
        let report = JobRunner(job: job, model: SampleModels.shop()).run()
        #expect(report.failure == .verificationFailed)
        #expect(report.outcome == "failed")
        #expect(report.steps[0].verification == nil)
        let verify = try #require(report.steps.last)
        #expect(verify.outcome == .failed)
        #expect(
            verify.verification?.failedResults.map(\.name) == [
                "count Customer", "assertion Customer: name BEGINSWITH 'B'",
            ])
        #expect(
            verify.error == """
                error: 2 of 6 checks failed on '\(dir.file("store.sqlite"))' (first: count Customer)
                  count Customer: expected exactly 4 rows, found 3
                  assertion Customer: name BEGINSWITH 'B': 1 of 3 Customer rows match 'name BEGINSWITH 'B'', expected exactly 0
                """)
        let encoded = try JSONEncoder().encode(report)
        let decoded = try JSONDecoder().decode(RunReport.self, from: encoded)
        // The JSON report has the command line's exit code, not the typed failure it came from.
        var written = report
        written.failure = nil
        #expect(decoded == written)
    }

    @Test("equals: imported without an earlier import of the entity is a located job error")
    func importedNeedsImport() throws {
        let dir = TemporaryDirectory()
        let job = try job(dir, verify: "      counts: {Order: {equals: imported}}\n      max_offending: 2")
        guard case .verify(let step) = job.steps[2] else {
            Issue.record("expected a verify step")
            return
        }
        #expect(step.maxOffending == 2)
        #expect(
            JobValidator().validate(job, model: SampleModels.shop()).map(\.description) == [
                "\(dir.file("job.yml")):6:16: error: 'Order: {equals: imported}' needs an earlier import step of Order in the job"
            ])
    }
}
