import FerryTestSupport
import Foundation
import Testing

/// Validation patterns that crashed `ferry model show` (SIGSEGV while Swift's regex parser
/// recursed into nested character classes) are refused before they are compiled.
@Suite("hostile validation patterns")
struct HostilePatternTests {
    func show(_ pattern: String) throws -> ProcessResult {
        let directory = TemporaryDirectory("ferry-cli-hostile-pattern")
        // Single-quoted YAML: backslashes are literal, a quote is doubled.
        let escaped = pattern.replacingOccurrences(of: "'", with: "''")
        try directory.write(
            "model.yml",
            "name: R\nentities:\n  P:\n    attributes:\n      email: {type: string, pattern: '\(escaped)'}\n")
        return try runFerry(["model", "show", "model.yml"], cwd: directory.path)
    }

    @Test(
        "nested classes, set operations and groups beyond 32 levels are located errors",
        arguments: [
            String(repeating: "[", count: 5_000) + "a" + String(repeating: "]", count: 5_000),
            "[a" + String(repeating: "--[b", count: 2_000) + String(repeating: "]", count: 2_001),
            String(repeating: "(", count: 33) + "a" + String(repeating: ")", count: 33),
            String(repeating: "[[", count: 17) + "a" + String(repeating: "]]", count: 17),
        ])
    func deeplyNested(_ pattern: String) throws {
        let result = try show(pattern)
        #expect(!result.wasSignaled, "\(result)")
        #expect(result.exitCode == 64, "\(result)")
        let expected =
            pattern.count > 1_000
            ? "model.yml:5:39: error: pattern is too long: \(pattern.count) characters; at most 1000 are allowed for 'email'"
            : "model.yml:5:39: error: pattern is nested too deeply: more than 32 levels of groups and character classes for 'email'"
        #expect(result.stderr.contains(expected), "\(result.stderr)")
    }

    @Test("a pattern of 1,001 characters is refused; 1,000 compile and work")
    func length() throws {
        let over = try show("[a-z]" + String(repeating: "x", count: 996))
        #expect(over.exitCode == 64, "\(over)")
        #expect(
            over.stderr.contains("error: pattern is too long: 1001 characters; at most 1000 are allowed for 'email'"),
            "\(over.stderr)")
        let atLimit = try show("[a-z]" + String(repeating: "x", count: 995))
        #expect(atLimit.exitCode == 0, "\(atLimit)")
    }

    @Test(
        "patterns at the nesting limit, escapes and quoted runs are accepted",
        arguments: [
            String(repeating: "(", count: 32) + "a" + String(repeating: ")", count: 32),
            String(repeating: "[", count: 32) + "a" + String(repeating: "]", count: 32),
            String(repeating: "\\(", count: 40) + "a",
            "\\Q" + String(repeating: "[(", count: 40) + "\\E[a-z]+",
            "[((((((((((((((((((((((((((((((((((((((((]+",
        ])
    func accepted(_ pattern: String) throws {
        let result = try show(pattern)
        #expect(result.exitCode == 0, "\(result)")
    }

    @Test("a refused pattern is reported once, at its value")
    func reportedOnce() throws {
        // The loader reports the value's location and leaves the pattern out, so that the model
        // checker, which refuses it too for models made elsewhere, neither compiles nor repeats it.
        let result = try show(String(repeating: "[", count: 40) + "a" + String(repeating: "]", count: 40))
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.components(separatedBy: "pattern is nested too deeply").count == 2, "\(result.stderr)")
    }
}
