import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// Digits only, with `+64` for numbers without a country code (the test's stand-in for the
/// sample's PhoneNormalizer, which is built in samples/custom-policy).
final class TestPhoneNormalizer: EntityMigrationPolicy {
    init() {}

    static func normalize(_ phone: String) -> String {
        let digits = phone.filter(\.isNumber)
        if phone.hasPrefix("+") { return "+" + digits }
        return "+64" + (digits.hasPrefix("0") ? String(digits.dropFirst()) : digits)
    }

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        var values = try manager.mappedValues(forSource: source, mapping: mapping)
        if case .string(let phone) = values["phone"] ?? .null { values["phone"] = .string(Self.normalize(phone)) }
        try manager.insertDestinationInstance(values, forSource: source, mapping: mapping)
    }
}

@Suite("Sample snapshots migrate to the current version", .serialized)
struct SampleMigrationTests {
    static let bundlePath = TestPaths.packageRoot.appendingPathComponent("samples/models/Shop").path
    static let snapshots = TestPaths.packageRoot.appendingPathComponent("samples/snapshots").path

    func migrate(_ snapshot: String, in dir: TemporaryDirectory) throws -> (path: String, report: MigrationReport) {
        let bundle = try ModelLoader().load(path: Self.bundlePath)
        let path = dir.file(snapshot)
        try FileManager.default.copyItem(atPath: "\(Self.snapshots)/\(snapshot)", toPath: path)
        let registry = PolicyRegistry()
        registry.register("PhoneNormalizer") { TestPhoneNormalizer() }
        var options = MigrationOptions(registry: registry)
        options.checksums = true
        let migrator = Migrator(
            storePath: path, bundle: bundle, options: options, mappingProvider: MigrationMappings.provider(for: bundle))
        return (path, try migrator.run())
    }

    func rows(_ path: String, _ sql: String) throws -> [[DatabaseValue]] { try Connection(path: path).rows(sql) }

    @Test("v1 → v2 → v3: every customer's values, field by field through the mapping")
    func customersFieldByField() throws {
        let dir = TemporaryDirectory()
        let before = try rows(
            "\(Self.snapshots)/shop-v1.sqlite",
            "SELECT ferry_pk, id, email, name, phone, age, balance, created_at, active, address FROM Customer ORDER BY ferry_pk"
        )
        let (path, report) = try migrate("shop-v1.sqlite", in: dir)
        #expect(report.fromVersion == "1")
        #expect(report.toVersion == "3")
        #expect(report.steps.map { "\($0.from)→\($0.to)" } == ["1→2", "2→3"])
        let after = try rows(
            path,
            "SELECT ferry_pk, id, email, first_name, last_name, phone, age, balance, created_at, active, address, tier FROM Customer ORDER BY ferry_pk"
        )
        #expect(after.count == before.count)
        #expect(after.count == 197)
        for (old, new) in zip(before, after) {
            // Carried unchanged: key, id, email, age, balance, created_at, active, address.
            #expect(new[0] == old[0])
            #expect(new[1] == old[1])
            #expect(new[2] == old[2])
            #expect(new[6] == old[5])
            #expect(new[7] == old[6])
            #expect(new[8] == old[7])
            #expect(new[9] == old[8])
            #expect(new[10] == old[9])
            // name (renamed full_name in v2) split into first and last names.
            let name = (old[3].text ?? "").trimmingCharacters(in: .whitespaces)
            let parts = name.split(separator: " ", maxSplits: 1).map(String.init)
            #expect(new[3] == .text(parts[0]))
            #expect(new[4] == (parts.count > 1 ? .text(parts[1]) : .null))
            // Phones normalised by the policy; the new tier takes its default.
            #expect(new[5] == (old[4].text.map { .text(TestPhoneNormalizer.normalize($0)) } ?? .null))
            #expect(new[11] == .text("standard"))
        }
        // Relationships survive both steps (items were renamed to LineItem in v2).
        #expect(try rows(path, "SELECT count(*) FROM \"Order\" WHERE customer IS NULL") == [[.integer(0)]])
        #expect(try rows(path, "SELECT count(*) FROM LineItem") == [[.integer(1472)]])
        #expect(try rows(path, "PRAGMA foreign_key_check").isEmpty)
        #expect(try rows(path, "PRAGMA integrity_check") == [[.text("ok")]])
    }

    @Test("v2 → v3: one Brand per distinct brand, each product pointing at its brand")
    func brands() throws {
        let dir = TemporaryDirectory()
        let before = try rows(
            "\(Self.snapshots)/shop-v2.sqlite", "SELECT ferry_pk, sku, brand FROM Product ORDER BY ferry_pk")
        let (path, report) = try migrate("shop-v2.sqlite", in: dir)
        #expect(report.steps.count == 1)
        let distinct = Set(before.compactMap { $0[2].text })
        #expect(try rows(path, "SELECT count(*) FROM Brand") == [[.integer(Int64(distinct.count))]])
        let after = try rows(
            path,
            "SELECT p.ferry_pk, p.sku, b.name FROM Product p LEFT JOIN Brand b ON b.ferry_pk = p.brand ORDER BY p.ferry_pk"
        )
        #expect(after == before)
        let checksum = try #require(report.steps[0].entities.first { $0.mapping == "Product" })
        #expect(checksum.unchanged?.contains("sku") == true)
    }
}

@Suite("ferry check on the sample snapshots", .serialized)
struct SnapshotCheckerTests {
    @Test("every shipped snapshot migrates to the current version and meets the expectations")
    func samplesPass() throws {
        let bundle = try ModelLoader().load(path: SampleMigrationTests.bundlePath)
        let registry = PolicyRegistry()
        registry.register("PhoneNormalizer") { TestPhoneNormalizer() }
        var checker = SnapshotChecker(bundle: bundle, registry: registry)
        checker.expectations = try ExpectationsLoader().load(path: "\(SampleMigrationTests.snapshots)/expectations.yml")
        let snapshots = try SnapshotChecker.snapshots(at: SampleMigrationTests.snapshots)
        #expect(snapshots.map { ($0 as NSString).lastPathComponent } == ["shop-v1.sqlite", "shop-v2.sqlite"])
        for snapshot in snapshots {
            let before = try Data(contentsOf: URL(fileURLWithPath: snapshot))
            let report = checker.check(snapshot: snapshot)
            #expect(report.succeeded, "\(report.failedResults.map { "\($0.name): \($0.message)" })")
            #expect(report.results.contains { $0.check == "record" && $0.outcome == .passed })
            #expect(report.results.contains { $0.name.hasPrefix("migrate") && $0.outcome == .passed })
            // The snapshot itself is never modified.
            #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot)) == before)
        }
    }

    @Test("without the policy the 2 → 3 step fails, naming the policy")
    func missingPolicy() throws {
        let bundle = try ModelLoader().load(path: SampleMigrationTests.bundlePath)
        let report = SnapshotChecker(bundle: bundle, registry: PolicyRegistry()).check(
            snapshot: "\(SampleMigrationTests.snapshots)/shop-v2.sqlite")
        #expect(!report.succeeded)
        let failed = try #require(report.failedResults.first)
        #expect(failed.name == "migrate 2 → 3")
        #expect(failed.message.contains("no migration policy named 'PhoneNormalizer' is registered (mapping Customer)"))
    }
}
