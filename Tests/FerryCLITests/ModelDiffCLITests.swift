import FerryTestSupport
import Foundation
import Testing

/// Fixtures of the model diff CLI tests.
enum DiffCLIFixtures {
    static var fixtures: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    }
    static func fixture(_ relative: String) -> String { fixtures.appendingPathComponent(relative).path }
}

@Suite("ferry model diff and ferry store version", .serialized)
struct ModelDiffCLITests {
    let bundle = DiffCLIFixtures.fixture("models/Shop")

    @Test("a lightweight step: every change ✓, exit 0")
    func lightweight() throws {
        let result = try runFerry(["model", "diff", bundle, "--from", "1", "--to", "2"])
        #expect(result.exitCode == 0)
        #expect(result.stderr == "")
        #expect(
            result.stdout == """
                Shop 1 → 2
                  Customer
                    ✓ attribute name: renamed from fullName
                    ✓ attribute phone: added (string, optional)
                        warning: if it is fax renamed, add `renamed_from: fax` to Customer.phone, or the values of fax are dropped
                    ✓ attribute level: added (int16, non-optional, default 0)
                    ✓ attribute visits: type int16 → int32 (lossless widening)
                    ✓ attribute fax: removed (string; its values are dropped)
                    ✓ relationship orders: renamed from purchases
                    ✓ unique: uniqueness constraint (email) added
                        warning: the migration fails if stored Customer records share a value of (email); remove duplicates first
                  Order
                    ✓ entity: renamed from Purchase
                  Coupon
                    ✓ entity: added (starts empty)
                verdict: lightweight: Shop 1 → 2 can be migrated with an inferred mapping (9 changes)

                """)
    }

    @Test("a step that needs a mapping: ✗ with reason and fix, exit 65")
    func needsMapping() throws {
        let result = try runFerry(["model", "diff", bundle, "--from", "2"])
        #expect(result.exitCode == 65)
        #expect(
            result.stdout == """
                Shop 2 → 3
                  Customer
                    ✗ attribute tier: added (string, non-optional)
                        reason: new non-optional attribute Customer.tier has no default value; stored Customer records would have none
                        fix: add `default:` to Customer.tier in version 3, or make it optional
                  Order
                    ✗ attribute total: type decimal → double
                        reason: Order.total changes type from decimal to double; lightweight migration converts only lossless widenings
                        fix: write mappings/2-to-3.yml with an expression that converts Order.total, or keep it decimal
                  unchanged: Coupon
                verdict: needs a mapping: 2 changes cannot be inferred; apply the fixes above or write mappings/2-to-3.yml

                """)
    }

    @Test("a range of versions is shown step by step")
    func range() throws {
        let result = try runFerry(["model", "diff", bundle, "--from", "1", "--to", "3"])
        #expect(result.exitCode == 65)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("Shop ") } == ["Shop 1 → 2", "Shop 2 → 3"])
        #expect(
            lines.filter { $0.hasPrefix("  step: ") } == [
                "  step: lightweight", "  step: needs a mapping (2 refused; mappings/2-to-3.yml)",
            ])
    }

    @Test("two model files: renamed_from in the new one names the old one's names")
    func twoFiles() throws {
        let result = try runFerry(["model", "diff", "\(bundle)/v1.yml", "\(bundle)/v2.yml"])
        #expect(result.exitCode == 0)
        #expect(result.stdout.hasPrefix("v1 1 → v2 2\n  Customer\n    ✓ attribute name: renamed from fullName\n"))
    }

    @Test("--json: changes, verdicts, and the inferred mapping of a lightweight step")
    func json() throws {
        let result = try runFerry(["model", "diff", bundle, "--from", "1", "--json"])
        #expect(result.exitCode == 65)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(report["lightweight"] as? Bool == false)
        #expect(report["exit_code"] as? Int == 65)
        #expect(report["from"] as? String == "1")
        #expect(report["to"] as? String == "3")
        let steps = try #require(report["steps"] as? [[String: Any]])
        #expect(steps.map { $0["lightweight"] as? Bool } == [true, false])
        #expect(steps.map { $0["mapping_file"] as? String } == ["mappings/1-to-2.yml", "mappings/2-to-3.yml"])
        let refused = try #require(steps[1]["changes"] as? [[String: Any]])
        #expect(refused.map { $0["kind"] as? String } == ["attribute_added", "attribute_type_changed"])
        #expect(refused.map { $0["verdict"] as? String } == ["refused", "refused"])
        #expect(refused.first?["fix"] as? String == "add `default:` to Customer.tier in version 3, or make it optional")
        #expect(steps[1]["inferred_mapping"] == nil)
        let mapping = try #require(steps[0]["inferred_mapping"] as? [String: Any])
        let entities = try #require(mapping["entities"] as? [[String: Any]])
        #expect(entities.map { $0["destination"] as? String } == ["Customer", "Order", "Coupon"])
        #expect(entities.map { $0["source"] as? String } == ["Customer", "Purchase", nil])
        let attributes = try #require(entities[0]["attributes"] as? [[String: Any]])
        let visits = try #require(attributes.first { $0["destination"] as? String == "visits" })
        #expect(visits["conversion"] as? String == "int16 → int32")
        let level = try #require(attributes.first { $0["destination"] as? String == "level" })
        #expect(level["value_if_nil"] as? String == "0")
        #expect(entities[0]["dropped"] as? [String] == ["fax"])
    }

    @Test("usage errors exit 64")
    func usage() throws {
        let missing = try runFerry(["model", "diff", bundle])
        #expect(missing.exitCode == 64)
        #expect(
            missing.stderr.hasPrefix(
                "Error: give two models (ferry model diff OLD NEW) or one bundle with --from (ferry model diff BUNDLE --from 1 --to 2)\n"
            ))
        let unknown = try runFerry(["model", "diff", bundle, "--from", "4"])
        #expect(unknown.exitCode == 64)
        #expect(unknown.stderr == "\(bundle)/model.yml:1:1: error: model Shop has no version '4' (versions: 1, 2, 3)\n")
        let backwards = try runFerry(["model", "diff", bundle, "--from", "3", "--to", "1"])
        #expect(backwards.exitCode == 64)
        #expect(
            backwards.stderr
                == "\(bundle)/model.yml:1:1: error: version 1 comes before version 3 in model Shop; ferry migrates only to later versions\n"
        )
        let noModel = try runFerry(["model", "diff", "\(bundle)/v9.yml", "\(bundle)/v2.yml"])
        #expect(noModel.exitCode == 64)
        #expect(
            noModel.stderr == "\(bundle)/v9.yml: error: no model at '\(bundle)/v9.yml': No such file or directory\n")
    }

    @Test("--help documents both forms and the exit codes")
    func help() throws {
        let result = try runFerry(["model", "diff", "--help"])
        #expect(result.exitCode == 0)
        #expect(result.stdout.contains("\nferry model diff BUNDLE --from 1 [--to 3]\n"))
        #expect(result.stdout.contains("\nferry model diff OLD NEW [--from 1] [--to 2]\n"))
        #expect(
            result.stdout.contains(
                "Exit codes: 0 every change can be inferred (lightweight) · 65 a mapping file is\nneeded · 64 usage error"
            ))
    }

    @Test("ferry store version: the store's version and the steps to the current one")
    func storeVersion() throws {
        let directory = TemporaryDirectory()
        try directory.write("customers.csv", "id,fullName,email\n1,Ann,ann@example.com\n")
        let imported = try runFerry(
            [
                "import", "customers.csv", "--store", "v1.sqlite", "--model", "\(bundle)/v1.yml", "--entity",
                "Customer", "--quiet",
            ], cwd: directory.path)
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        let result = try runFerry(["store", "version", "v1.sqlite", "--model", bundle], cwd: directory.path)
        #expect(result.exitCode == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines.first == "store:    v1.sqlite")
        #expect(lines.dropFirst().first?.hasPrefix("version:  Shop 1 (hash ") == true)
        #expect(Array(lines.suffix(2)) == ["current:  3", "status:   2 steps behind (1 → 2 → 3); run ferry migrate"])

        let json = try runFerry(["store", "version", "v1.sqlite", "--model", bundle, "--json"], cwd: directory.path)
        let info = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(info["version"] as? String == "1")
        #expect(info["up_to_date"] as? Bool == false)
        #expect(info["path"] as? [String] == ["1", "2", "3"])
    }

    @Test("ferry store version: a store of another model lists the versions and the closest one, exit 64")
    func storeVersionNoMatch() throws {
        let directory = TemporaryDirectory()
        try directory.write("customers.csv", "id,fullName,email\n1,Ann,ann@example.com\n")
        let imported = try runFerry(
            ["import", "customers.csv", "--store", "other.sqlite", "--entity", "Customer", "--quiet"],
            cwd: directory.path)
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        let result = try runFerry(["store", "version", "other.sqlite", "--model", bundle], cwd: directory.path)
        #expect(result.exitCode == 64)
        #expect(result.stdout == "")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines.first?.hasPrefix("error: store 'other.sqlite' (model Customer version 1, hash ") == true)
        #expect(lines.first?.hasSuffix(") matches no version of model Shop") == true)
        #expect(lines.dropFirst().first?.hasPrefix("  versions of Shop: 1 (hash ") == true)
        #expect(
            lines.dropFirst(2).first
                == "  closest: version 1 (0 of 2 entities match); entities that differ: Customer (changed), Purchase (only in version 1)"
        )
    }
}
