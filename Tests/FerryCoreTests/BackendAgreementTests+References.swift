import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// Batch inserts whose to-one values are wrong in every way (not a key, a missing key, a key of
/// a row staged earlier, later or itself, together with broken rules) give the same counts,
/// rejections and objects on SQLite and PostgreSQL.
extension BackendAgreementTests {
    /// Employee (code unique and required, email with a pattern, manager a to-one to Employee).
    static func staff() -> ObjectModel {
        ObjectModel(
            name: "Staff", version: "1",
            entities: [
                EntityDescription(
                    name: "Employee",
                    attributes: [
                        AttributeDescription(name: "code", type: .string, isOptional: false),
                        AttributeDescription(
                            name: "email", type: .string, validation: ValidationRules(pattern: "[^@ ]+@[^@ ]+")),
                    ],
                    relationships: [
                        RelationshipDescription(name: "manager", destination: "Employee", inverse: "reports"),
                        RelationshipDescription(
                            name: "reports", destination: "Employee", isToMany: true, inverse: "manager"),
                    ],
                    uniquenessConstraints: [["code"]]
                )
            ])
    }

    static let staffColumns: [InsertColumn] = [.attribute("code"), .attribute("email"), .relationship("manager")]

    /// What one request did on one store: its counts, its `onReject` lines and the objects stored
    /// (code, email and the manager's code, so keys numbered differently cannot hide a difference).
    struct Outcome: Equatable, CustomStringConvertible {
        var result: BatchInsertResult
        var rejects: [String]
        var stored: [[Value]]
        var description: String { "\(result)\n\(rejects.joined(separator: "\n"))\n\(stored)" }
    }

    /// Runs `seed` (with `error`) then `rows` (with `policy`) on a new store of `model`.
    static func run(
        _ store: Store, entity: String, columns: [InsertColumn], seed: [[Value]], rows: [[Value]],
        policy: ConflictPolicy, properties: [FetchProperty], sortedBy sort: String
    ) throws -> Outcome {
        if !seed.isEmpty {
            let seeded = try store.execute(BatchInsertRequest(entity: entity, columns: columns, rows: seed))
            #expect(seeded.inserted == seed.count, "the seed goes in whole: \(seeded)")
        }
        var rejects: [String] = []
        var request = BatchInsertRequest(entity: entity, columns: columns, conflictPolicy: policy, rows: rows)
        request.onReject = { index, reason in rejects.append("\(index): \(reason)") }
        let result = try store.execute(request)
        let stored = try Self.rows(
            store, FetchRequest(entity: entity, sortDescriptors: [SortDescriptor(sort)], properties: properties))
        return Outcome(result: result, rejects: rejects, stored: stored)
    }

    /// The same requests on a SQLite and a PostgreSQL store of `model`: (SQLite, PostgreSQL).
    static func onBothBackends(
        model: ObjectModel, entity: String, columns: [InsertColumn], seed: [[Value]], rows: [[Value]],
        policy: ConflictPolicy, properties: [FetchProperty], sortedBy sort: String
    ) throws -> (Outcome, Outcome) {
        let dir = TemporaryDirectory()
        let sqlite = try Store.open(at: dir.file("store.sqlite"), model: model)
        let scratch = try PostgresStoreScratch()
        let postgres = try Store.open(at: scratch.url, model: model)
        let expected = try run(
            sqlite, entity: entity, columns: columns, seed: seed, rows: rows, policy: policy, properties: properties,
            sortedBy: sort)
        let actual = try run(
            postgres, entity: entity, columns: columns, seed: seed, rows: rows, policy: policy, properties: properties,
            sortedBy: sort)
        return (expected, actual)
    }

    static func staffOnBothBackends(
        seed: [[Value]] = [], rows: [[Value]], policy: ConflictPolicy
    ) throws -> (
        Outcome, Outcome
    ) {
        try onBothBackends(
            model: staff(), entity: "Employee", columns: staffColumns, seed: seed, rows: rows, policy: policy,
            properties: ["code", "email", "manager.code"], sortedBy: "code")
    }

    @Test(
        "a to-one value that is not an object's key (text, a decimal, text holding digits) rejects its row alone, with the same reason on both backends",
        arguments: ConflictPolicy.allCases)
    func nonKeyReferenceRejectsItsRow(policy: ConflictPolicy) throws {
        // Customers with keys 1…5; orders naming them by key, by their unique id as text, by an e-mail.
        let rows: [[Value]] = (0..<15).map { index in
            let customer: Value =
                switch index % 5 {
                case 0: .integer(Int64(index % 5 + 1))
                case 1: .string("C-\(index)")
                case 2: .string("\(index % 5 + 1)")
                case 3: .decimal("2")
                default: .string("ann@example.com")
                }
            return [.string("k\(index)"), .decimal("\(index)"), customer]
        }
        let dir = TemporaryDirectory()
        var outcomes: [Outcome] = []
        let scratch = try PostgresStoreScratch()
        for store in [
            try Store.open(at: dir.file("shop.sqlite"), model: SampleModels.shop()),
            try Store.open(at: scratch.url, model: SampleModels.shop()),
        ] {
            _ = try Self.filled(store)
            outcomes.append(
                try Self.run(
                    store, entity: "Order",
                    columns: [.attribute("number"), .attribute("total"), .relationship("customer")],
                    seed: [], rows: rows, policy: policy, properties: ["number", "total", "customer.email"],
                    sortedBy: "number"))
        }
        #expect(outcomes[1] == outcomes[0], "\(policy): SQLite\n\(outcomes[0])\nPostgreSQL\n\(outcomes[1])")
        #expect(outcomes[0].result.read == 15 && outcomes[0].result.inserted == 3, "\(policy): \(outcomes[0].result)")
        #expect(outcomes[0].result.rejected == 12, "\(policy): \(outcomes[0].result)")
        #expect(
            outcomes[0].rejects.contains(
                "1: customer must be the key of a Customer (an integer), not the string 'C-1'"),
            "\(outcomes[0].rejects)")
        #expect(
            outcomes[0].rejects.contains("3: customer must be the key of a Customer (an integer), not the decimal '2'"),
            "\(outcomes[0].rejects)")
    }

    @Test(
        "a row breaking a rule and naming a missing object gets the rule's reason on both backends; one missing a required value gets that reason",
        arguments: ConflictPolicy.allCases)
    func ruleDecidesBeforeMissingReference(policy: ConflictPolicy) throws {
        let seed: [[Value]] = [[.string("boss"), .string("boss@example.com"), .null]]
        let rows: [[Value]] = [
            [.string("a"), .string("no email"), .integer(999)],
            [.string("b"), .string("b@example.com"), .integer(999)],
            [.null, .string("c@example.com"), .integer(998)],
            [.string("boss"), .string("not an email either"), .integer(-4)],
            [.string("boss"), .string("boss2@example.com"), .integer(1)],
            [.string("d"), .string("d@example.com"), .integer(1)],
        ]
        let (sqlite, postgres) = try Self.staffOnBothBackends(seed: seed, rows: rows, policy: policy)
        #expect(postgres == sqlite, "\(policy): SQLite\n\(sqlite)\nPostgreSQL\n\(postgres)")
        #expect(sqlite.rejects.first?.hasPrefix("0: ") == true && sqlite.rejects.first?.contains("pattern") == true)
        #expect(sqlite.rejects.contains("1: a relationship points to an object that does not exist"))
        #expect(sqlite.rejects.contains { $0.hasPrefix("2: ") && $0.contains("required") }, "\(sqlite.rejects)")
    }

    @Test(
        "a row naming an object of its own entity staged earlier in the same batch, or itself, is accepted on both backends; one naming a later row is rejected",
        arguments: ConflictPolicy.allCases)
    func referenceToEarlierRowOfTheBatch(policy: ConflictPolicy) throws {
        // Keys 1 and 2 are seeded; the request's new objects take 3, 4, … in record order.
        let seed: [[Value]] = [
            [.string("s1"), .string("s1@example.com"), .null], [.string("s2"), .string("s2@example.com"), .integer(1)],
        ]
        // The rows refused come last: a refused row takes no key on SQLite but may leave a gap
        // on PostgreSQL, so keys given after it would name different objects.
        var rows: [[Value]] = [
            [.string("r3"), .string("r3@example.com"), .integer(2)],
            [.string("r4"), .string("r4@example.com"), .integer(3)],
            [.string("r5"), .string("r5@example.com"), .integer(4)],
            [.string("r6"), .string("r6@example.com"), .integer(5)],
        ]
        if policy == .error || policy == .keep {
            // Names itself (key 7).
            rows.append([.string("r7"), .string("r7@example.com"), .integer(7)])
        }
        rows += [
            [.string("r8"), .string("r8@example.com"), .integer(40)],
            [.string("r5"), .string("r5b@example.com"), .integer(4)],
            [.string("s1"), .string("s1b@example.com"), .integer(3)],
        ]
        let (sqlite, postgres) = try Self.staffOnBothBackends(seed: seed, rows: rows, policy: policy)
        #expect(postgres == sqlite, "\(policy): SQLite\n\(sqlite)\nPostgreSQL\n\(postgres)")
        let forward = rows.count - 3
        #expect(sqlite.rejects.contains("\(forward): a relationship points to an object that does not exist"))
        #expect(sqlite.stored.contains([.string("r4"), .string("r4@example.com"), .string("r3")]), "\(sqlite.stored)")
        #expect(sqlite.result.inserted == rows.count - 3, "\(policy): \(sqlite.result)")
    }

    @Test(
        "seeded random batch inserts mixing good rows, broken rules, missing, earlier, forward and self references and repeated unique values agree on both backends",
        arguments: ConflictPolicy.allCases)
    func randomBatchInsertsAgree(policy: ConflictPolicy) throws {
        for seed in [UInt64(1), 7, 2026] {
            var random = SeededGenerator(state: seed)
            let seeded: [[Value]] = (1...20).map {
                [.string("s\($0)"), .string("s\($0)@example.com"), $0 == 1 ? .null : .integer(Int64($0 / 2))]
            }
            // The first five rows are new and good, so they take keys 21…25 on both backends.
            var rows: [[Value]] = (0..<5).map { [.string("n\($0)"), .string("n\($0)@example.com"), .integer(1)] }
            for index in 5..<300 {
                let code: Value =
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0: .null
                    case 1, 2: .string("s\(Int.random(in: 1...20, using: &random))")
                    case 3, 4: .string("n\(Int.random(in: 0..<5, using: &random))")
                    default: .string("r\(Int.random(in: 0..<200, using: &random))")
                    }
                let email: Value =
                    switch Int.random(in: 0..<8, using: &random) {
                    case 0: .string("broken \(index)")
                    case 1: .null
                    default: .string("e\(index)@example.com")
                    }
                let manager: Value =
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0: .null
                    case 1: .integer(Int64(10_000 + index))
                    case 2: .string("s\(Int.random(in: 1...20, using: &random))")
                    case 3, 4: .integer(Int64.random(in: 21...25, using: &random))
                    default: .integer(Int64.random(in: 1...20, using: &random))
                    }
                rows.append([code, email, manager])
            }
            // A forward reference (a key a later row takes), and one naming a row of the batch
            // that may itself be refused.
            rows.insert([.string("f0"), .string("f0@example.com"), .integer(30)], at: 5)
            let (sqlite, postgres) = try Self.staffOnBothBackends(seed: seeded, rows: rows, policy: policy)
            #expect(postgres.result == sqlite.result, "\(policy), seed \(seed)")
            #expect(
                postgres.rejects == sqlite.rejects,
                "\(policy), seed \(seed): first difference \(zip(sqlite.rejects, postgres.rejects).first { $0 != $1 }.map { "\($0) ≠ \($1)" } ?? "-")"
            )
            #expect(
                postgres.stored == sqlite.stored,
                "\(policy), seed \(seed): first difference \(zip(sqlite.stored, postgres.stored).first { $0 != $1 }.map { "\($0) ≠ \($1)" } ?? "-")"
            )
            #expect(sqlite.result.rejected > 30 && sqlite.result.read == rows.count, "\(policy): \(sqlite.result)")
        }
    }
}
