import FerryTestSupport
import Foundation
import Testing

/// `--report run.html`: one self-contained, well-formed page with the same counts as the JSON
/// report of the same run, a chart, the verification and the migration.
@Suite("HTML run reports", .serialized)
struct HTMLReportCLITests {
    /// The row the page shows for a step of the JSON report.
    static func row(_ step: [String: Any]) -> String {
        let numbers = ["read", "inserted", "updated", "unchanged", "skipped", "rejected", "written", "deleted"]
            .map { "<td class=\"number\">\(step[$0] as? Int ?? 0)</td>" }.joined()
        let outcome = step["outcome"] as? String ?? ""
        return "<tr><td>\(step["index"] as? Int ?? 0)</td><td>\(step["kind"] as? String ?? "")</td>"
            + "<td>\(step["entity"] as? String ?? "")</td><td>\(step["source"] as? String ?? "")</td>"
            + "<td><span class=\"\(outcome == "failed" ? "failed" : "ok")\">\(outcome)</span></td>\(numbers)"
    }

    /// The page at `path`, checked to be well formed and to name no URL.
    static func page(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let page = try String(contentsOfFile: path, encoding: .utf8)
        #expect(HTMLCheck.problems(in: page) == [], sourceLocation: sourceLocation)
        #expect(page.hasPrefix("<!DOCTYPE html>\n"), sourceLocation: sourceLocation)
        return page
    }

    @Test("ferry run: every step's counts as in the JSON report, a chart, no URL")
    func run() throws {
        let directory = TemporaryDirectory("ferry-html-report")
        let out = directory.url.path
        let job = Fixtures.repository("pipelines/import-shop.yml")
        let html = directory.url.appendingPathComponent("run.html").path
        let json = directory.url.appendingPathComponent("run.json").path
        let first = try runFerry(["run", job, "--param", "out=\(out)", "--report", html, "--quiet"])
        #expect(first.exitCode == 0, "\(first)")
        let second = try runFerry(["run", job, "--param", "out=\(out)", "--report", json, "--quiet"])
        #expect(second.exitCode == 0, "\(second)")

        let page = try Self.page(html)
        #expect(page.contains("<h1>import-shop: succeeded</h1>"))
        let steps = try #require(try jsonObject(file: json)["steps"] as? [[String: Any]])
        #expect(steps.count == 4)
        for step in steps { #expect(page.contains(Self.row(step)), "no row \(Self.row(step))") }
        #expect(page.components(separatedBy: "<rect ").count - 1 == steps.count, "one bar per step")
        #expect(page.contains("<h2>Rejects</h2>"))
        #expect(page.contains("customers.rejects.ndjson"))
        // Grouped by field and reason (values set aside), with the first records.
        #expect(page.contains("<h3>Step 1: rejects by field and reason</h3>"))
        #expect(
            page.contains(
                "<tr><td>age</td><td>age: &apos;…&apos; is not an integer</td><td class=\"number\">1</td><td>record 112 (line 117)</td></tr>"
            ))
    }

    @Test("a failed verification: the checks with their outcomes, exit 3")
    func verification() throws {
        let directory = TemporaryDirectory("ferry-html-verify")
        let html = directory.url.appendingPathComponent("verify.html").path
        let result = try runFerry([
            "run", Fixtures.repository("pipelines/verify-failing.yml"), "--param", "out=\(directory.url.path)",
            "--report", html, "--quiet",
        ])
        #expect(result.exitCode == 3, "\(result)")
        let page = try Self.page(html)
        #expect(page.contains("<h1>verify-failing: failed</h1>"))
        #expect(page.contains(": verification "))
        #expect(page.contains("<span class=\"failed\">failed</span>"))
        #expect(page.contains(" failed, "))
    }

    @Test("ferry migrate: each version step and entity mapping with its counts")
    func migrate() throws {
        let directory = TemporaryDirectory("ferry-html-migrate")
        let store = directory.url.appendingPathComponent("shop.sqlite").path
        try FileManager.default.copyItem(atPath: Fixtures.repository("samples/snapshots/shop-v1.sqlite"), toPath: store)
        let html = directory.url.appendingPathComponent("migrate.html").path
        let result = try runFerry([
            "migrate", store, "--model", Fixtures.repository("samples/models/Shop"), "--to", "2", "--report", html,
        ])
        #expect(result.exitCode == 0, "\(result)")
        let page = try Self.page(html)
        #expect(page.contains("<h2>Step 1: migration Shop 1 → 2</h2>"))
        #expect(page.contains("<p>1 → 2: inferred, "))
        #expect(page.contains("<td>Customer</td><td>Customer</td><td>Customer</td><td class=\"number\">197</td>"))
    }
}
