import FerryCore
import FerryFormats
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// What `ferry import` settles in the library before its records are imported (`ImportTarget`,
/// `ImportInference`), and the one runner its one-step job goes through (`JobRunner.run(on:into:)`).
@Suite("Import orchestration")
struct ImportOrchestrationTests {
    /// Settles the model of an import of `file` into `store` and runs it as a one-step job.
    func importInferred(
        _ file: String, into store: String, entity: String = "people", alter: Bool = false, dryRun: Bool = false
    ) throws -> (notes: [String], model: ObjectModel, report: RunReport, wroteScratch: Bool) {
        let target = ImportTarget(store: store, dryRun: dryRun)
        defer { target.close() }
        var step = ImportStep(source: file, format: .csv, entity: entity)
        step.coercion.nullTokens = [""]
        // As ferry import does: --alter is on_new_field: add; without it a new column is left out.
        step.drift.newField = alter ? .add : .ignore
        var inference = ImportInference()
        inference.alter = alter
        let inferred = try inference.resolve(&step, target: target)
        var options = Store.Options()
        options.writerLock = target.lockPolicy
        let opened = try Store.open(at: target.path, model: inferred.model, options: options)
        step.verify = false
        let job = Job(
            name: "ferry import", path: "ferry import", store: StoreReference(path: store), modelPath: nil,
            steps: [.import(step)])
        let runner = JobRunner(job: job, model: inferred.model)
        runner.dryRun = dryRun
        runner.readers = [1: inferred.reader]
        var report = RunReport(
            command: "import", job: job.name, jobFile: nil, store: store, model: inferred.model.name,
            modelVersion: inferred.model.version, dryRun: dryRun)
        runner.run(on: opened, into: &report)
        return (inferred.notes, inferred.model, report, target.isScratch)
    }

    @Test(
        "an inferred entity is imported from the sampled reader; --alter adds a later file's new column, without it the column is left out"
    )
    func inferThenAlter() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("people.sqlite")
        let first = try dir.write("a.csv", "id,First Name\n1,Ann\n2,Bob\n")
        let created = try importInferred(first, into: store)
        #expect(created.notes == [#"inferred people: id int64, first_name string (from "First Name")"#])
        #expect(created.model.version == "1")
        #expect(created.report.outcome == "succeeded")
        #expect(created.report.steps.map(\.inserted) == [2])
        #expect(!created.wroteScratch)

        let second = try dir.write("b.csv", "id,First Name,city\n3,Cy,Oslo\n")
        let kept = try importInferred(second, into: store)
        #expect(kept.notes.isEmpty)
        #expect(kept.model.version == "1")
        #expect(kept.report.steps.map(\.inserted) == [1])

        let third = try dir.write("c.csv", "id,First Name,city\n4,Di,Bergen\n")
        let altered = try importInferred(third, into: store, alter: true)
        #expect(altered.notes == ["added to people: city string"])
        #expect(altered.model.version == "2")
        #expect(altered.report.steps.map(\.inserted) == [1])
        let recorded = try #require(try Store.metadata(at: store)?.model?.entity(named: "people"))
        #expect(recorded.attributes.map(\.name) == ["id", "first_name", "city"])
        let store2 = try Store.open(at: store, model: altered.model)
        #expect(try store2.entityCount("people") == 4)
    }

    @Test(
        "a dry run that adds a table imports into a copy: the store keeps its model and rows, and the copy is removed")
    func dryRunAddsTableToCopy() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("people.sqlite")
        _ = try importInferred(try dir.write("a.csv", "id,name\n1,Ann\n"), into: store)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let leftovers = Set(try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()))

        let dry = try importInferred(
            try dir.write("cities.csv", "name,country\nOslo,NO\n"), into: store, entity: "cities", dryRun: true)
        #expect(dry.notes == ["inferred cities: name string, country string"])
        #expect(dry.wroteScratch)
        #expect(dry.report.outcome == "dry_run")
        #expect(dry.report.steps.map(\.inserted) == [1])
        #expect(try Store.metadata(at: store)?.model?.entityNames == ["people"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        let after = Set(try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()))
        #expect(after.subtracting(leftovers).filter { $0.hasPrefix("ferry-dry-run-") }.isEmpty)
    }

    @Test("--type or --unique on an entity the store already has is refused before anything changes")
    func changesToRecordedEntityRefused() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("people.sqlite")
        let file = try dir.write("a.csv", "id,name\n1,Ann\n")
        _ = try importInferred(file, into: store)
        let target = ImportTarget(store: store, dryRun: false)
        defer { target.close() }
        var step = ImportStep(source: file, format: .csv, entity: "people")
        var retyped = ImportInference()
        retyped.typeOverrides = ["id": .string]
        let typeError = #expect(throws: FerryError.self) { try retyped.resolve(&step, target: target) }
        #expect(typeError?.code == .usage)
        #expect(typeError?.message.contains("the store already has people.id as int64") == true)
        var constrained = ImportInference()
        constrained.unique = [["name"]]
        let uniqueError = #expect(throws: FerryError.self) { try constrained.resolve(&step, target: target) }
        #expect(uniqueError?.message.contains("--unique applies only when a model is inferred") == true)
        #expect(try Store.metadata(at: store)?.model?.version == "1")
    }

    @Test("--type naming no column of the input is refused with the input's columns")
    func unknownTypeColumnRefused() throws {
        let dir = TemporaryDirectory()
        let target = ImportTarget(store: dir.file("new.sqlite"), dryRun: false)
        defer { target.close() }
        var step = ImportStep(source: try dir.write("a.csv", "id,name\n1,Ann\n"), format: .csv, entity: "people")
        var inference = ImportInference()
        inference.typeOverrides = ["nmae": .string]
        let error = #expect(throws: FerryError.self) { try inference.resolve(&step, target: target) }
        #expect(error?.message.contains("--type nmae=…: the input has no column 'nmae' (columns: id, name)") == true)
        #expect(!FileManager.default.fileExists(atPath: dir.file("new.sqlite")))
    }

    @Test("running on an open store refuses a job that migrates, and names several files in an import's title")
    func runOnOpenStore() throws {
        let dir = TemporaryDirectory()
        let model = ObjectModel(
            name: "M", version: "1",
            entities: [EntityDescription(name: "E", attributes: [AttributeDescription(name: "a", type: .string)])])
        let store = try Store.open(at: dir.file("m.sqlite"), model: model)
        let job = Job(
            name: "j", path: "j.yml", store: StoreReference(path: dir.file("m.sqlite")), modelPath: nil,
            steps: [.migrate(MigrateStep(to: "2"))])
        var report = RunReport(
            command: "run", job: "j", jobFile: nil, store: "m.sqlite", model: "M", modelVersion: "1", dryRun: false)
        JobRunner(job: job, model: model).run(on: store, into: &report)
        #expect(report.outcome == "failed")
        #expect(report.steps.first?.error?.contains("runs on the store file") == true)

        var step = ImportStep(
            source: try dir.write("a.csv", "a\nx\n"), format: .csv, entity: "E")
        #expect(step.title == "import E from \(dir.file("a.csv"))")
        step.sources = [dir.file("a.csv"), try dir.write("b.csv", "a\ny\n")]
        #expect(step.title == "import E from 2 files (\(dir.file("a.csv")), \(dir.file("b.csv")))")
    }
}
