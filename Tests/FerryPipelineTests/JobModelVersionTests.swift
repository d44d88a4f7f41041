import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@Suite("Jobs: pinned model versions, migrate steps, store copies")
struct JobModelVersionTests {
    @Test("`model: {path, version}` pins a version of the bundle; a plain path means the current one")
    func pinnedVersion() throws {
        let directory = TemporaryDirectory()
        let file = try directory.write(
            "job.yml",
            """
            store: shop.sqlite
            model: {path: \(ShopSample.path), version: "1"}
            steps: []
            """)
        let job = try JobLoader().load(path: file, environment: [:])
        #expect(job.modelPath == ShopSample.path)
        #expect(job.modelLocation == InputLocation(file: file, line: 2, column: 15))
        #expect(job.modelVersion == "1")
        let column = ("model: {path: " + ShopSample.path + ", version: ").utf8.count + 1
        #expect(job.modelVersionLocation == InputLocation(file: file, line: 2, column: column))
        let bundle = try ShopSample.bundle()
        #expect(try job.model(in: bundle).version == "1")

        let plain = try directory.write("plain.yml", "store: shop.sqlite\nmodel: \(ShopSample.path)\nsteps: []\n")
        let current = try JobLoader().load(path: plain, environment: [:])
        #expect(current.modelVersion == nil)
        #expect(try current.model(in: bundle).version == "3")
    }

    @Test("an unknown pinned version, a model without a path, unknown keys")
    func badModel() throws {
        let directory = TemporaryDirectory()
        let file = try directory.write(
            "job.yml",
            """
            store: shop.sqlite
            model: {path: \(ShopSample.path), version: "4"}
            steps: []
            """)
        let job = try JobLoader().load(path: file, environment: [:])
        let column = ("model: {path: " + ShopSample.path + ", version: ").utf8.count + 1
        #expect(
            renderedErrors { _ = try job.model(in: try ShopSample.bundle()) } == [
                "\(file):2:\(column): error: model Shop has no version '4' (versions: 1, 2, 3)"
            ])
        let broken = try directory.write(
            "broken.yml",
            """
            store: shop.sqlite
            model: {version: "1", pth: x}
            steps: []
            """)
        #expect(
            renderedErrors { _ = try JobLoader().load(path: broken, environment: [:]) } == [
                "\(broken):2:8: error: 'model' needs a 'path' (a bundle folder, model.yml, or a model file)",
                "\(broken):2:23: error: unknown key 'pth' in 'model'; did you mean 'path'?",
            ])
    }

    @Test("migrate steps: a target version, backups, and the current version by default")
    func migrateSteps() throws {
        let directory = TemporaryDirectory()
        let file = try directory.write(
            "job.yml",
            """
            store: shop.sqlite
            model: \(ShopSample.path)
            steps:
              - migrate: {to: "3", backup: false}
              - migrate:
              - migrate: {too: "3", backup: maybe}
            """)
        #expect(
            renderedErrors { _ = try JobLoader().load(path: file, environment: [:]) } == [
                "\(file):6:15: error: unknown key 'too' in a migrate step; did you mean 'to'?",
                "\(file):6:33: error: expected a boolean for 'backup' but found 'maybe'",
            ])
        try directory.write(
            "job.yml",
            """
            store: shop.sqlite
            model: \(ShopSample.path)
            steps:
              - migrate: {to: "3", backup: false}
              - migrate:
            """)
        let job = try JobLoader().load(path: file, environment: [:])
        #expect(job.steps.map(\.kind) == ["migrate", "migrate"])
        guard case .migrate(let first) = job.steps[0], case .migrate(let second) = job.steps[1] else {
            Issue.record("expected two migrate steps")
            return
        }
        #expect(
            first
                == MigrateStep(
                    to: "3", backup: false, location: InputLocation(file: file, line: 4, column: 5),
                    toLocation: InputLocation(file: file, line: 4, column: 19)))
        #expect(second == MigrateStep(to: nil, backup: true, location: InputLocation(file: file, line: 5, column: 5)))
        #expect(JobValidator().validate(job, model: try ShopSample.bundle().current).isEmpty)
    }

    @Test("`copy_from:` is resolved against the job's folder; not with :memory: or rebuild")
    func copyFromKeys() throws {
        let directory = TemporaryDirectory()
        let file = try directory.write(
            "job.yml", "store: {path: out/a.sqlite, copy_from: snapshots/v1.sqlite}\nsteps: []\n")
        #expect(
            try JobLoader().load(path: file, environment: [:]).store.copyFrom
                == directory.url.appendingPathComponent("snapshots/v1.sqlite").standardizedFileURL.path)
        let memory = try directory.write("memory.yml", "store: {path: \":memory:\", copy_from: v1.sqlite}\nsteps: []\n")
        let rebuild = try directory.write(
            "rebuild.yml", "store: {path: a.sqlite, rebuild: true, copy_from: v1.sqlite}\nsteps: []\n")
        #expect(
            renderedErrors { _ = try JobLoader().load(path: memory, environment: [:]) } == [
                "\(memory):1:38: error: 'copy_from' needs a store file, not \":memory:\""
            ])
        #expect(
            renderedErrors { _ = try JobLoader().load(path: rebuild, environment: [:]) } == [
                "\(rebuild):1:51: error: 'copy_from' and 'rebuild: true' exclude each other: a rebuilt store starts empty"
            ])
    }

    @Test("a job on a copy of the v1 snapshot: the copy is made fresh on every run, the snapshot untouched")
    func copyFromRun() throws {
        let directory = TemporaryDirectory()
        let snapshot = TestPaths.packageRoot.appendingPathComponent("samples/snapshots/shop-v1.sqlite").path
        let before = try Data(contentsOf: URL(fileURLWithPath: snapshot))
        let file = try directory.write(
            "job.yml",
            """
            store: {path: out/shop.sqlite, copy_from: \(snapshot)}
            model: {path: \(ShopSample.path), version: "1"}
            steps:
              - import: {source: more.csv, entity: Product, on_conflict: update}
            """)
        try directory.write(
            "more.csv", "sku,name,price,uuid\nZZZ-0001,Extra,1.00,6f1c29a4-0d3c-4a57-9d1e-2d3b4c5d6e7f\n")
        let job = try JobLoader().load(path: file, environment: [:])
        let model = try job.model(in: try ShopSample.bundle())
        for _ in 0..<2 {
            let report = JobRunner(job: job, model: model).run()
            #expect(report.outcome == "succeeded")
            let store = try Store.open(
                at: directory.file("out/shop.sqlite"), model: model, options: Store.Options(createIfMissing: false))
            let counts = Dictionary(uniqueKeysWithValues: try store.entityCounts().map { ($0.entity, $0.count) })
            #expect(counts == ["Customer": 197, "Product": 51, "Order": 497, "OrderItem": 1472])
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot)) == before)

        let missing = try directory.write(
            "missing.yml",
            """
            store: {path: out/other.sqlite, copy_from: nowhere.sqlite}
            model: {path: \(ShopSample.path), version: "1"}
            steps: []
            """)
        let report = JobRunner(job: try JobLoader().load(path: missing, environment: [:]), model: model).run()
        #expect(report.outcome == "failed")
        #expect(report.steps.map(\.kind) == ["copy"])
        #expect(
            report.steps.first?.error
                == "error: cannot copy the store '\(directory.file("nowhere.sqlite"))': No such file or directory")
    }

    @Test("a migrate step migrates the job's store, later steps see the new version")
    func migrateStep() throws {
        let directory = TemporaryDirectory()
        let snapshot = TestPaths.packageRoot.appendingPathComponent("samples/snapshots/shop-v1.sqlite").path
        let file = try directory.write(
            "job.yml",
            """
            store: {path: shop.sqlite, copy_from: \(snapshot)}
            model: {path: \(ShopSample.path), version: "2"}
            steps:
              - migrate: {to: "2"}
              - verify: {counts: {Customer: 197, LineItem: 1472}}
            """)
        let job = try JobLoader().load(path: file, environment: [:])
        let bundle = try ShopSample.bundle()
        let report = JobRunner(job: job, model: try job.model(in: bundle), bundle: bundle).run()
        #expect(report.outcome == "succeeded", "\(report.steps.compactMap(\.error))")
        #expect(report.steps.map(\.kind) == ["migrate", "verify"])
        #expect(report.steps.first?.migration?.toVersion == "2")
        #expect(try Store.metadata(at: directory.file("shop.sqlite"))?.modelVersion == "2")
    }

    @Test("a migrate step needs a bundle")
    func migrateNeedsBundle() throws {
        let directory = TemporaryDirectory()
        let file = try directory.write(
            "job.yml", "store: shop.sqlite\nmodel: \(ShopSample.path)\nsteps:\n  - migrate:\n")
        let job = try JobLoader().load(path: file, environment: [:])
        let report = JobRunner(job: job, model: try ShopSample.bundle().current).run()
        #expect(report.outcome == "failed")
        #expect(
            report.steps.last?.error
                == "\(file):4:5: error: a migrate step needs the job's model to be a bundle of versions")
    }
}

@Suite("JobValidator: migrate steps against the bundle")
struct MigrateValidationTests {
    /// A copy of the Shop bundle in a temporary directory, to remove or break its mapping file.
    static func bundleCopy(in directory: TemporaryDirectory) throws -> String {
        let copy = directory.file("Shop")
        try FileManager.default.copyItem(atPath: ShopSample.path, toPath: copy)
        return copy
    }

    @Test("the sample job validates: the 2-to-3 mapping file loads")
    func sample() throws {
        let job = try JobLoader().load(
            path: TestPaths.packageRoot.appendingPathComponent("pipelines/migrate-shop.yml").path, environment: [:])
        #expect(
            job.store.copyFrom
                == TestPaths.packageRoot.appendingPathComponent("samples/snapshots/shop-v1.sqlite").standardizedFileURL
                .path)
        #expect(JobValidator().validateMigrations(job, bundle: try ShopSample.bundle()).map(\.description) == [])
    }

    @Test("an unknown target, a missing mapping file, a broken one")
    func problems() throws {
        let directory = TemporaryDirectory()
        let shop = try Self.bundleCopy(in: directory)
        let file = try directory.write(
            "job.yml", "store: s.sqlite\nmodel: Shop\nsteps:\n  - migrate: {to: \"4\"}\n  - migrate:\n")
        let job = try JobLoader().load(path: file, environment: [:])
        try FileManager.default.removeItem(atPath: shop + "/mappings/2-to-3.yml")
        #expect(
            JobValidator().validateMigrations(job, bundle: try ModelLoader().load(path: shop)).map(\.description) == [
                "\(file):4:19: error: model Shop has no version '4' to migrate to (versions: 1, 2, 3)",
                """
                \(file):5:5: error: cannot infer a mapping from Shop version 2 to version 3: 2 changes need a mapping file (mappings/2-to-3.yml)
                  Customer.first_name: new non-optional attribute Customer.first_name has no default value; stored Customer records would have none; fix: add `default:` to Customer.first_name in version 3, or make it optional, or add `renamed_from: full_name` if it is full_name renamed
                  Product.brand: Product.brand changes from an attribute to a relationship; fix: write mappings/2-to-3.yml that fills Product.brand from the old attribute
                """,
            ])
        try "entities:\n  Custmer: {}\n".write(toFile: shop + "/mappings/2-to-3.yml", atomically: true, encoding: .utf8)
        let mapping = shop + "/mappings/2-to-3.yml"
        #expect(
            JobValidator().validateMigrations(job, bundle: try ModelLoader().load(path: shop)).map(\.description) == [
                "\(file):4:19: error: model Shop has no version '4' to migrate to (versions: 1, 2, 3)",
                "\(mapping):1:1: error: the file does not cover Customer.first_name: new non-optional attribute Customer.first_name has no default value; stored Customer records would have none; add `attributes: {first_name: …}` under `Customer` in this file",
                "\(mapping):1:1: error: the file does not cover Product.brand: Product.brand changes from an attribute to a relationship; add `relationships: {brand: …}` under `Product` in this file",
                "\(mapping):2:3: error: unknown destination entity 'Custmer' in Shop version 3; did you mean 'Customer'?\n  a second mapping into an entity needs `entity:` naming it",
            ])
    }
}
