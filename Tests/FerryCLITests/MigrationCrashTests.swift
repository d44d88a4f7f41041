import FerryTestSupport
import Foundation
import Testing

/// Crash safety of `ferry migrate` (issue 4, item 6), against the real binary: SIGKILL at a
/// spread of moments always leaves either the untouched original or the fully migrated store,
/// never a mix; failures leave the original and say why; a store whose latest data sits in its
/// `-wal` loses none of it.
///
/// The store holds the 300,000 generated people at version 1 of `models/PeopleSteps`
/// (1 → 2 → 3, two lightweight steps, so a migration writes `STORE.ferry-migrating-1`, then
/// `-2`, then swaps `-2` in). Serialized: the kill moments depend on timing.
@Suite("Migration crash safety", .serialized)
struct MigrationCrashTests {
    static var bundle: String { Fixtures.path("models/PeopleSteps") }

    /// A version 1 store of `rows` generated people at `dir/name`.
    static func v1Store(
        in dir: TemporaryDirectory, _ name: String = "people.sqlite", rows: ClosedRange<Int>? = nil
    ) throws -> String {
        let store = dir.file(name)
        let data = try rows.map { try dir.write("seed-\(name).csv", bytes: BigFiles.csv(ids: $0)) } ?? BigFiles.big
        let result = try runFerry([
            "import", data, "--store", store, "--model", Fixtures.peopleModel, "--entity", "Person", "--quiet",
        ])
        #expect(result.exitCode == 0, "\(result)")
        return store
    }

    static func migrateArguments(_ store: String, _ more: [String] = []) -> [String] {
        ["migrate", store, "--model", bundle, "--quiet"] + more
    }

    /// The files a migration of `store` leaves beside it (scratch files and backups).
    static func leftovers(of store: String) throws -> (scratch: [String], backups: [String]) {
        let url = URL(fileURLWithPath: store)
        let names = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path).sorted()
        return (
            names.filter { $0.hasPrefix(url.lastPathComponent + ".ferry-migrating-") },
            names.filter { $0.hasPrefix(url.lastPathComponent + ".backup-") }
        )
    }

    /// The store's model version, from its metadata.
    static func version(of store: String) throws -> String? {
        try StoreSnapshot.texts(store, "SELECT value FROM ferry_metadata WHERE key = 'model_version'").first?.first
            ?? nil
    }

    /// The migrated content: every table but the audit log and the metadata (whose `created_at`
    /// is the migration's time), which are compared separately.
    static func migratedContent(_ store: String) throws -> StoreSnapshot {
        try StoreSnapshot.take(store, excluding: ["ferry_runs", "ferry_metadata"])
    }

    /// When to kill a running migration.
    enum Moment: CustomStringConvertible {
        case after(Duration)
        /// Once a file beside the store (`store + suffix`) exists.
        case exists(String)
        /// Once a file beside the store has grown to this many bytes.
        case grown(String, bytes: Int)
        /// Once the backup link of the original exists (just before the swap).
        case backupExists

        var description: String {
            switch self {
            case .after(let duration): return "after \(duration)"
            case .exists(let suffix): return "once STORE\(suffix) exists"
            case .grown(let suffix, let bytes): return "once STORE\(suffix) reached \(bytes / 1_000_000) MB"
            case .backupExists: return "once the backup link exists"
            }
        }
    }

    /// Starts a migration, waits for `moment` and sends SIGKILL; returns whether the kill
    /// landed (false when the migration had already finished).
    /// `process` starts the migration (by default `ferry migrate` of the PeopleSteps store).
    static func migrateAndKill(
        _ store: String, at moment: Moment, process start: ((String) throws -> FerryProcess)? = nil
    ) throws -> Bool {
        let started = ContinuousClock.now
        let process = try start?(store) ?? FerryProcess(migrateArguments(store))
        let deadline = started + .seconds(60)
        func reached() -> Bool {
            switch moment {
            case .after(let duration): return ContinuousClock.now - started >= duration
            case .exists(let suffix): return FileManager.default.fileExists(atPath: store + suffix)
            case .grown(let suffix, let bytes): return (fileSize(store + suffix) ?? 0) >= bytes
            case .backupExists: return !((try? leftovers(of: store).backups) ?? []).isEmpty
            }
        }
        while process.isRunning && !reached() && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.000_5)
        }
        process.kill()
        let result = try process.wait()
        if !result.wasSignaled {
            #expect(result.exitCode == 0, "the migration failed before it was killed \(moment): \(result)")
        }
        return result.wasSignaled
    }

    /// Puts a fresh copy of `pristine` at `store`, removing what earlier runs left.
    static func restore(_ store: String, from pristine: String) throws {
        let (scratch, backups) = try leftovers(of: store)
        let folder = URL(fileURLWithPath: store).deletingLastPathComponent()
        for name in scratch + backups { try FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
        for file in [store, store + "-journal", store + "-wal", store + "-shm"]
        where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.removeItem(atPath: file)
        }
        try FileManager.default.copyItem(atPath: pristine, toPath: store)
    }

    // MARK: - SIGKILL

    @Test(
        "SIGKILL at a spread of moments leaves the original or the migrated store, never a mix; a rerun finishes and cleans up"
    )
    func killAtManyMoments() throws {
        let dir = TemporaryDirectory()
        let store = try Self.v1Store(in: dir)
        let pristine = dir.file("pristine.sqlite")
        try FileManager.default.copyItem(atPath: store, toPath: pristine)
        let pristineBytes = try Data(contentsOf: URL(fileURLWithPath: pristine))
        // Taken only if a killed store's file differs from the original's (it never should).
        var originalSnapshot: StoreSnapshot?

        // The migrated content and how long a whole migration takes, on a copy.
        let reference = dir.file("reference.sqlite")
        try FileManager.default.copyItem(atPath: pristine, toPath: reference)
        let started = ContinuousClock.now
        let full = try runFerry(Self.migrateArguments(reference, ["--no-backup"]))
        let duration = ContinuousClock.now - started
        #expect(full.exitCode == 0, "\(full)")
        let migrated = try Self.migratedContent(reference)
        #expect(migrated.rows("Person") == BigFiles.rows)
        #expect(try Self.version(of: reference) == "3")

        // Ten moments from 50 ms to the measured duration, one well after it (the migration
        // has finished), and moments the migration's own files announce.
        var moments: [Moment] = (0..<10).map { index in
            .after(.milliseconds(50) + (duration - .milliseconds(50)) * (Double(index) / 9))
        }
        moments += [
            .after(duration * 3),
            .exists(".ferry-migrating-1"), .grown(".ferry-migrating-1", bytes: 8_000_000),
            .exists(".ferry-migrating-1-links"),
            .exists(".ferry-migrating-2"), .grown(".ferry-migrating-2", bytes: 30_000_000), .backupExists,
        ]
        var outcomes: [String] = []
        for moment in moments {
            try Self.restore(store, from: pristine)
            let killed = try Self.migrateAndKill(store, at: moment)

            let info = try runFerry(["store", "info", store])
            #expect(info.exitCode == 0, "killed \(moment): \(info)")
            #expect(try StoreSnapshot.texts(store, "PRAGMA integrity_check") == [["ok"]], "killed \(moment)")
            let outcome: String
            if try Data(contentsOf: URL(fileURLWithPath: store)) == pristineBytes {
                outcome = "original"
            } else if try Self.version(of: store) == "1" {
                // Not the same bytes, but it must hold the same content.
                if originalSnapshot == nil { originalSnapshot = try StoreSnapshot.take(pristine, excluding: []) }
                #expect(
                    try StoreSnapshot.take(store, excluding: []) == originalSnapshot,
                    "killed \(moment): a version 1 store that is not the original")
                outcome = "original (same content)"
            } else {
                outcome = "migrated"
                #expect(
                    try Self.version(of: store) == "3", "killed \(moment): neither the original nor the migrated store")
                #expect(
                    try Self.migratedContent(store) == migrated,
                    "killed \(moment): neither the original nor the migrated store")
            }
            outcomes.append("\(moment): \(killed ? "killed" : "finished"), \(outcome)")

            // A rerun migrates (or finds nothing to do) and removes the killed run's scratch files.
            let rerun = try runFerry(Self.migrateArguments(store))
            #expect(rerun.exitCode == 0, "rerun after a kill \(moment): \(rerun)")
            #expect(try Self.leftovers(of: store).scratch == [], "rerun after a kill \(moment)")
            #expect(try Self.version(of: store) == "3", "rerun after a kill \(moment)")
            #expect(
                try StoreSnapshot.integers(store, "SELECT count(*) FROM Person") == [Int64(BigFiles.rows)],
                "rerun after a kill \(moment)")
        }
        print("migration kill outcomes (a full migration took \(duration)):\n  " + outcomes.joined(separator: "\n  "))
        // The spread really hit running migrations, on both sides of the swap or its end.
        #expect(outcomes.filter { $0.hasSuffix("killed, original") }.count >= 8, "\(outcomes)")
        #expect(outcomes.contains { $0.hasSuffix("migrated") }, "\(outcomes)")
    }

    // MARK: - Failures

    /// A two-version bundle in `dir` whose version 2 is `version2` (version 1 is people.yml's).
    static func bundle(in dir: TemporaryDirectory, version2: String) throws -> String {
        let folder = dir.file("bundle")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try #"name: People\#ncurrent: "2"\#nversions: [v1.yml, v2.yml]\#n"#.write(
            toFile: folder + "/model.yml", atomically: true, encoding: .utf8)
        try String(contentsOfFile: Fixtures.path("models/PeopleSteps/v1.yml"), encoding: .utf8).write(
            toFile: folder + "/v1.yml", atomically: true, encoding: .utf8)
        try version2.write(toFile: folder + "/v2.yml", atomically: true, encoding: .utf8)
        return folder
    }

    /// People version 2 with a tightened rule (age at most 90) that the stored values break.
    static let version2WithAgeAtMost90 = """
        version: "2"
        entities:
          Person:
            attributes:
              id: {type: int64, optional: false, unique: true}
              email: {type: string, pattern: "[^@ ]+@[^@ ]+"}
              name: string
              age: {type: int16, min: 0, max: 90}
        """

    /// People version 2 with a new uniqueness constraint (age) that the stored values break.
    static let version2WithUniqueAge = """
        version: "2"
        entities:
          Person:
            attributes:
              id: {type: int64, optional: false, unique: true}
              email: {type: string, pattern: "[^@ ]+@[^@ ]+"}
              name: string
              age: {type: int16, min: 0, max: 150, unique: true}
        """

    @Test("failing verification (a tightened rule that stored values break) leaves the original and says why")
    func failingVerification() throws {
        let dir = TemporaryDirectory()
        let store = try Self.v1Store(in: dir, rows: 1...200)
        let before = try StoreSnapshot.take(store, excluding: [])
        let bundle = try Self.bundle(
            in: dir,
            version2: Self.version2WithAgeAtMost90)

        let result = try runFerry(["migrate", store, "--model", bundle])

        #expect(result.exitCode == 1, "\(result)")
        #expect(
            result.errorLines == [
                "error: the migrated store failed verification: 1 of 5 checks failed on the version 2 copy of '\(store)' (first: validation Person)",
                "  validation Person: age is above the maximum 90 in 18 rows",
            ] + (91...95).map { "  validation Person: Person ferry_pk \($0) (id = \($0)): age is above the maximum 90" }
                + [
                    "  nothing was changed: the original store is as it was"
                ], "\(result)")
        #expect(try StoreSnapshot.take(store, excluding: []) == before)
        #expect(try Self.leftovers(of: store).scratch == [] && Self.leftovers(of: store).backups == [])
    }

    @Test(
        "a step that cannot write its objects (a new uniqueness constraint that stored values break) leaves the original and says why"
    )
    func failingStep() throws {
        let dir = TemporaryDirectory()
        let store = try Self.v1Store(in: dir, rows: 1...200)
        let before = try StoreSnapshot.take(store, excluding: [])
        let bundle = try Self.bundle(in: dir, version2: Self.version2WithUniqueAge)

        let result = try runFerry(["migrate", store, "--model", bundle])

        #expect(result.exitCode == 1, "\(result)")
        #expect(
            result.errorLines.first
                == "error: the migrated objects break a uniqueness constraint: two or more have the same Person.age",
            "\(result)")
        #expect(result.errorLines.last == "  nothing was changed: the original store is as it was", "\(result)")
        #expect(try StoreSnapshot.take(store, excluding: []) == before)
        #expect(try Self.leftovers(of: store).scratch == [] && Self.leftovers(of: store).backups == [])
    }

    // MARK: - WAL

    @Test(
        "a store in WAL mode whose latest rows are only in its -wal migrates without losing them, and stays in WAL mode"
    )
    func writeAheadLog() throws {
        let dir = TemporaryDirectory()
        let live = try Self.v1Store(in: dir, "live.sqlite", rows: 1...2_000)
        let store = dir.file("people.sqlite")
        do {
            // A writer in WAL mode that never checkpoints; its files are copied while it is open,
            // as a crash (or a backup tool) would leave them: the last rows exist only in the -wal.
            let writer = try appendPeopleInWALMode(live, ids: 900_001...900_500)
            try FileManager.default.copyItem(atPath: live, toPath: store)
            try FileManager.default.copyItem(atPath: live + "-wal", toPath: store + "-wal")
            withExtendedLifetime(writer) {}
        }
        #expect((fileSize(store + "-wal") ?? 0) > 0)
        // The main file alone does not have the rows.
        let mainOnly = dir.file("main-only.sqlite")
        try FileManager.default.copyItem(atPath: store, toPath: mainOnly)
        #expect(try StoreSnapshot.integers(mainOnly, "SELECT count(*) FROM Person") == [2_000])

        let result = try runFerry(Self.migrateArguments(store))

        #expect(result.exitCode == 0, "\(result)")
        #expect(try Self.version(of: store) == "3")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Person") == [2_500])
        #expect(
            try StoreSnapshot.texts(store, "SELECT id, email, fullName, age, level FROM Person WHERE id = 900500") == [
                ["900500", "w900500@example.com", "W 900500", "7", "1"]
            ])
        #expect(try StoreSnapshot.texts(store, "PRAGMA journal_mode") == [["wal"]])
        // The backup holds the original with the rows of its -wal.
        let backup = try #require(try Self.leftovers(of: store).backups.first)
        #expect(try StoreSnapshot.integers(dir.file(backup), "SELECT count(*) FROM Person") == [2_500])
        #expect(try Self.version(of: dir.file(backup)) == "1")
    }
}
