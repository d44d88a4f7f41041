import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// How `update` and `replace` find the existing object a record stands for: through the first
/// uniqueness constraint whose values the record has and an object holds. A null never matches,
/// as it never conflicts in a unique index.
@Suite("Conflict matching: update and replace find the existing object")
struct ConflictMatchTests {
    /// People with a unique id and an optional unique nick.
    static let model = ObjectModel(
        name: "People", version: "1",
        entities: [
            EntityDescription(
                name: "Person",
                attributes: [
                    AttributeDescription(name: "id", type: .int64, isOptional: false),
                    AttributeDescription(name: "nick", type: .string),
                    AttributeDescription(name: "name", type: .string),
                ],
                uniquenessConstraints: [["id"], ["nick"]])
        ])

    static func insert(_ rows: [[Value]], into store: Store, policy: ConflictPolicy) throws -> BatchInsertResult {
        try store.execute(
            BatchInsertRequest(
                entity: "Person", columns: [.attribute("id"), .attribute("nick"), .attribute("name")],
                conflictPolicy: policy, rows: rows))
    }

    @Test("a record without a nick is not matched with a stored object without one (update and replace, SQLite)")
    func nullNeverMatches() throws {
        for policy in [ConflictPolicy.update, .replace] {
            let directory = TemporaryDirectory()
            let store = try Store.open(at: directory.file("people.sqlite"), model: Self.model)
            _ = try Self.insert(
                [[.integer(1), .null, .string("Ann")], [.integer(2), .string("bo"), .string("Bob")]], into: store,
                policy: .error)
            let result = try Self.insert(
                [
                    [.integer(3), .null, .string("Cy")],  // new: no id 3, and a null nick matches nothing
                    [.integer(4), .string("bo"), .string("Bob again")],  // Bob, found by his nick
                ], into: store, policy: policy)
            #expect(result.inserted == 1, "\(policy)")
            #expect(result.updated == 1, "\(policy)")
            let rows = try store.fetch(FetchRequest(entity: "Person", sortDescriptors: [SortDescriptor("id")])) {
                cursor in
                var rows: [[Value]] = []
                while let row = try cursor.next() { rows.append(row) }
                return rows
            }
            #expect(
                rows == [
                    [.integer(1), .null, .string("Ann")], [.integer(3), .null, .string("Cy")],
                    [.integer(4), .string("bo"), .string("Bob again")],
                ], "\(policy)")
        }
    }
}
