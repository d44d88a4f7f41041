import FerryTestSupport
import Foundation
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite("ferry verify and verify steps, through the real binary", .serialized)
struct VerifyCommandTests {
    static let root = TestPaths.packageRoot.path

    /// Runs pipelines/verify-failing.yml into `dir`; returns the run's result.
    func failingRun(_ dir: TemporaryDirectory) throws -> ProcessResult {
        try runFerry([
            "run", "\(Self.root)/pipelines/verify-failing.yml", "--param", "out=\(dir.path)",
            "--junit", dir.file("run.xml"), "--report", dir.file("run.json"),
        ])
    }

    @Test("a job with bad rows and a failing verify step exits 3 with a failing JUnit report")
    func failingJob() throws {
        let dir = TemporaryDirectory()
        let result = try failingRun(dir)
        #expect(result.exitCode == 3)
        #expect(
            result.stderr.hasPrefix(
                "error: 2 of 37 checks failed on '\(dir.file("verify-failing.sqlite"))' (first: validation Customer)"))
        #expect(result.stdout.contains("    - Customer ferry_pk=57 id=1057: email does not match the pattern"))
        let xml = try String(contentsOfFile: dir.file("run.xml"), encoding: .utf8)
        let document = try XMLDocument(data: Data(xml.utf8), options: [])
        let suites = try #require(document.rootElement()?.elements(forName: "testsuite"))
        #expect(
            suites.map { $0.attribute(forName: "name")?.stringValue } == ["step 1 import Customer", "step 2 verify"])
        #expect(suites[1].attribute(forName: "failures")?.stringValue == "2")
        #expect(suites[1].attribute(forName: "tests")?.stringValue == "37")
        let failures = try document.nodes(forXPath: "//testcase[failure]/@name").map { $0.stringValue ?? "" }
        #expect(failures == ["validation Customer", "assertion Customer: NOT email CONTAINS '@'"])
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.file("run.json"))))
                as? [String: Any])
        #expect(report["exit_code"] as? Int == 3)
        let steps = try #require(report["steps"] as? [[String: Any]])
        let verification = try #require(steps[1]["verification"] as? [String: Any])
        #expect(verification["failures"] as? Int == 2)
        #expect(verification["succeeded"] as? Bool == false)
    }

    @Test("ferry verify: every check, cheap checks, expectations, JUnit and JSON")
    func verifyCommand() throws {
        let dir = TemporaryDirectory()
        // The same job without `rebuild`, so that the store stays after the failed verify step.
        let text = try String(contentsOfFile: "\(Self.root)/pipelines/verify-failing.yml", encoding: .utf8)
            .replacingOccurrences(of: "rebuild: true", with: "rebuild: false")
            .replacingOccurrences(of: "../samples", with: "\(Self.root)/samples")
        let job = try dir.write("job.yml", text)
        #expect(try runFerry(["run", job, "--param", "out=\(dir.path)", "--quiet"]).exitCode == 3)
        let store = dir.file("verify-failing.sqlite")
        // Version 1 of the Shop bundle (the store's version; the bundle's current one is 3).
        let model = "\(Self.root)/samples/models/Shop/v1.yml"
        let all = try runFerry([
            "verify", store, "--model", model, "--junit", dir.file("v.xml"), "--report", dir.file("v.json"),
        ])
        #expect(all.exitCode == 3)
        #expect(all.stdout.contains("CHECK"))
        #expect(
            all.stdout.contains(
                "\nvalidation Customer               Customer   FAILED   pattern_email=1 rows=198 violations=1 "))
        #expect(all.stdout.contains("\n    - Customer ferry_pk=57 id=1057: email does not match the pattern"))
        #expect(all.stdout.contains("\(store): 34 checks, 27 passed, 1 failed, 0 errors, 6 skipped in "))
        let xml = try String(contentsOfFile: dir.file("v.xml"), encoding: .utf8)
        #expect(xml.contains(#"tests="34" failures="1" errors="0" skipped="6""#))
        let cheap = try runFerry(["verify", store, "--model", model, "--checks", "cheap", "--quiet"])
        #expect(cheap.exitCode == 0)
        #expect(cheap.stdout.isEmpty, "--quiet prints nothing when every check passed")
        let expectations = try dir.write(
            "expect.yml",
            """
            checks: none
            counts: {Customer: 198, Order: {at_least: 1}}
            records:
              - {entity: Customer, key: {id: 1001}, expect: {name: "Zoë Ångström", age: 41}}
            """)
        let expected = try runFerry(["verify", store, "--expect", expectations])
        #expect(expected.exitCode == 3)
        #expect(expected.stdout.contains("FAILED   count=0 expected=at least 1"))
        let broken = try dir.write("broken.yml", "counts: {Customr: 1}\n")
        let refused = try runFerry(["verify", store, "--expect", broken])
        #expect(refused.exitCode == 64)
        #expect(
            refused.stderr
                == "\(broken):1:10: error: unknown entity 'Customr' in model 'Shop'; did you mean 'Customer'?\n")
        let missing = try runFerry(["verify", dir.file("nope.sqlite")])
        #expect(missing.exitCode == 1)
        #expect(missing.stderr == "error: store '\(dir.file("nope.sqlite"))' does not exist\n")
        let badLevel = try runFerry(["verify", store, "--checks", "most"])
        #expect(badLevel.exitCode == 64)
    }
}
