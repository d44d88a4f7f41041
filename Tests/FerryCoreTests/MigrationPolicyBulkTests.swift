import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// The policy path at a scale where its bulk writes matter: associations written in batches
/// (and read back mid-batch, at a mapping's end and in the relationship stage), source objects
/// that read their row by position, and the kept key tried by the insert itself.
@Suite("Migration policies: bulk associations and source rows")
struct MigrationPolicyBulkTests {
    typealias Book = MigrationPolicyTests

    /// More customers than two association batches and a remainder.
    static let customers = 700

    /// A version 1 store of `customers` customers; every third has two phone numbers, every
    /// fifth none.
    static func makeStore(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("many.sqlite")
        let store = try Store.open(at: path, model: Book.v1)
        try store.write { connection in
            let inserter = try BatchInserter(
                connection: connection, model: Book.v1, layout: FerryLayout(), entity: "Customer",
                columns: [.attribute("id"), .attribute("name"), .attribute("phone")])
            for id in 1...Int64(customers) {
                let phone: Value =
                    id % 5 == 0 ? .null : .string(id % 3 == 0 ? "0\(id);1\(id)" : "0\(id)")
                #expect(try inserter.insert([.integer(id), .string("Name \(id)"), phone]) == .inserted)
            }
        }
        return path
    }

    @Test("associations over many batches answer mid-batch, at the mapping's end and in the relationship stage")
    func bulkAssociations() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeStore(in: directory)
        let problems = CallLog()
        let registry = PolicyRegistry()
        registry.register("Uppercaser") { CheckingCopier(problems: problems) }
        registry.register("ContactSplitter") { CheckingSplitter(problems: problems) }
        let report = try Book.migrator(path, registry: registry).run()
        #expect(problems.entries == [])

        let expectedContacts = (1...Self.customers).reduce(0) { $0 + ($1 % 5 == 0 ? 0 : ($1 % 3 == 0 ? 2 : 1)) }
        #expect(report.steps.first?.entities.map(\.written) == [Self.customers, 0, expectedContacts])
        // Every contact points at the customer it was made from (the relationship stage read
        // every association back).
        #expect(
            try StoreSnapshot.texts(
                path,
                "SELECT count(*) FROM Contact c JOIN Customer o ON o.ferry_pk = c.owner WHERE substr(c.value, 2) = CAST(o.id AS TEXT)"
            ) == [["\(expectedContacts)"]])
        // The first contact of a customer keeps the customer's key when no contact has it yet;
        // others get SQLite's next key (the largest so far + 1).
        var taken = Set<Int64>()
        var largest: Int64 = 0
        var keptKeys = 0
        for id in 1...Int64(Self.customers) where id % 5 != 0 {
            for index in 0..<(id % 3 == 0 ? 2 : 1) {
                let key = index == 0 && !taken.contains(id) ? id : largest + 1
                if key == id && index == 0 { keptKeys += 1 }
                taken.insert(key)
                largest = max(largest, key)
            }
        }
        #expect(keptKeys > 0 && keptKeys < expectedContacts)
        #expect(
            try StoreSnapshot.texts(
                path,
                "SELECT count(*) FROM Contact c JOIN Customer o ON o.ferry_pk = c.owner WHERE c.ferry_pk = o.ferry_pk"
            ) == [["\(keptKeys)"]])
        #expect(
            try StoreSnapshot.texts(path, "SELECT count(DISTINCT ferry_pk) FROM Contact") == [["\(expectedContacts)"]])
    }
}

/// Copies each customer as the mapping says, and checks the source object it is given: its
/// values by name and as a dictionary agree, and it equals (and hashes as) the same object made
/// from that dictionary.
final class CheckingCopier: EntityMigrationPolicy {
    let problems: CallLog

    init(problems: CallLog) { self.problems = problems }

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        let copy = MigrationObject(entity: source.entity, primaryKey: source.primaryKey, values: source.values)
        var trouble: [String] = []
        if source["id"] != .integer(source.primaryKey) { trouble.append("id \(source["id"])") }
        if source["name"] != .string("Name \(source.primaryKey)") { trouble.append("name \(source["name"])") }
        if source["nothing"] != .null { trouble.append("an unknown name is not nil") }
        if source.values.count != 3 { trouble.append("values \(source.values)") }
        if copy != source || copy.hashValue != source.hashValue { trouble.append("not equal to its copy") }
        var changed = source
        changed.values["name"] = .string("other")
        if changed["name"] != .string("other") || changed == source { trouble.append("values cannot be changed") }
        if !trouble.isEmpty {
            problems.append("Customer \(source.primaryKey): " + trouble.joined(separator: ", "))
        }
        let values = try manager.mappedValues(forSource: source, mapping: mapping)
        try manager.insertDestinationInstance(values, forSource: source, mapping: mapping)
    }
}

/// One Contact per phone number; right after inserting, asks the manager which objects the
/// source made (the association must be visible at once, mid-batch), and links each Contact
/// to its owner in the relationship stage.
final class CheckingSplitter: EntityMigrationPolicy {
    let problems: CallLog

    init(problems: CallLog) { self.problems = problems }

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        guard case .string(let phone) = source["phone"] else { return }
        var made: [Int64] = []
        for number in phone.split(separator: ";") {
            let object = try manager.insertDestinationInstance(
                ["value": .string(String(number)), "kind": .string("phone")], forSource: source, mapping: mapping)
            made.append(object.primaryKey)
        }
        let answered = try manager.destinationInstances(forMapping: mapping.name, sourceInstances: [source.primaryKey])
        if answered.sorted() != made.sorted() {
            problems.append("Customer \(source.primaryKey) made \(made), the manager says \(answered)")
        }
    }

    func createRelationships(
        forDestination destination: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        let sources = try manager.sourceInstances(
            forMapping: mapping.name, destinationInstances: [destination.primaryKey])
        guard sources.count == 1 else {
            problems.append("Contact \(destination.primaryKey) has sources \(sources)")
            return
        }
        let owners = try manager.destinationInstances(forMapping: "Customer", sourceInstances: sources)
        try manager.setRelationship("owner", of: destination, to: owners.first)
    }
}
