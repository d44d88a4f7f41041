import FerryCore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryPipeline

@Suite("Import: references resolved from a copy of the destination's keys")
struct ReferenceImportTests {
    let dir = TemporaryDirectory()

    /// Employees with a manager (an employee) and a mentor (optional).
    static let staff = ObjectModel(
        name: "Staff", version: "1",
        entities: [
            EntityDescription(
                name: "Employee",
                attributes: [
                    AttributeDescription(name: "id", type: .int64, isOptional: false),
                    AttributeDescription(name: "name", type: .string),
                ],
                relationships: [
                    RelationshipDescription(name: "manager", destination: "Employee", inverse: "reports"),
                    RelationshipDescription(
                        name: "reports", destination: "Employee", isToMany: true, inverse: "manager"),
                ],
                uniquenessConstraints: [["id"]])
        ])

    func employees(_ store: Store) throws -> [[DatabaseValue]] {
        try store.withConnection {
            try $0.rows(
                "SELECT e.id, e.name, m.id FROM Employee e LEFT JOIN Employee m ON m.ferry_pk = e.manager ORDER BY e.ferry_pk"
            )
        }
    }

    func importEmployees(
        _ csv: String, into store: Store, name: String, atomic: Bool = true, fastPath: Bool = true
    ) throws -> (StepReport, String) {
        var step = ImportStep(source: try dir.write("\(name).csv", csv), format: .csv, entity: "Employee")
        step.relationships = [RelationshipMapping(relationship: "manager", field: "manager_id", match: "id")]
        step.rejectsPath = dir.file("\(name).rejects")
        step.maxRejects = .unlimited
        step.atomic = atomic
        step.batchSize = 2
        let runner = ImportStepRunner(step: step, store: store)
        runner.allowsFastPath = fastPath
        let report = try runner.run()
        return (report, try String(contentsOfFile: step.rejectsPath!, encoding: .utf8))
    }

    @Test(
        "a reference to an earlier record of the same import, or to an existing object, resolves; a missing one is rejected with its location",
        arguments: [(true, true), (true, false), (false, true)])
    func selfReferences(atomic: Bool, fastPath: Bool) throws {
        let store = try Store.open(at: dir.file("staff-\(atomic)-\(fastPath).sqlite"), model: Self.staff)
        // Existing employees, with primary keys out of the order of their ids.
        _ = try importEmployees(
            "id,name,manager_id\n50,Boss,\n10,Ann,50\n", into: store, name: "first-\(atomic)-\(fastPath)",
            atomic: atomic, fastPath: fastPath)
        let (report, rejects) = try importEmployees(
            "id,name,manager_id\n11,Bo,10\n12,Cy,11\n13,Di,99\n14,Ed,12\n15,Fe,50\n16,Gu,16\n", into: store,
            name: "second-\(atomic)-\(fastPath)", atomic: atomic,
            fastPath: fastPath)
        #expect((report.inserted, report.rejected) == (4, 2))
        #expect(
            rejects.components(separatedBy: "\n").filter { !$0.isEmpty }.map {
                $0.components(separatedBy: #""reason":"#).last ?? ""
            } == [
                #""Employee.manager: no Employee with id = 99","raw":"13,Di,99"}"#,
                #""Employee.manager: no Employee with id = 16","raw":"16,Gu,16"}"#,
            ])
        #expect(
            try employees(store) == [
                [.integer(50), .text("Boss"), .null], [.integer(10), .text("Ann"), .integer(50)],
                [.integer(11), .text("Bo"), .integer(10)], [.integer(12), .text("Cy"), .integer(11)],
                [.integer(14), .text("Ed"), .integer(12)], [.integer(15), .text("Fe"), .integer(50)],
            ])
    }

    @Test(
        "SQLite's foreign-key enforcement is on again after a step that proved its references, also after a failed one")
    func foreignKeysBackOn() throws {
        let store = try Store.open(at: dir.file("shop.sqlite"), model: SampleModels.shop())
        _ = try ImportStepRunner(
            step: ImportStep(source: try dir.write("c.csv", "id,email\n1,a@x.io\n"), format: .csv, entity: "Customer"),
            store: store
        ).run()
        var step = ImportStep(
            source: try dir.write("o.csv", "number,customer_id\nA-1,1\n"), format: .csv, entity: "Order")
        step.relationships = [RelationshipMapping(relationship: "customer", field: "customer_id", match: "id")]
        #expect(try ImportStepRunner(step: step, store: store).run().inserted == 1)
        #expect(try store.withConnection { try $0.scalar("PRAGMA foreign_keys") } == .integer(1))
        step.source = try dir.write("bad.csv", "number,customer_id\nA-2,7\n")
        #expect(throws: ImportStepFailure.self) { try ImportStepRunner(step: step, store: store).run() }
        #expect(try store.withConnection { try $0.scalar("PRAGMA foreign_keys") } == .integer(1))
        // The store still refuses a dangling reference written by anyone else.
        #expect(throws: FerryError.self) {
            try store.withConnection { try $0.execute(#"INSERT INTO "Order" (number, customer) VALUES ('B-1', 99)"#) }
        }
        #expect(
            try store.withConnection { try $0.rows(#"SELECT number, customer FROM "Order""#) } == [
                [.text("A-1"), .integer(1)]
            ])
    }
}
