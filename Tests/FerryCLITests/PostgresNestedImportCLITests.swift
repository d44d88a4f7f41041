import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `nested: true` imports into PostgreSQL stores, each job run through the binary into a SQLite
/// store and into a PostgreSQL store: the same exit code, report lines (per nested entity too),
/// rejects file, objects and links, for to-one, to-many and many-to-many relationships, keys-only
/// links, the depth limit, rejects anywhere in a record, every conflict policy, batches and runs
/// repeated on the same stores.
@Suite(
    "PostgreSQL nested imports (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresNestedImportCLITests {
    /// ImportNestedTests' model, with a second unique attribute on Pet (`tag`) and a rule on its
    /// name, so that nested objects can break a constraint or a rule.
    static let model = """
        entities:
          Company:
            attributes:
              id: {type: int64, optional: false, unique: true}
              name: string
              founded: date
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
              tag: {type: string, unique: true}
              name: {type: string, min_length: 2}
            relationships:
              owner: {destination: Person, inverse: pets}
          Club:
            attributes:
              code: {type: string, optional: false, unique: true}
              title: string
              fee: decimal
            relationships:
              members: {destination: Person, to_many: true, inverse: clubs}
        """

    /// The job: `people` into Person with `nested:` and the step keys in `extra`.
    static func job(source: String = "people.json", nested: String = "true", extra: String = "") -> String {
        """
        store: {path: "${store}"}
        model: model.yml
        steps:
          - import: {source: \(source), entity: Person, nested: \(nested), rejects: "${out}/r.ndjson", max_rejects: unlimited\(extra)}

        """
    }

    /// The report lines of a run, per nested entity too, without timings and folders.
    static func reportLines(_ output: String) -> [String] {
        output.split(separator: "\n").map(String.init).filter {
            $0.hasPrefix("step ") || $0.hasPrefix("  nested ") || $0.contains("error:") || $0.contains("last reject")
        }.map { line in
            line.replacing(#/ in [0-9.]+ s( \([0-9,]+ records\/s\))?/#, with: "").replacing(#/(sq|pg)\//#, with: "")
        }
    }

    /// Every object (exported by `ferry export`, as stored values differ between the backends)
    /// and every link of the store, by the objects' unique attributes (primary keys differ too):
    /// one line each.
    static func contents(_ location: String) throws -> [String] {
        guard let model = try Store.metadata(at: location)?.model else { return ["no store"] }
        let store = try Store.open(
            at: location, model: model, options: Store.Options(createIfMissing: false, allowModelMismatch: true))
        let layout = store.layout
        let q = layout.dialect.quote
        let key = q(layout.keyColumn)
        func identity(_ entity: EntityDescription) -> String {
            entity.uniquenessConstraints.first?.first ?? layout.keyColumn
        }
        var lines: [String] = []
        for entity in model.entities {
            let export = try runFerry(
                [
                    "export", "--store", location, "--entity", entity.name, "--format", "csv", "--quiet", "--sort",
                    identity(entity),
                ])
            lines += export.stdout.split(separator: "\n").map { "\(entity.name) \($0)" }
        }
        try store.withDatabase { database in
            for entity in model.entities {
                let table = layout.quotedTable(for: entity)
                for relationship in entity.relationships {
                    guard let destination = model.entity(named: relationship.destination) else { continue }
                    let other = layout.quotedTable(for: destination)
                    let pair = "e.\(q(identity(entity))), d.\(q(identity(destination)))"
                    let sql: String
                    switch layout.storage(of: relationship, in: entity, model: model) {
                    case .foreignKey(let column):
                        sql = "SELECT \(pair) FROM \(table) AS e JOIN \(other) AS d ON d.\(key) = e.\(q(column))"
                    case .joinTable(let link, let source, let target):
                        sql =
                            "SELECT \(pair) FROM \(q(link)) AS j JOIN \(table) AS e ON e.\(key) = j.\(q(source)) JOIN \(other) AS d ON d.\(key) = j.\(q(target))"
                    case .inverseForeignKey:
                        continue
                    }
                    let links = try database.rows(sql).map {
                        "\(entity.name).\(relationship.name) \($0[0]) -> \($0[1])"
                    }
                    lines += links.sorted()
                }
            }
        }
        return lines
    }

    /// Runs `job.yml` into the SQLite store `sq/store.sqlite` and into `url` and checks that both
    /// give the same exit code, report lines, rejects file, objects and links; returns the
    /// PostgreSQL run's report lines.
    @discardableResult
    static func compare(
        _ directory: TemporaryDirectory, url: String, round: String, arguments: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [String] {
        var lines: [[String]] = []
        var codes: [Int32] = []
        var outputs: [String] = []
        for (store, folder) in [("sq/store.sqlite", "sq"), (url, "pg")] {
            try FileManager.default.createDirectory(atPath: directory.file(folder), withIntermediateDirectories: true)
            let result = try runFerry(
                ["run", "job.yml", "--param", "store=\(store)", "--param", "out=\(folder)"] + arguments,
                cwd: directory.path, timeout: .seconds(300))
            codes.append(result.exitCode)
            lines.append(reportLines(result.stdout + result.stderr))
            outputs.append(result.stdout + result.stderr)
        }
        #expect(codes[1] == codes[0], "\(round): \(outputs[1])", sourceLocation: sourceLocation)
        #expect(!lines[0].isEmpty, "\(round): \(outputs[0])", sourceLocation: sourceLocation)
        #expect(lines[1] == lines[0], "\(round)", sourceLocation: sourceLocation)
        let rejects = ["sq", "pg"].map {
            try? String(contentsOfFile: directory.file("\($0)/r.ndjson"), encoding: .utf8)
        }
        #expect(rejects[1] == rejects[0], "\(round): rejects", sourceLocation: sourceLocation)
        let expected = try contents(directory.file("sq/store.sqlite"))
        #expect(try contents(url) == expected, "\(round): objects and links", sourceLocation: sourceLocation)
        return lines[1]
    }

    /// Checks that the PostgreSQL run's rejects file (`pg/r.ndjson`) gives each of `reasons`.
    static func expectRejects(
        _ reasons: [String], in directory: TemporaryDirectory, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let rejects = try String(contentsOfFile: directory.file("pg/r.ndjson"), encoding: .utf8)
        for reason in reasons {
            #expect(rejects.contains(reason), "\(reason): \(rejects)", sourceLocation: sourceLocation)
        }
    }

    /// A directory with the model, `people.json` and the job.
    static func prepared(_ people: String, job: String = Self.job()) throws -> TemporaryDirectory {
        let directory = TemporaryDirectory("ferry-cli-pg-nested")
        try directory.write("model.yml", model)
        try directory.write("people.json", people)
        try directory.write("job.yml", job)
        return directory
    }

    static let people = """
        [
          {"id": 1, "name": "Ann", "company": {"id": 10, "name": "Acme", "founded": "2001-02-03"},
           "pets": [{"id": 100, "tag": "r", "name": "Rex"}, {"id": 101, "name": "Tom"}],
           "clubs": [{"code": "chess", "title": "Chess", "fee": "12.50"}, {"code": "go", "title": "Go"}]},
          {"id": 2, "name": "Bob", "company": {"id": 10, "name": "Acme Inc"},
           "pets": [], "clubs": ["chess"], "mentor_id": 1},
          {"id": 3, "name": "Cy", "company_id": 10, "clubs_ids": ["go"], "mentor": {"id": 1}, "mentees": [{"id": 4, "name": "Di"}]},
          {"id": 5, "company": null, "pets": [{"id": 100, "name": "Rexy"}, 101], "clubs": [{"code": "go", "fee": "3"}]}
        ]
        """

    @Test(
        "to-one, one-to-many and many-to-many objects and keys, nested and named by key: SQLite's counts, objects and links; a second run updates"
    )
    func objectsArraysAndKeys() throws {
        for policy in ["error", "update", "replace", "keep"] {
            let (url, drop) = try PostgresImportCLITests.freshStore("nested")
            defer { drop() }
            let directory = try Self.prepared(Self.people, job: Self.job(extra: ", on_conflict: \(policy)"))
            let first = try Self.compare(directory, url: url, round: "\(policy), first run")
            #expect(
                first.contains("  nested Pet: inserted 2, updated 1, unchanged 0, linked 4, unlinked 0"), "\(first)")
            #expect(first.contains { $0.contains("read 4, inserted 4") }, "\(first)")
            // The same records again: the objects exist (rejected, updated, replaced or kept).
            try Self.compare(directory, url: url, round: "\(policy), second run")
        }
    }

    @Test("a bad value anywhere in a record rejects the whole record at its line and column, as on SQLite")
    func rejectsInsideNestedObjects() throws {
        let (url, drop) = try PostgresImportCLITests.freshStore("nested")
        defer { drop() }
        let directory = try Self.prepared(
            """
            [
              {"id": 1, "name": "Ann", "pets": [{"id": 100, "tag": "a", "name": "Rex"}, {"id": 101, "tag": "b", "name": "Tom"}]},
              {"id": 2, "name": "Bob", "pets": [{"id": 200, "name": "Ok"},
                {"name": "no id"}]},
              {"id": 3, "pets": {"id": 300}},
              {"id": 4, "company": [{"id": 1}]},
              {"id": 5, "company_id": 99},
              {"id": 6, "pets": [{"id": "six", "name": "bad key type"}]},
              {"id": 7, "company": {"id": 70, "name": "Deep"}, "pets": [{"id": 700, "owner": 1}], "clubs": ["nope"]},
              {"id": 8, "pets": [null]},
              {"id": 9, "company": {"id": 90}, "pets": [{"id": 900, "tag": "a"}]},
              {"id": 10, "pets": [{"id": 100, "tag": "b"}]},
              {"id": 11, "pets": [{"id": 1100, "name": "X"}]},
              {"id": 12, "company": {"id": 120, "founded": "yesterday"}},
              {"id": 13, "clubs": [{"code": "c", "fee": "lots"}]},
              {"id": 14, "clubs": [{"code": null}]},
              {"id": 1, "name": "Ann again", "pets": [{"id": 1400}]},
              {"id": 15, "name": "Eve", "mentor": {"id": 16, "pets": [{"id": 1600, "tag": "b"}]}},
              {"id": 17, "name": "Fay", "mentees": [{"id": 18, "mentor_id": 1}]}
            ]
            """)
        let lines = try Self.compare(directory, url: url, round: "rejects")
        #expect(lines.contains { $0.contains("read 17, inserted 2, updated 0, skipped 0, rejected 15") }, "\(lines)")
        try Self.expectRejects(
            [
                "a nested Pet needs its key: 'id' (Pet.id) is missing or null",
                "Pet: another Pet already has the same tag (uniqueness constraint)",
                "Person.company: no Company with id = 99",
                "another Person already has the same id (uniqueness constraint)",
            ], in: directory)
    }

    @Test(
        "text holding U+0000, which PostgreSQL cannot store, rejects its record (never cut short); as a key it finds nothing"
    )
    func nulCharacter() throws {
        let (url, drop) = try PostgresImportCLITests.freshStore("nested")
        defer { drop() }
        let directory = try Self.prepared(
            """
            [
              {"id": 1, "clubs": [{"code": "c"}]},
              {"id": 2, "pets": [{"id": 20, "name": "nul\\u0000inside"}]},
              {"id": 3, "clubs": ["c\\u0000"]}
            ]
            """)
        let result = try runFerry(
            ["run", "job.yml", "--param", "store=\(url)", "--param", "out=pg"], cwd: directory.path)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("read 3, inserted 1, updated 0, skipped 0, rejected 2"), "\(result)")
        let rejects = try String(contentsOfFile: directory.file("pg/r.ndjson"), encoding: .utf8)
        let lines = rejects.split(separator: "\n")
        #expect(lines.count == 2, "\(rejects)")
        #expect(
            lines.first?.contains(
                #""field":"pets[0].name","reason":"Pet: text contains the NUL character (U+0000), which PostgreSQL cannot store""#
            ) == true, "\(rejects)")
        #expect(lines.last?.contains("Person.clubs: no Club with code = c") == true, "\(rejects)")
        #expect(try Self.contents(url).contains("Club.members c -> 1"))
        #expect(!(try Self.contents(url).contains { $0.hasPrefix("Pet 20") }))
    }

    @Test("max_depth: records nested deeper are rejected; a cycle nests as deep as allowed")
    func depthLimit() throws {
        let (url, drop) = try PostgresImportCLITests.freshStore("nested")
        defer { drop() }
        let directory = try Self.prepared(
            """
            [
              {"id": 1, "mentees": [{"id": 2, "mentees": [{"id": 3}]}]},
              {"id": 4, "mentees": [{"id": 5, "mentees": [{"id": 6, "mentees": [{"id": 7}]}]}]}
            ]
            """, job: Self.job(nested: "{max_depth: 2}"))
        let lines = try Self.compare(directory, url: url, round: "depth")
        #expect(lines.contains { $0.contains("read 2, inserted 1, updated 0, skipped 0, rejected 1") }, "\(lines)")
    }

    @Test(
        "atomic: false in batches of 2 (a savepoint per record across the batches' transactions), NDJSON, a dry run, and the reject budget rolling the step back"
    )
    func batchesDryRunAndBudget() throws {
        let (url, drop) = try PostgresImportCLITests.freshStore("nested")
        defer { drop() }
        let records = (1...9).map { index in
            index % 4 == 0
                ? #"{"id": \#(index), "pets": [{"id": \#(index * 10), "tag": "same"}]}"#
                : #"{"id": \#(index), "company": {"id": \#(index % 3)}, "clubs": ["c\#(index % 2)"], "pets": [{"id": \#(index * 10)}]}"#
        }
        let clubs = #"{"id": 100, "clubs": [{"code": "c0"}, {"code": "c1"}]}"#
        let directory = try Self.prepared("")
        try directory.write("people.ndjson", ([clubs] + records).joined(separator: "\n") + "\n")
        try directory.write(
            "job.yml", Self.job(source: "people.ndjson", extra: ", atomic: false, batch_size: 2, on_conflict: update"))
        try Self.compare(directory, url: url, round: "batches")
        try Self.compare(directory, url: url, round: "batches again")
        // A dry run reports what it would do and leaves both stores as they are.
        try directory.write("people.ndjson", #"{"id": 50, "pets": [{"id": 500}]}"# + "\n")
        let before = try Self.contents(url)
        let dry = try Self.compare(directory, url: url, round: "dry run", arguments: ["--dry-run"])
        #expect(dry.contains { $0.contains("inserted 1") }, "\(dry)")
        #expect(try Self.contents(url) == before)
        // Over the budget: the step fails, the store keeps what it had.
        try directory.write(
            "people.ndjson", ([#"{"id": 60, "pets": [{"id": 600}]}"#] + records).joined(separator: "\n"))
        try directory.write("job.yml", Self.job(source: "people.ndjson").replacing("unlimited", with: "1"))
        let failed = try Self.compare(directory, url: url, round: "budget")
        #expect(failed.contains { $0.contains("error:") }, "\(failed)")
        #expect(try Self.contents(url) == before)
    }

    @Test(
        "records sharing a savepoint: rejects and skips after long runs of good records roll back only their own record, on every policy"
    )
    func rejectsAmongManyRecords() throws {
        // Every 37th record nests a pet whose tag another pet has (rejected), every 53rd repeats
        // an earlier person (rejected, or with keep skipped, or updated), the others are good.
        let records = (1...400).map { index -> String in
            if index % 37 == 0 { return #"{"id": \#(index), "pets": [{"id": \#(index * 10), "tag": "t1"}]}"# }
            let id = index % 53 == 0 ? index - 50 : index
            return
                #"{"id": \#(id), "name": "P\#(index)", "company": {"id": \#(index % 5), "name": "C\#(index)"}, "pets": [{"id": \#(index * 10), "tag": "t\#(index)"}], "clubs": [{"code": "k\#(index % 3)"}]}"#
        }
        for policy in ["error", "keep", "update"] {
            let (url, drop) = try PostgresImportCLITests.freshStore("nested")
            defer { drop() }
            let directory = try Self.prepared("")
            try directory.write("people.ndjson", records.joined(separator: "\n") + "\n")
            try directory.write("job.yml", Self.job(source: "people.ndjson", extra: ", on_conflict: \(policy)"))
            let lines = try Self.compare(directory, url: url, round: "\(policy): 400 records")
            #expect(lines.contains { $0.contains("read 400") }, "\(lines)")
        }
    }

    @Test(
        "relationships: mapped beside nested: references to records written just before, with rejects among them"
    )
    func mappedRelationshipsBesideNested() throws {
        let (url, drop) = try PostgresImportCLITests.freshStore("nested")
        defer { drop() }
        let records = (1...60).map { index -> String in
            let tag = index % 10 == 0 ? "t1" : "t\(index)"
            return #"{"id": \#(index), "boss": \#(index - 1), "pets": [{"id": \#(index * 10), "tag": "\#(tag)"}]}"#
        }
        let directory = try Self.prepared("")
        try directory.write("people.ndjson", records.joined(separator: "\n") + "\n")
        try directory.write(
            "job.yml",
            Self.job(
                source: "people.ndjson",
                extra: ", relationships: {mentor: {field: boss, match: id, missing: null}}"))
        let lines = try Self.compare(directory, url: url, round: "mapped relationships")
        #expect(lines.contains { $0.contains("read 60, inserted 54, updated 0, skipped 0, rejected 6") }, "\(lines)")
    }

    @Test(
        "mode: sync with nested: SQLite's counts, rejects, objects and links; a second run leaves all unchanged, a record gone is deleted with its pets (cascade), a dry run changes nothing"
    )
    func syncWithNestedObjects() throws {
        let (url, drop) = try PostgresImportCLITests.freshStore("nested")
        defer { drop() }
        let model = Self.model.replacing(
            "pets: {destination: Pet, to_many: true, inverse: owner}",
            with: "pets: {destination: Pet, to_many: true, inverse: owner, delete_rule: cascade}")
        let first = """
            [
              {"id": 1, "name": "Ann", "company": {"id": 10, "name": "Acme"},
               "pets": [{"id": 100, "tag": "r", "name": "Rex"}, {"id": 101, "name": "Tom"}], "clubs": [{"code": "chess"}]},
              {"id": 2, "name": "Bob", "pets": [{"id": 200, "name": "Bo"}], "clubs": ["chess"], "mentor_id": 1},
              {"id": 3, "name": "Cy", "pets": [{"id": 300, "name": "x"}]},
              {"id": 2, "name": "Bob again"},
              {"id": 4, "name": "Di", "pets": [{"id": 400, "tag": "r", "name": "Dot"}]},
              {"id": 5, "name": "Eve", "company_id": 10, "pets": [{"id": 500, "name": "Pip"}, {"id": 501, "name": "Pop"}]},
              {"id": null, "name": "Nobody"},
              {"id": 6, "name": "Fay", "clubs": ["nope"]}
            ]
            """
        let directory = try Self.prepared(first, job: Self.job(extra: ", mode: sync"))
        try directory.write("model.yml", model)
        let created = try Self.compare(directory, url: url, round: "sync, first run")
        #expect(
            created.contains { $0.contains("read 8, inserted 3, updated 0, unchanged 0, deleted 0") }, "\(created)")
        #expect(created.contains { $0.contains("rejected 5") }, "\(created)")
        try Self.expectRejects(
            [
                "an earlier record of the source has the same key (id=2): a sync needs each key once",
                "id is required",
                "Pet: another Pet already has the same tag (uniqueness constraint)",
            ], in: directory)
        let again = try Self.compare(directory, url: url, round: "sync, the same source again")
        #expect(
            again.contains { $0.contains("read 8, inserted 0, updated 0, unchanged 3, deleted 0") }, "\(again)")
        // Eve is gone (her pets cascade), Ann changes and drops a pet, Bob's nested pet changes.
        try directory.write(
            "people.json",
            """
            [
              {"id": 1, "name": "Ann B", "company": {"id": 10, "name": "Acme"},
               "pets": [{"id": 100, "tag": "r", "name": "Rex"}], "clubs": [{"code": "chess"}]},
              {"id": 2, "name": "Bob", "pets": [{"id": 200, "name": "Bobo"}], "clubs": ["chess"], "mentor_id": 1},
              {"id": 3, "name": "Cy", "pets": [{"id": 300, "name": "Xu"}]}
            ]
            """)
        let before = try Self.contents(url)
        let dry = try Self.compare(directory, url: url, round: "sync, dry run", arguments: ["--dry-run"])
        #expect(dry.contains { $0.contains("deleted 1") }, "\(dry)")
        #expect(try Self.contents(url) == before)
        let changed = try Self.compare(directory, url: url, round: "sync, a record gone")
        #expect(
            changed.contains { $0.contains("read 3, inserted 1, updated 1, unchanged 1, deleted 1") }, "\(changed)")
        let pets = try #require(try Self.contents(url).first { $0.hasPrefix("Pet ") })
        #expect(!pets.contains("500,") && !pets.contains("501,"), "Eve's pets cascade: \(pets)")
        #expect(pets.contains("101,,Tom,\r\n"), "Ann's dropped pet is unlinked, not deleted: \(pets)")
    }
}
