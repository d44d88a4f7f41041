import FerryTestSupport
import Foundation
import Testing

@Suite("the Shop sample bundle through the command line", .serialized)
struct SampleBundleCLITests {
    let root = TestPaths.packageRoot.path

    @Test("ferry model diff samples/models/Shop --from 1 --to 2: lightweight, exit 0")
    func lightweight() throws {
        let result = try runFerry(["model", "diff", "samples/models/Shop", "--from", "1", "--to", "2"], cwd: root)
        #expect(result.stderr == "")
        #expect(result.exitCode == 0)
        #expect(
            result.stdout == """
                Shop 1 → 2
                  Customer
                    ✓ attribute full_name: renamed from name
                    ✓ attribute tier: added (string, non-optional, default "standard")
                        warning: if it is notes renamed, add `renamed_from: notes` to Customer.tier, or the values of notes are dropped
                    ✓ attribute notes: removed (string; its values are dropped)
                    ✓ relationship reviews: added (to-many Review, optional, starts empty)
                  Product
                    ✓ attribute brand: added (string, optional)
                    ✓ relationship reviews: added (to-many Review, optional, starts empty)
                  LineItem
                    ✓ entity: renamed from OrderItem
                  Review
                    ✓ entity: added (starts empty)
                  unchanged: Order
                verdict: lightweight: Shop 1 → 2 can be migrated with an inferred mapping (8 changes)

                """)
    }

    @Test("ferry model diff samples/models/Shop --from 2 --to 3: needs the mapping file, exit 65")
    func needsMapping() throws {
        let result = try runFerry(["model", "diff", "samples/models/Shop", "--from", "2", "--to", "3"], cwd: root)
        #expect(result.stderr == "")
        #expect(result.exitCode == 65)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.filter { $0.contains("✗") } == [
                "    ✗ attribute first_name: added (string, non-optional)",
                "    ✗ property brand: an attribute → a relationship",
            ])
        #expect(
            lines.last
                == "verdict: needs a mapping: 2 changes cannot be inferred; apply the fixes above or write mappings/2-to-3.yml"
        )
    }

    @Test("ferry validate: import-shop pins version 1; migrate-shop's mapping file loads")
    func pipelines() throws {
        let importShop = try runFerry(["validate", "pipelines/import-shop.yml"], cwd: root)
        #expect(importShop.stderr == "")
        #expect(importShop.stdout == "pipelines/import-shop.yml: ok (4 steps, model Shop version 1)\n")
        #expect(importShop.exitCode == 0)
        let migrateShop = try runFerry(["validate", "pipelines/migrate-shop.yml"], cwd: root)
        #expect(migrateShop.stderr == "")
        #expect(migrateShop.stdout == "pipelines/migrate-shop.yml: ok (1 step, model Shop version 3)\n")
        #expect(migrateShop.exitCode == 0)
    }

    @Test("the snapshots are at versions 1 and 2 of the bundle")
    func snapshots() throws {
        for (file, line) in [
            ("shop-v1.sqlite", "status:   2 steps behind (1 → 2 → 3); run ferry migrate"),
            ("shop-v2.sqlite", "status:   1 step behind (2 → 3); run ferry migrate"),
        ] {
            let result = try runFerry(
                ["store", "version", "samples/snapshots/\(file)", "--model", "samples/models/Shop"], cwd: root)
            #expect(result.exitCode == 0)
            #expect(result.stdout.split(separator: "\n").last.map(String.init) == line)
        }
    }
}
