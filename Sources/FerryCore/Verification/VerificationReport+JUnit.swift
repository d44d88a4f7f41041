/// JUnit XML, as CI systems (Jenkins, GitLab, GitHub Actions reporters) read it.
///
/// ```xml
/// <testsuites name="ferry" tests="3" failures="1" errors="0" skipped="0" time="0.120">
///   <testsuite name="out/shop.sqlite" tests="3" failures="1" errors="0" skipped="0" time="0.120" timestamp="2024-06-30T02:00:00">
///     <testcase classname="ferry.verify.Customer" name="count Customer" time="0.001">
///       <failure message="expected exactly 200 rows, found 197" type="count">…</failure>
///     </testcase>
///   </testsuite>
/// </testsuites>
/// ```
///
/// Each check is a `<testcase>` (`classname` = `ferry.<suite kind>.<entity or "store">`,
/// `name` = the check's name); a failed check has a `<failure>`, a check that could not run an
/// `<error>`, a skipped one `<skipped/>`. Each report (store, or snapshot in CI mode) is one
/// `<testsuite>`.
extension VerificationReport {
    /// A JUnit document with one `<testsuite>` per report.
    public static func junitXML(
        _ reports: [VerificationReport], name: String = "ferry", suiteKind: String = "verify"
    ) -> String {
        let tests = reports.reduce(0) { $0 + $1.tests }
        let failures = reports.reduce(0) { $0 + $1.failures }
        let errors = reports.reduce(0) { $0 + $1.errors }
        let skipped = reports.reduce(0) { $0 + $1.skipped }
        let time = reports.reduce(0.0) { $0 + $1.elapsedSeconds }
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        xml +=
            "<testsuites name=\"\(escape(name))\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"\(skipped)\" time=\"\(seconds(time))\">\n"
        for (index, report) in reports.enumerated() {
            xml += report.junitSuite(id: index, suiteKind: suiteKind)
        }
        xml += "</testsuites>\n"
        return xml
    }

    /// This report alone as a JUnit document.
    public func junitXML(suiteKind: String = "verify") -> String {
        Self.junitXML([self], suiteKind: suiteKind)
    }

    private func junitSuite(id: Int, suiteKind: String) -> String {
        // JUnit's timestamp is ISO-8601 without a zone designator (xs:dateTime pattern in the schema).
        let stamp = timestamp.hasSuffix("Z") ? String(timestamp.dropLast()) : timestamp
        let localTimestamp = stamp.count > 19 ? String(stamp.prefix(19)) : stamp
        var xml =
            "  <testsuite name=\"\(Self.escape(name))\" id=\"\(id)\" package=\"ferry.\(Self.escape(suiteKind))\" hostname=\"localhost\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"\(skipped)\" time=\"\(Self.seconds(elapsedSeconds))\" timestamp=\"\(Self.escape(localTimestamp))\">\n"
        xml += "    <properties>\n"
        xml += "      <property name=\"store\" value=\"\(Self.escape(store))\"/>\n"
        xml += "    </properties>\n"
        for result in results {
            let classname = "ferry.\(suiteKind).\(result.entity ?? "store")"
            xml +=
                "    <testcase classname=\"\(Self.escape(classname))\" name=\"\(Self.escape(result.name))\" time=\"\(Self.seconds(result.elapsedSeconds))\""
            switch result.outcome {
            case .passed:
                xml += "/>\n"
            case .skipped:
                xml += ">\n      <skipped message=\"\(Self.escape(result.message))\"/>\n    </testcase>\n"
            case .failed, .error:
                let element = result.outcome == .failed ? "failure" : "error"
                var body = result.message
                if !result.measured.isEmpty { body += "\nmeasured: \(result.measuredSummary)" }
                for record in result.offending { body += "\n  \(record)" }
                xml +=
                    ">\n      <\(element) message=\"\(Self.escape(result.message))\" type=\"\(Self.escape(result.check))\">\(Self.escape(body))</\(element)>\n    </testcase>\n"
            }
        }
        xml += "    <system-out></system-out>\n"
        xml += "    <system-err></system-err>\n"
        xml += "  </testsuite>\n"
        return xml
    }

    static func seconds(_ value: Double) -> String {
        let milliseconds = Int64((max(0, value) * 1000).rounded())
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

    /// Escapes text for XML attributes and content (see ``XMLEscaping``).
    static func escape(_ text: String) -> String {
        XMLEscaping.escape(text)
    }
}
