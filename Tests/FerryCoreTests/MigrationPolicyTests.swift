import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// Custom Swift policies (`EntityMigrationPolicy`) and stage hooks, registered on a private
/// `PolicyRegistry` and run by `Migrator` on a real store.
///
/// Version 1: Customer (id, name, phone) with to-many `orders` ↔ Order (number, to-one
/// `customer`). Version 2 adds Contact (value, kind, to-one `owner` ↔ Customer.contacts).
/// The mapping 1 → 2 is the inferred one with two policies laid over it:
/// - `Customer` (policy `Uppercaser`): upper-cases names and drops the customer named "ghost"
///   (0 or 1 destination objects per source);
/// - `Contact` (source Customer, policy `ContactSplitter`): one Contact per phone number in
///   `phone` (0, 1 or 2 per customer), linked to its owner in the relationship stage through
///   the manager's associations.
@Suite("Migration policies")
struct MigrationPolicyTests {
    // MARK: - Models and store

    static let v1 = ObjectModel(
        name: "Book", version: "1",
        entities: [
            EntityDescription(
                name: "Customer",
                attributes: [
                    AttributeDescription(name: "id", type: .int64, isOptional: false),
                    AttributeDescription(name: "name", type: .string, isOptional: false),
                    AttributeDescription(name: "phone", type: .string),
                ],
                relationships: [
                    RelationshipDescription(name: "orders", destination: "Order", isToMany: true, inverse: "customer")
                ],
                uniquenessConstraints: [["id"]]),
            EntityDescription(
                name: "Order",
                attributes: [AttributeDescription(name: "number", type: .string, isOptional: false)],
                relationships: [RelationshipDescription(name: "customer", destination: "Customer", inverse: "orders")]),
        ])

    static let v2: ObjectModel = {
        var model = v1
        model.version = "2"
        model.entities[0].relationships.append(
            RelationshipDescription(name: "contacts", destination: "Contact", isToMany: true, inverse: "owner"))
        model.entities.append(
            EntityDescription(
                name: "Contact",
                attributes: [
                    AttributeDescription(name: "value", type: .string, isOptional: false),
                    AttributeDescription(name: "kind", type: .string),
                ],
                relationships: [RelationshipDescription(name: "owner", destination: "Customer", inverse: "contacts")]))
        return model
    }()

    static let bundle = ModelBundle(name: "Book", versions: [v1, v2], currentVersion: "2")

    /// A version 1 store: Ann (one phone), Bob (none), Cy (two), ghost (one); orders of Ann,
    /// ghost and Cy.
    static func makeStore(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("book.sqlite")
        let store = try Store.open(at: path, model: v1)
        try store.write { connection in
            let customers = try BatchInserter(
                connection: connection, model: v1, layout: FerryLayout(), entity: "Customer",
                columns: [.attribute("id"), .attribute("name"), .attribute("phone")])
            for (id, name, phone) in [
                (1, "Ann", "021 1"), (2, "Bob", nil), (3, "Cy", "022 2;023 3"), (4, "ghost", "024 4"),
            ] as [(Int64, String, String?)] {
                #expect(
                    try customers.insert([.integer(id), .string(name), phone.map(Value.string) ?? .null]) == .inserted)
            }
            let orders = try BatchInserter(
                connection: connection, model: v1, layout: FerryLayout(), entity: "Order",
                columns: [.attribute("number"), .relationship("customer")])
            for (number, customer) in [("O-1", 1), ("O-2", 4), ("O-3", 3)] as [(String, Int64)] {
                #expect(try orders.insert([.string(number), .integer(customer)]) == .inserted)
            }
        }
        return path
    }

    /// The inferred mapping with the two policies laid over it.
    static func mapping(
        from source: ObjectModel, to destination: ObjectModel, customerPolicy: String? = "Uppercaser"
    ) throws -> MappingModel {
        var mapping = try MappingModel.inferred(from: source, to: destination)
        for index in mapping.entities.indices {
            switch mapping.entities[index].name {
            case "Customer":
                mapping.entities[index].policy = customerPolicy
            case "Contact":
                mapping.entities[index].source = "Customer"
                mapping.entities[index].policy = "ContactSplitter"
            default:
                break
            }
        }
        return mapping
    }

    static func migrator(_ path: String, registry: PolicyRegistry, customerPolicy: String? = "Uppercaser") -> Migrator {
        Migrator(storePath: path, bundle: bundle, options: MigrationOptions(backup: false, registry: registry)) {
            from, to in
            try mapping(from: from, to: to, customerPolicy: customerPolicy)
        }
    }

    /// A registry with both policies, logging into `log`; `configure` adjusts the Customer policy.
    static func registry(log: CallLog, configure: @escaping @Sendable (Uppercaser) -> Void = { _ in }) -> PolicyRegistry
    {
        let registry = PolicyRegistry()
        registry.register("Uppercaser") {
            let policy = Uppercaser(log: log)
            configure(policy)
            return policy
        }
        registry.register("ContactSplitter") { ContactSplitter(log: log) }
        return registry
    }

    /// The files in the store's folder (to see that a failed migration left nothing behind).
    static func files(in directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    // MARK: - Tests

    @Test("stages run in Core Data's order; 0, 1 and 2 destination objects per source; associations answer both ways")
    func stagesAndAssociations() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeStore(in: directory)
        let log = CallLog()
        let report = try Self.migrator(path, registry: Self.registry(log: log)).run()
        #expect(report.fromVersion == "1" && report.toVersion == "2")

        #expect(
            try StoreSnapshot.texts(path, "SELECT ferry_pk, id, name, phone FROM Customer ORDER BY ferry_pk") == [
                ["1", "1", "ANN", "021 1"], ["2", "2", "BOB", nil], ["3", "3", "CY", "022 2;023 3"],
            ])
        // ghost's order lost its customer: no Customer object was made from ghost.
        #expect(
            try StoreSnapshot.texts(path, "SELECT number, customer FROM \"Order\" ORDER BY ferry_pk") == [
                ["O-1", "1"], ["O-2", nil], ["O-3", "3"],
            ])
        #expect(
            try StoreSnapshot.texts(path, "SELECT ferry_pk, value, kind, owner FROM Contact ORDER BY ferry_pk") == [
                ["1", "021 1", "primary", "1"], ["3", "022 2", "primary", "3"], ["4", "023 3", "other", "3"],
                ["5", "024 4", "primary", nil],
            ])
        #expect(
            report.steps.first?.entities.map { "\($0.mapping) \($0.read)→\($0.written)" } == [
                "Customer 4→3", "Order 3→3", "Contact 4→4",
            ])

        #expect(
            log.entries == [
                "Customer begin",
                "Customer create 1 → 1", "Customer create 2 → 1", "Customer create 3 → 1", "Customer create 4 → 0",
                "Customer endInstanceCreation processed 4",
                "Contact begin",
                "Contact create 1 → 1", "Contact create 2 → 0", "Contact create 3 → 2", "Contact create 4 → 1",
                "Contact endInstanceCreation processed 4",
                // The relationship stage, per destination object of each policy's mapping.
                "Customer relationships 1", "Customer relationships 2", "Customer relationships 3",
                "Customer endRelationshipCreation",
                // The first Contact made from a source object takes its key when free.
                "Contact relationships 1 ← Customer [1] → Customer [1]",
                "Contact relationships 3 ← Customer [3] → Customer [3]",
                "Contact relationships 4 ← Customer [3] → Customer [3]",
                "Contact relationships 5 ← Customer [4] → Customer []",
                "Contact endRelationshipCreation",
                "Customer validate", "Customer end",
                "Contact validate", "Contact end",
            ])
        // The store is now at version 2.
        let metadata = try #require(try Store.metadata(at: path))
        #expect(try VersionDetector.detect(metadata: metadata, bundle: Self.bundle).version == "2")
    }

    @Test("a policy's failing custom validation fails the migration and leaves the original untouched")
    func customValidationFails() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeStore(in: directory)
        let before = try StoreSnapshot.take(path)
        let files = try Self.files(in: directory)
        let registry = Self.registry(log: CallLog()) {
            $0.validationError = FerryError(.migration, "Customer: 1 name is not upper-case")
        }
        let error = try #require(throws: FerryError.self) { try Self.migrator(path, registry: registry).run() }
        #expect(error.description == "error: Customer: 1 name is not upper-case")
        #expect(try StoreSnapshot.take(path) == before)
        #expect(try Self.files(in: directory) == files)
        #expect(
            try VersionDetector.detect(metadata: #require(try Store.metadata(at: path)), bundle: Self.bundle).version
                == "1")
    }

    @Test("cancel() stops the migration at the next object and leaves the original untouched")
    func cancel() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeStore(in: directory)
        let before = try StoreSnapshot.take(path)
        let files = try Self.files(in: directory)
        let log = CallLog()
        let registry = Self.registry(log: log) { $0.cancelAt = 2 }
        let error = try #require(throws: FerryError.self) { try Self.migrator(path, registry: registry).run() }
        #expect(error.code == .cancelled)
        #expect(error.description == "error: the migration was cancelled")
        // Object 2 was the last one processed; nothing after it ran.
        #expect(log.entries == ["Customer begin", "Customer create 1 → 1", "Customer create 2 → 1"])
        #expect(try StoreSnapshot.take(path) == before)
        #expect(try Self.files(in: directory) == files)
    }

    @Test("a policy that throws while creating objects fails the migration with its error")
    func createThrows() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeStore(in: directory)
        let before = try StoreSnapshot.take(path)
        let registry = Self.registry(log: CallLog()) { $0.failAt = 3 }
        let error = try #require(throws: FerryError.self) { try Self.migrator(path, registry: registry).run() }
        #expect(error.description == "error: cannot migrate customer 3")
        #expect(try StoreSnapshot.take(path) == before)
    }

    @Test("a policy name the registry does not know is an error naming the registered ones")
    func unknownPolicy() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeStore(in: directory)
        let before = try StoreSnapshot.take(path)
        let error = try #require(throws: FerryError.self) {
            try Self.migrator(path, registry: Self.registry(log: CallLog()), customerPolicy: "PhoneNormalizer").run()
        }
        #expect(
            error.description == """
                error: no migration policy named 'PhoneNormalizer' is registered (mapping Customer)
                  registered: ContactSplitter, Uppercaser
                """)
        #expect(try StoreSnapshot.take(path) == before)
        // The shared registry is not consulted when another one is given, and vice versa.
        // (Both steps' policies are missing there: every one is named, before the first step.)
        let shared = try #require(throws: FerryErrors.self) {
            try Migrator(storePath: path, bundle: Self.bundle, options: MigrationOptions(backup: false)) { from, to in
                try Self.mapping(from: from, to: to)
            }.run()
        }
        #expect(
            shared.description.hasPrefix(
                "error: no migration policy named 'Uppercaser' is registered (mapping Customer)"), "\(shared)")
        #expect(shared.errors.count == 2, "\(shared)")
    }

    @Test("stage hooks see the source before the step and may write the destination after it")
    func stageHooks() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeStore(in: directory)
        let log = CallLog()
        let registry = Self.registry(log: log)
        registry.registerStage(
            from: "1", to: "2",
            willMigrate: { context in
                let count =
                    try context.connection.scalar("SELECT count(*) FROM \(context.schema).Customer")?.int64 ?? -1
                log.append(
                    "willMigrate \(context.fromVersion)→\(context.toVersion) \(context.schema) \(count) customers")
            },
            didMigrate: { context in
                try context.connection.execute(
                    "UPDATE \(context.schema).Contact SET kind = 'orphan' WHERE owner IS NULL")
                log.append("didMigrate \(context.schema) \(context.connection.changes) orphan")
            })
        _ = try Self.migrator(path, registry: registry).run()
        #expect(log.entries.first == "willMigrate 1→2 main 4 customers")
        #expect(log.entries.contains("didMigrate dst 1 orphan"))
        // didMigrate runs after the relationship stage and before validation.
        let did = try #require(log.entries.firstIndex(of: "didMigrate dst 1 orphan"))
        #expect(log.entries[did - 1] == "Contact endRelationshipCreation")
        #expect(log.entries[did + 1] == "Customer validate")
        #expect(
            try StoreSnapshot.texts(path, "SELECT value, kind FROM Contact WHERE owner IS NULL") == [
                ["024 4", "orphan"]
            ])
    }

    @Test("a throwing didMigrate hook fails the migration and leaves the original untouched")
    func stageHookThrows() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeStore(in: directory)
        let before = try StoreSnapshot.take(path)
        let files = try Self.files(in: directory)
        let registry = Self.registry(log: CallLog())
        registry.registerStage(
            from: "1", to: "2", didMigrate: { _ in throw FerryError(.migration, "orphaned contacts") })
        let error = try #require(throws: FerryError.self) { try Self.migrator(path, registry: registry).run() }
        #expect(error.description == "error: orphaned contacts")
        #expect(try StoreSnapshot.take(path) == before)
        #expect(try Self.files(in: directory) == files)
    }
}

// MARK: - Test policies

/// Calls recorded by the test policies, in order.
final class CallLog: @unchecked Sendable {
    // @unchecked: `items` is only touched while `lock` is held.
    private let lock = NSLock()
    private var items: [String] = []

    func append(_ entry: String) { lock.withLock { items.append(entry) } }
    var entries: [String] { lock.withLock { items } }
}

/// Upper-cases names and drops "ghost"; can cancel, fail or refuse validation on demand.
final class Uppercaser: EntityMigrationPolicy {
    let log: CallLog
    var cancelAt: Int64?
    var failAt: Int64?
    var validationError: FerryError?

    init(log: CallLog) { self.log = log }

    func begin(mapping: MappingContext, manager: MigrationManager) throws { log.append("\(mapping.name) begin") }

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        if source.primaryKey == failAt { throw FerryError(.migration, "cannot migrate customer \(source.primaryKey)") }
        if source.primaryKey == cancelAt { manager.cancel() }
        guard case .string(let name) = source["name"], name != "ghost" else {
            log.append("\(mapping.name) create \(source.primaryKey) → 0")
            return
        }
        var values = try manager.mappedValues(forSource: source, mapping: mapping)
        values["name"] = .string(name.uppercased())
        let created = try manager.insertDestinationInstance(values, forSource: source, mapping: mapping)
        log.append("\(mapping.name) create \(source.primaryKey) → \(created.primaryKey == source.primaryKey ? 1 : -1)")
    }

    func endInstanceCreation(mapping: MappingContext, manager: MigrationManager) throws {
        log.append("\(mapping.name) endInstanceCreation processed \(manager.processed)")
    }

    func createRelationships(
        forDestination destination: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        log.append("\(mapping.name) relationships \(destination.primaryKey)")
    }

    func endRelationshipCreation(mapping: MappingContext, manager: MigrationManager) throws {
        log.append("\(mapping.name) endRelationshipCreation")
    }

    func performCustomValidation(mapping: MappingContext, manager: MigrationManager) throws {
        log.append("\(mapping.name) validate")
        if let validationError { throw validationError }
    }

    func end(mapping: MappingContext, manager: MigrationManager) throws { log.append("\(mapping.name) end") }
}

/// One Contact per `;`-separated phone number of a Customer, linked to the Customer made from
/// the same source object in the relationship stage.
final class ContactSplitter: EntityMigrationPolicy {
    let log: CallLog

    init(log: CallLog) { self.log = log }

    func begin(mapping: MappingContext, manager: MigrationManager) throws { log.append("\(mapping.name) begin") }

    func createDestinationInstances(
        forSource source: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        var numbers: [String] = []
        if case .string(let phone) = source["phone"] { numbers = phone.split(separator: ";").map(String.init) }
        for (index, number) in numbers.enumerated() {
            try manager.insertDestinationInstance(
                ["value": .string(number), "kind": .string(index == 0 ? "primary" : "other")], forSource: source,
                mapping: mapping)
        }
        log.append("\(mapping.name) create \(source.primaryKey) → \(numbers.count)")
    }

    func endInstanceCreation(mapping: MappingContext, manager: MigrationManager) throws {
        log.append("\(mapping.name) endInstanceCreation processed \(manager.processed)")
    }

    func createRelationships(
        forDestination destination: MigrationObject, mapping: MappingContext, manager: MigrationManager
    ) throws {
        let sources = try manager.sourceInstances(
            forMapping: mapping.name, destinationInstances: [destination.primaryKey])
        let owners = try manager.destinationInstances(forMapping: "Customer", sourceInstances: sources)
        try manager.setRelationship("owner", of: destination, to: owners.first)
        log.append("\(mapping.name) relationships \(destination.primaryKey) ← Customer \(sources) → Customer \(owners)")
    }

    func endRelationshipCreation(mapping: MappingContext, manager: MigrationManager) throws {
        log.append("\(mapping.name) endRelationshipCreation")
    }

    func performCustomValidation(mapping: MappingContext, manager: MigrationManager) throws {
        log.append("\(mapping.name) validate")
    }

    func end(mapping: MappingContext, manager: MigrationManager) throws { log.append("\(mapping.name) end") }
}

@Suite("Policy names: Objective-C class names with or without their module")
struct PolicyClassNameTests {
    final class Marker: EntityMigrationPolicy {
        let label: String
        init(_ label: String) { self.label = label }
    }

    static func label(_ registry: PolicyRegistry, _ name: String) -> String? {
        (registry.makePolicy(named: name) as? Marker)?.label
    }

    @Test("the exact name first, else the class part on either side, only when one registered name fits")
    func resolution() {
        let registry = PolicyRegistry()
        registry.register("Post2ToPost3MigrationPolicy") { Marker("plain") }
        registry.register("MyFerry.Country5ToCountry6Policy") { Marker("prefixed") }
        #expect(Self.label(registry, "Post2ToPost3MigrationPolicy") == "plain")
        #expect(Self.label(registry, "CoreDataMigration_Example.Post2ToPost3MigrationPolicy") == "plain")
        #expect(Self.label(registry, "Migrations.Country5ToCountry6Policy") == "prefixed")
        #expect(Self.label(registry, "Country5ToCountry6Policy") == "prefixed")
        #expect(Self.label(registry, "Country5ToCountry7Policy") == nil)
        #expect(Self.label(registry, "Post2ToPost3") == nil)

        registry.register("App.Post2ToPost3MigrationPolicy") { Marker("app") }
        #expect(Self.label(registry, "App.Post2ToPost3MigrationPolicy") == "app")
        #expect(Self.label(registry, "Post2ToPost3MigrationPolicy") == "plain")
        // Two registered names end in the class: which one is meant is unknown.
        #expect(Self.label(registry, "Other.Post2ToPost3MigrationPolicy") == nil)
    }
}
