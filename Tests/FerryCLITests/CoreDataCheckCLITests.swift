import FerryTestSupport
import Foundation
import Testing

/// `ferry check` on real Core Data snapshots, through the real binaries: both wibosco apps'
/// stores migrate (on private copies) through the apps' Xcode models, mapping models and
/// policies (registered by class name in `ferry-test-policies`) to version 4, with a JUnit test
/// case per version step, and meet the apps' expected values. The snapshots never change.
@Suite(
    "ferry check on Core Data snapshots: both wibosco chains to version 4", .serialized,
    .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
struct CoreDataCheckCLITests {
    static let revised = "wibosco-CoreDataMigrationRevised"
    static let original = "wibosco-CoreDataMigration-Example"
    static func package(_ app: String) -> String { XcodeMappingCLITests.package(app) }
    static func mappings(_ app: String) -> String { XcodeMappingCLITests.mappings(app) }
    static func snapshot(_ app: String, _ name: String) -> String {
        CoreDataSamples.root.appendingPathComponent(
            "\(app)/CoreDataMigration-ExampleTests/Resources/SQLite/\(name).sqlite"
        ).path
    }
    static let v1 = "CoreDataMigration_Example", v2 = "CoreDataMigration_Example 2"
    static let v3 = "CoreDataMigration_Example 3", v4 = "CoreDataMigration_Example 4"
    /// The expectations of samples/coredata-migration (EXPECTED.md's values), shared with the sample.
    static func sampleExpectations(_ number: Int) -> String {
        TestPaths.packageRoot.appendingPathComponent(
            "samples/coredata-migration/expectations/CoreDataMigration_Example_\(number).yml"
        ).path
    }

    static func runPolicies(_ arguments: [String], set: String) throws -> ProcessResult {
        try FerryProcess(
            arguments,
            env: [
                "FERRY_TEST_POLICY_SET": set,
                "FERRY_TEST_POLICY_NAME": "CoreDataMigration_Example.Post2ToPost3MigrationPolicy",
            ],
            executable: FerryBinary.sibling("ferry-test-policies")
        ).wait()
    }

    /// Read-only copies of snapshots (with their `-wal`), as CI would hold them.
    static func copies(_ app: String, _ names: [String], into directory: TemporaryDirectory) throws -> [String] {
        try names.map { try CoreDataStoreCLITests.copy(snapshot(app, $0), into: directory, name: "\($0).sqlite") }
    }

    @Test(
        "Revised app: stores 1, 2, 3 migrate to version 4 with the policy and meet EXPECTED.md's values; a test case per step; snapshots untouched"
    )
    func revisedChain() throws {
        let directory = TemporaryDirectory("ferry-cd-check")
        let stores = try Self.copies(Self.revised, (1...3).map { "CoreDataMigration_Example_\($0)" }, into: directory)
        let before = try stores.map(FileFingerprint.of)
        for (number, store) in zip(1..., stores) {
            let junit = directory.file("check-\(number).xml")
            let result = try Self.runPolicies(
                [
                    "check", store, "--model", Self.package(Self.revised), "--mappings", Self.mappings(Self.revised),
                    "--expect", Self.sampleExpectations(number), "--junit", junit,
                ],
                set: "revised")
            #expect(result.exitCode == 0, "store \(number): \(result)")
            #expect(result.stdout.contains("\(store): ok"), "\(result)")
            let xml = try String(contentsOfFile: junit, encoding: .utf8)
            let steps = [(Self.v1, Self.v2), (Self.v2, Self.v3), (Self.v3, Self.v4)].dropFirst(number - 1)
            for (from, to) in steps {
                #expect(
                    xml.contains("<testcase classname=\"ferry.check.store\" name=\"migrate \(from) → \(to)\""),
                    "store \(number): \(xml)")
            }
            #expect(!xml.contains("<failure"), "\(xml)")
            #expect(xml.contains("name=\"version\""))
        }
        #expect(try stores.map(FileFingerprint.of) == before)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasSuffix(".xml") }
        #expect(left.sorted() == stores.map { ($0 as NSString).lastPathComponent }.sorted(), "\(left)")
    }

    @Test(
        "Revised app without its policy: the migration is refused before its first step, naming the policy and its mapping model (exit 1); a wrong expectation fails with exit 3"
    )
    func revisedFailures() throws {
        let directory = TemporaryDirectory("ferry-cd-check")
        let store = try Self.copies(Self.revised, ["CoreDataMigration_Example_1"], into: directory)[0]
        let junit = directory.file("check.xml")
        let plain = try runFerry([
            "check", store, "--model", Self.package(Self.revised), "--mappings", Self.mappings(Self.revised), "--junit",
            junit,
        ])
        #expect(plain.exitCode == 1, "\(plain)")
        // Every step's policies are resolved before the first step (issue 25): the whole chain fails.
        #expect(
            plain.stdout.contains(
                "migrate \(Self.v1) → \(Self.v4): \(Self.mappings(Self.revised))/Migration2to3ModelMapping.xcmappingmodel/xcmapping.xml:52:5: error: no migration policy named 'CoreDataMigration_Example.Post2ToPost3MigrationPolicy' is registered"
            ),
            "\(plain)")
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(
            xml.contains("<testcase classname=\"ferry.check.store\" name=\"migrate \(Self.v1) → \(Self.v4)\" time="),
            "\(xml)")
        #expect(xml.contains("tests=\"2\" failures=\"1\" errors=\"0\""), "\(xml)")
        // Nothing of the private copies is left in the temporary folder.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                "CoreDataMigration_Example_1.sqlite", "check.xml",
            ])

        let wrong = try directory.write(
            "wrong.yml",
            "counts: {Post: 11}\nrecords:\n  - {entity: Post, key: {postID: FFFECB21-6645-4FDD-B8B0-B960D0E61F5A}, expect: {hexColor: \"000000\"}}\n"
        )
        let failed = try Self.runPolicies(
            [
                "check", store, "--model", Self.package(Self.revised), "--mappings", Self.mappings(Self.revised),
                "--expect", wrong,
            ], set: "revised")
        #expect(failed.exitCode == 3, "\(failed)")
        #expect(failed.stdout.contains("count Post [Post]: expected exactly 11 rows, found 10"), "\(failed)")
        #expect(failed.stdout.contains("hexColor is \"1BB732\", expected \"000000\""), "\(failed)")

        // Expectations name the model's entities: a Core Data table name is refused with a suggestion.
        let tableName = try directory.write("table.yml", "counts: {ZPOST: 10}\n")
        let refused = try Self.runPolicies(
            [
                "check", store, "--model", Self.package(Self.revised), "--mappings", Self.mappings(Self.revised),
                "--expect", tableName,
            ], set: "revised")
        #expect(refused.exitCode != 0, "\(refused)")
        #expect(refused.stdout.contains("ZPOST"), "\(refused)")
    }

    @Test(
        "Original app: stores 1 (1,001 posts), 2 (5,979), 3 (7,995) migrate to version 4, the WAL store (at 4) is verified: posts kept, one Color per Post with hex = the v1 color, hide false"
    )
    func originalChain() throws {
        let directory = TemporaryDirectory("ferry-cd-check")
        let names = [
            "CoreDataMigration_Example_1", "CoreDataMigration_Example_2", "CoreDataMigration_Example_3",
            "CoreDataMigration_Example_WAL",
        ]
        let stores = try Self.copies(Self.original, names, into: directory)
        let before = try stores.map(FileFingerprint.of)
        for (name, store) in zip(names, stores) {
            // Each post's color as the snapshot holds it (read from a scratch copy, -wal included).
            let scratch = directory.file("scratch-\(name).sqlite")
            try FileManager.default.copyItem(atPath: store, toPath: scratch)
            if FileManager.default.fileExists(atPath: store + "-wal") {
                try FileManager.default.copyItem(atPath: store + "-wal", toPath: scratch + "-wal")
            }
            let columns = try StoreSnapshot.texts(scratch, "SELECT name FROM pragma_table_info('ZPOST')").compactMap {
                $0[0]
            }
            // Version 1 has the color on the post, version 2 renamed it hexColor, version 3 moved it to Color.hex.
            let hasColorTable =
                try StoreSnapshot.integers(scratch, "SELECT count(*) FROM sqlite_master WHERE name = 'ZCOLOR'") == [1]
            let colorSQL =
                columns.contains("ZHEXCOLOR")
                ? "SELECT ZPOSTID, ZHEXCOLOR FROM ZPOST"
                : hasColorTable
                    ? "SELECT p.ZPOSTID, c.ZHEX FROM ZPOST p JOIN ZCOLOR c ON c.Z_PK = p.ZCOLOR"
                    : "SELECT ZPOSTID, ZCOLOR FROM ZPOST"
            let colors = try StoreSnapshot.texts(scratch, colorSQL + " ORDER BY 1")
            let posts = try StoreSnapshot.integers(scratch, "SELECT count(*) FROM ZPOST")[0]
            #expect(posts > 0 && colors.count == Int(posts), "\(name)")
            // Every post of the small stores, every 25th of the large ones.
            let checked =
                colors.count > 2000 ? colors.enumerated().filter { $0.offset % 25 == 0 }.map(\.element) : colors
            var yaml = "counts: {Post: \(posts), Color: \(posts)}\nassertions:\n"
            yaml += "  - {entity: Post, where: \"hide == YES OR color == nil\", count: 0}\n"
            yaml += "  - {entity: Color, where: \"post == nil\", count: 0}\n"
            for row in checked {
                guard let id = row[0], let hex = row[1] else { continue }
                yaml += "  - {entity: Post, where: \"postID == '\(id)' AND color.hex == '\(hex)'\", count: 1}\n"
            }
            let expectations = try directory.write("expect-\(name).yml", yaml)
            let junit = directory.file("\(name).xml")
            let result = try Self.runPolicies(
                [
                    "check", store, "--model", Self.package(Self.original), "--mappings", Self.mappings(Self.original),
                    "--expect", expectations, "--junit", junit, "--quiet",
                ],
                set: "original")
            #expect(result.exitCode == 0, "\(name): \(result)")
            let xml = try String(contentsOfFile: junit, encoding: .utf8)
            // The WAL store is at version 4 already: it is verified as it is, in Core Data's layout.
            let last = name.hasSuffix("WAL") ? Self.v4 : Self.v3
            #expect(xml.contains("name=\"migrate \(last) → \(Self.v4)\""), "\(name): \(xml)")
            #expect(!xml.contains("<failure") && !xml.contains("<error"), "\(name)")
        }
        #expect(try stores.map(FileFingerprint.of) == before)
    }

    @Test(
        "a Core Data snapshot already at the current version is verified in its own layout; a damaged one fails its version (exit 1)"
    )
    func currentAndDamaged() throws {
        let directory = TemporaryDirectory("ferry-cd-check")
        let store = try Self.copies(Self.revised, ["CoreDataMigration_Example_3"], into: directory)[0]
        let expectations = try directory.write("expect.yml", "counts: {Post: 12, Section: 14}\n")
        let current = try runFerry([
            "check", store, "--model", Self.package(Self.revised), "--to", Self.v3, "--expect", expectations,
        ])
        #expect(current.exitCode == 0, "\(current)")
        #expect(current.stdout.contains("\(store): ok"), "\(current)")

        let damaged = directory.file("damaged.sqlite")
        let bytes = try Data(
            contentsOf: URL(fileURLWithPath: Self.snapshot(Self.revised, "CoreDataMigration_Example_1")))
        try bytes.prefix(bytes.count / 3).write(to: URL(fileURLWithPath: damaged))
        let result = try runFerry([
            "check", damaged, "--model", Self.package(Self.revised), "--mappings", Self.mappings(Self.revised),
        ])
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stdout.contains("\(damaged): FAILED"), "\(result)")
        #expect(result.stdout.contains("version"), "\(result)")
        #expect(!result.stdout.contains("/ferry-check-"), "messages name the snapshot, not the private copy: \(result)")
        #expect(
            !result.stdout.contains("/ferry-coredata-"), "messages name the snapshot, not the private copy: \(result)")
    }

    @Test("check --mappings must name a folder")
    func mappingsMustBeAFolder() throws {
        let directory = TemporaryDirectory("ferry-cd-check")
        let store = try Self.copies(Self.revised, ["CoreDataMigration_Example_1"], into: directory)[0]
        let result = try runFerry(["check", store, "--model", Self.package(Self.revised), "--mappings", store])
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.contains("--mappings '\(store)' is not a folder"), "\(result)")
    }
    @Test(
        "migrate --dry-run on a Core Data store plans every step from a private copy (store untouched); a step that cannot be inferred changes nothing"
    )
    func dryRun() throws {
        let directory = TemporaryDirectory("ferry-cd-check")
        let store = try CoreDataStoreCLITests.copy(
            Self.snapshot(Self.original, "CoreDataMigration_Example_WAL"), into: directory, name: "App.sqlite")
        let v1 = try Self.copies(Self.original, ["CoreDataMigration_Example_1"], into: directory)[0]
        let plan = try CoreDataStoreCLITests.runUntouched(
            [
                "migrate", v1, "--model", Self.package(Self.original), "--mappings", Self.mappings(Self.original),
                "--dry-run",
            ], store: v1)
        #expect(plan.exitCode == 0, "\(plan)")
        #expect(plan.stdout.contains("\(v1): CoreDataMigration_Example version \(Self.v1) → \(Self.v4)"), "\(plan)")
        #expect(plan.stdout.contains("Migration1to2.xcmappingmodel/xcmapping.xml)"), "\(plan)")
        #expect(plan.stdout.contains("  Post ← Post (1,001 records)"), "\(plan)")
        #expect(plan.stdout.contains("step \(Self.v3) → \(Self.v4) (inferred)"), "\(plan)")

        let current = try CoreDataStoreCLITests.runUntouched(
            ["migrate", store, "--model", Self.package(Self.original), "--dry-run"], store: store)
        #expect(current.exitCode == 0, "\(current)")
        #expect(current.stdout.contains("nothing to do: the store is at the target version"), "\(current)")

        // Without the mapping models, the 2 → 3 step cannot be inferred: the store stays as it was.
        let refused = try CoreDataStoreCLITests.runUntouched(
            ["migrate", v1, "--model", Self.package(Self.original)], store: v1)
        #expect(refused.exitCode != 0, "\(refused)")
        #expect(
            refused.stderr.contains(
                "cannot infer a mapping from CoreDataMigration_Example version \(Self.v2) to version \(Self.v3)"),
            "\(refused)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                "App.sqlite", "App.sqlite-wal", "CoreDataMigration_Example_1.sqlite",
            ])
    }

    @Test(
        "a snapshot whose model has sub-entities migrates on a copy and meets counts that include sub-entities (exit 0); a wrong count fails it (exit 3)"
    )
    func hierarchySnapshot() throws {
        let directory = TemporaryDirectory("ferry-cd-check")
        let store = directory.file("Cars.sqlite")
        try CoreDataSamples.writeInheritanceStore(at: store)
        let package = try Self.carsPackage(in: directory)
        let expectations = try directory.write(
            "cars.yml",
            """
            counts: {Car: 6, Racecar: 2, Sedan: 3, Passenger: 4}
            assertions:
              - {entity: Passenger, where: "car == nil", count: 1}
            records:
              - entity: Racecar
                key: {remoteID: 8}
                expect: {maxSpeed: 320}

            """)
        let junit = directory.file("cars.xml")
        let result = try CoreDataStoreCLITests.runUntouched(
            ["check", store, "--model", package, "--expect", expectations, "--junit", junit], store: store)
        #expect(result.exitCode == 0, "\(result)")
        #expect(try String(contentsOfFile: junit, encoding: .utf8).contains("name=\"migrate 239 → 240\""))
        let wrong = try directory.write("wrong.yml", "counts: {Car: 1}\n")
        let failed = try CoreDataStoreCLITests.runUntouched(
            ["check", store, "--model", package, "--expect", wrong], store: store)
        #expect(failed.exitCode == 3, "\(failed)")
    }

    /// The Sync sample's model `239` (Car with sub-entities Racecar and Sedan), and a second
    /// version `240` of it in which Passenger gains a seat, as a package in `directory`.
    static func carsPackage(in directory: TemporaryDirectory) throws -> String {
        let original = CoreDataSamples.root.appendingPathComponent(
            "3lvis-Sync/Tests/Sync/Models/239.xcdatamodeld/239.xcdatamodel"
        ).path
        let package = directory.file("Cars.xcdatamodeld")
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: original, toPath: package + "/239.xcdatamodel")
        try FileManager.default.createDirectory(
            atPath: package + "/240.xcdatamodel", withIntermediateDirectories: false)
        let contents = try String(contentsOfFile: original + "/contents", encoding: .utf8).replacingOccurrences(
            of: "<attribute name=\"name\" optional=\"YES\" attributeType=\"String\" syncable=\"YES\"/>",
            with:
                "<attribute name=\"name\" optional=\"YES\" attributeType=\"String\" syncable=\"YES\"/><attribute name=\"seat\" optional=\"YES\" attributeType=\"String\" syncable=\"YES\"/>"
        )
        _ = try directory.write("Cars.xcdatamodeld/240.xcdatamodel/contents", contents)
        _ = try directory.write(
            "Cars.xcdatamodeld/.xccurrentversion",
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<dict>\n\t<key>_XCCurrentVersionName</key>\n\t<string>240.xcdatamodel</string>\n</dict>\n</plist>\n"
        )
        return package
    }
}
