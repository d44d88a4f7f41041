import FerryTestSupport
import Foundation
import Testing

/// Nested imports that PostgreSQL writes a read-ahead batch at a time (`NestedBatch`: the step
/// inserts with `error` or `keep`, each nested entity's one uniqueness constraint is its key),
/// run through the binary into SQLite and into PostgreSQL: the same exit code, report lines,
/// rejects file, objects and links, with records the batch cannot decide (rejects, repeated
/// unique values, keys naming objects, links through a join table) among those it does, across
/// read-ahead batches (2,048 records) and the step's transactions.
@Suite(
    "PostgreSQL nested imports written a batch at a time (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresNestedBatchCLITests {
    static let model = """
        entities:
          Owner:
            attributes:
              id: {type: int64, optional: false, unique: true}
              name: {type: string, min_length: 2}
              email: {type: string, unique: true}
              joined: date
            relationships:
              pets: {destination: Pet, to_many: true, inverse: owner}
              vet: {destination: Vet, inverse: owners}
              badges: {destination: Badge, to_many: true, inverse: owners}
          Pet:
            attributes:
              id: {type: int64, optional: false, unique: true}
              name: string
              weight: decimal
              born: date
            relationships:
              owner: {destination: Owner, inverse: pets}
              toy: {destination: Toy, inverse: pet}
          Vet:
            attributes:
              code: {type: string, optional: false, unique: true}
              name: string
              fee: double
            relationships:
              owners: {destination: Owner, to_many: true, inverse: vet}
          Toy:
            attributes:
              id: {type: int32, optional: false, unique: true}
              kind: string
            relationships:
              pet: {destination: Pet, inverse: toy}
          Badge:
            attributes:
              code: {type: string, optional: false, unique: true}
            relationships:
              owners: {destination: Owner, to_many: true, inverse: badges}
        """

    /// `count` owners from `first` on, in NDJSON: each nests two pets (1 in 20 the second with a toy), a
    /// vet (one of 40, by object or by key), now and then a record the batch leaves to the
    /// record-by-record path or rejects itself: a pet, a pet's toy or a vet with a value that does
    /// not coerce (alone or after a failure met first), a name too short, an email or an
    /// id seen before, a vet named by a key no vet has, a badge (a many-to-many link), keys in
    /// `pets_ids`, a pet moved from an earlier owner.
    static func owners(first: Int, count: Int, renamed: Bool = false) -> String {
        var lines: [String] = []
        for i in first..<(first + count) {
            let vetCode = "v\(i % 40)"
            var vet = #"{"code": "\#(vetCode)", "name": "Vet \#(i % 40)\#(renamed ? " b" : "")", "fee": \#(i % 7).5}"#
            if i % 5 == 0 { vet = #""\#(vetCode)""# }
            var pets = [
                #"{"id": \#(2 * i), "name": "pet \#(2 * i)", "weight": "\#(i % 9).25", "born": "2020-01-\#(String(format: "%02d", i % 28 + 1))"}"#,
                i % 20 == 0
                    ? #"{"id": \#(2 * i + 1), "name": "pet \#(2 * i + 1)", "toy": {"id": \#(i), "kind": "ball"}}"#
                    : #"{"id": \#(2 * i + 1), "name": "pet \#(2 * i + 1)"}"#,
            ]
            var name = "owner \(i)\(renamed ? " b" : "")"
            var email = "o\(i)@example.com"
            var id = "\(i)"
            var extra = ""
            switch i % 97 {
            case 11: pets[1] = #"{"id": "p\#(i)", "name": "bad id"}"#
            // Values that do not coerce, which the batch rejects itself: in the vet, in a
            // pet's toy, and after a failure met first (a name too short, then a bad pet id; a
            // vet's bad fee before a repeated email).
            case 13: vet = #"{"code": "\#(vetCode)", "fee": "cheap"}"#
            case 17: pets[0] = #"{"id": \#(2 * i), "name": "pet", "toy": {"id": "t\#(i)", "kind": "ball"}}"#
            case 19:
                name = "x"
                pets[1] = #"{"id": "p\#(i)", "name": "bad id"}"#
            case 29:
                email = "o\(i - 1)@example.com"
                vet = #"{"code": "\#(vetCode)", "fee": "cheap"}"#
            case 23: name = "x"
            case 31: email = "o\(i - 1)@example.com"
            case 37: id = "\(i - 3)"
            case 41: vet = #""nobody""#
            case 53: extra = #", "badges": [{"code": "b\#(i % 3)"}]"#
            case 59: extra = #", "pets_ids": [\#(2 * (i - 1))]"#
            case 61: pets.append(#"{"id": \#(2 * (i - 2)), "name": "moved"}"#)
            case 67: vet = "null"
            case 71: pets = []
            default: break
            }
            lines.append(
                #"{"id": \#(id), "name": "\#(name)", "email": "\#(email)", "joined": "2024-05-01T12:30:00.250Z", "vet": \#(vet), "pets": [\#(pets.joined(separator: ", "))]\#(extra)}"#
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func job(policy: String, extra: String = "") -> String {
        """
        store: {path: "${store}"}
        model: model.yml
        steps:
          - import: {source: vets.ndjson, entity: Vet}
          - import: {source: owners.ndjson, entity: Owner, nested: true, on_conflict: \(policy), rejects: "${out}/r.ndjson", max_rejects: unlimited\(extra)}

        """
    }

    static func prepared(owners: String, job: String, model: String = model) throws -> TemporaryDirectory {
        let directory = TemporaryDirectory("ferry-cli-pg-nested-batch")
        try directory.write("model.yml", model)
        try directory.write("owners.ndjson", owners)
        // Vets stored before the nested step: the records update them or name them by key.
        try directory.write(
            "vets.ndjson", (0..<20).map { #"{"code": "v\#($0)", "name": "Old \#($0)"}"# }.joined(separator: "\n") + "\n"
        )
        try directory.write("job.yml", job)
        return directory
    }

    @Test(
        "5,000 owners with error and keep: SQLite's counts, rejects, objects and links; a second run with new values"
    )
    func manyRecords() throws {
        for policy in ["error", "keep"] {
            let (url, drop) = try PostgresImportCLITests.freshStore("nested_batch")
            defer { drop() }
            let directory = try Self.prepared(
                owners: Self.owners(first: 1, count: 5_000), job: Self.job(policy: policy))
            let first = try PostgresNestedImportCLITests.compare(directory, url: url, round: "\(policy), first run")
            #expect(first.contains { $0.contains("nested Pet: inserted") }, "\(first)")
            // Half the owners again (each one seen before) and 2,500 new ones, whose nested
            // objects update the stored ones.
            try directory.write("owners.ndjson", Self.owners(first: 2_501, count: 5_000, renamed: true))
            try PostgresNestedImportCLITests.compare(directory, url: url, round: "\(policy), second run")
        }
    }

    @Test(
        "on_conflict: update of an entity with one uniqueness constraint: 5,000 owners (ids repeated among them), then a second run updating half of them"
    )
    func updates() throws {
        let (url, drop) = try PostgresImportCLITests.freshStore("nested_batch")
        defer { drop() }
        // The email no longer unique: the owners' one uniqueness constraint is their id, which
        // the batch matches records by.
        let model = Self.model.replacingOccurrences(
            of: "email: {type: string, unique: true}", with: "email: string")
        let directory = try Self.prepared(
            owners: Self.owners(first: 1, count: 5_000), job: Self.job(policy: "update"), model: model)
        let first = try PostgresNestedImportCLITests.compare(directory, url: url, round: "update, first run")
        #expect(first.contains { $0.contains("nested Pet: inserted") }, "\(first)")
        try directory.write("owners.ndjson", Self.owners(first: 2_501, count: 5_000, renamed: true))
        let second = try PostgresNestedImportCLITests.compare(directory, url: url, round: "update, second run")
        #expect(second.contains { $0.contains("updated") }, "\(second)")
    }

    @Test("atomic: false in batches of 700 (transactions inside read-ahead batches), then a dry run")
    func batchesAndDryRun() throws {
        let (url, drop) = try PostgresImportCLITests.freshStore("nested_batch")
        defer { drop() }
        let directory = try Self.prepared(
            owners: Self.owners(first: 1, count: 3_000),
            job: Self.job(policy: "error", extra: ", atomic: false, batch_size: 700"))
        try PostgresNestedImportCLITests.compare(directory, url: url, round: "batches")
        // A dry run of new owners and of some seen before changes neither store.
        try directory.write("owners.ndjson", Self.owners(first: 2_001, count: 2_000, renamed: true))
        try PostgresNestedImportCLITests.compare(directory, url: url, round: "dry run", arguments: ["--dry-run"])
    }
}
