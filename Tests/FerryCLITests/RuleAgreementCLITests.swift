import FerryTestSupport
import Foundation
import Testing

/// Import and `ferry verify` decide every validation rule with one implementation (issue 12):
/// JSON validity (RFC 8259, strictly), `pattern` (ICU, code points) and `min_length` /
/// `max_length` (UTF-16 code units), so a store ferry writes is a store its own verify accepts.
/// Fixtures/models/rules.yml and Fixtures/data/notes.{csv,ndjson} hold one record per case.
@Suite("import and verify apply the same rules, through the real binary")
struct RuleAgreementCLITests {
    static let model = Fixtures.path("models/rules.yml")

    /// What the import of notes.csv or notes.ndjson must reject, by record number.
    static let expectedRejects: [Int: (field: String, reason: String)] = [
        2: ("payload", "payload: '[1,]' is not valid JSON"),
        3: ("initial", "initial does not match the pattern ."),
        4: ("code", "code is longer than 1 (2)"),
        6: ("emoji", "emoji is shorter than 2 (1)"),
        7: ("payload", "payload: '[01]' is not valid JSON"),
    ]

    func importNotes(_ file: String, into dir: TemporaryDirectory) throws -> (store: String, rejects: [[String: Any]]) {
        let store = dir.file("notes.sqlite")
        let rejects = dir.file("rejects.ndjson")
        let result = try runFerry([
            "import", Fixtures.path("data/\(file)"), "--store", store, "--model", Self.model, "--entity", "Note",
            "--rejects", rejects, "--max-rejects", "10",
        ])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("read 8, inserted 3, updated 0, skipped 0, rejected 5"), "\(result)")
        return (store, try lines(ofFile: rejects).map { try jsonObject(text: $0) })
    }

    @Test(
        "trailing commas and leading zeros are not JSON, e + U+0301 is two code points and two UTF-16 units; what gets in verifies",
        arguments: ["notes.csv", "notes.ndjson"])
    func importedStoreVerifies(file: String) throws {
        let dir = TemporaryDirectory()
        let (store, rejects) = try importNotes(file, into: dir)
        var found: [Int: (field: String, reason: String)] = [:]
        for reject in rejects {
            let record = try #require(reject["record"] as? Int)
            found[record] = (reject["field"] as? String ?? "", reject["reason"] as? String ?? "")
        }
        #expect(found.keys.sorted() == Self.expectedRejects.keys.sorted(), "\(rejects)")
        for (record, expected) in Self.expectedRejects {
            #expect(found[record]?.field == expected.field, "record \(record): \(rejects)")
            #expect(found[record]?.reason == expected.reason, "record \(record): \(rejects)")
        }
        // Precomposed é (one code point, one unit), 😀 (one code point, two UTF-16 units).
        let rows = try StoreSnapshot.texts(store, #"SELECT id, initial, code, emoji FROM "Note" ORDER BY id"#)
        #expect(
            rows == [["1", "\u{E9}", "\u{E9}", "\u{1F600}"], ["5", "x", "x", "ab"], ["8", "\u{1F600}", "x", "ab"]])

        let verify = try runFerry(["verify", store, "--checks", "all"])
        #expect(verify.exitCode == 0, "\(verify)")
        #expect(verify.stdout.contains("validation Note") && verify.stdout.contains("types Note"), "\(verify)")
    }

    @Test(
        "values another program wrote are judged by the same rules: verify fails them, export does not embed the bad JSON"
    )
    func foreignValuesFail() throws {
        let dir = TemporaryDirectory()
        let (store, _) = try importNotes("notes.csv", into: dir)
        let writer = try StoreConnection(store)
        // What import refuses, written behind ferry's back: each breaks exactly one rule.
        try writer.execute(
            """
            INSERT INTO "Note" (id, payload, initial, code, emoji) VALUES
              (20, '[1,]', 'x', 'x', 'ab'),
              (21, '{}', 'e' || char(769), 'x', 'ab'),
              (22, '{}', 'x', 'e' || char(769), 'ab'),
              (23, '{}', 'x', 'x', 'a'),
              (24, '{}', 'x', 'x', char(128512) || 'b')
            """)
        let verify = try runFerry(["verify", store, "--checks", "all"])
        #expect(verify.exitCode == 3, "\(verify)")
        #expect(verify.stdout.contains("- Note ferry_pk=4 id=20: payload is not valid JSON text"), "\(verify)")
        #expect(verify.stdout.contains("- Note ferry_pk=5 id=21: initial does not match the pattern ."), "\(verify)")
        #expect(verify.stdout.contains("- Note ferry_pk=6 id=22: code is longer than 1 characters"), "\(verify)")
        #expect(verify.stdout.contains("- Note ferry_pk=7 id=23: emoji is shorter than 2 characters"), "\(verify)")
        #expect(verify.stdout.contains("- Note ferry_pk=8 id=24: emoji is longer than 2 characters"), "\(verify)")
        #expect(verify.stdout.contains("types Note") && verify.stdout.contains("type_payload=1"), "\(verify)")

        let export = try runFerry([
            "export", "--store", store, "--entity", "Note", "--where", "id >= 20 AND id <= 21", "--format", "ndjson",
            "--output", "-",
        ])
        #expect(export.exitCode == 0, "\(export)")
        #expect(export.stdout.hasPrefix(#"{"id":20,"payload":"[1,]","#), "\(export)")
        #expect(export.stdout.contains(#"{"id":21,"payload":{},"#), "\(export)")
    }
}
