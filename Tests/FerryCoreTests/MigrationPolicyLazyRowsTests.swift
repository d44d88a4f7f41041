import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// A policy mapping whose rows are read value by value (every destination value a source value
/// as stored, a constant or a key) and whose associations no SQL of the step reads (the entity
/// has no relationships): the values a policy leaves alone are written as stored, those it
/// reads or changes as it sees them, rows it keeps past its call keep their values, and the
/// manager answers for objects that kept their keys as for the others.
@Suite("Migration policies: rows read lazily, kept-key associations")
struct MigrationPolicyLazyRowsTests {
    static let items = 600

    static let v1 = ObjectModel(
        name: "Ledger", version: "1",
        entities: [
            EntityDescription(
                name: "Item",
                attributes: [
                    AttributeDescription(name: "id", type: .int64, isOptional: false),
                    AttributeDescription(name: "name", type: .string, isOptional: false),
                    AttributeDescription(name: "price", type: .decimal),
                    AttributeDescription(name: "added", type: .date),
                    AttributeDescription(name: "active", type: .bool),
                    AttributeDescription(name: "note", type: .string),
                ],
                uniquenessConstraints: [["id"]])
        ])

    /// Version 2 adds `kind` with a default; every other attribute is copied as it is.
    static let v2: ObjectModel = {
        var model = v1
        model.version = "2"
        model.entities[0].attributes.append(
            AttributeDescription(name: "kind", type: .string, isOptional: false, defaultValue: .string("plain")))
        return model
    }()

    static let bundle = ModelBundle(name: "Ledger", versions: [v1, v2], currentVersion: "2")

    /// Item `id` in version 1: every fourth has no price, date or note.
    static func values(of id: Int64) -> [Value] {
        let empty = id % 4 == 0
        return [
            .integer(id), .string("Item \(id)"), empty ? .null : .decimal("\(id).25"),
            empty ? .null : .date(Timestamp(milliseconds: 1_700_000_000_000 + id * 1_001)),
            .bool(id % 2 == 0), empty ? .null : .string("note ✓ \(id)"),
        ]
    }

    static func makeStore(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("ledger.sqlite")
        let store = try Store.open(at: path, model: v1)
        try store.write { connection in
            let inserter = try BatchInserter(
                connection: connection, model: v1, layout: FerryLayout(), entity: "Item",
                columns: ["id", "name", "price", "added", "active", "note"].map { .attribute($0) })
            for id in 1...Int64(items) {
                #expect(try inserter.insert(values(of: id)) == .inserted)
            }
        }
        return path
    }

    @Test(
        "unread values are written as stored, read and changed ones as the policy has them; kept rows keep their values"
    )
    func lazyRows() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeStore(in: directory)
        let before = try StoreSnapshot.texts(path, "SELECT id, price, added, active, note FROM Item ORDER BY id")
        let problems = CallLog()
        let registry = PolicyRegistry()
        registry.register("Keeper") { RowKeeper(problems: problems) }
        let migrator = Migrator(
            storePath: path, bundle: Self.bundle, options: MigrationOptions(backup: false, registry: registry)
        ) { from, to in
            var mapping = try MappingModel.inferred(from: from, to: to)
            mapping.entities[0].policy = "Keeper"
            return mapping
        }
        let report = try migrator.run()
        #expect(problems.entries == [])
        // One Item per source object, and a second one for every tenth.
        #expect(report.steps.first?.entities.map(\.written) == [Self.items + Self.items / 10])
        // The copied values as stored, byte for byte (dates, decimals, text, nil).
        #expect(
            try StoreSnapshot.texts(
                path, "SELECT id, price, added, active, note FROM Item WHERE id <= \(Self.items) ORDER BY id") == before
        )
        // Names: upper-cased for odd ids (read and set), as they were for even ones (read only).
        let names = try StoreSnapshot.texts(
            path, "SELECT id, name, kind FROM Item WHERE id <= \(Self.items) ORDER BY id")
        #expect(
            names
                == (1...Int64(Self.items)).map { id in
                    ["\(id)", id % 2 == 1 ? "ITEM \(id)" : "Item \(id)", "plain"]
                })
        #expect(
            try StoreSnapshot.texts(
                path, "SELECT count(*) FROM Item WHERE id > \(Self.items) AND name LIKE 'copy of %'")
                == [["\(Self.items / 10)"]])
    }
}

/// Reads the source's id, upper-cases odd items' names, leaves the other values alone; makes a
/// second Item for every tenth (a new key and id); keeps every source object and mapped row and checks
/// them after the last object; asks the manager about every object in the relationship stage.
final class RowKeeper: EntityMigrationPolicy {
    let problems: CallLog
    private var kept: [(MigrationObject, MigrationRow)] = []
    /// The keys of the objects made from each source object, in the order they were made.
    private var made: [Int64: [Int64]] = [:]
    private var name: Int?
    private var id: Int?
    private var visited = 0

    init(problems: CallLog) { self.problems = problems }

    func begin(mapping: MappingContext, manager: MigrationManager) throws {
        name = mapping.destinationColumns.position(of: "name")
        id = mapping.destinationColumns.position(of: "id")
    }

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        guard let name, let idPosition = self.id else { return }
        var row = try manager.mappedRow(forSource: source, mapping: mapping)
        guard case .integer(let id) = source["id"] else {
            problems.append("Item \(source.primaryKey): id \(source["id"])")
            return
        }
        if id % 2 == 1, let text = row.string(at: name) { row[name] = .string(text.uppercased()) }
        if id % 3 == 0 { kept.append((source, row)) }
        made[source.primaryKey] = [
            try manager.insertDestinationRow(row, forSource: source, mapping: mapping).primaryKey
        ]
        if id % 10 == 0 {
            var second = row
            second[name] = .string("copy of \(id)")
            second[idPosition] = .integer(id + 100_000)
            made[source.primaryKey, default: []].append(
                try manager.insertDestinationRow(second, forSource: source, mapping: mapping).primaryKey)
        }
    }

    func endInstanceCreation(mapping: MappingContext, manager: MigrationManager) throws {
        // Rows kept past their call kept their own values, not a later object's.
        for (source, row) in kept {
            let expected = MigrationPolicyLazyRowsTests.values(of: source.primaryKey)
            if source.row.values != expected { problems.append("kept source \(source.primaryKey): \(source.row)") }
            if source.values["note"] != expected[5] { problems.append("kept source \(source.primaryKey) by name") }
            let name = source.primaryKey % 2 == 1 ? "ITEM \(source.primaryKey)" : "Item \(source.primaryKey)"
            if row["name"] != .string(name) || row["added"] != expected[3] || row["note"] != expected[5]
                || row["kind"] != .string("plain")
            {
                problems.append("kept row \(source.primaryKey): \(row)")
            }
        }
        // Some objects kept their source's key (the first ten: the eleventh key went to the
        // tenth source's second object), the others did not.
        let keptKeys = made.filter { $0.value.first == $0.key }.count
        if keptKeys != 10 { problems.append("\(keptKeys) objects kept their keys") }
        let sources: [Int64] = [1, 9, 10, 20, 21, 600]
        let destinations = try manager.destinationInstances(forMapping: mapping.name, sourceInstances: sources)
        if destinations != sources.flatMap({ made[$0] ?? [] }) {
            problems.append("destinations of \(sources): \(destinations)")
        }
    }

    func createRelationships(
        forDestination destination: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        let sources = try manager.sourceInstances(
            forMapping: mapping.name, destinationInstances: [destination.primaryKey])
        let expected = made.filter { $0.value.contains(destination.primaryKey) }.map(\.key)
        if sources != expected || expected.count != 1 {
            problems.append("Item \(destination.primaryKey): sources \(sources)")
        }
        visited += 1
    }

    func endRelationshipCreation(mapping: MappingContext, manager: MigrationManager) throws {
        let items = MigrationPolicyLazyRowsTests.items
        if visited != items + items / 10 { problems.append("the relationship stage visited \(visited) Items") }
    }
}
