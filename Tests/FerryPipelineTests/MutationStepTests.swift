import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// A model file, data files and a job in a temporary folder.
struct MutationJobFixture {
    let directory = TemporaryDirectory("ferry-mutation-job")

    static let model = """
        name: Shop
        entities:
          Customer:
            attributes:
              id: {type: int64, optional: false, unique: true}
              email: {type: string, optional: false, max_length: 30, pattern: "[^@]+@[^@]+"}
              name: string
              age: {type: int16, min: 0, max: 150}
              active: bool
            relationships:
              orders: {destination: Order, to_many: true, inverse: customer, delete_rule: cascade}
          Order:
            attributes:
              number: {type: string, optional: false, unique: true}
            relationships:
              customer: {destination: Customer, inverse: orders, optional: false}
        """

    init() throws {
        try directory.write("shop.yml", Self.model)
        try directory.write(
            "customers.csv",
            "id,email,name,age,active\n1, Ann@X.io ,Ann,34,true\n2,bob@x.io,Bob,19,false\n3,cy@x.io,,52,true\n")
        try directory.write("orders.csv", "number,customer\nA-1,1\nA-2,1\nB-1,2\n")
    }

    /// Writes a job that imports the data and then runs `steps` (YAML list items, indented by 2).
    func job(_ steps: String, imports: Bool = true) throws -> String {
        let header = """
            store: shop.sqlite
            model: shop.yml
            steps:

            """
        let importSteps = """
              - import: {source: customers.csv, entity: Customer}
              - import:
                  source: orders.csv
                  entity: Order
                  relationships: {customer: {match: id}}

            """
        return try directory.write("job.yml", header + (imports ? importSteps : "") + steps)
    }

    func run(_ steps: String, imports: Bool = true, dryRun: Bool = false) throws -> RunReport {
        let path = try job(steps, imports: imports)
        let job = try JobLoader().load(path: path, environment: [:])
        let model = try ModelLoader().load(path: job.modelPath ?? "").current
        let problems = JobValidator().validate(job, model: model)
        if !problems.isEmpty { throw FerryErrors(problems) }
        let runner = JobRunner(job: job, model: model)
        runner.dryRun = dryRun
        return runner.run()
    }

    func rows(_ sql: String) throws -> [[DatabaseValue]] {
        let connection = try Connection(path: directory.file("shop.sqlite"), readOnly: true, create: false)
        return try connection.rows(sql)
    }
}

@Suite("update and delete steps")
struct MutationStepTests {
    @Test("an update step with constants and =expressions runs atomically and is counted")
    func updateStep() throws {
        let fixture = try MutationJobFixture()
        let report = try fixture.run(
            """
              - update:
                  entity: Customer
                  where: age > 30
                  set:
                    email: =lowercase(trim(email))
                    age: "=age + 1"
                    active: no
                    name: {value: "=literally"}
                    
            """)
        #expect(report.outcome == "succeeded")
        #expect(report.failure == nil)
        let step = try #require(report.steps.last)
        #expect(step.kind == "update")
        #expect(step.entity == "Customer")
        #expect(step.read == 2)
        #expect(step.updated == 2)
        #expect(step.deleted == 0)
        #expect(
            try fixture.rows("SELECT email, age, active, name FROM Customer ORDER BY id") == [
                [.text("ann@x.io"), .integer(35), .integer(0), .text("=literally")],
                [.text("bob@x.io"), .integer(19), .integer(0), .text("Bob")],
                [.text("cy@x.io"), .integer(53), .integer(0), .text("=literally")],
            ])
        let runs = try fixture.rows("SELECT step, entity, outcome, read, updated FROM ferry_runs WHERE step = 'update'")
        #expect(runs == [[.text("update"), .text("Customer"), .text("succeeded"), .integer(2), .integer(2)]])
    }

    @Test("a delete step applies delete rules and reports per-entity counts in the JSON report")
    func deleteStep() throws {
        let fixture = try MutationJobFixture()
        let report = try fixture.run(
            """
              - delete:
                  entity: Customer
                  where: name == "Ann"

            """)
        #expect(report.outcome == "succeeded")
        let step = try #require(report.steps.last)
        #expect(step.kind == "delete")
        #expect(step.deleted == 1)
        #expect(step.cascadeDeleted == ["Order": 2])
        #expect(step.nullified == nil)
        #expect(try fixture.rows("SELECT number FROM \"Order\"") == [[.text("B-1")]])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(step), as: UTF8.self)
        #expect(json.contains(#""cascade_deleted":{"Order":2},"deleted":1,"#))
        let runs = try fixture.rows("SELECT outcome, message FROM ferry_runs WHERE step = 'delete'")
        #expect(runs == [[.text("succeeded"), .text("deleted 1 Customer; cascade: 2 Order")]])
    }

    @Test("delete_rules: ignore fails on references and the failed step stops the job, leaving earlier steps committed")
    func ignoreFails() throws {
        let fixture = try MutationJobFixture()
        let report = try fixture.run(
            """
              - delete: {entity: Customer, where: "id == 1", delete_rules: ignore}
              - update: {entity: Customer, where: TRUEPREDICATE, set: {active: true}}

            """)
        #expect(report.outcome == "failed")
        #expect(report.failure == .error(.constraint))
        #expect(report.steps.count == 3)
        let step = try #require(report.steps.last)
        #expect(step.outcome == .failed)
        #expect(
            step.error?.hasPrefix(
                "\(fixture.directory.file("job.yml")):9:5: error: with delete_rules: ignore only the selected Customer objects are deleted, but other objects still refer to them (2 Order objects through Order.customer)"
            ) == true)
        #expect(try fixture.rows("SELECT count(*) FROM Customer") == [[.integer(3)]])
    }

    @Test("a failing validation rolls the update back and names the rule")
    func validationFails() throws {
        let fixture = try MutationJobFixture()
        let report = try fixture.run(
            """
              - update:
                  entity: Customer
                  where: TRUEPREDICATE
                  set: {age: =age * 3}

            """)
        let step = try #require(report.steps.last)
        #expect(step.outcome == .failed)
        #expect(
            step.error
                == "\(fixture.directory.file("job.yml")):9:5: error: the new value of Customer.age breaks 'max: 150' for 1 record (ferry_pk 3); nothing was changed"
        )
        #expect(
            try fixture.rows("SELECT age FROM Customer ORDER BY id") == [
                [.integer(34)], [.integer(19)], [.integer(52)],
            ])
        let runs = try fixture.rows("SELECT outcome FROM ferry_runs WHERE step = 'update'")
        #expect(runs == [[.text("failed")]])
    }

    @Test("a dry run reports what would change and leaves the store as it was")
    func dryRun() throws {
        let fixture = try MutationJobFixture()
        _ = try fixture.run("")
        let before = try fixture.rows("SELECT * FROM Customer ORDER BY 1")
        let report = try fixture.run(
            """
              - update: {entity: Customer, where: "age < 40", set: {name: =uppercase(name)}}
              - delete: {entity: Customer, where: "active == YES"}

            """, imports: false, dryRun: true)
        #expect(report.outcome == "dry_run")
        #expect(report.steps.map(\.outcome) == [.dryRun, .dryRun])
        #expect(report.steps[0].updated == 2)
        #expect(report.steps[1].deleted == 2)
        #expect(report.steps[1].cascadeDeleted == ["Order": 2])
        #expect(try fixture.rows("SELECT * FROM Customer ORDER BY 1") == before)
        #expect(
            try fixture.rows("SELECT count(*) FROM ferry_runs WHERE step IN ('update', 'delete')") == [[.integer(0)]])
    }

    @Test("the loader reports bad keys, missing keys and syntax errors with their location")
    func loaderErrors() throws {
        let fixture = try MutationJobFixture()
        let path = try fixture.job(
            """
              - update:
                  entity: Customer
                  wehre: age > 3
                  set: {age: =age +, name: [a]}
              - delete:
                  entity: Customer
                  where: age >
                  delete_rules: skip
              - update: {entity: Customer, where: "age > 1", set: {}}

            """)
        let errors = renderedErrors { _ = try JobLoader().load(path: path, environment: [:]) }
        #expect(
            errors == [
                "\(path):9:5: error: the update step needs 'where' (a predicate; TRUEPREDICATE to update every object)",
                "\(path):11:7: error: unknown key 'wehre' in an update step; did you mean 'where'?",
                "\(path):12:24: error: expected a value after '+' but found end of input",
                "\(path):12:32: error: expected a value, an =expression or a mapping for 'name' but found a list",
                "\(path):15:19: error: expected a value after '>' but found end of input",
                "\(path):16:21: error: 'skip' is not a valid 'delete_rules' (one of apply, ignore)",
                "\(path):17:55: error: 'set' names no attributes to update",
            ])
    }

    @Test("the validator checks entities, attributes, predicates and constants against the model")
    func validatorErrors() throws {
        let fixture = try MutationJobFixture()
        let path = try fixture.job(
            """
              - update: {entity: Custmer, where: "age > 1", set: {age: 1}}
              - update: {entity: Customer, where: "agee > 1", set: {age: 1}}
              - update: {entity: Customer, where: "age > 1", set: {aeg: 1}}
              - update: {entity: Customer, where: "age > 1", set: {age: 151}}
              - update: {entity: Customer, where: "age > 1", set: {age: =nme}}
              - delete: {entity: Ordr, where: TRUEPREDICATE}

            """)
        let job = try JobLoader().load(path: path, environment: [:])
        let model = try ModelLoader().load(path: job.modelPath ?? "").current
        #expect(
            JobValidator().validate(job, model: model).map(\.description) == [
                "\(path):9:22: error: unknown entity 'Custmer' in model 'Shop'; did you mean 'Customer'?",
                "\(path):10:40: error: Customer has no attribute 'agee'; did you mean 'age'?",
                "\(path):11:56: error: Customer has no attribute 'aeg'; did you mean 'age'?",
                "\(path):12:56: error: cannot set Customer.age to '151': age 151 is greater than the maximum 150",
                "\(path):13:62: error: Customer has no attribute 'nme'; did you mean 'name'?",
                "\(path):14:22: error: unknown entity 'Ordr' in model 'Shop'; did you mean 'Order'?",
            ])
    }
}
