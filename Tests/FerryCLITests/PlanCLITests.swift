import FerryTestSupport
import Foundation
import Testing

/// `ferry plan JOB` and `ferry migrate --plan`: what a run would do, with nothing touched (the
/// store files' bytes and modification times unchanged, no file created), and numbers that the
/// real run then confirms.
@Suite("ferry plan and ferry migrate --plan", .serialized)
struct PlanCLITests {
    /// Every file of `folder` (recursively) with its bytes and modification time.
    static func listing(_ folder: String) throws -> [String: String] {
        var files: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let relative = enumerator?.nextObject() as? String {
            let path = (folder as NSString).appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[relative] = try FileFingerprint.of(path)[path]
            }
        }
        return files
    }

    @Test("the Shop import job: every source's bytes and records, as the run then reads them; nothing written")
    func importShop() throws {
        let directory = TemporaryDirectory("ferry-plan-shop")
        let out = directory.url.appendingPathComponent("out").path
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let job = Fixtures.repository("pipelines/import-shop.yml")
        let samples = try Self.listing(Fixtures.repository("samples/data"))

        let text = try runFerry(["plan", job, "--param", "out=\(out)"])
        #expect(text.exitCode == 0, "\(text)")
        #expect(text.stdout.hasPrefix("plan of job import-shop (\(job)): nothing has run, nothing was written\n"))
        #expect(
            text.stdout.contains(
                "   relationship customer: field customer_id matched to Customer.id (missing: reject)\n"))
        #expect(text.stdout.contains("   into OrderItem: on_conflict update, mode append\n"))
        let json = try runFerry(["plan", job, "--param", "out=\(out)", "--format", "json"])
        #expect(json.exitCode == 0, "\(json)")
        let html = try runFerry(["plan", job, "--param", "out=\(out)", "--format", "html"])
        #expect(html.exitCode == 0, "\(html)")
        #expect(HTMLCheck.problems(in: html.stdout) == [])
        #expect(html.stdout.contains("<h2>4. import OrderItem from "))
        #expect(
            html.stdout.contains("<li>relationship product: field sku matched to Product.sku (missing: reject)</li>"))
        #expect(try Self.listing(out).isEmpty, "ferry plan wrote into the output folder")
        #expect(try Self.listing(Fixtures.repository("samples/data")) == samples)

        let plan = try jsonObject(text: json.stdout)
        let steps = try #require(plan["steps"] as? [[String: Any]])
        #expect(steps.count == 4)
        for step in steps {
            let sources = try #require(step["sources"] as? [[String: Any]])
            for source in sources {
                let path = try #require(source["path"] as? String)
                #expect((source["bytes"] as? Int) == fileSize(path), "\(path)")
                #expect((source["estimated"] as? Bool) == false, "a file under 1 MiB is counted")
                #expect(text.stdout.contains("   source \(path): "))
            }
        }

        // The run reads exactly the records the plan counted.
        let report = directory.url.appendingPathComponent("run.json").path
        let run = try runFerry(["run", job, "--param", "out=\(out)", "--report", report])
        #expect(run.exitCode == 0, "\(run)")
        let ran = try #require(try jsonObject(file: report)["steps"] as? [[String: Any]])
        #expect(ran.count == steps.count)
        for (planned, done) in zip(steps, ran) {
            #expect(planned["records"] as? Int == done["read"] as? Int, "step \(planned["index"] ?? "?")")
            #expect(planned["entity"] as? String == done["entity"] as? String)
        }
    }

    @Test("a file over 1 MiB: its records estimated from the first MiB, within 2% of the count")
    func estimate() throws {
        let directory = TemporaryDirectory("ferry-plan-estimate")
        let rows = 30_000
        let data = directory.url.appendingPathComponent("people.csv").path
        #expect(FileManager.default.createFile(atPath: data, contents: Data(BigFiles.csv(ids: 1...rows))))
        let store = directory.url.appendingPathComponent("people.sqlite").path
        let result = try runFerry([
            "plan", Fixtures.peopleJob, "--param", "store=\(store)", "--param", "data=\(data)", "--param",
            "rejects=\(directory.url.appendingPathComponent("rejects.ndjson").path)", "--format", "json",
        ])
        #expect(result.exitCode == 0, "\(result)")
        let step = try #require((try jsonObject(text: result.stdout)["steps"] as? [[String: Any]])?.first)
        let source = try #require((step["sources"] as? [[String: Any]])?.first)
        #expect(source["bytes"] as? Int == fileSize(data))
        #expect(source["estimated"] as? Bool == true)
        #expect(step["records_estimated"] as? Bool == true)
        let records = try #require(source["records"] as? Int)
        #expect(abs(records - rows) * 50 <= rows, "estimated \(records) of \(rows)")
        #expect(try Self.listing(directory.url.path).keys.sorted() == ["people.csv"])
        let text = try runFerry([
            "plan", Fixtures.peopleJob, "--param", "store=\(store)", "--param", "data=\(data)", "--param",
            "rejects=x.ndjson",
        ])
        #expect(text.stdout.contains(" records (estimated from the first MiB)\n"), "\(text)")
        #expect(text.stdout.contains("store: \(store) is created\n"))
    }

    @Test("migrate --plan: each step inferred or mapped, strategies and rows; the store untouched; the run agrees")
    func migratePlan() throws {
        let directory = TemporaryDirectory("ferry-migrate-plan")
        let store = directory.url.appendingPathComponent("shop.sqlite").path
        try FileManager.default.copyItem(atPath: Fixtures.repository("samples/snapshots/shop-v1.sqlite"), toPath: store)
        let model = Fixtures.repository("samples/models/Shop")
        let before = try Self.listing(directory.url.path)

        let text = try runFerry(["migrate", store, "--model", model, "--plan"])
        #expect(text.exitCode == 0, "\(text)")
        #expect(text.stdout.contains("version 1 → 3\n"))
        #expect(text.stdout.contains("step 1 → 2: inferred (lightweight)\n"))
        #expect(text.stdout.contains("step 2 → 3: mapped by \(model)/mappings/2-to-3.yml\n"))
        #expect(text.stdout.contains("  policies: PhoneNormalizer (not registered in this ferry: the step fails)\n"))
        #expect(text.stdout.contains("  Brand ← Product: row by row (distinct values)"))
        #expect(text.stdout.contains("  Customer ← Customer: row by row (policy PhoneNormalizer)"))
        let html = try runFerry(["migrate", store, "--model", model, "--plan", "--format", "html"])
        #expect(html.exitCode == 0, "\(html)")
        #expect(HTMLCheck.problems(in: html.stdout) == [])
        #expect(html.stdout.contains("<td>Brand</td><td>Product</td><td>row by row (distinct values)</td>"))
        let json = try runFerry(["migrate", store, "--model", model, "--plan", "--format", "json", "--to", "2"])
        #expect(json.exitCode == 0, "\(json)")
        #expect(try Self.listing(directory.url.path) == before, "the plan changed or created a file")

        let plan = try jsonObject(text: json.stdout)
        let step = try #require((plan["steps"] as? [[String: Any]])?.first)
        #expect(step["mapping"] as? String == "inferred")
        let planned = try #require(step["entities"] as? [[String: Any]])
        #expect(planned.contains { $0["strategy"] as? String == "INSERT … SELECT" })

        // The migration reads, per entity mapping, the rows the plan said.
        let report = directory.url.appendingPathComponent("migrate.json").path
        let run = try runFerry(["migrate", store, "--model", model, "--to", "2", "--report", report])
        #expect(run.exitCode == 0, "\(run)")
        let done = try #require(
            ((try jsonObject(file: report)["steps"] as? [[String: Any]])?.first?["migration"] as? [String: Any])?[
                "steps"] as? [[String: Any]])
        let read = try #require(done.first?["entities"] as? [[String: Any]])
        for entity in planned {
            let match = read.first { $0["mapping"] as? String == entity["mapping"] as? String }
            #expect(match?["read"] as? Int == entity["rows"] as? Int, "\(entity["mapping"] ?? "?")")
        }
    }

    @Test("the migrate-shop job: its migrate step read from the snapshot it copies, which stays as it was")
    func migrateJob() throws {
        let snapshot = Fixtures.repository("samples/snapshots/shop-v1.sqlite")
        let before = try FileFingerprint.of(snapshot)
        let result = try runFerry(["plan", Fixtures.repository("pipelines/migrate-shop.yml")])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("1. migrate to version 3\n"))
        #expect(result.stdout.contains("which the run copies over the store first"))
        #expect(result.stdout.contains("   step 1 → 2: inferred (lightweight)\n"))
        #expect(try FileFingerprint.of(snapshot) == before)
    }
}
