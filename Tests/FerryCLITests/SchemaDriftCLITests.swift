import FerryTestSupport
import Foundation
import Testing

/// Schema drift through the real binary: a nightly file that grows a field, loses one or renames
/// one, on both import paths (`ferry run` with a model, `ferry import` with an inferred model).
/// Before `on_new_field`/`on_missing_field`, a new column was dropped with exit 0 (a job; only
/// the JSON report's `ignored_fields` said so) or listed as not imported (`ferry import`), and a
/// lost column read null without a word.
@Suite("schema drift: on_new_field and on_missing_field", .serialized)
struct SchemaDriftCLITests {
    static let model = """
        entities:
          Customer:
            attributes:
              id: {type: int64, optional: false, unique: true}
              name: string
              city: string
        """

    /// A store with customers 1 and 2 (from day1.csv), and a job importing `${day}` with `extra` step keys.
    func prepared(_ extra: String = "") throws -> TemporaryDirectory {
        let directory = TemporaryDirectory("ferry-cli-drift")
        try directory.write("model.yml", Self.model)
        try directory.write("day1.csv", "id,name,city\n1,Ann,Oslo\n2,Bob,Rome\n")
        try directory.write("day2.csv", "id,name,city,zip\n3,Cy,Lima,15001\n")
        try directory.write("day3.csv", "id,name\n4,Dee\n")
        try directory.write("renamed.csv", "id,name,town\n5,Eve,Kyiv\n")
        try directory.write(
            "day2.ndjson",
            "{\"id\": 3, \"name\": \"Cy\", \"city\": \"Lima\"}\n{\"id\": 4, \"name\": \"Dee\", \"zip\": \"0150\"}\n"
        )
        try directory.write(
            "job.yml",
            """
            store: s.sqlite
            model: model.yml
            steps:
              - import: {source: "${day}", entity: Customer\(extra)}

            """)
        let first = try runFerry(["run", "job.yml", "--param", "day=day1.csv", "--quiet"], cwd: directory.path)
        #expect(first.exitCode == 0, "\(first)")
        return directory
    }

    func customers(_ directory: TemporaryDirectory) throws -> String {
        try sqlite3(directory.file("s.sqlite"), "SELECT id, name, ifnull(city, 'NULL') FROM Customer ORDER BY id")
    }

    /// The last step's drift entries of the JSON report at `path`, each as `change field file:line action`.
    func drift(_ path: String) throws -> [String] {
        let steps = try #require(try jsonObject(file: path)["steps"] as? [[String: Any]])
        let entries = try #require(steps.last?["drift"] as? [[String: Any]])
        return entries.map { entry in
            // A job's paths are resolved against its folder: the file's name is what differs.
            let file = (entry["file"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent } ?? "-"
            let place = "\(file):\(entry["line"] as? Int ?? 0)"
            let attribute = (entry["attribute"] as? String).map { " into \($0)" } ?? ""
            return "\(entry["change"] ?? "") \(entry["field"] ?? "") \(place) \(entry["action"] ?? "")\(attribute)"
        }
    }

    @Test(
        "a job with on_new_field: error: a new CSV column fails the night, located at the header, and nothing is imported"
    )
    func newColumnFails() throws {
        let directory = try prepared(", on_new_field: error")
        let result = try runFerry(
            ["run", "job.yml", "--param", "day=day2.csv", "--quiet", "--report", "r.json"], cwd: directory.path)
        #expect(result.exitCode == 1, "\(result)")
        #expect(
            result.stderr.contains(
                "day2.csv:1: error: new field 'zip' in the source: no attribute or relationship of Customer reads it (on_new_field: error); nothing was imported"
            ), "\(result.stderr)")
        #expect(result.stderr.contains("set 'on_new_field: ignore'"), "\(result.stderr)")
        #expect(try customers(directory) == "1|Ann|Oslo\n2|Bob|Rome\n")
        #expect(try drift(directory.file("r.json")) == ["new zip day2.csv:1 error"])
    }

    @Test(
        "a job that says nothing (the default, ignore) imports without the new column; the line, stderr and report name it"
    )
    func newColumnIgnored() throws {
        let directory = try prepared(", on_conflict: update")
        let result = try runFerry(
            ["run", "job.yml", "--param", "day=day2.csv", "--report", "r.json"], cwd: directory.path)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("drift: new field 'zip' ("), "\(result.stdout)")
        #expect(result.stdout.contains("/day2.csv:1) not imported"), "\(result.stdout)")
        #expect(try customers(directory) == "1|Ann|Oslo\n2|Bob|Rome\n3|Cy|Lima\n")
        #expect(try drift(directory.file("r.json")) == ["new zip day2.csv:1 ignored"])
        // Under cron (--quiet) the drift still reaches the mail, on standard error.
        let quiet = try runFerry(["run", "job.yml", "--param", "day=day2.csv", "--quiet"], cwd: directory.path)
        #expect(quiet.exitCode == 0, "\(quiet)")
        #expect(
            quiet.stderr.hasPrefix("warning: step 1 import Customer: new field 'zip' (")
                && quiet.stderr.hasSuffix("/day2.csv:1) not imported\n"),
            "\(quiet.stderr)")
    }

    @Test(
        "a job reading NDJSON with on_new_field: error: a new key fails at the end, rolled back, located at the first record with it"
    )
    func newKeyInNDJSON() throws {
        let directory = try prepared(", on_new_field: error")
        let failed = try runFerry(
            ["run", "job.yml", "--param", "day=day2.ndjson", "--quiet", "--report", "r.json"], cwd: directory.path)
        #expect(failed.exitCode == 1, "\(failed)")
        #expect(
            failed.stderr.contains(
                "day2.ndjson:2: error: new field 'zip' in the source: no attribute or relationship of Customer reads it (on_new_field: error); the step was rolled back"
            ), "\(failed.stderr)")
        #expect(try customers(directory) == "1|Ann|Oslo\n2|Bob|Rome\n")
        #expect(try drift(directory.file("r.json")) == ["new zip day2.ndjson:2 error"])

        let ignoring = try prepared(", on_new_field: ignore")
        let result = try runFerry(
            ["run", "job.yml", "--param", "day=day2.ndjson", "--report", "r.json"], cwd: ignoring.path)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("/day2.ndjson:2) not imported"), "\(result.stdout)")
        #expect(try customers(ignoring) == "1|Ann|Oslo\n2|Bob|Rome\n3|Cy|Lima\n4|Dee|NULL\n")
    }

    @Test("a lost column: on_missing_field: error fails at the header; null reads null and says so")
    func missingColumn() throws {
        let strict = try prepared(", on_missing_field: error")
        let failed = try runFerry(["run", "job.yml", "--param", "day=day3.csv", "--quiet"], cwd: strict.path)
        #expect(failed.exitCode == 1, "\(failed)")
        #expect(
            failed.stderr.contains(
                "day3.csv:1: error: the source has no field 'city', which the step reads into Customer.city (on_missing_field: error)"
            ), "\(failed.stderr)")
        #expect(try customers(strict) == "1|Ann|Oslo\n2|Bob|Rome\n")

        let lenient = try prepared(", on_missing_field: \"null\"")
        let result = try runFerry(
            ["run", "job.yml", "--param", "day=day3.csv", "--report", "r.json"], cwd: lenient.path)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("drift: missing field 'city' ("), "\(result.stdout)")
        #expect(result.stdout.contains("/day3.csv:1) read as null"), "\(result.stdout)")
        #expect(try customers(lenient) == "1|Ann|Oslo\n2|Bob|Rome\n4|Dee|NULL\n")
        #expect(try drift(lenient.file("r.json")) == ["missing city day3.csv:1 null into city"])
    }

    @Test("a renamed column is a missing field plus a new one, both in the report")
    func renamedColumn() throws {
        let directory = try prepared(", on_missing_field: \"null\", on_new_field: ignore")
        let result = try runFerry(
            ["run", "job.yml", "--param", "day=renamed.csv", "--quiet", "--report", "r.json"], cwd: directory.path)
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try drift(directory.file("r.json")) == [
                "missing city renamed.csv:1 null into city", "new town renamed.csv:1 ignored",
            ])
    }

    @Test(
        "ferry import into an inferred entity: a new column is left out and named by default, fails with --on-new-field error; --on-new-field add adds it as a model version"
    )
    func importInferred() throws {
        let directory = TemporaryDirectory("ferry-cli-drift-import")
        try directory.write("day1.csv", "id,name\n1,Ann\n")
        try directory.write("day2.csv", "id,name,zip\n2,Bob,0150\n")
        let first = try runFerry(
            ["import", "day1.csv", "--store", "s.sqlite", "--entity", "c", "--quiet"], cwd: directory.path)
        #expect(first.exitCode == 0, "\(first)")
        let failed = try runFerry(
            ["import", "day2.csv", "--store", "s.sqlite", "--entity", "c", "--on-new-field", "error", "--quiet"],
            cwd: directory.path)
        #expect(failed.exitCode == 1, "\(failed)")
        #expect(failed.stderr.contains("day2.csv:1: error: new field 'zip' in the source"), "\(failed.stderr)")
        #expect(try sqlite3(directory.file("s.sqlite"), "SELECT count(*) FROM c") == "1\n")

        let added = try runFerry(
            [
                "import", "day2.csv", "--store", "s.sqlite", "--entity", "c", "--on-new-field", "add", "--report",
                "r.json",
            ],
            cwd: directory.path)
        #expect(added.exitCode == 0, "\(added)")
        #expect(added.stdout.contains("added to c: zip string"), "\(added.stdout)")
        #expect(added.stdout.contains("drift: new field 'zip' (day2.csv:1) added to the model"), "\(added.stdout)")
        #expect(
            try sqlite3(directory.file("s.sqlite"), "SELECT id, ifnull(zip, 'NULL') FROM c ORDER BY id")
                == "1|NULL\n2|0150\n")
        let info = try runFerry(["store", "info", "s.sqlite"], cwd: directory.path)
        #expect(info.stdout.contains("version 2"), "\(info.stdout)")
        #expect(try drift(directory.file("r.json")) == ["new zip day2.csv:1 added"])

        let conflicting = try runFerry(
            ["import", "day2.csv", "--store", "s.sqlite", "--entity", "c", "--alter", "--on-new-field", "ignore"],
            cwd: directory.path)
        #expect(conflicting.exitCode == 64, "\(conflicting)")
    }

    @Test("a job cannot add a field to a model file: on_new_field: add is refused with the way to do it")
    func addInJobRefused() throws {
        let directory = try prepared()
        let job = try String(contentsOfFile: directory.file("job.yml"), encoding: .utf8)
        try directory.write(
            "job.yml", job.replacingOccurrences(of: "entity: Customer}", with: "entity: Customer, on_new_field: add}"))
        let result = try runFerry(["run", "job.yml", "--param", "day=day2.csv", "--quiet"], cwd: directory.path)
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.contains("on_new_field: add cannot add fields to Customer"), "\(result.stderr)")
        #expect(try customers(directory) == "1|Ann|Oslo\n2|Bob|Rome\n")
    }
}
