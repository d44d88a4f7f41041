import FerryCore
import FerryTestSupport
import Foundation
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Checks a JUnit document against the rules of the JUnit XML schema CI systems read
/// (https://github.com/windyroad/JUnit-Schema): element names, required attributes, number
/// formats, and counts that agree with the test cases. Returns the problems found.
func junitProblems(_ xml: String) throws -> [String] {
    let document = try XMLDocument(data: Data(xml.utf8), options: [])
    var problems: [String] = []
    guard let root = document.rootElement(), root.name == "testsuites" else { return ["root is not <testsuites>"] }
    func attribute(_ element: XMLElement, _ name: String) -> String? { element.attribute(forName: name)?.stringValue }
    func int(_ element: XMLElement, _ name: String) -> Int? { attribute(element, name).flatMap { Int($0) } }
    func isDecimal(_ text: String?) -> Bool {
        text.map { $0.range(of: #"^[0-9]+(\.[0-9]+)?$"#, options: .regularExpression) != nil } ?? false
    }
    var totals = (tests: 0, failures: 0, errors: 0, skipped: 0)
    for child in root.children ?? [] {
        guard let suite = child as? XMLElement else { continue }
        guard suite.name == "testsuite" else {
            problems.append("unexpected <\(suite.name ?? "")> in <testsuites>")
            continue
        }
        for required in ["name", "tests", "failures", "errors", "time", "timestamp", "hostname", "id", "package"]
        where attribute(suite, required) == nil {
            problems.append("<testsuite> lacks '\(required)'")
        }
        if let stamp = attribute(suite, "timestamp"),
            stamp.range(of: #"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$"#, options: .regularExpression)
                == nil
        {
            problems.append("timestamp '\(stamp)' is not an ISO-8601 date-time without a zone")
        }
        if !isDecimal(attribute(suite, "time")) { problems.append("suite time is not a decimal") }
        var counted = (tests: 0, failures: 0, errors: 0, skipped: 0)
        let allowed = ["properties", "testcase", "system-out", "system-err"]
        var order: [String] = []
        for item in suite.children ?? [] {
            guard let element = item as? XMLElement, let name = element.name else { continue }
            if !allowed.contains(name) { problems.append("unexpected <\(name)> in <testsuite>") }
            if order.last != name { order.append(name) }
            guard name == "testcase" else { continue }
            counted.tests += 1
            for required in ["name", "classname", "time"] where attribute(element, required) == nil {
                problems.append("<testcase> lacks '\(required)'")
            }
            if !isDecimal(attribute(element, "time")) { problems.append("testcase time is not a decimal") }
            let outcomes = (element.children ?? []).compactMap { ($0 as? XMLElement)?.name }
            if outcomes.count > 1 { problems.append("a testcase has more than one of failure/error/skipped") }
            for outcome in outcomes {
                switch outcome {
                case "failure", "error":
                    if outcome == "failure" { counted.failures += 1 } else { counted.errors += 1 }
                    if let child = element.elements(forName: outcome).first,
                        attribute(child, "message") == nil || attribute(child, "type") == nil
                    {
                        problems.append("<\(outcome)> lacks 'message' or 'type'")
                    }
                case "skipped": counted.skipped += 1
                default: problems.append("unexpected <\(outcome)> in <testcase>")
                }
            }
        }
        if order != ["properties", "testcase", "system-out", "system-err"]
            && order != ["properties", "system-out", "system-err"]
        {
            problems.append("children of <testsuite> out of order: \(order)")
        }
        if int(suite, "tests") != counted.tests {
            problems.append("tests=\(attribute(suite, "tests") ?? "") but \(counted.tests) test cases")
        }
        if int(suite, "failures") != counted.failures {
            problems.append("failures=\(attribute(suite, "failures") ?? "") but \(counted.failures) failures")
        }
        if int(suite, "errors") != counted.errors {
            problems.append("errors=\(attribute(suite, "errors") ?? "") but \(counted.errors) errors")
        }
        if int(suite, "skipped") != counted.skipped {
            problems.append("skipped=\(attribute(suite, "skipped") ?? "") but \(counted.skipped) skipped")
        }
        totals.tests += counted.tests
        totals.failures += counted.failures
        totals.errors += counted.errors
        totals.skipped += counted.skipped
    }
    if int(root, "tests") != totals.tests || int(root, "failures") != totals.failures
        || int(root, "errors") != totals.errors
    {
        problems.append("<testsuites> totals disagree with its suites")
    }
    return problems
}

@Suite("Verification reports: JUnit XML and JSON")
struct JUnitReportTests {
    static func sampleReport(name: String = "out/shop.sqlite") -> VerificationReport {
        VerificationReport(
            name: name, store: name, timestamp: "2024-06-30T02:00:00.123Z", elapsedSeconds: 0.25,
            results: [
                CheckResult(
                    check: "count", name: "count Customer", entity: "Customer", outcome: .passed,
                    measured: ["count": 197], message: "197 rows", elapsedSeconds: 0.001),
                CheckResult(
                    check: "assertion", name: "assertion Customer: email ENDSWITH \"<&>\"", entity: "Customer",
                    outcome: .failed,
                    measured: ["matching": 2],
                    message: "2 of 197 Customer rows match 'email ENDSWITH \"<&>\"', expected exactly 0",
                    elapsedSeconds: 0.0123,
                    offending: [
                        OffendingRecord(
                            entity: "Customer", primaryKey: 4, keyAttribute: "id", keyValue: "1004", problem: "matches")
                    ]),
                CheckResult(
                    check: "validation", name: "validation Note", entity: "Note", outcome: .skipped,
                    message: "Note has no validation rules"),
                CheckResult(
                    check: "assertion", name: "assertion Customer: emial == nil", entity: "Customer", outcome: .error,
                    message: "no attribute 'emial'\u{1}"),
                CheckResult(
                    check: "quick_check", name: "quick_check", outcome: .passed, message: "ok", elapsedSeconds: 1.5),
            ])
    }

    @Test("the JUnit document follows the schema's rules, with one suite per store or snapshot")
    func junitValid() throws {
        let xml = VerificationReport.junitXML(
            [Self.sampleReport(), Self.sampleReport(name: "snapshots/v1.sqlite")], suiteKind: "check")
        #expect(try junitProblems(xml) == [])
        #expect(xml.contains(#"<testsuites name="ferry" tests="10" failures="2" errors="2" skipped="2" time="0.500">"#))
        #expect(
            xml.contains(
                #"<testsuite name="out/shop.sqlite" id="0" package="ferry.check" hostname="localhost" tests="5" failures="1" errors="1" skipped="1" time="0.250" timestamp="2024-06-30T02:00:00">"#
            ))
        #expect(xml.contains(#"<testcase classname="ferry.check.Customer" name="count Customer" time="0.001"/>"#))
        #expect(
            xml.contains(
                #"<failure message="2 of 197 Customer rows match &apos;email ENDSWITH &quot;&lt;&amp;&gt;&quot;&apos;, expected exactly 0" type="assertion">"#
            ))
        #expect(xml.contains("Customer ferry_pk=4 id=1004: matches</failure>"))
        #expect(xml.contains(#"<skipped message="Note has no validation rules"/>"#))
        #expect(xml.contains(#"<error message="no attribute &apos;emial&apos;\#u{FFFD}" type="assertion">"#))
        #expect(xml.contains(#"<testcase classname="ferry.check.store" name="quick_check" time="1.500"/>"#))
    }

    @Test("the schema checker itself rejects wrong counts and missing attributes")
    func checkerCatchesProblems() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites tests="1" failures="0" errors="0">
              <testsuite name="s" id="0" package="p" hostname="h" tests="2" failures="0" errors="0" skipped="0" time="1" timestamp="2024-01-01T00:00:00Z">
                <properties/>
                <testcase name="a" time="x"><failure/></testcase>
                <system-out/><system-err/>
              </testsuite>
            </testsuites>
            """
        #expect(
            try junitProblems(xml) == [
                "timestamp '2024-01-01T00:00:00Z' is not an ISO-8601 date-time without a zone",
                "<testcase> lacks 'classname'", "testcase time is not a decimal", "<failure> lacks 'message' or 'type'",
                "tests=2 but 1 test cases", "failures=0 but 1 failures", "<testsuites> totals disagree with its suites",
            ])
    }

    @Test("the JSON report has stable keys, counts and every result")
    func json() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(Self.sampleReport())
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(
            object.keys.sorted() == [
                "elapsed_seconds", "errors", "failures", "name", "passed", "results", "skipped", "store", "succeeded",
                "tests", "timestamp",
            ])
        #expect(object["tests"] as? Int == 5)
        #expect(object["succeeded"] as? Bool == false)
        let results = try #require(object["results"] as? [[String: Any]])
        #expect(
            results[1].keys.sorted() == [
                "check", "elapsed_seconds", "entity", "measured", "message", "name", "offending", "outcome",
            ])
        let offending = try #require(results[1]["offending"] as? [[String: Any]])
        #expect(offending[0].keys.sorted() == ["entity", "ferry_pk", "key_attribute", "key_value", "problem"])
        let decoded = try JSONDecoder().decode(VerificationReport.self, from: data)
        #expect(decoded == Self.sampleReport())
    }

    @Test("a failed report becomes a verification error naming every failed check")
    func failure() throws {
        let error = try #require(Self.sampleReport().failure)
        #expect(error.code == .verification)
        #expect(
            error.description == """
                error: 2 of 5 checks failed on 'out/shop.sqlite' (first: assertion Customer: email ENDSWITH "<&>")
                  assertion Customer: email ENDSWITH "<&>": 2 of 197 Customer rows match 'email ENDSWITH "<&>"', expected exactly 0
                  assertion Customer: emial == nil: no attribute 'emial'\u{1}
                """)
    }
}
