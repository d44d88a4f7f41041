import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// The by-position row API of policies (`MigrationRow`, `MigrationColumns`), against the
/// dictionary API on the same real stores (MigrationPolicyTests' models, store and mapping).
@Suite("Migration policies by position: MigrationRow")
struct MigrationRowTests {
    /// Every row of the three tables of a migrated store, in key order.
    static func tables(_ path: String) throws -> [[String?]] {
        try ["Customer", "\"Order\"", "Contact"].flatMap { table in
            try StoreSnapshot.texts(path, "SELECT * FROM \(table) ORDER BY ferry_pk")
        }
    }

    @Test("the same policies through the row API and the dictionary API make the same store, key for key")
    func sameStoreAsDictionaries() throws {
        let dictionaryDirectory = TemporaryDirectory()
        let dictionaryStore = try MigrationPolicyTests.makeStore(in: dictionaryDirectory)
        let log = CallLog()
        _ = try MigrationPolicyTests.migrator(dictionaryStore, registry: MigrationPolicyTests.registry(log: log)).run()

        let rowDirectory = TemporaryDirectory()
        let rowStore = try MigrationPolicyTests.makeStore(in: rowDirectory)
        let registry = PolicyRegistry()
        registry.register("Uppercaser") { RowUppercaser() }
        registry.register("ContactSplitter") { RowContactSplitter(log: CallLog()) }
        let report = try MigrationPolicyTests.migrator(rowStore, registry: registry).run()

        #expect(try Self.tables(rowStore) == Self.tables(dictionaryStore))
        #expect(
            try StoreSnapshot.texts(rowStore, "SELECT ferry_pk, value, kind, owner FROM Contact ORDER BY ferry_pk") == [
                ["1", "021 1", "primary", "1"], ["3", "022 2", "primary", "3"], ["4", "023 3", "other", "3"],
                ["5", "024 4", "primary", nil],
            ])
        #expect(
            report.steps.first?.entities.map { "\($0.mapping) \($0.read)→\($0.written)" } == [
                "Customer 4→3", "Order 3→3", "Contact 4→4",
            ])
    }

    @Test(
        "the dictionary API on top of rows: the same values both ways; a dictionary changed in its values, its keys, or a row of other columns, is written by name"
    )
    func dictionariesOverRows() throws {
        let directory = TemporaryDirectory()
        let path = try MigrationPolicyTests.makeStore(in: directory)
        let registry = PolicyRegistry()
        registry.register("Uppercaser") { DictionaryEditor() }
        registry.register("ContactSplitter") { RowContactSplitter(log: CallLog()) }
        _ = try MigrationPolicyTests.migrator(path, registry: registry).run()
        #expect(
            try StoreSnapshot.texts(path, "SELECT ferry_pk, id, name, phone FROM Customer ORDER BY ferry_pk") == [
                // A key removed (its value nil); a value changed; a key added (ignored) and a value changed.
                ["1", "1", "Ann", nil], ["2", "2", "Bob!", nil], ["3", "3", "CY", "022 2;023 3"],
                // A row of its own columns (name and id only), bound by name.
                ["4", "4", "ghost", nil],
            ])
    }

    @Test("to-one relationships have positions too: the source's related key, the destination's foreign key column")
    func relationshipsByPosition() throws {
        let directory = TemporaryDirectory()
        let path = try MigrationPolicyTests.makeStore(in: directory)
        let registry = MigrationPolicyTests.registry(log: CallLog())
        registry.register("OrderCopier") { OrderCopier() }
        let migrator = Migrator(
            storePath: path, bundle: MigrationPolicyTests.bundle,
            options: MigrationOptions(backup: false, registry: registry)
        ) { from, to in
            var mapping = try MigrationPolicyTests.mapping(from: from, to: to)
            if let order = mapping.entities.firstIndex(where: { $0.name == "Order" }) {
                mapping.entities[order].policy = "OrderCopier"
            }
            return mapping
        }
        _ = try migrator.run()
        // As the mapping alone writes them: ghost's order lost its customer (no Customer was made from ghost).
        #expect(
            try StoreSnapshot.texts(path, "SELECT ferry_pk, number, customer FROM \"Order\" ORDER BY ferry_pk") == [
                ["1", "O-1", "1"], ["2", "O-2", nil], ["3", "O-3", "3"],
            ])
    }

    @Test("columns resolve names once; typed getters read only their own case; rows compare by names and values")
    func rowsAndColumns() {
        let columns = MigrationColumns(["id", "name", "score", "ratio", "price", "active", "born", "name"])
        #expect(columns.count == 8)
        #expect(columns.position(of: "name") == 1, "the first position of a repeated name")
        #expect(columns.position(of: "missing") == nil)
        var row = MigrationRow(columns: columns)
        #expect(row.values == Array(repeating: .null, count: 8))
        row[0] = .integer(7)
        row[1] = .string("Ann")
        row[2] = .integer(3)
        row[3] = .double(0.5)
        row[4] = .decimal("1.25")
        row[5] = .bool(true)
        row[6] = .date(86_400_000)
        #expect(row.int64(at: 0) == 7 && row.string(at: 1) == "Ann" && row.double(at: 3) == 0.5)
        #expect(row.decimal(at: 4) == "1.25" && row.bool(at: 5) == true)
        #expect(row.date(at: 6) == Timestamp(milliseconds: 86_400_000))
        #expect(row.string(at: 0) == nil && row.int64(at: 1) == nil && row.double(at: 2) == nil)
        #expect(row["name"] == .string("Ann") && row["missing"] == .null)
        #expect(row.dictionary["score"] == .integer(3) && row.dictionary.count == 7)
        var same = MigrationRow(columns: MigrationColumns(columns.names))
        for position in 0..<same.count { same[position] = row[position] }
        #expect(same == row && same.hashValue == row.hashValue)
        same[7] = .string("other")
        #expect(same != row)
        #expect(row.description.hasPrefix("[id: 7, name: Ann, score: 3"))
        let object = MigrationObject(entity: "Person", primaryKey: 1, values: ["b": .integer(2), "a": .integer(1)])
        #expect(object.row.columns.names == ["a", "b"] && object.row.values == [.integer(1), .integer(2)])
    }
}

// MARK: - Test policies

/// Uppercaser by position: drops "ghost", upper-cases the rest.
final class RowUppercaser: EntityMigrationPolicy {
    private var sourceName: Int?
    private var name: Int?

    init() {}

    func begin(mapping: MappingContext, manager: MigrationManager) throws {
        sourceName = mapping.sourceColumns.position(of: "name")
        name = mapping.destinationColumns.position(of: "name")
    }

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        guard let sourceName, let name, let text = source.row.string(at: sourceName), text != "ghost" else { return }
        var row = try manager.mappedRow(forSource: source, mapping: mapping)
        row[name] = .string(text.uppercased())
        try manager.insertDestinationRow(row, forSource: source, mapping: mapping)
    }
}

/// ContactSplitter by position: each Contact from an empty row of its own mapping.
final class RowContactSplitter: EntityMigrationPolicy {
    private let dictionaries: ContactSplitter
    private var phone: Int?

    init(log: CallLog) { dictionaries = ContactSplitter(log: log) }

    func begin(mapping: MappingContext, manager: MigrationManager) throws {
        phone = mapping.sourceColumns.position(of: "phone")
    }

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        guard let phone, let numbers = source.row.string(at: phone) else { return }
        var row = try manager.emptyRow(forMappingNamed: mapping.name)
        guard let value = row.columns.position(of: "value"), let kind = row.columns.position(of: "kind") else {
            throw FerryError(.migration, "Contact has no value or kind (columns: \(row.columns))")
        }
        for (index, number) in numbers.split(separator: ";").enumerated() {
            row[value] = .string(String(number))
            row[kind] = .string(index == 0 ? "primary" : "other")
            try manager.insertDestinationRow(row, forSource: source, mappingNamed: mapping.name)
        }
    }

    /// The relationship stage as the dictionary policy has it (it needs no values).
    func createRelationships(
        forDestination destination: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        try dictionaries.createRelationships(forDestination: destination, mapping: mapping, manager: manager)
    }
}

/// The dictionary API, checked against the rows under it and edited four ways (one per customer).
final class DictionaryEditor: EntityMigrationPolicy {
    init() {}

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        var values = try manager.mappedValues(forSource: source, mapping: mapping)
        let row = try manager.mappedRow(forSource: source, mapping: mapping)
        guard values == row.dictionary, source.values == source.row.dictionary,
            row.columns.names == mapping.destinationColumns.names
        else {
            throw FerryError(.migration, "the dictionaries differ from the rows for \(source.primaryKey)")
        }
        switch source.primaryKey {
        case 1:
            values["phone"] = nil
        case 2:
            values["name"] = .string("Bob!")
        case 3:
            values["unknown"] = .integer(1)
            values["name"] = .string("CY")
        default:
            var own = MigrationRow(columns: MigrationColumns(["name", "id"]))
            own[0] = source["name"]
            own[1] = source["id"]
            try manager.insertDestinationRow(own, forSource: source, mapping: mapping)
            return
        }
        try manager.insertDestinationInstance(values, forSource: source, mapping: mapping)
    }
}

/// Copies each Order by position, after checking that the source's `customer` key and the
/// destination's foreign key column have positions that read what the names read.
final class OrderCopier: EntityMigrationPolicy {
    private var customer: Int?

    init() {}

    func begin(mapping: MappingContext, manager: MigrationManager) throws {
        customer = mapping.sourceColumns.position(of: "customer")
        guard customer == mapping.sourceColumns.count - 1, mapping.destinationColumns.count == 2 else {
            throw FerryError(
                .migration, "Order's columns: \(mapping.sourceColumns) and \(mapping.destinationColumns)")
        }
    }

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        let row = try manager.mappedRow(forSource: source, mapping: mapping)
        guard let customer, source.row[customer] == source["customer"], source.row.int64(at: customer) != nil,
            row.dictionary == (try manager.mappedValues(forSource: source, mapping: mapping))
        else {
            throw FerryError(.migration, "Order \(source.primaryKey): the positions do not read what the names read")
        }
        try manager.insertDestinationRow(row, forSource: source, mapping: mapping)
    }
}
