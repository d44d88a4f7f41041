import FerryTestSupport
import Foundation
import Testing

/// `nested:` imports through the real binary: nested JSON objects and arrays create, update and
/// link related objects (to-one, one-to-many, many-to-many), keys link existing objects, and a
/// bad nested value rejects its whole record at the nested value's line and column.
@Suite("ferry import: nested related objects (nested: true)", .serialized)
struct ImportNestedTests {
    static let sync = CoreDataSamples.root.appendingPathComponent("3lvis-Sync/Tests/Sync")
    static func path(_ relative: String) -> String { sync.appendingPathComponent(relative).path }

    static let model = """
        entities:
          Company:
            attributes:
              id: {type: int64, optional: false, unique: true}
              name: string
            relationships:
              people: {destination: Person, to_many: true, inverse: company}
          Person:
            attributes:
              id: {type: int64, optional: false, unique: true}
              name: string
              age: int32
            relationships:
              company: {destination: Company, inverse: people}
              pets: {destination: Pet, to_many: true, inverse: owner}
              clubs: {destination: Club, to_many: true, inverse: members}
              mentor: {destination: Person, inverse: mentees}
              mentees: {destination: Person, to_many: true, inverse: mentor}
          Pet:
            attributes:
              id: {type: int64, optional: false, unique: true}
              name: string
            relationships:
              owner: {destination: Person, inverse: pets}
          Club:
            attributes:
              code: {type: string, optional: false, unique: true}
              title: string
            relationships:
              members: {destination: Person, to_many: true, inverse: clubs}
          Loose:
            attributes:
              text: string
        """

    func prepared(_ people: String, mode: String = "append", extra: String = "") throws -> TemporaryDirectory {
        let directory = TemporaryDirectory("ferry-cli-nested")
        try directory.write("model.yml", Self.model)
        try directory.write("people.json", people)
        try directory.write(
            "job.yml",
            """
            store: s.sqlite
            model: model.yml
            steps:
              - import: {source: "${people}", entity: Person, mode: \(mode), nested: true, rejects: r.ndjson, max_rejects: unlimited\(extra)}

            """)
        return directory
    }

    func query(_ directory: TemporaryDirectory, _ sql: String) throws -> String {
        try sqlite3(directory.file("s.sqlite"), sql)
    }

    func rejects(_ directory: TemporaryDirectory) throws -> [[String: Any]] {
        try String(contentsOfFile: directory.file("r.ndjson"), encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test(
        "a nested object, arrays of objects (one-to-many, many-to-many) and keys: created once by key, updated, linked; counts per entity"
    )
    func nestedObjectsAndArrays() throws {
        let directory = try prepared(
            """
            [
              {"id": 1, "name": "Ann", "company": {"id": 10, "name": "Acme"},
               "pets": [{"id": 100, "name": "Rex"}, {"id": 101, "name": "Tom"}],
               "clubs": [{"code": "chess", "title": "Chess"}, {"code": "go", "title": "Go"}]},
              {"id": 2, "name": "Bob", "company": {"id": 10, "name": "Acme Inc"},
               "pets": [], "clubs": ["chess"], "mentor_id": 1},
              {"id": 3, "name": "Cy", "company_id": 10, "clubs_ids": ["go"], "mentor": {"id": 1}}
            ]
            """)
        let run = try runFerry(
            ["run", "job.yml", "--param", "people=people.json", "--report", "report.json"], cwd: directory.path)
        #expect(run.exitCode == 0, "\(run)")
        #expect(run.stdout.contains("read 3, inserted 3, updated 0, skipped 0, rejected 0"), "\(run)")
        #expect(
            run.stdout.contains("nested Company: inserted 1, updated 1, unchanged 0, linked 3, unlinked 0"), "\(run)")
        #expect(run.stdout.contains("nested Pet: inserted 2, updated 0, unchanged 0, linked 2, unlinked 0"), "\(run)")
        #expect(run.stdout.contains("nested Club: inserted 2, updated 0, unchanged 0, linked 4, unlinked 0"), "\(run)")
        #expect(try query(directory, "SELECT id, name FROM Company") == "10|Acme Inc\n")
        #expect(
            try query(
                directory, "SELECT p.id, c.id FROM Person p LEFT JOIN Company c ON c.ferry_pk = p.company ORDER BY p.id"
            ) == "1|10\n2|10\n3|10\n")
        #expect(
            try query(
                directory, "SELECT pet.id, p.id FROM Pet pet JOIN Person p ON p.ferry_pk = pet.owner ORDER BY pet.id")
                == "100|1\n101|1\n")
        #expect(
            try query(directory, "SELECT p.id, m.id FROM Person p JOIN Person m ON m.ferry_pk = p.mentor ORDER BY p.id")
                == "2|1\n3|1\n")
        #expect(
            try query(directory, "SELECT name FROM Person WHERE id = 1") == "Ann\n",
            "a nested key-only object updates nothing else")
        let table = try query(
            directory, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'ferry_link_%'"
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try query(directory, "SELECT count(*) FROM \"\(table)\"") == "4\n")
        let verify = try runFerry(["verify", "s.sqlite"], cwd: directory.path)
        #expect(verify.exitCode == 0, "\(verify)")
        let report = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: directory.file("report.json")))) as? [String: Any])
        let step = try #require((report["steps"] as? [[String: Any]])?.first)
        let nested = try #require(step["nested"] as? [String: [String: Int]])
        #expect(nested["Pet"] == ["inserted": 2, "updated": 0, "unchanged": 0, "linked": 2, "unlinked": 0])
        let schema = try JSONSchema(path: TestPaths.packageRoot.appendingPathComponent("docs/report.schema.json").path)
        #expect(schema.violations(of: report).isEmpty, "\(schema.violations(of: report))")
    }

    @Test("bad nested values reject the whole record at the nested value's line and column; the other records go in")
    func badNestedValues() throws {
        let directory = try prepared(
            """
            [
              {"id": 1, "name": "Ann", "pets": [{"id": 100, "name": "Rex"}, {"id": 101, "name": "Tom"}]},
              {"id": 2, "name": "Bob", "pets": [{"id": 200, "name": "Ok"},
                {"name": "no id"}]},
              {"id": 3, "pets": {"id": 300}},
              {"id": 4, "company": [{"id": 1}]},
              {"id": 5, "company_id": 99},
              {"id": 6, "pets": [{"id": "six", "name": "bad key type"}]},
              {"id": 7, "company": {"id": 70, "name": "Deep"}, "pets": [{"id": 700, "owner": 1}], "clubs": ["nope"]},
              {"id": 8, "pets": [null]}
            ]
            """)
        let run = try runFerry(["run", "job.yml", "--param", "people=people.json"], cwd: directory.path)
        #expect(run.exitCode == 0, "\(run)")
        #expect(run.stdout.contains("read 8, inserted 1, updated 0, skipped 0, rejected 7"), "\(run)")
        #expect(try query(directory, "SELECT id FROM Person") == "1\n")
        // Atomic per record: nothing of a rejected record stays (pet 200, company 70, pet 700).
        #expect(try query(directory, "SELECT group_concat(id) FROM Pet") == "100,101\n")
        #expect(try query(directory, "SELECT count(*) FROM Company") == "0\n")
        let found = try rejects(directory)
        let reasons = found.map {
            "\($0["line"] ?? ""):\($0["column"] ?? ""): \($0["field"] ?? "") \($0["reason"] ?? "")"
        }
        #expect(
            reasons == [
                "4:5: pets[1] a nested Pet needs its key: 'id' (Pet.id) is missing or null",
                "5:21: pets Person.pets is a to-many relationship: expected an array of Pet objects or keys, found an object",
                "6:24: company Person.company is a to-one relationship: expected an object or a key of Company, found an array",
                "7:27: company_id Person.company: no Company with id = 99",
                "8:29: pets[0].id Pet.id: 'six' is not an integer",
                "9:97: clubs[0] Person.clubs: no Club with code = nope",
                "10:22: pets[0] Person.pets: null is not a Pet object or key",
            ], "\(reasons)")
    }

    @Test(
        "related objects nested deeper than max_depth reject their record; a model with a cycle nests as deep as allowed"
    )
    func depthLimit() throws {
        let directory = try prepared(
            """
            [
              {"id": 1, "mentees": [{"id": 2, "mentees": [{"id": 3}]}]},
              {"id": 4, "mentees": [{"id": 5, "mentees": [{"id": 6, "mentees": [{"id": 7}]}]}]}
            ]
            """, extra: ", nested: {max_depth: 2}")
        // The flow mapping above repeats 'nested': the loader refuses that, so write the job again.
        try directory.write(
            "job.yml",
            """
            store: s.sqlite
            model: model.yml
            steps:
              - import: {source: "${people}", entity: Person, nested: {max_depth: 2}, rejects: r.ndjson, max_rejects: unlimited}

            """)
        let run = try runFerry(["run", "job.yml", "--param", "people=people.json"], cwd: directory.path)
        #expect(run.exitCode == 0, "\(run)")
        #expect(run.stdout.contains("read 2, inserted 1, updated 0, skipped 0, rejected 1"), "\(run)")
        #expect(
            try query(
                directory, "SELECT p.id, m.id FROM Person p LEFT JOIN Person m ON m.ferry_pk = p.mentor ORDER BY p.id")
                == "1|\n2|1\n3|2\n")
        let reject = try #require(try rejects(directory).first)
        #expect(reject["line"] as? Int == 3)
        #expect(reject["column"] as? Int == 69)
        #expect(
            (reject["reason"] as? String)?.hasPrefix("related objects are nested deeper than 2 levels (Person.mentees)")
                == true, "\(reject)")
    }

    @Test("nested: on a CSV source, max_depth out of range and unknown keys are refused with their location")
    func refusedDefinitions() throws {
        let directory = try prepared("[]")
        try directory.write("p.csv", "id,name\n1,Ann\n")
        try directory.write(
            "csv.yml",
            """
            store: s.sqlite
            model: model.yml
            steps:
              - import: {source: p.csv, entity: Person, nested: true}

            """)
        let csv = try runFerry(["run", "csv.yml"], cwd: directory.path)
        #expect(csv.exitCode == 64, "\(csv)")
        #expect(
            csv.stderr.contains(
                "'nested' reads nested JSON objects and arrays: it needs a json or ndjson source, not csv"), "\(csv)")
        let validated = try runFerry(["validate", "csv.yml"], cwd: directory.path)
        #expect(validated.exitCode == 64, "\(validated)")
        #expect(
            validated.stderr.contains("csv.yml:4:")
                && validated.stderr.contains("it needs a json or ndjson source, not csv"), "\(validated)")
        for (value, message) in [
            ("{max_depth: 0}", "'max_depth' must be at least 1, not 0"),
            ("{max_depth: 65}", "'max_depth' may be at most 64, not 65"),
            ("{depth: 3}", "unknown key 'depth' in nested"),
            ("maybe", "expected a boolean for 'nested' but found 'maybe'"),
        ] {
            try directory.write(
                "bad.yml",
                """
                store: s.sqlite
                model: model.yml
                steps:
                  - import: {source: people.json, entity: Person, nested: \(value)}

                """)
            let bad = try runFerry(["validate", "bad.yml"], cwd: directory.path)
            #expect(bad.exitCode == 64, "\(bad)")
            #expect(bad.stderr.contains("bad.yml:4:") && bad.stderr.contains(message), "\(bad)")
        }
    }

    @Test(
        "mode: sync with a nested to-many array replaces the related set: objects absent from it are unlinked, not deleted"
    )
    func syncUnlinks() throws {
        let directory = try prepared(
            """
            [{"id": 1, "name": "Ann", "pets": [{"id": 100}, {"id": 101}, {"id": 102}], "clubs": [{"code": "a"}, {"code": "b"}]}]
            """, mode: "sync")
        let first = try runFerry(["run", "job.yml", "--param", "people=people.json"], cwd: directory.path)
        #expect(first.exitCode == 0, "\(first)")
        try directory.write(
            "day2.json",
            """
            [{"id": 1, "name": "Ann", "pets": [{"id": 101, "name": "Tom"}], "clubs": ["b"]}]
            """)
        let second = try runFerry(["run", "job.yml", "--param", "people=day2.json"], cwd: directory.path)
        #expect(second.exitCode == 0, "\(second)")
        #expect(
            second.stdout.contains("nested Pet: inserted 0, updated 1, unchanged 0, linked 1, unlinked 2"), "\(second)")
        #expect(
            second.stdout.contains("nested Club: inserted 0, updated 0, unchanged 0, linked 1, unlinked 1"), "\(second)"
        )
        #expect(
            try query(
                directory,
                "SELECT pet.id, pet.name, p.id FROM Pet pet LEFT JOIN Person p ON p.ferry_pk = pet.owner ORDER BY pet.id"
            ) == "100||\n101|Tom|1\n102||\n")
        #expect(try query(directory, "SELECT count(*) FROM Club") == "2\n")
    }

    @Test(
        "a sync counts objects of its own entity nested in records as present; on_conflict: keep skips a record with what it nests"
    )
    func sameEntityAndKeep() throws {
        let directory = try prepared(
            """
            [{"id": 1, "name": "Ann", "mentees": [{"id": 2, "name": "Bob"}]}, {"id": 3, "name": "Cy"}]
            """, mode: "sync")
        #expect(try runFerry(["run", "job.yml", "--param", "people=people.json"], cwd: directory.path).exitCode == 0)
        try directory.write(
            "day2.json",
            """
            [{"id": 1, "name": "Ann", "mentees": [{"id": 2, "name": "Bob"}]}]
            """)
        let second = try runFerry(["run", "job.yml", "--param", "people=day2.json"], cwd: directory.path)
        #expect(second.exitCode == 0, "\(second)")
        #expect(second.stdout.contains("deleted 1,"), "\(second)")
        #expect(try query(directory, "SELECT group_concat(id) FROM (SELECT id FROM Person ORDER BY id)") == "1,2\n")
        try directory.write(
            "keep.yml",
            """
            store: s.sqlite
            model: model.yml
            steps:
              - import: {source: keep.json, entity: Person, on_conflict: keep, nested: true}

            """)
        try directory.write(
            "keep.json",
            """
            [{"id": 1, "pets": [{"id": 500}]}, {"id": 9, "pets": [{"id": 900}]}]
            """)
        let keep = try runFerry(["run", "keep.yml"], cwd: directory.path)
        #expect(keep.exitCode == 0, "\(keep)")
        #expect(keep.stdout.contains("read 2, inserted 1, updated 0, skipped 1, rejected 0"), "\(keep)")
        #expect(try query(directory, "SELECT group_concat(id) FROM Pet") == "900\n")
    }

    @Test(
        "Sync's users_notes.json into the Notes model: notes nested under the user info key 'annotations', linked to their users",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func syncCorpusNotes() throws {
        let directory = TemporaryDirectory("ferry-cli-nested-corpus")
        for (name, entity) in [("users", "SuperUser"), ("notes", "SuperNote")] {
            try directory.write(
                "\(name).yml",
                """
                store: n.sqlite
                model: \(Self.path("Models/Notes.xcdatamodeld"))
                steps:
                  - import: {source: "${source}", entity: \(entity), mode: sync, key_style: snake_case, nested: true, max_delete: none}

                """)
        }
        let users = try runFerry(
            ["run", "users.yml", "--param", "source=\(Self.path("JSONs/users_notes.json"))"], cwd: directory.path)
        #expect(users.exitCode == 0, "\(users)")
        #expect(users.stdout.contains("read 4, inserted 4"), "\(users)")
        #expect(
            users.stdout.contains("nested SuperNote: inserted 11, updated 0, unchanged 0, linked 11, unlinked 0"),
            "\(users)")
        let store = directory.file("n.sqlite")
        let notesByUser = """
            SELECT u.remoteID || ':' || ifnull((SELECT group_concat(remoteID) FROM (SELECT n.remoteID FROM SuperNote n WHERE n.superUser = u.ferry_pk ORDER BY n.remoteID)), '')
            FROM SuperUser u ORDER BY u.remoteID
            """
        #expect(try sqlite3(store, notesByUser) == "6:0,6,7,8,9\n7:1,2,3,4,5\n8:10\n9:\n")
        // tagged_notes.json syncs SuperNote: its notes keep their users, their tags are linked many-to-many, one object per tag.
        let notes = try runFerry(
            ["run", "notes.yml", "--param", "source=\(Self.path("JSONs/tagged_notes.json"))"], cwd: directory.path)
        #expect(notes.exitCode == 0, "\(notes)")
        #expect(try sqlite3(store, "SELECT count(*) FROM SuperTag WHERE name = 'diary'") == "1\n")
        let table = try sqlite3(
            store, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'ferry_link_%'"
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try sqlite3(store, "SELECT count(*) > 0 FROM \"\(table)\"") == "1\n")
    }

    @Test(
        "into a Core Data store (--layout coredata): Core Data's keys, entity numbers and join table; ferry verify passes",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func coreDataStore() throws {
        let directory = TemporaryDirectory("ferry-cli-nested-corpus")
        let model = Self.path("Models/Notes.xcdatamodeld")
        try directory.write("seed.json", "[{\"id\": 100, \"name\": \"seed\"}]")
        let seed = try runFerry(
            [
                "import", "seed.json", "--store", "cd.sqlite", "--model", model, "--entity", "SuperTag", "--layout",
                "coredata", "--key-style", "snake_case",
            ], cwd: directory.path)
        #expect(seed.exitCode == 0, "\(seed)")
        try directory.write(
            "job.yml",
            """
            store: cd.sqlite
            model: \(model)
            steps:
              - import: {source: \(Self.path("JSONs/users_notes.json")), entity: SuperUser, key_style: snake_case, nested: true}
              - import: {source: \(Self.path("JSONs/tagged_notes.json")), entity: SuperNote, mode: sync, key_style: snake_case, nested: true, max_delete: none}

            """)
        let run = try runFerry(["run", "job.yml"], cwd: directory.path)
        #expect(run.exitCode == 0, "\(run)")
        #expect(
            run.stdout.contains("nested SuperTag: inserted 2, updated 1, unchanged 0, linked 3, unlinked 0"), "\(run)")
        let store = directory.file("cd.sqlite")
        #expect(
            try sqlite3(
                store,
                "SELECT n.ZREMOTEID, u.ZREMOTEID FROM ZSUPERNOTE n JOIN ZSUPERUSER u ON u.Z_PK = n.ZSUPERUSER ORDER BY n.ZREMOTEID"
            ) == "0|6\n1|7\n2|7\n")
        #expect(
            try sqlite3(store, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
                == "SuperNote|11\nSuperTag|3\nSuperUser|4\n")
        #expect(try sqlite3(store, "SELECT count(*) FROM Z_1SUPERTAGS") == "3\n")
        let verify = try runFerry(["verify", "cd.sqlite", "--model", model], cwd: directory.path)
        #expect(verify.exitCode == 0, "\(verify)")
    }

    @Test("ferry import --nested and --nested-depth without a job; their refusals")
    func importCommand() throws {
        let directory = try prepared(
            """
            [{"id": 1, "company": {"id": 10, "name": "Acme"}, "mentees": [{"id": 2, "mentees": [{"id": 3}]}]}]
            """)
        let base = ["import", "people.json", "--store", "s.sqlite", "--model", "model.yml", "--entity", "Person"]
        let shallow = try runFerry(
            base + ["--nested-depth", "1", "--rejects", "r.ndjson", "--max-rejects", "1"], cwd: directory.path)
        #expect(shallow.exitCode == 0, "\(shallow)")
        #expect(shallow.stdout.contains("rejected 1"), "\(shallow)")
        let deep = try runFerry(base + ["--nested"], cwd: directory.path)
        #expect(deep.exitCode == 0, "\(deep)")
        #expect(deep.stdout.contains("nested Company: inserted 1"), "\(deep)")
        #expect(try query(directory, "SELECT group_concat(id) FROM (SELECT id FROM Person ORDER BY id)") == "1,2,3\n")
        try directory.write("p.csv", "id\n1\n")
        for (arguments, message) in [
            (
                ["import", "p.csv", "--store", "t.sqlite", "--model", "model.yml", "--entity", "Person", "--nested"],
                "it needs a json or ndjson source, not csv"
            ),
            (
                ["import", "people.json", "--store", "t.sqlite", "--nested"],
                "--nested links the related objects of a model's entity: pass --model"
            ),
            (base + ["--nested-depth", "0"], "--nested-depth must be between 1 and 64, not 0"),
        ] {
            let refused = try runFerry(arguments, cwd: directory.path)
            #expect(refused.exitCode == 64, "\(refused)")
            #expect(refused.stderr.contains(message), "\(refused)")
        }
    }

    @Test(
        "Sync's users_company.json into the Contacts model: the nested company is one object, shared by key",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
    func syncCorpusCompany() throws {
        let directory = TemporaryDirectory("ferry-cli-nested-corpus")
        let result = try runFerry(
            [
                "run",
                try directory.write(
                    "job.yml",
                    """
                    store: c.sqlite
                    model: \(Self.path("Models/Contacts.xcdatamodeld"))
                    steps:
                      - import: {source: \(Self.path("JSONs/users_company.json")), entity: User, key_style: snake_case, nested: true}

                    """),
            ], cwd: directory.path)
        #expect(result.exitCode == 0, "\(result)")
        let store = directory.file("c.sqlite")
        #expect(try sqlite3(store, "SELECT count(*) > 0 AND count(*) = count(DISTINCT remoteID) FROM Company") == "1\n")
        #expect(try sqlite3(store, "SELECT count(*) FROM User WHERE company IS NULL") == "0\n")
        #expect(
            try sqlite3(
                store, "SELECT c.name FROM User u JOIN Company c ON c.ferry_pk = u.company WHERE u.remoteID = 0")
                == "Apple\n")
    }
}
