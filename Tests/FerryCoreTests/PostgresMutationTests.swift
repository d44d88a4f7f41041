import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// Batch updates on a PostgreSQL store give SQLite's counts, values and messages.
@Suite(
    "Batch updates on PostgreSQL agree with SQLite",
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresMutationTests {
    static let updates: [(predicate: String, values: [String: BatchUpdateRequest.PropertyValue])] = [
        (
            "age > 30",
            ["active": .constant(.bool(false)), "name": .constant(.string("Senior")), "rank": .constant(.string("9"))]
        ),
        ("FALSEPREDICATE", ["name": .constant(.null)]),
        (
            "id == 4",
            ["joined": .constant(.string("2024-02-29T12:00:00+01:00")), "balance": .constant(.string("1.50"))]
        ),
        // Evaluated by ferry in part: [cd], LIKE, MATCHES; through a relationship and an aggregate.
        ("name ==[cd] 'dee' OR email LIKE 'bob@*'", ["code": .constant(.string("zz"))]),
        ("ANY orders.total > 6 AND name MATCHES '[A-Z].*'", ["score": .constant(.double(9.5))]),
        ("orders.@count == 0 AND NOT name BEGINSWITH[c] 'e'", ["age": .constant(.integer(77))]),
        ("TRUEPREDICATE", ["balance": .constant(.decimal("0.10"))]),
    ]

    @Test("constant updates change the same objects and values, selected in SQL or by ferry")
    func constants() throws {
        let sqlite = try UpdateFixture(.sqlite)
        let postgres = try UpdateFixture(.postgresql)
        for update in Self.updates {
            let expected = try sqlite.update(update.predicate, update.values)
            let actual = try postgres.update(update.predicate, update.values)
            #expect(actual == expected, "\(update.predicate)")
            #expect(try postgres.customers() == sqlite.customers(), "\(update.predicate)")
        }
    }

    @Test("violations, uniqueness conflicts and dry runs report as on SQLite and change nothing")
    func failures() throws {
        let sqlite = try UpdateFixture(.sqlite)
        let postgres = try UpdateFixture(.postgresql)
        let before = try postgres.customers()
        let failing: [(String, [String: BatchUpdateRequest.PropertyValue])] = [
            ("id == 1", ["age": .constant(.integer(200))]),
            ("id == 1", ["email": .constant(.null)]),
            ("age > 30", ["email": .constant(.string("same@x.io"))]),
            ("name ==[c] 'ann' OR name ==[c] 'BOB'", ["id": .constant(.integer(3))]),
        ]
        for (predicate, values) in failing {
            let expected = errorText { _ = try sqlite.update(predicate, values) }
            #expect(expected != nil)
            #expect(errorText { _ = try postgres.update(predicate, values) } == expected, "\(predicate)")
        }
        #expect(try postgres.update("name LIKE[c] '*e*'", ["rank": .constant(.integer(1))], dryRun: true) == 2)
        #expect(try postgres.customers() == before)
        #expect(try postgres.customers() == before)
    }

    @Test("expression updates are evaluated by ferry per object: SQLite's values, counts and messages")
    func expressions() throws {
        let sqlite = try UpdateFixture(.sqlite)
        let postgres = try UpdateFixture(.postgresql)
        let succeeding: [(String, [String: BatchUpdateRequest.PropertyValue])] = [
            ("TRUEPREDICATE", try UpdateFixture.arithmeticAndTextExpressions()),
            // With constants, selected by ferry ([cd]) and by the server; nothing selected.
            (
                "name ==[cd] 'dee' OR age > 30",
                [
                    "name": try UpdateFixture.expression("if(active, uppercase(coalesce(name, 'x')), 'off')"),
                    "active": .constant(.bool(false)),
                ]
            ),
            ("id == 2", ["joined": try UpdateFixture.expression("coalesce(joined, date('2020-01-02'))")]),
            ("FALSEPREDICATE", ["age": try UpdateFixture.expression("age * 2")]),
        ]
        for (predicate, values) in succeeding {
            #expect(try postgres.update(predicate, values) == sqlite.update(predicate, values), "\(predicate)")
            #expect(try postgres.customers() == sqlite.customers(), "\(predicate)")
        }
        #expect(
            try postgres.update("age < 30", ["age": try UpdateFixture.expression("age + 1")], dryRun: true)
                == sqlite.update("age < 30", ["age": try UpdateFixture.expression("age + 1")], dryRun: true))
        let before = try postgres.customers()
        // Broken rules (max, type range, length, pattern, required), a value ferry cannot compute
        // (division by zero), a uniqueness conflict: the same message, nothing changed.
        let failing: [(String, [String: BatchUpdateRequest.PropertyValue])] = [
            ("TRUEPREDICATE", ["age": try UpdateFixture.expression("age + 200")]),
            ("TRUEPREDICATE", ["rank": try UpdateFixture.expression("rank * 10000")]),
            ("TRUEPREDICATE", ["email": try UpdateFixture.expression("email + 'xxxxxxxxxxxxxxxx'")]),
            ("id == 2", ["email": try UpdateFixture.expression("uppercase(name)")]),
            ("TRUEPREDICATE", ["email": try UpdateFixture.expression("nil")]),
            ("TRUEPREDICATE", ["age": try UpdateFixture.expression("age / (rank - 3)")]),
            ("TRUEPREDICATE", ["id": try UpdateFixture.expression("id / 2")]),
            ("TRUEPREDICATE", ["code": try UpdateFixture.expression("'z'")]),
        ]
        for (predicate, values) in failing {
            let expected = errorText { _ = try sqlite.update(predicate, values) }
            #expect(expected != nil, "\(values.keys.sorted())")
            #expect(errorText { _ = try postgres.update(predicate, values) } == expected, "\(values.keys.sorted())")
            #expect(try postgres.customers() == before)
        }
        // Without validation the rules are not checked, as on SQLite.
        let unchecked = ["age": try UpdateFixture.expression("age + 200")]
        #expect(
            try postgres.update("age > 30", unchecked, validate: false)
                == sqlite.update("age > 30", unchecked, validate: false))
        #expect(try postgres.customers() == sqlite.customers())
    }
}
