import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `copy_from:` in a job's store on PostgreSQL: the store is replaced by a verified copy of a
/// snapshot (a store file or a PostgreSQL store) before the steps run, as a SQLite store is
/// replaced by a copy of the snapshot file.
@Suite(
    "PostgreSQL copy_from (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresCopyFromCLITests {
    static let model = """
        version: "1"
        entities:
          Person:
            attributes:
              id: {type: int64, optional: false, unique: true}
              name: {type: string, optional: false}
        """

    static let job = """
        job: people
        store: {path: "${store}", copy_from: "${snapshot}"}
        model: {path: model.yml}
        steps:
          - import:
              source: more.csv
              entity: Person
              on_conflict: update
        """

    static func export(_ store: String, in directory: TemporaryDirectory) throws -> String {
        let result = try runFerry(
            ["export", "--store", store, "--entity", "Person", "--format", "csv", "--quiet", "--sort", "id"],
            cwd: directory.path)
        #expect(result.exitCode == 0, "\(result.stderr)")
        return result.stdout.replacing("\r\n", with: "\n")
    }

    @Test(
        "copy_from a snapshot file or PostgreSQL store replaces the PostgreSQL store before the steps, every run, giving SQLite's objects; a dry run and a missing snapshot leave the store as it was"
    )
    func copyFromSnapshot() throws {
        let directory = TemporaryDirectory()
        try directory.write("model.yml", Self.model)
        try directory.write("snap.csv", "id,name\n1,Ann\n2,Bob\n")
        try directory.write("more.csv", "id,name\n3,Cy\n")
        try directory.write("other.csv", "id,name\n7,Old\n8,Older\n9,Oldest\n")
        try directory.write("job.yml", Self.job)
        let imported = try runFerry(
            ["import", "snap.csv", "--store", "snap.sqlite", "--model", "model.yml", "--entity", "Person"],
            cwd: directory.path)
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        let (url, drop) = try PostgresImportCLITests.freshStore("copyfrom")
        defer { drop() }
        // The PostgreSQL store holds other objects first: copy_from replaces them.
        let other = try runFerry(
            ["import", "other.csv", "--store", url, "--model", "model.yml", "--entity", "Person"], cwd: directory.path)
        #expect(other.exitCode == 0, "\(other.stderr)")

        let sqlite = try runFerry(
            ["run", "job.yml", "--param", "store=sq.sqlite", "--param", "snapshot=snap.sqlite"], cwd: directory.path)
        #expect(sqlite.exitCode == 0, "\(sqlite.stderr)")
        let expected = try Self.export("sq.sqlite", in: directory)
        #expect(expected == "id,name\n1,Ann\n2,Bob\n3,Cy\n")
        for round in 1...2 {
            let run = try runFerry(
                ["run", "job.yml", "--param", "store=\(url)", "--param", "snapshot=snap.sqlite"], cwd: directory.path)
            #expect(run.exitCode == 0, "round \(round): \(run.stderr)")
            #expect(
                PostgresImportCLITests.countLines(run.stdout + run.stderr)
                    == PostgresImportCLITests.countLines(sqlite.stdout + sqlite.stderr).map {
                        $0.replacing("sq.sqlite", with: url)
                    }, "round \(round)")
            #expect(try Self.export(url, in: directory) == expected, "round \(round)")
        }

        // A PostgreSQL store as the snapshot (into a SQLite store and into another schema).
        let (copy, dropCopy) = try PostgresImportCLITests.freshStore("copyfromurl")
        defer { dropCopy() }
        for store in [directory.file("fromurl.sqlite"), copy] {
            let run = try runFerry(
                ["run", "job.yml", "--param", "store=\(store)", "--param", "snapshot=\(url)"], cwd: directory.path)
            #expect(run.exitCode == 0, "\(store): \(run.stderr)")
            #expect(try Self.export(store, in: directory) == "id,name\n1,Ann\n2,Bob\n3,Cy\n", "\(store)")
        }

        // A dry run copies nothing; a missing snapshot fails before any step, the store untouched.
        try directory.write("more.csv", "id,name\n4,Dee\n")
        let dry = try runFerry(
            ["run", "job.yml", "--dry-run", "--param", "store=\(url)", "--param", "snapshot=snap.sqlite"],
            cwd: directory.path)
        #expect(dry.exitCode == 0, "\(dry.stderr)")
        #expect(try Self.export(url, in: directory) == expected)
        let missing = try runFerry(
            ["run", "job.yml", "--param", "store=\(url)", "--param", "snapshot=nowhere.sqlite"], cwd: directory.path)
        #expect(missing.exitCode != 0)
        #expect(missing.stderr.contains("nowhere.sqlite"), "\(missing.stderr)")
        #expect(missing.stderr.contains("does not exist"), "\(missing.stderr)")
        #expect(try Self.export(url, in: directory) == expected)
    }
}
