import FerryTestSupport
import Foundation
import Testing

/// The verify cell of the conformance suite: `ferry verify` with each of its check levels, every
/// check named in its JUnit report, with the same outcome on every engine but the differences by
/// design (``checksByDesign(_:)``), each asserted with its reason.
extension EngineConformanceTests {
    /// The checks of `ferry verify --checks level` on `store`, from its JUnit report: per check
    /// (`suite name`), its outcome (`passed`, `failed`, or `skipped: reason`).
    static func checks(_ store: EngineStore, level: String) throws -> [(check: String, outcome: String)] {
        let junit = store.directory.url.appendingPathComponent("verify-\(level).xml").path
        try? FileManager.default.removeItem(atPath: junit)
        try ferry(
            ["verify", store.location, "--model", garage, "--checks", level, "--junit", junit, "--quiet"], in: store)
        var checks: [(check: String, outcome: String)] = []
        for line in try String(contentsOfFile: junit, encoding: .utf8).split(separator: "\n") {
            if let match = line.firstMatch(of: #/<testcase classname="([^"]*)" name="([^"]*)"/#) {
                checks.append(("\(match.1) \(match.2)", "passed"))
            } else if let skipped = line.firstMatch(of: #/<skipped message="([^"]*)"/#), !checks.isEmpty {
                let reason = String(skipped.1).replacingOccurrences(of: "&apos;", with: "'")
                    .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
                checks[checks.count - 1].outcome = "skipped: \(reason)"
            } else if line.contains("<failure"), !checks.isEmpty {
                checks[checks.count - 1].outcome = "failed"
            }
        }
        return checks
    }

    /// The checks an engine answers differently by design, each with the start of its reason:
    /// a Core Data store records no ferry model hash, and keeps a one-to-one on both sides (so
    /// both are checked); PostgreSQL checks its own pages and types its columns.
    static func checksByDesign(_ engine: Engine) -> [(check: String, outcome: String)] {
        let entities = ["Passport", "Person", "Tag", "Vehicle"]
        switch engine {
        case .sqlite:
            return [("ferry.verify.Person relationship Person", "skipped: Person stores no relationships of its own")]
        case .coreData:
            return [
                ("ferry.verify.store model_hash", "skipped: the store records no ferry model hash"),
                ("ferry.verify.Person relationship Person.passport", "passed"),
            ]
        case .postgres:
            return [
                ("ferry.verify.store integrity_check", "skipped: PostgreSQL has no integrity_check"),
                ("ferry.verify.store quick_check", "skipped: PostgreSQL has no quick_check"),
                ("ferry.verify.Person relationship Person", "skipped: Person stores no relationships of its own"),
            ]
                + entities.map {
                    ("ferry.verify.\($0) types \($0)", "skipped: PostgreSQL's typed columns hold only values")
                }
        }
    }

    @Test(
        "ferry verify with each check level names every check, with the same outcome on every engine but the differences by design",
        arguments: Engine.available)
    func verifyEveryCheck(engine: Engine) throws {
        let levels = try Self.conforms("verify checks", engine) { engine in
            let store = try EngineStore(engine, name: "checks")
            defer { store.dropSchemas() }
            try Self.loadGarage(store)
            var levels: [String: String] = [:]
            // The checks answered differently by design on some engine: asserted there with their
            // reasons, and compared by name only (a one-to-one's check is named by the side kept).
            let byDesign = Set(Engine.allCases.flatMap { Self.checksByDesign($0).map(\.check) })
            for level in ["all", "cheap", "none"] {
                let checks = try Self.checks(store, level: level)
                for (check, outcome) in Self.checksByDesign(engine) {
                    guard let found = checks.first(where: { $0.check == check }) else { continue }
                    #expect(found.outcome.hasPrefix(outcome), "\(engine): \(check): \(found.outcome)")
                }
                levels["\(level): names"] = checks.map(\.check).filter {
                    !$0.hasPrefix("ferry.verify.Person relationship Person")
                }
                .joined(separator: "\n")
                levels[level] = checks.filter { !byDesign.contains($0.check) }.map { "\($0.check): \($0.outcome)" }
                    .joined(separator: "\n")
            }
            return levels
        }
        let all = levels["all"] ?? ""
        for name in [
            "count Person", "foreign_key_check", "unique Person(personID)", "required Vehicle",
            "relationship Vehicle.owner",
            "relationship Tag.vehicles", "relationship Passport.holder",
        ] {
            #expect(all.contains(" \(name): "), "\(engine): no \(name) in \(all)")
        }
        #expect(!all.contains("failed"), "\(engine): \(all)")
        let counts = ["all", "cheap", "none"].map { (levels[$0] ?? "").split(separator: "\n").count }
        #expect(counts[0] > counts[1] && counts[1] > counts[2], "\(engine): \(counts)")
        #expect(levels["none: names"] == "ferry.verify.store model_hash", "\(engine): \(levels["none: names"] ?? "")")
    }
}
