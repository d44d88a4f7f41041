import FerryCore
import FerryFormats
@_spi(Testing) import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// `mode: sync` through the import runner: counts, change detection, rejects and delete rules.
@Suite("Import runner: mode sync")
struct SyncImportTests {
    static let model = ObjectModel(
        name: "m", version: "1",
        entities: [
            EntityDescription(
                name: "Product",
                attributes: [
                    AttributeDescription(name: "sku", type: .string, isOptional: false),
                    AttributeDescription(name: "price", type: .decimal),
                    AttributeDescription(name: "weight", type: .double),
                    AttributeDescription(name: "added", type: .date),
                    AttributeDescription(name: "note", type: .string),
                ],
                uniquenessConstraints: [["sku"]]),
            EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)]),
        ])

    func sync(
        _ text: String, name: String, format: DataFormat = .csv, into store: Store, dir: TemporaryDirectory,
        configure: (inout ImportStep) -> Void = { _ in }
    ) throws -> StepReport {
        let source = try dir.write(name, text)
        var step = ImportStep(source: source, format: format, entity: "Product")
        step.mode = .sync
        step.rejectsPath = dir.file(name + ".rejects")
        step.maxRejects = .unlimited
        // These cases are about matching and rejects; the deletion limit has its own tests (SyncGuardTests).
        step.sync.maxDelete = .unlimited
        configure(&step)
        return try ImportStepRunner(step: step, store: store).run()
    }

    func rows(_ store: Store) throws -> [[DatabaseValue]] {
        try store.withConnection { try $0.rows("SELECT sku, price, weight, added, note FROM Product ORDER BY sku") }
    }

    @Test("a second run of the same file leaves every row unchanged; a changed value, a new and a gone key are counted")
    func countsAndChangeDetection() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(at: dir.file("s.sqlite"), model: Self.model)
        let day1 =
            "sku,price,weight,added,note\nA,1.50,2.0,2024-01-01,x\nB,10,0.25,2024-02-01T10:00:00Z,\nC,3.333,1e3,2024-03-01,z\n"
        let first = try sync(day1, name: "d1.csv", into: store, dir: dir)
        #expect([first.inserted, first.updated, first.unchanged, first.deleted] == [3, 0, 0, 0] as [Int])
        #expect(first.sync?.insertedKeys == ["sku=A", "sku=B", "sku=C"])
        // The same values written differently (1.5 for 1.50, 1000 for 1e3) are the same values.
        let again = try sync(
            "sku,price,weight,added,note\nC,3.333,1000,2024-03-01T00:00:00Z,z\nA,1.5,2,2024-01-01,x\nB,10.0,0.25,2024-02-01T10:00:00.000Z,\n",
            name: "d1b.csv", into: store, dir: dir)
        #expect(
            [again.read, again.inserted, again.updated, again.unchanged, again.deleted] == [3, 0, 0, 3, 0] as [Int],
            "\(again)")
        #expect(again.isBalanced)

        let day2 =
            "sku,price,weight,added,note\nA,1.50,2.0,2024-01-01,changed\nD,4,1,2024-04-01,new\nB,10,0.25,2024-02-01T10:00:00Z,\n"
        let second = try sync(day2, name: "d2.csv", into: store, dir: dir)
        #expect(
            [second.read, second.inserted, second.updated, second.unchanged, second.deleted] == [3, 1, 1, 1, 1]
                as [Int], "\(second)")
        #expect(
            second.sync
                == SyncReport(key: ["sku"], insertedKeys: ["sku=D"], updatedKeys: ["sku=A"], deletedKeys: ["sku=C"]))
        #expect(try rows(store).map { $0[0].text ?? "" } == ["A", "B", "D"])
        #expect(try rows(store)[0][4] == .text("changed"))
    }

    @Test("a JSON record without a key's attribute leaves it as it is and is unchanged when the rest agrees")
    func suppliedAttributesOnly() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(at: dir.file("s.sqlite"), model: Self.model)
        _ = try sync(
            #"[{"sku": "A", "price": 2, "note": "keep me"}]"#, name: "a.json", format: .json, into: store, dir: dir)
        let report = try sync(#"[{"sku": "A", "price": 2}]"#, name: "b.json", format: .json, into: store, dir: dir)
        #expect([report.updated, report.unchanged] == [0, 1] as [Int])
        #expect(try rows(store)[0][4] == .text("keep me"))
    }

    @Test(
        "rejected records: a readable key keeps its row, a null or duplicate key is rejected, an unreadable key stops deletions"
    )
    func rejects() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(at: dir.file("s.sqlite"), model: Self.model)
        _ = try sync("sku,price\nA,1\nB,2\nC,3\nD,4\n", name: "d1.csv", into: store, dir: dir)
        // B's price is not a number: rejected, but B stays. The second A is a duplicate key.
        let report = try sync("sku,price\nA,1\nB,lots\nA,5\n", name: "d2.csv", into: store, dir: dir)
        #expect(
            [report.read, report.unchanged, report.rejected, report.deleted] == [3, 1, 2, 2] as [Int], "\(report)")
        #expect(try rows(store).map { $0[0].text ?? "" } == ["A", "B"])
        #expect(try rows(store)[0][1] == .text("1"), "the duplicate did not change A")
        let rejects = try String(contentsOfFile: dir.file("d2.csv.rejects"), encoding: .utf8)
        #expect(
            rejects.contains("an earlier record of the source has the same key (sku=A): a sync needs each key once"),
            "\(rejects)")

        // A record with the wrong number of fields has no key one can trust, nor has a null key: nothing is deleted.
        let unkeyed = try sync("sku,price\nA,1\nB,2,extra\n,7\n", name: "d3.csv", into: store, dir: dir)
        #expect([unkeyed.rejected, unkeyed.deleted] == [2, 0] as [Int])
        #expect(
            unkeyed.sync?.deletionsSkipped?.hasPrefix(
                "2 rejected records have no readable key (the first at \(dir.file("d3.csv")):3:") == true, "\(unkeyed)")
        #expect(
            unkeyed.sync?.deletionsSkipped?.hasSuffix(
                "1 Product row absent from the source kept (set 'unkeyed_rejects: delete' to delete them anyway)")
                == true, "\(unkeyed)")
        let nullKey = try String(contentsOfFile: dir.file("d3.csv.rejects"), encoding: .utf8)
        #expect(
            nullKey.contains("sku is null: a sync needs every record's key") || nullKey.contains("sku is required"),
            "\(nullKey)")
        #expect(try rows(store).count == 2)
        let forced = try sync("sku,price\nA,1\nB,2,extra\n,7\n", name: "d4.csv", into: store, dir: dir) {
            $0.sync.unkeyedRejects = .delete
        }
        #expect([forced.rejected, forced.deleted] == [2, 1] as [Int])
        #expect(try rows(store).map { $0[0].text ?? "" } == ["A"])
    }

    @Test("an empty source deletes nothing unless allowed; a key of two attributes; no key at all is refused")
    func emptySourceAndKeys() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(at: dir.file("s.sqlite"), model: Self.model)
        _ = try sync("sku,price\nA,1\nB,2\n", name: "d1.csv", into: store, dir: dir)
        #expect(throws: ImportStepFailure.self) { try sync("sku,price\n", name: "empty.csv", into: store, dir: dir) }
        #expect(try rows(store).count == 2)
        let allowed = try sync("sku,price\n", name: "empty2.csv", into: store, dir: dir) { $0.sync.allowEmpty = true }
        #expect(allowed.deleted == 2)

        let tags = try dir.write("tags.csv", "label\nred\nblue\n")
        let noKey = ImportStep(source: tags, format: .csv, entity: "Tag")
        var step = noKey
        step.mode = .sync
        do {
            _ = try ImportStepRunner(step: step, store: store).run()
            Issue.record("a sync of an entity without a key ran")
        } catch let failure as ImportStepFailure {
            #expect(
                "\(failure.error)".contains(
                    "'mode: sync' needs a key to match the source's records with the store's: 'Tag' has no uniqueness constraint"
                ))
        }
        // A key the model does not make unique is refused too (issue 23: it deleted rows whose key
        // was in the source).
        step.key = ["label"]
        do {
            _ = try ImportStepRunner(step: step, store: store).run()
            Issue.record("a sync by a key that is not unique ran")
        } catch let failure as ImportStepFailure {
            #expect("\(failure.error)".contains("[label] is not unique in the model"), "\(failure.error)")
        }
        #expect(try store.entityCount("Tag") == 0)
    }

    @Test("a dry run counts what would change and touches nothing")
    func dryRun() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(at: dir.file("s.sqlite"), model: Self.model)
        _ = try sync("sku,price\nA,1\nB,2\n", name: "d1.csv", into: store, dir: dir)
        let source = try dir.write("d2.csv", "sku,price\nA,9\nC,3\n")
        var step = ImportStep(source: source, format: .csv, entity: "Product")
        step.mode = .sync
        let runner = ImportStepRunner(step: step, store: store)
        runner.dryRun = true
        let report = try runner.run()
        #expect(report.outcome == .dryRun)
        #expect([report.inserted, report.updated, report.deleted] == [1, 1, 1] as [Int])
        #expect(
            report.sync
                == SyncReport(key: ["sku"], insertedKeys: ["sku=C"], updatedKeys: ["sku=A"], deletedKeys: ["sku=B"]))
        #expect(try rows(store).map { [$0[0], $0[1]] } == [[.text("A"), .text("1")], [.text("B"), .text("2")]])
    }
}

@Suite("Source key styles")
struct SourceKeyStyleTests {
    @Test("snake_case of camelCase names, acronyms and digits; user info and remoteID")
    func snakeCase() {
        let cases = [
            ("firstName", "first_name"), ("remoteID", "remote_id"), ("URLString", "url_string"),
            ("profileURL", "profile_url"),
            ("address2Line", "address2_line"), ("already_snake", "already_snake"), ("id", "id"),
            ("createdAt", "created_at"),
        ]
        for (name, expected) in cases { #expect(SourceKeyStyle.snakeCased(name) == expected, "\(name)") }
        var attribute = AttributeDescription(name: "current", type: .string)
        attribute.userInfo = ["sync.remoteKey": "custom_current"]
        #expect(SourceKeyStyle.snakeCase.fieldName(for: attribute) == "custom_current")
        #expect(SourceKeyStyle.asIs.fieldName(for: attribute) == "current")
        attribute.userInfo = ["hyper.remoteKey": "custom_old"]
        #expect(SourceKeyStyle.snakeCase.fieldName(for: attribute) == "custom_old")
        #expect(SourceKeyStyle.snakeCase.fieldName(for: AttributeDescription(name: "remoteID", type: .int32)) == "id")
    }

    @Test(
        "a sync's key: the step's key, else the user info primary key, else remoteID with snake_case, else a uniqueness constraint"
    )
    func syncKeyOrder() throws {
        var code = AttributeDescription(name: "code", type: .string)
        code.userInfo = ["sync.isPrimaryKey": "YES"]
        let entity = EntityDescription(
            name: "E",
            attributes: [
                AttributeDescription(name: "remoteID", type: .int64), code,
                AttributeDescription(name: "email", type: .string),
            ],
            uniquenessConstraints: [["email"]])
        var step = ImportStep(source: "x.json", format: .json, entity: "E")
        step.mode = .sync
        #expect(try SyncKey.attributes(of: step, entity: entity) == ["code"])
        step.key = ["email"]
        #expect(try SyncKey.attributes(of: step, entity: entity) == ["email"])
        let plain = EntityDescription(
            name: "E",
            attributes: [
                AttributeDescription(name: "remoteID", type: .int64),
                AttributeDescription(name: "email", type: .string),
            ],
            uniquenessConstraints: [["email"]])
        step.key = nil
        #expect(try SyncKey.attributes(of: step, entity: plain) == ["email"])
        step.keyStyle = .snakeCase
        #expect(try SyncKey.attributes(of: step, entity: plain) == ["remoteID"])
    }
}
