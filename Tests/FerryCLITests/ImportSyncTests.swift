import FerryTestSupport
import Foundation
import Testing

/// `mode: sync` imports through the real binary: a nightly full extract makes the entity hold
/// exactly the source's records, with delete rules, guards and a dry run that touches nothing.
@Suite("ferry import --mode sync and mode: sync steps", .serialized)
struct ImportSyncTests {
    static func model(ordersRule: String) -> String {
        """
        entities:
          Customer:
            attributes:
              id: {type: int64, optional: false, unique: true}
              name: string
              city: string
            relationships:
              orders: {destination: Order, to_many: true, inverse: customer, delete_rule: \(ordersRule)}
          Order:
            attributes:
              number: {type: string, optional: false, unique: true}
            relationships:
              customer: {destination: Customer, inverse: orders}
          Note:
            attributes:
              text: string
        """
    }

    /// A store with customers 1–3 and orders of customers 1 and 3, and a job syncing customers from `${day}`.
    func prepared(ordersRule: String = "cascade") throws -> TemporaryDirectory {
        let directory = TemporaryDirectory("ferry-cli-sync")
        try directory.write("model.yml", Self.model(ordersRule: ordersRule))
        try directory.write("day1.csv", "id,name,city\n1,Ann,Oslo\n2,Bob,Rome\n3,Cy,Lima\n")
        try directory.write("day2.csv", "id,name,city\n1,Ann,Oslo\n2,Bob,Paris\n4,Dee,Kyiv\n")
        try directory.write("orders.csv", "number,customer\nA1,1\nA2,3\n")
        try directory.write("empty.csv", "id,name,city\n")
        try directory.write(
            "sync.yml",
            """
            store: s.sqlite
            model: model.yml
            steps:
              - import: {source: "${day}", entity: Customer, mode: sync, rejects: "${day}.rejects", max_rejects: unlimited}

            """)
        try directory.write(
            "load.yml",
            """
            store: s.sqlite
            model: model.yml
            steps:
              - import: {source: orders.csv, entity: Order, relationships: {customer: {match: id}}}

            """)
        let first = try runFerry(
            [
                "import", "day1.csv", "--store", "s.sqlite", "--model", "model.yml", "--entity", "Customer", "--mode",
                "sync", "--quiet",
            ], cwd: directory.path)
        #expect(first.exitCode == 0, "\(first)")
        let orders = try runFerry(["run", "load.yml", "--quiet"], cwd: directory.path)
        #expect(orders.exitCode == 0, "\(orders)")
        return directory
    }

    func customers(_ directory: TemporaryDirectory) throws -> String {
        try sqlite3(directory.file("s.sqlite"), "SELECT id, name, city FROM Customer ORDER BY id")
    }

    func orders(_ directory: TemporaryDirectory) throws -> String {
        try sqlite3(
            directory.file("s.sqlite"),
            "SELECT o.number, c.id FROM \"Order\" o LEFT JOIN Customer c ON c.ferry_pk = o.customer ORDER BY o.number")
    }

    @Test("a sync inserts, updates, keeps unchanged rows and deletes the gone ones with cascade; the report says so")
    func syncWithCascade() throws {
        let directory = try prepared()
        #expect(try orders(directory) == "A1|1\nA2|3\n")
        let report = try ReportSchemaTests.report(
            ["run", "sync.yml", "--param", "day=day2.csv"], in: directory, expectExit: 0, command: "run")
        let step = try #require((report["steps"] as? [[String: Any]])?.first)
        #expect(step["inserted"] as? Int == 1)
        #expect(step["updated"] as? Int == 1)
        #expect(step["unchanged"] as? Int == 1)
        #expect(step["deleted"] as? Int == 1)
        #expect(step["cascade_deleted"] as? [String: Int] == ["Order": 1])
        let sync = try #require(step["sync"] as? [String: Any])
        #expect(sync["key"] as? [String] == ["id"])
        #expect(sync["inserted_keys"] as? [String] == ["id=4"])
        #expect(sync["updated_keys"] as? [String] == ["id=2"])
        #expect(sync["deleted_keys"] as? [String] == ["id=3"])
        #expect(try customers(directory) == "1|Ann|Oslo\n2|Bob|Paris\n4|Dee|Kyiv\n")
        #expect(try orders(directory) == "A1|1\n")

        let text = try runFerry(["run", "sync.yml", "--param", "day=day2.csv"], cwd: directory.path)
        #expect(text.exitCode == 0, "\(text)")
        #expect(
            text.stdout.contains(": read 3, inserted 0, updated 0, unchanged 3, deleted 0, skipped 0, rejected 0 in "),
            "\(text)")
    }

    @Test("--dry-run prints what would be inserted, updated and deleted and leaves the store's bytes alone")
    func dryRun() throws {
        let directory = try prepared()
        let before = try FileFingerprint.of(directory.file("s.sqlite"))
        let result = try runFerry(["run", "sync.yml", "--param", "day=day2.csv", "--dry-run"], cwd: directory.path)
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.contains(
                "(dry run, rolled back): read 3, inserted 1, updated 1, unchanged 1, deleted 1, skipped 0, rejected 0 in "
            ), "\(result)")
        #expect(
            result.stdout.contains(
                "; cascade 1 Order\n  would insert 1: id=4\n  would update 1: id=2\n  would delete 1: id=3\n"),
            "\(result)")
        #expect(try FileFingerprint.of(directory.file("s.sqlite")) == before)

        let single = try runFerry(
            ["import", "day2.csv", "--store", "s.sqlite", "--entity", "Customer", "--mode", "sync", "--dry-run"],
            cwd: directory.path)
        #expect(single.exitCode == 0, "\(single)")
        #expect(single.stdout.contains("  would delete 1: id=3"), "\(single)")
        #expect(try customers(directory) == "1|Ann|Oslo\n2|Bob|Rome\n3|Cy|Lima\n")
    }

    @Test("a deny delete rule that blocks a deletion fails the step: exit 1 and nothing changed, not even the updates")
    func denyRule() throws {
        let directory = try prepared(ordersRule: "deny")
        let before = try customers(directory)
        let result = try runFerry(["run", "sync.yml", "--param", "day=day2.csv"], cwd: directory.path)
        #expect(result.exitCode == 1, "\(result)")
        #expect(
            result.stderr.contains(
                "error: cannot delete 1 Customer object: relationship Customer.orders has delete rule deny and 1 related Order object refers to them; nothing was deleted"
            ),
            "\(result)")
        #expect(try customers(directory) == before)
        #expect(try orders(directory) == "A1|1\nA2|3\n")
    }

    @Test("an empty source is refused unless --allow-empty-sync; the store is untouched")
    func emptySource() throws {
        let directory = try prepared()
        let refused = try runFerry(["run", "sync.yml", "--param", "day=empty.csv"], cwd: directory.path)
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(
            refused.errorLines.first
                == "\(directory.file("empty.csv")): error: the source has no records: a sync would delete all 3 Customer rows; the step was rolled back",
            "\(refused)")
        #expect(
            refused.stderr.contains("pass --allow-empty-sync (or set 'allow_empty: true' on the step)"), "\(refused)")
        #expect(try customers(directory).split(separator: "\n").count == 3)
        let command = try runFerry(
            ["import", "empty.csv", "--store", "s.sqlite", "--entity", "Customer", "--mode", "sync"],
            cwd: directory.path)
        #expect(command.exitCode == 1, "\(command)")

        let allowed = try runFerry(
            ["run", "sync.yml", "--param", "day=empty.csv", "--allow-empty-sync"], cwd: directory.path)
        #expect(allowed.exitCode == 0, "\(allowed)")
        #expect(try customers(directory) == "")
        #expect(try orders(directory) == "")
    }

    @Test(
        "rejected records: a readable key keeps its row, a duplicate key is rejected, an unreadable record stops the deletions"
    )
    func rejects() throws {
        let directory = try prepared()
        // A duplicate of 1, and a record with too many fields (whose key cannot be trusted).
        try directory.write("day3.csv", "id,name,city\n1,Ann,Oslo\n1,Ann,Bergen\n2,Bob,Rome,extra\n")
        let result = try runFerry(["run", "sync.yml", "--param", "day=day3.csv"], cwd: directory.path)
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.contains("read 3, inserted 0, updated 0, unchanged 1, deleted 0, skipped 0, rejected 2"),
            "\(result)")
        #expect(
            result.stdout.contains(
                "  deleted nothing: 1 rejected record has no readable key (the first at \(directory.file("day3.csv")):4:12), so the rows the source still has cannot be told apart: 2 Customer rows absent from the source kept (set 'unkeyed_rejects: delete' to delete them anyway)"
            ),
            "\(result)")
        let rejects = try String(contentsOfFile: directory.file("day3.csv.rejects"), encoding: .utf8)
        #expect(
            rejects.contains("an earlier record of the source has the same key (id=1): a sync needs each key once"),
            "\(rejects)")
        #expect(try customers(directory) == "1|Ann|Oslo\n2|Bob|Rome\n3|Cy|Lima\n")

        // An id that is not a number is no key: with unkeyed_rejects: delete the sync goes on.
        try directory.write("day4.csv", "id,name,city\n1,Ann,Oslo\n2x,Bob,Rome\n")
        try directory.write("day5.csv", "id,name,city\n1,Ann,Oslo\n")
        try directory.write(
            "keep.yml",
            """
            store: s.sqlite
            model: model.yml
            steps:
              - import: {source: day5.csv, entity: Customer, mode: sync, rejects: r5.ndjson, max_rejects: 1, max_delete: 2}
              - import: {source: day4.csv, entity: Customer, mode: sync, rejects: r4.ndjson, max_rejects: 1, unkeyed_rejects: delete}
            """)
        let dry = try runFerry(["run", "keep.yml", "--dry-run"], cwd: directory.path)
        #expect(dry.exitCode == 0, "\(dry)")
        #expect(
            dry.stdout.contains("read 1, inserted 0, updated 0, unchanged 1, deleted 2, skipped 0, rejected 0"),
            "\(dry)")
        // Step 2 runs after step 1 deleted 2 and 3: '2x' is no key of any row, and unkeyed_rejects: delete goes on.
        #expect(
            dry.stdout.contains("read 2, inserted 0, updated 0, unchanged 1, deleted 0, skipped 0, rejected 1"),
            "\(dry)")
    }

    @Test(
        "refused before anything is touched: no key, atomic: false, on_conflict: keep, key without sync, an unknown key attribute"
    )
    func refusedDefinitions() throws {
        let directory = try prepared()
        let cases: [(String, String)] = [
            (
                "{source: day1.csv, entity: Note, mode: sync}",
                "j.yml:4:52: error: 'mode: sync' needs a key to match the source's records with the store's: 'Note' has no uniqueness constraint of attributes; add 'key: [attribute]' to the step or 'unique:' to the model"
            ),
            (
                "{source: day1.csv, entity: Customer, mode: sync, atomic: false}",
                "j.yml:4:56: error: 'mode: sync' runs in one transaction (its deletions need the whole source); remove 'atomic: false'"
            ),
            (
                "{source: day1.csv, entity: Customer, mode: sync, on_conflict: keep}",
                "j.yml:4:75: error: 'mode: sync' updates the rows it finds by key: 'on_conflict' may be update (the default) or replace, not keep"
            ),
            ("{source: day1.csv, entity: Customer, key: id}", "j.yml:4:50: error: 'key' applies only to 'mode: sync'"),
            (
                "{source: day1.csv, entity: Customer, mode: sync, key: [idd]}",
                "j.yml:4:67: error: 'key' names 'idd', which is not an attribute of 'Customer'; did you mean 'id'?"
            ),
            (
                "{source: day1.csv, entity: Customer, mode: mirror}",
                "j.yml:4:56: error: 'mirror' is not a valid 'mode' (one of append, sync)"
            ),
        ]
        let before = try FileFingerprint.of(directory.file("s.sqlite"))
        for (step, message) in cases {
            try directory.write("j.yml", "store: s.sqlite\nmodel: model.yml\nsteps:\n  - import: \(step)\n")
            for command in ["validate", "run"] {
                let result = try runFerry([command, "j.yml"], cwd: directory.path)
                #expect(result.exitCode == 64, "\(step): \(result)")
                #expect(result.errorLines.first == message, "\(step): \(result)")
            }
        }
        #expect(try FileFingerprint.of(directory.file("s.sqlite")) == before)
        let command = try runFerry(
            ["import", "day1.csv", "--store", "s.sqlite", "--entity", "Note", "--mode", "sync"], cwd: directory.path)
        #expect(command.exitCode == 64, "\(command)")
        #expect(
            command.errorLines.first?.hasSuffix(
                "'Note' has no uniqueness constraint of attributes; add --key or 'unique:' to the model") == true,
            "\(command)")
        let keyed = try runFerry(
            ["import", "day1.csv", "--store", "s.sqlite", "--entity", "Note", "--key", "text"], cwd: directory.path)
        #expect(keyed.exitCode == 64, "\(keyed)")
        #expect(
            keyed.errorLines == ["error: --key, --allow-empty-sync and --max-delete apply only to --mode sync"],
            "\(keyed)")
        #expect(try FileFingerprint.of(directory.file("s.sqlite")) == before)
    }
}

/// JSON API payloads in 3lvis/Sync's style, with Sync's own models and fixtures: snake_case
/// keys read into camelCase attributes, `id` into `remoteID`, user-info remote keys.
@Suite(
    "ferry import: key_style snake_case with the 3lvis/Sync corpus", .serialized,
    .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
struct SyncCorpusTests {
    static let sync = CoreDataSamples.root.appendingPathComponent("3lvis-Sync/Tests/Sync")

    static func path(_ relative: String) -> String { sync.appendingPathComponent(relative).path }

    @Test(
        "users_a.json then users_b.json into Contacts' User: 8 users, then the 6 of the second payload (Sync's own expectation)"
    )
    func usersSync() throws {
        let directory = TemporaryDirectory("ferry-cli-sync-corpus")
        try directory.write(
            "users.yml",
            """
            store: users.sqlite
            model: \(Self.path("Models/Contacts.xcdatamodeld"))
            steps:
              - import: {source: "${users}", entity: User, mode: sync, key_style: snake_case, max_delete: none}

            """)
        let first = try runFerry(
            ["run", "users.yml", "--param", "users=\(Self.path("JSONs/users_a.json"))"], cwd: directory.path)
        #expect(first.exitCode == 0, "\(first)")
        #expect(
            first.stdout.contains("read 8, inserted 8, updated 0, unchanged 0, deleted 0, skipped 0, rejected 0"),
            "\(first)")
        let store = directory.file("users.sqlite")
        #expect(
            try sqlite3(store, "SELECT remoteID, email, createdAt, updatedAt FROM User WHERE remoteID = 0")
                == "0|melisawhite@ovium.com|2014-02-14T00:00:00.000Z|2014-02-17T00:00:00.000Z\n")
        let second = try runFerry(
            ["run", "users.yml", "--param", "users=\(Self.path("JSONs/users_b.json"))"], cwd: directory.path)
        #expect(second.exitCode == 0, "\(second)")
        #expect(
            second.stdout.contains("read 6, inserted 4, updated 2, unchanged 0, deleted 6, skipped 0, rejected 0"),
            "\(second)")
        #expect(
            try sqlite3(store, "SELECT group_concat(remoteID) FROM (SELECT remoteID FROM User ORDER BY remoteID)")
                == "6,7,8,9,10,11\n")
        #expect(try sqlite3(store, "SELECT email FROM User WHERE remoteID = 6") == "firstupdate@ovium.com\n")
    }

    @Test(
        "sync.remoteKey and hyper.remoteKey user info name the source key; without key_style the attribute's own name is read"
    )
    func remoteKeys() throws {
        let directory = TemporaryDirectory("ferry-cli-sync-corpus")
        let model = Self.path("Models/RemoteKey.xcdatamodeld")
        let source = Self.path("JSONs/remote_key.json")
        let styled = try runFerry(
            [
                "import", source, "--store", "a.sqlite", "--model", model, "--entity", "Entity", "--key-style",
                "snake_case",
            ], cwd: directory.path)
        #expect(styled.exitCode == 0, "\(styled)")
        #expect(try sqlite3(directory.file("a.sqlite"), "SELECT id, current, old FROM Entity") == "1|current|old\n")
        let plain = try runFerry(
            // The payload's custom_* keys are new fields nothing reads: ignored when asked.
            [
                "import", source, "--store", "b.sqlite", "--model", model, "--entity", "Entity", "--on-new-field",
                "ignore",
            ],
            cwd: directory.path)
        #expect(plain.exitCode == 0, "\(plain)")
        #expect(
            try sqlite3(directory.file("b.sqlite"), "SELECT id, quote(current), quote(old) FROM Entity")
                == "1|NULL|NULL\n")
        let inferred = try runFerry(
            ["import", source, "--store", "c.sqlite", "--key-style", "snake_case"], cwd: directory.path)
        #expect(inferred.exitCode == 64, "\(inferred)")
        #expect(inferred.errorLines == ["error: --key-style applies to a model's attributes: pass --model"])
        let wrong = try runFerry(
            ["import", source, "--store", "c.sqlite", "--model", model, "--entity", "Entity", "--key-style", "kebab"],
            cwd: directory.path)
        #expect(wrong.exitCode == 64, "\(wrong)")
    }
}
