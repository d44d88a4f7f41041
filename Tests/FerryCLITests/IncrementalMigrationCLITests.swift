import FerryTestSupport
import Foundation
import Testing

/// An incremental nightly job whose store is migrated between two nights (`migrate: auto` to the
/// job's next model version): the migration carries the marks and the imported files with the run
/// log, so the night after reads on from the last mark instead of everything again.
@Suite(
    "Incremental state carried through a migration (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct IncrementalMigrationCLITests {
    /// A two-version bundle of the Events model: version 2 adds an optional `note`.
    static func bundle(in dir: TemporaryDirectory) throws -> String {
        let folder = dir.file("events")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "name: Events\ncurrent: \"2\"\nversions: [v1.yml, v2.yml]\n".write(
            toFile: folder + "/model.yml", atomically: true, encoding: .utf8)
        try IncrementalLoadCLITests.model.write(toFile: folder + "/v1.yml", atomically: true, encoding: .utf8)
        try
            (IncrementalLoadCLITests.model.replacing("version: \"1\"", with: "version: \"2\"")
            + "\n      note: string\n")
            .write(toFile: folder + "/v2.yml", atomically: true, encoding: .utf8)
        return folder
    }

    @Test(
        "ferry's SQLite store and a PostgreSQL store: night 1 at version 1, night 2 migrates to version 2 and reads only past the mark"
    )
    func markSurvivesMigration() throws {
        let dir = TemporaryDirectory()
        let (source, connection) = try IncrementalLoadCLITests.sourceDatabase(dir)
        let bundle = try Self.bundle(in: dir)
        let job = try dir.write(
            "job.yml",
            """
            job: nightly
            store: {path: "${store}", migrate: auto}
            model: {path: \(bundle), version: "${version}"}
            steps:
              - import:
                  source:
                    sqlite: \(source)
                    table: events
                    incremental: {column: updated_at}
                  entity: Event
                  on_conflict: update

            """)
        let base = try PostgresTestServer.requireURL()
        let schema = "ferry_incrmig_" + UUID().uuidString.lowercased().replacing("-", with: "").prefix(12)
        defer { PostgresStoreLoader.dropSchemas(startingWith: schema) }
        let stores = [dir.file("store.sqlite"), base + "?schema=" + schema]
        for store in stores {
            let first = try runFerry(["run", job, "--param", "store=\(store)", "--param", "version=1"])
            #expect(first.exitCode == 0, "\(first)")
            #expect(first.stdout.contains("read 4, inserted 4"), "\(first)")
        }
        try connection.executeScript("INSERT INTO events VALUES (5, 'e', '2024-01-01 13:00:00');")
        for store in stores {
            let second = try runFerry(["run", job, "--param", "store=\(store)", "--param", "version=2"])
            #expect(second.exitCode == 0, "\(second)")
            #expect(second.stdout.contains("version 1 → 2") || second.stdout.contains("1 → 2"), "\(second)")
            // The ties at the mark (3 and 4) and the new row: not the whole table again.
            #expect(second.stdout.contains("read 3, inserted 1"), "\(second)")
            #expect(
                second.stdout.contains(
                    "incremental updated_at: from 2024-01-01 12:00:00 to 2024-01-01 13:00:00, 3 rows"), "\(second)")
            #expect(try IncrementalLoadCLITests.events(store).count == 5, "\(store)")
        }
    }
}
