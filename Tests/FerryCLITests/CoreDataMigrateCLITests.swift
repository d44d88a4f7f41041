import FerryTestSupport
import Foundation
import Testing

/// `ferry migrate` on real Core Data stores, in place, through the real binaries: the result is
/// a Core Data store of the new version (its tables, `Z_ENT`, `Z_PRIMARYKEY`, `Z_OPT`,
/// metadata), read back by ferry as that version; the original is kept as a backup; rows only
/// in a `-wal` are migrated; SIGKILL at any moment leaves the original or the migrated store.
@Suite(
    "ferry migrate on Core Data stores, in place", .serialized,
    .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
struct CoreDataMigrateCLITests {
    static let revised = CoreDataCheckCLITests.revised, original = CoreDataCheckCLITests.original
    static let v3 = CoreDataCheckCLITests.v3, v4 = CoreDataCheckCLITests.v4

    /// A writable copy of a wibosco store.
    static func store(
        _ app: String, _ name: String, in directory: TemporaryDirectory, as file: String = "App.sqlite"
    ) throws -> String {
        try CoreDataStoreCLITests.writableCopy(CoreDataCheckCLITests.snapshot(app, name), into: directory, name: file)
    }

    static func migrate(_ store: String, app: String, set: String, _ more: [String] = []) throws -> FerryProcess {
        try FerryProcess(
            [
                "migrate", store, "--model", CoreDataCheckCLITests.package(app), "--mappings",
                CoreDataCheckCLITests.mappings(app), "--quiet",
            ] + more,
            env: [
                "FERRY_TEST_POLICY_SET": set,
                "FERRY_TEST_POLICY_NAME": "CoreDataMigration_Example.Post2ToPost3MigrationPolicy",
            ],
            executable: FerryBinary.sibling("ferry-test-policies"))
    }

    @Test(
        "Revised store 1 → 4 in place: a Core Data store of version 4 with EXPECTED.md's values, its UUID kept, hashes computed without a compiled model; backup = original"
    )
    func revisedInPlace() throws {
        let directory = TemporaryDirectory("ferry-cd-migrate")
        let store = try Self.store(Self.revised, "CoreDataMigration_Example_1", in: directory)
        let pristine = try Data(contentsOf: URL(fileURLWithPath: store))
        let uuid = try StoreSnapshot.texts(store, "SELECT Z_UUID FROM Z_METADATA")
        let dates = try Self.dateBits(store)
        let result = try Self.migrate(store, app: Self.revised, set: "revised", ["--checksums"]).wait()
        #expect(result.exitCode == 0, "\(result)")

        // Core Data's layout of version 4: its tables and bookkeeping.
        #expect(
            try StoreSnapshot.texts(store, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map {
                $0[0] ?? ""
            }
                == ["ZPOST", "ZSECTION", "Z_METADATA", "Z_MODELCACHE", "Z_PRIMARYKEY"])
        #expect(
            try StoreSnapshot.texts(store, "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") == [
                ["1", "Post", "0", "10"], ["2", "Section", "0", "10"],
            ])
        #expect(
            try StoreSnapshot.integers(
                store, "SELECT count(*) FROM ZPOST WHERE Z_ENT = 1 AND Z_OPT >= 1 AND ZSOFTDELETED = 0") == [10])
        #expect(
            try StoreSnapshot.integers(
                store, "SELECT count(*) FROM ZSECTION WHERE Z_ENT = 2 AND Z_OPT = 1 AND ZINDEX = 0") == [10])
        #expect(
            try StoreSnapshot.integers(
                store,
                "SELECT count(*) FROM ZPOST p WHERE (SELECT count(*) FROM ZSECTION s WHERE s.ZPOST = p.Z_PK) != 1") == [
                    0
                ])
        // Values in Core Data's forms: dates as seconds since 2001. The 2 → 3 step's policy handles
        // each post as ferry values, whose dates are exact: every bit of every date is kept.
        #expect(dates.count == 10)
        #expect(try Self.dateBits(store) == dates)
        #expect(
            try StoreSnapshot.texts(
                store,
                "SELECT p.ZHEXCOLOR, p.ZDATE, s.ZTITLE, s.ZBODY FROM ZPOST p JOIN ZSECTION s ON s.ZPOST = p.Z_PK WHERE p.ZPOSTID = 'FFFECB21-6645-4FDD-B8B0-B960D0E61F5A'"
            )
                == [["1BB732", "569186950.058821", "Test...", "Test body"]])
        #expect(try StoreSnapshot.texts(store, "SELECT Z_UUID FROM Z_METADATA") == uuid)

        // ferry reads it back as version 4: its version, its checks, the sample's expectations.
        let package = CoreDataCheckCLITests.package(Self.revised)
        let info = try runFerry(["store", "info", store, "--model", package, "--json"])
        #expect(info.exitCode == 0, "\(info)")
        #expect(info.stdout.contains("\"CoreDataMigration_Example 4\""), "\(info)")
        #expect(
            info.stdout.contains("\"hash\""),
            "without --compiled-model the metadata records the computed hashes: \(info)"
        )
        let verify = try runFerry([
            "verify", store, "--model", package, "--expect", CoreDataCheckCLITests.sampleExpectations(1),
        ])
        #expect(verify.exitCode == 0, "\(verify)")

        // The backup is the original, byte for byte.
        let backups = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix("App.sqlite.backup-")
        }
        #expect(backups.count == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.file(backups[0]))) == pristine)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
                $0.contains("ferry-migrating")
            }.isEmpty)

        // Migrating again finds nothing to do.
        let again = try Self.migrate(store, app: Self.revised, set: "revised").wait()
        #expect(again.exitCode == 0, "\(again)")
    }

    /// Every post's date as the bit pattern of the double the store holds, by postID (17
    /// significant digits identify a double).
    static func dateBits(_ store: String) throws -> [String: UInt64] {
        var bits: [String: UInt64] = [:]
        let sql = "SELECT ZPOSTID, printf('%!.17g', ZDATE) FROM ZPOST WHERE ZDATE IS NOT NULL"
        for row in try StoreSnapshot.texts(store, sql) {
            guard let id = row[0], let text = row[1], let seconds = Double(text) else { continue }
            bits[id] = seconds.bitPattern
        }
        return bits
    }

    @Test(
        "Revised store 1 → 4 in place through the Section-per-Post policy written by position (the row API): the store the dictionary API gives, row for row"
    )
    func revisedThroughRowPolicy() throws {
        let directory = TemporaryDirectory("ferry-cd-migrate")
        var tables: [String: [[String?]]] = [:]
        for set in ["revised", "revised-rows"] {
            let store = try Self.store(Self.revised, "CoreDataMigration_Example_1", in: directory, as: "\(set).sqlite")
            let result = try Self.migrate(store, app: Self.revised, set: set, ["--no-backup"]).wait()
            #expect(result.exitCode == 0, "\(set): \(result)")
            for sql in [
                "SELECT * FROM ZPOST ORDER BY Z_PK", "SELECT * FROM ZSECTION ORDER BY Z_PK",
                "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT",
            ] {
                let rows = try StoreSnapshot.texts(store, sql)
                if let dictionaryAPI = tables[sql] {
                    #expect(rows == dictionaryAPI, "the row API's \(sql) differs from the dictionary API's")
                } else {
                    tables[sql] = rows
                }
            }
        }
        // The policy ran: one Section per Post, its title made from the post's content.
        #expect(tables["SELECT * FROM ZSECTION ORDER BY Z_PK"]?.count == 10)
    }

    @Test(
        "Original store 1 → 4 in place through Migration1to2 and the Color-per-Post policy: every post's date keeps every bit, sub-millisecond digits included"
    )
    func exactDatesThroughPolicy() throws {
        let directory = TemporaryDirectory("ferry-cd-migrate")
        let store = try Self.store(Self.original, "CoreDataMigration_Example_1", in: directory)
        let dates = try Self.dateBits(store)
        #expect(dates.count == 1001)
        // 999 of them carry digits below the millisecond, as Core Data writes Date().
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM ZPOST WHERE ZDATE != round(ZDATE, 3)") == [999])
        let result = try Self.migrate(store, app: Self.original, set: "original", ["--no-backup", "--checksums"]).wait()
        #expect(result.exitCode == 0, "\(result)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM ZCOLOR") == [1001], "the policy ran")
        #expect(try Self.dateBits(store) == dates)
    }

    @Test(
        "Original store 1 → 2 through a mapping whose values are computed in Swift ($source.date, coalesce, a Unicode function): every date keeps every bit"
    )
    func exactDatesThroughExpressions() throws {
        let directory = TemporaryDirectory("ferry-cd-migrate")
        let store = try Self.store(Self.original, "CoreDataMigration_Example_1", in: directory)
        let dates = try Self.dateBits(store)
        let folder = directory.file("mappings")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let v1 = "CoreDataMigration_Example"
        let v2 = "CoreDataMigration_Example 2"
        _ = try directory.write(
            "mappings/\(v1)-to-\(v2).yml",
            """
            from: \(v1)
            to: \(v2)
            entities:
              Post:
                source: Post
                attributes:
                  date: coalesce($source.date, now())
                  hexColor: uppercase($source.color)
                  postID: $source.postID

            """)
        let result = try FerryProcess([
            "migrate", store, "--model", CoreDataCheckCLITests.package(Self.original), "--mappings", folder, "--to", v2,
            "--no-backup", "--quiet",
        ]).wait()
        #expect(result.exitCode == 0, "\(result)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM ZPOST WHERE ZHEXCOLOR IS NOT NULL") == [1001])
        #expect(try Self.dateBits(store) == dates)
    }

    @Test(
        "Original store 3 → 4 with --compiled-model: the metadata records version 4's hashes, and ferry recognises the store by them"
    )
    func compiledModelHashes() throws {
        let directory = TemporaryDirectory("ferry-cd-migrate")
        let store = try Self.store(Self.original, "CoreDataMigration_Example_3", in: directory)
        let compiled = CoreDataStoreCLITests.compiledModel
        let result = try Self.migrate(
            store, app: Self.original, set: "original", ["--compiled-model", compiled, "--no-backup"]
        ).wait()
        #expect(result.exitCode == 0, "\(result)")
        let version = try runFerry([
            "store", "version", store, "--model", CoreDataCheckCLITests.package(Self.original), "--compiled-model",
            compiled,
        ])
        #expect(version.exitCode == 0, "\(version)")
        #expect(version.stdout.contains(Self.v4), "\(version)")
        #expect(version.stdout.contains("hashes"), "\(version)")
        #expect(
            try StoreSnapshot.integers(store, "SELECT count(*) FROM ZPOST WHERE ZHIDE = 0 AND ZCOLOR IS NOT NULL") == [
                7995
            ])
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM ZCOLOR") == [7995])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                "App.sqlite", "App.sqlite.ferry-lock",
            ])
    }

    @Test(
        "a Core Data store whose latest rows are only in its -wal migrates without losing them; the backup holds them too"
    )
    func writeAheadLog() throws {
        let directory = TemporaryDirectory("ferry-cd-migrate")
        let live = try Self.store(Self.revised, "CoreDataMigration_Example_3", in: directory, as: "live.sqlite")
        let store = directory.file("App.sqlite")
        do {
            // An app in WAL mode that never checkpointed: two more posts only in the -wal.
            let writer = try StoreConnection(live)
            try writer.execute("PRAGMA journal_mode = WAL")
            try writer.execute("PRAGMA wal_autocheckpoint = 0")
            try writer.execute("BEGIN")
            try writer.execute(
                "INSERT INTO ZPOST (Z_PK, Z_ENT, Z_OPT, ZDATE, ZHEXCOLOR, ZPOSTID) VALUES (101, 1, 1, 600000000, 'ABCDEF', 'WAL-1'), (102, 1, 1, 600000001, '012345', 'WAL-2')"
            )
            try writer.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 102 WHERE Z_NAME = 'Post'")
            try writer.execute("COMMIT")
            try FileManager.default.copyItem(atPath: live, toPath: store)
            try FileManager.default.copyItem(atPath: live + "-wal", toPath: store + "-wal")
            withExtendedLifetime(writer) {}
        }
        let mainOnly = directory.file("main-only.sqlite")
        try FileManager.default.copyItem(atPath: store, toPath: mainOnly)
        #expect(try StoreSnapshot.integers(mainOnly, "SELECT count(*) FROM ZPOST") == [12])

        let result = try Self.migrate(store, app: Self.revised, set: "revised").wait()
        #expect(result.exitCode == 0, "\(result)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM ZPOST") == [14])
        #expect(
            try StoreSnapshot.texts(store, "SELECT ZHEXCOLOR, ZSOFTDELETED FROM ZPOST WHERE ZPOSTID = 'WAL-2'") == [
                ["012345", "0"]
            ])
        #expect(try StoreSnapshot.texts(store, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Post'") == [["102"]])
        #expect(try StoreSnapshot.texts(store, "PRAGMA journal_mode") == [["wal"]])
        let backup = try #require(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).first {
                $0.hasPrefix("App.sqlite.backup-")
            })
        #expect(try StoreSnapshot.integers(directory.file(backup), "SELECT count(*) FROM ZPOST") == [14])
    }

    @Test(
        "SIGKILL at a spread of moments of a two-step Core Data migration leaves the original or the migrated store, never a mix; a rerun finishes"
    )
    func killAtManyMoments() throws {
        let directory = TemporaryDirectory("ferry-cd-migrate")
        // 5,979 posts at version 2: 2 → 3 (policy, one Color per Post), 3 → 4 (lightweight).
        let pristine = try Self.store(
            Self.original, "CoreDataMigration_Example_2", in: directory, as: "pristine.sqlite")
        let before = try StoreSnapshot.take(pristine)
        let store = directory.file("App.sqlite")
        let moments: [MigrationCrashTests.Moment] = [
            .after(.zero), .after(.milliseconds(20)), .after(.milliseconds(60)), .exists(".ferry-migrating-1"),
            .grown(".ferry-migrating-1", bytes: 100_000),
            .exists(".ferry-migrating-2"), .after(.milliseconds(250)), .backupExists,
        ]
        var landed = 0
        for moment in moments {
            try MigrationCrashTests.restore(store, from: pristine)
            let killed = try MigrationCrashTests.migrateAndKill(store, at: moment) {
                try Self.migrate($0, app: Self.original, set: "original")
            }
            if killed { landed += 1 }
            // Either the untouched original or the complete version 4 store.
            let columns = try StoreSnapshot.texts(store, "SELECT name FROM pragma_table_info('ZPOST')").compactMap {
                $0[0]
            }
            if columns.contains("ZHIDE") {
                #expect(
                    try StoreSnapshot.integers(store, "SELECT count(*) FROM ZPOST WHERE ZHIDE = 0") == [5979],
                    "\(moment)")
                #expect(
                    try StoreSnapshot.integers(
                        store, "SELECT count(*) FROM ZCOLOR c JOIN ZPOST p ON p.ZCOLOR = c.Z_PK AND c.ZPOST = p.Z_PK")
                        == [5979], "\(moment)")
            } else {
                #expect(
                    try StoreSnapshot.take(store) == before,
                    "killed \(moment): the store is neither the original nor migrated")
            }
            #expect(try StoreSnapshot.texts(store, "PRAGMA integrity_check") == [["ok"]], "\(moment)")
        }
        #expect(landed >= 3, "only \(landed) kills landed during the migration")
        // A rerun after a kill cleans up what the killed one left and finishes.
        try MigrationCrashTests.restore(store, from: pristine)
        _ = try MigrationCrashTests.migrateAndKill(store, at: .exists(".ferry-migrating-1")) {
            try Self.migrate($0, app: Self.original, set: "original")
        }
        let rerun = try Self.migrate(store, app: Self.original, set: "original", ["--no-backup"]).wait()
        #expect(rerun.exitCode == 0, "\(rerun)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM ZCOLOR") == [5979])
        #expect(try MigrationCrashTests.leftovers(of: store).scratch.isEmpty)
    }

    @Test("failures leave the original in place: no policy, a compiled model without the version")
    func failuresLeaveTheOriginal() throws {
        let directory = TemporaryDirectory("ferry-cd-migrate")
        let store = try Self.store(Self.revised, "CoreDataMigration_Example_2", in: directory)
        let before = try FileFingerprint.of(store)
        let package = CoreDataCheckCLITests.package(Self.revised)
        let plain = try runFerry([
            "migrate", store, "--model", package, "--mappings", CoreDataCheckCLITests.mappings(Self.revised),
        ])
        #expect(plain.exitCode != 0, "\(plain)")
        #expect(
            plain.stderr.contains(
                "no migration policy named 'CoreDataMigration_Example.Post2ToPost3MigrationPolicy' is registered"),
            "\(plain)")
        #expect(try FileFingerprint.of(store) == before)

        // The Original app's compiled model has no version of the Revised app's model names' hashes for Section.
        let wrong = try Self.migrate(
            store, app: Self.revised, set: "revised", ["--compiled-model", CoreDataStoreCLITests.compiledModel]
        ).wait()
        #expect(wrong.exitCode != 0, "\(wrong)")
        #expect(wrong.stderr.contains("compiled model"), "\(wrong)")
        #expect(try FileFingerprint.of(store) == before)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                "App.sqlite", "App.sqlite.ferry-lock",
            ])
    }

    @Test(
        "a migrated Core Data store whose required to-one would be nil fails verification (Core Data's tables declare no NOT NULL), naming the Z_PKs; the original stays"
    )
    func requiredValuesAreVerified() throws {
        let directory = TemporaryDirectory("ferry-cd-migrate-required")
        let store = try Self.store(Self.original, "CoreDataMigration_Example_3", in: directory)
        let before = try FileFingerprint.of(store)
        // Version 4 makes Post.color required; a mapping that leaves out both sides of the
        // one-to-one (Post.color and its inverse Color.post) writes no link.
        let mappings = directory.file("mappings")
        try FileManager.default.createDirectory(atPath: mappings, withIntermediateDirectories: true)
        try
            "entities:\n  Post:\n    relationships:\n      color: none\n  Color:\n    relationships:\n      post: none\n"
            .write(
                toFile: mappings + "/CoreDataMigration_Example 3-to-CoreDataMigration_Example 4.yml", atomically: true,
                encoding: .utf8)
        let result = try runFerry([
            "migrate", store, "--model", CoreDataCheckCLITests.package(Self.original), "--mappings", mappings,
        ])
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("required Post: color is nil in 7995 rows"), "\(result)")
        #expect(result.stderr.contains("required Post: Post Z_PK 1: color is nil"), "\(result)")
        #expect(result.stderr.contains("nothing was changed"), "\(result)")
        #expect(try FileFingerprint.of(store) == before)
    }

    @Test(
        "a lightweight step copies Core Data's values exactly (dates to the microsecond); a store whose model has sub-entities migrates, each object under its entity with the Z1_ column of links into the hierarchy"
    )
    func exactCopyAndHierarchy() throws {
        let directory = TemporaryDirectory("ferry-cd-migrate")
        let store = try Self.store(Self.revised, "CoreDataMigration_Example_3", in: directory)
        let dates = try StoreSnapshot.texts(store, "SELECT Z_PK, Z_OPT, ZDATE, ZHEXCOLOR FROM ZPOST ORDER BY Z_PK")
        let result = try Self.migrate(store, app: Self.revised, set: "revised", ["--checksums", "--no-backup"]).wait()
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT Z_PK, Z_OPT, ZDATE, ZHEXCOLOR FROM ZPOST ORDER BY Z_PK") == dates)
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM ZSECTION") == [14])

        let cars = directory.file("Cars.sqlite")
        try CoreDataSamples.writeInheritanceStore(at: cars)
        let package = try CoreDataCheckCLITests.carsPackage(in: directory)
        let rows = try StoreSnapshot.texts(
            cars, "SELECT Z_PK, Z_ENT, Z_OPT, ZMAXSPEED, ZREMOTEID FROM ZCAR ORDER BY Z_PK")
        let migrated = try runFerry(["migrate", cars, "--model", package, "--checksums", "--no-backup"])
        #expect(migrated.exitCode == 0, "\(migrated)")
        #expect(migrated.stdout.contains("Car 1, Passenger 4, Racecar 2, Sedan 3"), "\(migrated)")
        #expect(
            try StoreSnapshot.texts(cars, "SELECT Z_PK, Z_ENT, Z_OPT, ZMAXSPEED, ZREMOTEID FROM ZCAR ORDER BY Z_PK")
                == rows)
        #expect(
            try StoreSnapshot.texts(cars, "SELECT Z_PK, ZNAME, ZCAR, Z1_CAR, ZSEAT FROM ZPASSENGER ORDER BY Z_PK") == [
                ["1", "Ann", "2", "2", nil], ["2", "Bo", "4", "3", nil], ["3", "Cy", nil, nil, nil],
                ["4", "Di", "1", "1", nil],
            ])
        #expect(
            try StoreSnapshot.texts(cars, "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") == [
                ["1", "Car", "0", "6"], ["2", "Racecar", "1", "0"], ["3", "Sedan", "1", "0"],
                ["4", "Passenger", "0", "4"],
            ])
        let verify = try runFerry(["verify", cars, "--model", package])
        #expect(verify.exitCode == 0, "\(verify)")
    }
}
