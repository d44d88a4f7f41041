import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// The same requests on a SQLite store and on a PostgreSQL store give the same results: inserts
/// with rejects, fetches with predicates, sorting, limits and offsets, and checksums.
@Suite(
    "Backends agree: SQLite and PostgreSQL stores",
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct BackendAgreementTests {
    /// Customers with texts COPY must escape, non-canonical decimals, dates, booleans, nulls, and
    /// two that break validation rules (rejected before they reach either store).
    static let customers: [[Value]] = [
        [
            .integer(1), .string("ann@example.com"), .string("Ann\tTab"), .integer(31), .decimal("12.50"), .bool(true),
            .date(1_700_000_000_123),
        ],
        [
            .integer(2), .string("bob@example.org"), .string("Émile \"quoted\" \\ back"), .integer(45), .decimal("-3"),
            .bool(false), .date(-86_400_000),
        ],
        [.integer(3), .string("not an email"), .string("Rejected"), .integer(20), .null, .null, .null],
        [.integer(4), .string("cy@example.com"), .string("line\nbreak"), .null, .null, .null, .null],
        [.integer(5), .string("dee@example.com"), .string("ÉMILE"), .integer(200), .decimal("1"), .bool(true), .null],
        [
            .integer(6), .string("eve@example.com"), .null, .integer(29), .decimal("1000000000000000000000.000001"),
            .bool(false), .date(0),
        ],
        [
            .integer(7), .string("fay@example.com"), .string("émile"), .integer(52), .decimal("10.5"), .null,
            .date(253_402_300_799_999),
        ],
    ]

    static let columns: [InsertColumn] = ["id", "email", "name", "age", "balance", "active", "joined"].map {
        .attribute($0)
    }

    static func filled(_ store: Store) throws -> (BatchInsertResult, [Int]) {
        var next = 0
        var rejected: [Int] = []
        var request = BatchInsertRequest(entity: "Customer", columns: columns) { row in
            guard next < customers.count else { return true }
            row = customers[next]
            next += 1
            return false
        }
        request.onReject = { index, _ in rejected.append(index) }
        let result = try store.execute(request)
        var orders = 0
        let orderRequest = BatchInsertRequest(
            entity: "Order", columns: [.attribute("number"), .attribute("total"), .relationship("customer")]
        ) { row in
            guard orders < 3 else { return true }
            row = [.string("o\(orders)"), .decimal("\(orders * 7).25"), .integer(Int64(orders + 1))]
            orders += 1
            return false
        }
        _ = try store.execute(orderRequest)
        return (result, rejected)
    }

    static func rows(_ store: Store, _ request: FetchRequest) throws -> [[Value]] {
        try store.fetch(request) { cursor in
            var rows: [[Value]] = []
            while let row = try cursor.next() { rows.append(row) }
            return rows
        }
    }

    @Test("inserts, fetches and checksums give the same results on both backends")
    func agree() throws {
        let dir = TemporaryDirectory()
        let sqlite = try Store.open(at: dir.file("shop.sqlite"), model: SampleModels.shop())
        let scratch = try PostgresStoreScratch()
        let postgres = try Store.open(at: scratch.url, model: SampleModels.shop())

        let (sqliteResult, sqliteRejected) = try Self.filled(sqlite)
        let (postgresResult, postgresRejected) = try Self.filled(postgres)
        #expect(sqliteResult == postgresResult)
        #expect(postgresResult.inserted == 5 && postgresResult.rejected == 2)
        #expect(sqliteRejected == postgresRejected)
        #expect(try postgres.entityCounts().map(\.count) == [5, 3])

        let requests: [FetchRequest] = [
            FetchRequest(entity: "Customer"),
            FetchRequest(entity: "Customer", sortDescriptors: [SortDescriptor("balance", ascending: false)]),
            FetchRequest(entity: "Customer", predicate: try Predicate(format: "name ==[cd] 'emile'")),
            FetchRequest(
                entity: "Customer", predicate: try Predicate(format: "name CONTAINS[c] 'é' OR email ENDSWITH '.org'")),
            FetchRequest(entity: "Customer", predicate: try Predicate(format: "balance >= 10.5 AND active == YES")),
            FetchRequest(
                entity: "Customer",
                predicate: try Predicate(format: "joined < CAST('2000-01-01T00:00:00Z', 'NSDate') OR joined == nil")),
            FetchRequest(
                entity: "Customer",
                predicate: try Predicate(format: "email LIKE '*@example.c?m' AND name MATCHES '.*[a-z].*'")),
            FetchRequest(
                entity: "Customer", predicate: try Predicate(format: "age > 20"),
                sortDescriptors: [SortDescriptor("age")], limit: 2, offset: 1),
            FetchRequest(
                entity: "Customer", sortDescriptors: [SortDescriptor("name")], limit: 3, offset: 2,
                properties: ["email", "name"]),
            FetchRequest(entity: "Order", sortDescriptors: [SortDescriptor("total", ascending: false)]),
            FetchRequest(
                entity: "Order",
                predicate: try Predicate(format: "customer.age > 30 AND customer.name CONTAINS[cd] 'e'")),
            FetchRequest(
                entity: "Customer", predicate: try Predicate(format: "ANY orders.total > 7 OR orders.@count == 0"),
                limit: 3),
            FetchRequest(
                entity: "Customer",
                predicate: try Predicate(format: "SUBQUERY(orders, $o, $o.number LIKE 'o*').@count > 0"), offset: 1),
        ]
        for (index, request) in requests.enumerated() {
            let expected = try Self.rows(sqlite, request)
            let actual = try Self.rows(postgres, request)
            #expect(
                actual == expected,
                "request \(index): \(expected.count) rows on SQLite, \(actual.count) on PostgreSQL; first difference: \(zip(expected, actual).first { $0 != $1 }.map { "\($0) ≠ \($1)" } ?? "-")"
            )
        }
        let attributes = ["id", "email", "name", "age", "balance", "active", "joined"]
        let sqliteSum = try EntityChecksum.compute(store: sqlite, entity: "Customer", attributes: attributes)
        let postgresSum = try EntityChecksum.compute(store: postgres, entity: "Customer", attributes: attributes)
        #expect(sqliteSum == postgresSum)
        #expect(
            try EntityChecksum.compute(store: sqlite, entity: "Order", attributes: ["number", "total"])
                == EntityChecksum.compute(store: postgres, entity: "Order", attributes: ["number", "total"]))
    }

    @Test(
        "a batch insert row whose relationship names no object is rejected on its own on both backends, with every conflict policy, and the request goes on",
        arguments: [ConflictPolicy.error, .keep, .update, .replace])
    func missingReferenceRejectsOnlyItsRow(policy: ConflictPolicy) throws {
        let dir = TemporaryDirectory()
        let sqlite = try Store.open(at: dir.file("shop.sqlite"), model: SampleModels.shop())
        let scratch = try PostgresStoreScratch()
        let postgres = try Store.open(at: scratch.url, model: SampleModels.shop())
        // Customers with keys 1…5 (and orders o0…o2); new orders naming them, keys no customer
        // has, and a number an earlier row of the request takes.
        let rows: [[Value]] = [
            [.string("n0"), .decimal("1.50"), .integer(1)],
            [.string("n1"), .decimal("2"), .integer(999)],
            [.string("n2"), .decimal("3"), .integer(2)],
            [.string("n0"), .decimal("4"), .integer(3)],
            [.string("n3"), .decimal("5"), .integer(-1)],
            [.string("n4"), .decimal("6"), .integer(5)],
            [.string("n0"), .decimal("7"), .integer(998)],
        ]
        var outcomes: [(BatchInsertResult, [String], [[Value]])] = []
        for store in [sqlite, postgres] {
            _ = try Self.filled(store)
            var rejects: [String] = []
            var request = BatchInsertRequest(
                entity: "Order", columns: [.attribute("number"), .attribute("total"), .relationship("customer")],
                conflictPolicy: policy, rows: rows)
            request.onReject = { index, reason in rejects.append("\(index): \(reason)") }
            let result = try store.execute(request)
            let stored = try Self.rows(
                store, FetchRequest(entity: "Order", sortDescriptors: [SortDescriptor("number")]))
            outcomes.append((result, rejects, stored))
        }
        let (sqliteResult, sqliteRejects, sqliteRows) = outcomes[0]
        let (postgresResult, postgresRejects, postgresRows) = outcomes[1]
        #expect(postgresResult == sqliteResult, "\(policy)")
        #expect(postgresRejects == sqliteRejects, "\(policy)")
        #expect(postgresRows == sqliteRows, "\(policy)")
        let missing = "a relationship points to an object that does not exist"
        #expect(sqliteRejects.contains("1: \(missing)"), "\(policy): \(sqliteRejects)")
        #expect(sqliteRejects.contains("4: \(missing)"), "\(policy): \(sqliteRejects)")
        #expect(postgresResult.read == rows.count)
        #expect(postgresResult.inserted >= 3, "\(policy): \(postgresResult)")
    }

    @Test(
        "a batch insert gives the same counts, rejected rows and objects on both backends with every conflict policy, records of one request updating each other"
    )
    func conflictPoliciesAgree() throws {
        // id 0 twice, an e-mail taken by another id, a rule broken, then an update of what an
        // earlier row of the same request inserted.
        let rows: [[Value]] = [
            [.integer(0), .string("c0@example.com"), .string("Zero")],
            [.integer(1), .string("c1@example.com"), .string("One")],
            [.integer(0), .string("c9@example.com"), .string("Zero again")],
            [.integer(2), .string("c1@example.com"), .string("Two")],
            [.integer(3), .string("not an email"), .string("Three")],
            [.integer(1), .string("c1b@example.com"), .null],
            [.integer(4), .string("c0@example.com"), .string("Four")],
        ]
        let dir = TemporaryDirectory()
        for policy in ConflictPolicy.allCases {
            let sqlite = try Store.open(at: dir.file("\(policy).sqlite"), model: SampleModels.shop())
            let scratch = try PostgresStoreScratch()
            let postgres = try Store.open(at: scratch.url, model: SampleModels.shop())
            var results: [BatchInsertResult] = []
            var rejections: [[String]] = []
            for store in [sqlite, postgres] {
                var rejected: [String] = []
                var request = BatchInsertRequest(
                    entity: "Customer", columns: [.attribute("id"), .attribute("email"), .attribute("name")],
                    conflictPolicy: policy, rows: rows)
                request.onReject = { index, reason in rejected.append("\(index): \(reason)") }
                results.append(try store.execute(request))
                rejections.append(rejected)
            }
            #expect(results[1] == results[0], "\(policy)")
            #expect(rejections[1] == rejections[0], "\(policy)")
            #expect(!rejections[0].isEmpty, "\(policy)")
            let fetch = FetchRequest(entity: "Customer", sortDescriptors: [SortDescriptor("id")])
            #expect(try Self.rows(postgres, fetch) == Self.rows(sqlite, fetch), "\(policy)")
        }
    }
}
