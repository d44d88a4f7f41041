import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// A store with five customers and a few orders, on disk (or in a PostgreSQL schema).
struct UpdateFixture {
    let directory = TemporaryDirectory("ferry-update")
    let scratch: PostgresStoreScratch?
    let store: Store

    static let model = ObjectModel(
        name: "Shop", version: "1",
        entities: [
            EntityDescription(
                name: "Customer",
                attributes: [
                    AttributeDescription(name: "id", type: .int64, isOptional: false),
                    AttributeDescription(
                        name: "email", type: .string, isOptional: false,
                        validation: ValidationRules(maxLength: 20, pattern: "[^@ ]+@[^@ ]+")),
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "code", type: .string, validation: ValidationRules(minLength: 2)),
                    AttributeDescription(
                        name: "age", type: .int16,
                        validation: ValidationRules(minValue: .integer(0), maxValue: .integer(150))),
                    AttributeDescription(name: "rank", type: .int16),
                    AttributeDescription(name: "balance", type: .decimal),
                    AttributeDescription(name: "score", type: .double),
                    AttributeDescription(name: "active", type: .bool),
                    AttributeDescription(name: "joined", type: .date),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "orders", destination: "Order", isToMany: true, inverse: "customer", deleteRule: .cascade)
                ],
                uniquenessConstraints: [["id"], ["email"]]
            ),
            EntityDescription(
                name: "Order",
                attributes: [
                    AttributeDescription(name: "number", type: .string, isOptional: false),
                    AttributeDescription(name: "total", type: .decimal),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "customer", destination: "Customer", inverse: "orders", isOptional: false)
                ]
            ),
        ])

    init(_ backend: StoreBackend = .sqlite) throws {
        scratch = backend == .postgresql ? try PostgresStoreScratch() : nil
        store = try Store.open(at: scratch?.url ?? directory.file("shop.sqlite"), model: Self.model)
        try store.writeDatabase { connection in
            try connection.executeScript(
                """
                INSERT INTO "Customer"(ferry_pk, id, email, name, code, age, rank, balance, score, active, joined) VALUES
                  (1, 1, ' Ann@Example.COM ', 'Ann', 'aa', 34, 1, '10.10', 1.5, TRUE, '2023-05-01T00:00:00.000Z'),
                  (2, 2, 'bob@example.com', 'Bob', 'bb', 19, 2, '-3', 2.0, FALSE, NULL),
                  (3, 3, 'cy@example.com', NULL, 'cc', 52, 3, '0.1', NULL, TRUE, NULL),
                  (4, 4, 'dee@example.com', 'Dée', NULL, NULL, 4, NULL, 4.0, NULL, NULL),
                  (5, 5, 'eve@example.com', 'Eve', 'ee', 27, 5, '99999999999999999999.99', -1.0, FALSE, NULL);
                INSERT INTO "Order"(ferry_pk, number, total, customer) VALUES (1, 'A-1', '5', 1), (2, 'A-2', '7.5', 1), (3, 'B-1', '1', 2);
                """)
        }
    }

    /// Every customer, as a fetch decodes it (the same on both backends).
    func customers() throws -> [[Value]] {
        try store.fetch(FetchRequest(entity: "Customer")) { cursor in
            var rows: [[Value]] = []
            while let row = try cursor.next() { rows.append(row) }
            return rows
        }
    }

    func column(_ name: String, of entity: String = "Customer") throws -> [DatabaseValue] {
        try store.withConnection { try $0.rows("SELECT \(name) FROM \"\(entity)\" ORDER BY ferry_pk").map { $0[0] } }
    }

    func snapshot() throws -> [[DatabaseValue]] {
        try store.withConnection { try $0.rows("SELECT * FROM Customer ORDER BY ferry_pk") }
    }

    func update(
        _ predicate: String, _ values: [String: BatchUpdateRequest.PropertyValue], validate: Bool = true,
        dryRun: Bool = false
    ) throws -> Int {
        let request = BatchUpdateRequest(
            entity: "Customer", predicate: try Predicate(format: predicate), propertiesToUpdate: values,
            validate: validate)
        return try store.execute(request, dryRun: dryRun).updated
    }

    /// An expression for every Customer attribute but the key: arithmetic, exact decimals,
    /// concatenation and text functions over the old values.
    static func arithmeticAndTextExpressions() throws -> [String: BatchUpdateRequest.PropertyValue] {
        [
            "email": try expression("lowercase(trim(email))"),
            "age": try expression("age + 1"),
            "rank": try expression("-(rank * 2 - 1) / 2"),
            "balance": try expression("balance * 1.1 + 0.01"),
            "score": try expression("score / 2 + rank"),
            "name": try expression("uppercase(coalesce(name, 'anon')) + ' #' + string(id)"),
            "code": try expression("coalesce(code, \"zz\")"),
        ]
    }

    static func expression(_ text: String) throws -> BatchUpdateRequest.PropertyValue {
        .expression(
            try Expression.parse(
                text, location: InputLocation(file: "job.yml", line: 4, column: 12), bareNamesAreAttributes: true))
    }
}

/// The rendered error of a throwing call, or nil.
func errorText(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch {
        return "\(error)"
    }
}

@Suite("BatchUpdateRequest")
struct BatchUpdateTests {
    @Test("constants are converted to the attribute's type and only selected records change")
    func constants() throws {
        let fixture = try UpdateFixture()
        let changed = try fixture.update(
            "age > 30",
            ["active": .constant(.bool(false)), "name": .constant(.string("Senior")), "rank": .constant(.string("9"))])
        #expect(changed == 2)
        #expect(try fixture.column("active") == [.integer(0), .integer(0), .integer(0), .null, .integer(0)])
        #expect(
            try fixture.column("name") == [.text("Senior"), .text("Bob"), .text("Senior"), .text("Dée"), .text("Eve")])
        #expect(try fixture.column("rank") == [.integer(9), .integer(2), .integer(9), .integer(4), .integer(5)])
        #expect(try fixture.update("FALSEPREDICATE", ["name": .constant(.null)]) == 0)
        #expect(
            try fixture.update(
                "id == 4",
                ["joined": .constant(.string("2024-02-29T12:00:00+01:00")), "balance": .constant(.string("1.50"))]) == 1
        )
        #expect(try fixture.column("joined")[3] == .text("2024-02-29T11:00:00.000Z"))
        #expect(try fixture.column("balance")[3] == .text("1.5"))
    }

    @Test("expressions read the old values: arithmetic, exact decimals, concatenation, functions")
    func expressions() throws {
        let fixture = try UpdateFixture()
        let changed = try fixture.update(
            "TRUEPREDICATE",
            try UpdateFixture.arithmeticAndTextExpressions())
        #expect(changed == 5)
        #expect(
            try fixture.column("email")
                == ["ann@example.com", "bob@example.com", "cy@example.com", "dee@example.com", "eve@example.com"].map {
                    .text($0)
                })
        #expect(try fixture.column("age") == [.integer(35), .integer(20), .integer(53), .null, .integer(28)])
        #expect(try fixture.column("rank") == [.integer(0), .integer(-1), .integer(-2), .integer(-3), .integer(-4)])
        #expect(
            try fixture.column("balance") == [
                .text("11.12"), .text("-3.29"), .text("0.12"), .null, .text("109999999999999999999.999"),
            ])
        #expect(try fixture.column("score") == [.real(1.75), .real(3.0), .null, .real(6.0), .real(4.5)])
        #expect(
            try fixture.column("name") == [
                .text("ANN #1"), .text("BOB #2"), .text("ANON #3"), .text("DÉE #4"), .text("EVE #5"),
            ])
        #expect(try fixture.column("code") == [.text("aa"), .text("bb"), .text("cc"), .text("zz"), .text("ee")])
    }

    @Test("now() gives every record the same instant; date(…) converts a string literal for a date attribute")
    func dates() throws {
        let fixture = try UpdateFixture()
        #expect(try fixture.update("joined == nil", ["joined": try UpdateFixture.expression("now()")]) == 4)
        let joined = try fixture.column("joined").compactMap(\.text)
        #expect(Set(joined.dropFirst()).count == 1)
        #expect(joined.allSatisfy { $0.count == 24 && $0.hasSuffix("Z") })
        #expect(
            try fixture.update("id == 2", ["joined": try UpdateFixture.expression("coalesce(nil, date('2020-01-02'))")])
                == 1)
        #expect(try fixture.column("joined")[1] == .text("2020-01-02T00:00:00.000Z"))
        // A string is never silently read as a date.
        #expect(
            errorText {
                _ = try fixture.update(
                    "id == 2", ["joined": try UpdateFixture.expression("coalesce(joined, '2020-01-02')")])
            }
                == "job.yml:4:12: error: the arguments of coalesce() have different types: date and '2020-01-02' (string)"
        )
    }

    @Test(
        "values SQLite cannot compute exactly are evaluated per object: to-one key paths, conditionals, text functions, exact division"
    )
    func evaluatedPerObject() throws {
        let fixture = try UpdateFixture()
        let request = BatchUpdateRequest(
            entity: "Order", predicate: try Predicate(format: "TRUEPREDICATE"),
            propertiesToUpdate: [
                "number": .expression(
                    try Expression.parse(
                        "concat(substring(customer.name, 0, 1), '-', number, $source.total > 4 ? '!' : '')",
                        bareNamesAreAttributes: true)),
                "total": .expression(try Expression.parse("round(total / 3, 2)", bareNamesAreAttributes: true)),
            ])
        #expect(try fixture.store.execute(request).updated == 3)
        #expect(try fixture.column("number", of: "Order") == [.text("A-A-1!"), .text("A-A-2!"), .text("B-B-1")])
        #expect(try fixture.column("total", of: "Order") == [.text("1.67"), .text("2.5"), .text("0.33")])
        #expect(try fixture.store.withConnection { try $0.rows("SELECT name FROM sqlite_temp_master") }.isEmpty)
        // Only the selected objects are evaluated and changed.
        #expect(
            try fixture.update(
                "age > 30", ["name": try UpdateFixture.expression("if(active, uppercase(coalesce(name, 'x')), 'off')")])
                == 2)
        #expect(try fixture.column("name") == [.text("ANN"), .text("Bob"), .text("X"), .text("Dée"), .text("Eve")])
    }

    @Test("a value that cannot be computed fails the step before anything is written, naming the object")
    func evaluationFailures() throws {
        let fixture = try UpdateFixture()
        let before = try fixture.snapshot()
        #expect(
            errorText {
                _ = try fixture.update(
                    "TRUEPREDICATE",
                    ["age": try UpdateFixture.expression("age / (rank - 3)"), "active": .constant(.bool(false))])
            }
                == "job.yml:4:16: error: cannot evaluate age / (rank - 3) for Customer ferry_pk 3: division by zero")
        #expect(
            errorText {
                _ = try fixture.update("TRUEPREDICATE", ["rank": try UpdateFixture.expression("rank * 10000")])
            }
                == "job.yml:4:12: error: cannot evaluate rank * 10000 for Customer ferry_pk 4: 40000 is out of range for int16 (attribute 'rank')"
        )
        #expect(
            errorText { _ = try fixture.update("TRUEPREDICATE", ["rank": try UpdateFixture.expression("int(code)")]) }
                == "job.yml:4:12: error: cannot evaluate int(code) for Customer ferry_pk 1: 'aa' is not an integer")
        #expect(try fixture.snapshot() == before)
    }

    @Test("the predicate may go through relationships")
    func throughRelationships() throws {
        let fixture = try UpdateFixture()
        #expect(try fixture.update("orders.@count >= 2", ["active": .constant(.bool(false))]) == 1)
        #expect(try fixture.column("active")[0] == .integer(0))
        let request = BatchUpdateRequest(
            entity: "Order", predicate: try Predicate(format: "customer.name BEGINSWITH[c] 'a'"),
            propertiesToUpdate: ["total": .expression(try Expression.parse("total * 2", bareNamesAreAttributes: true))])
        #expect(try fixture.store.execute(request).updated == 2)
        #expect(try fixture.column("total", of: "Order") == [.text("10"), .text("15"), .text("1")])
    }

    @Test(
        "an expression that breaks a rule rolls everything back and names the rule, the count and the keys",
        arguments: [
            (
                "age + 120", "age",
                "the new value of Customer.age breaks 'max: 150' for 2 records (ferry_pk 1, 3); nothing was changed"
            ),
            (
                "age - 20", "age",
                "the new value of Customer.age breaks 'min: 0' for 1 record (ferry_pk 2); nothing was changed"
            ),
            (
                "lowercase(name) + '@x.io'", "email",
                "the new value of Customer.email breaks 'optional: false' for 1 record (ferry_pk 3); nothing was changed"
            ),
            (
                "email + email", "email",
                "the new value of Customer.email breaks 'max_length: 20' for 5 records (ferry_pk 1, 2, 3, 4, 5); nothing was changed"
            ),
            (
                "coalesce(name, 'x')", "email",
                "the new value of Customer.email breaks 'pattern: [^@ ]+@[^@ ]+' for 5 records (ferry_pk 1, 2, 3, 4, 5); nothing was changed"
            ),
            (
                "trim(' x ')", "code",
                "the new value of Customer.code breaks 'min_length: 2' for 5 records (ferry_pk 1, 2, 3, 4, 5); nothing was changed"
            ),
        ])
    func ruleViolations(expression: String, attribute: String, message: String) throws {
        let fixture = try UpdateFixture()
        let before = try fixture.snapshot()
        let text = errorText {
            _ = try fixture.update(
                "TRUEPREDICATE",
                [attribute: try UpdateFixture.expression(expression), "active": .constant(.bool(false))])
        }
        #expect(text == "error: \(message)")
        #expect(try fixture.snapshot() == before)
    }

    @Test("more than five offenders show the first five keys and an ellipsis; validate: false skips the checks")
    func manyOffendersAndNoValidation() throws {
        let fixture = try UpdateFixture()
        try fixture.store.write { connection in
            for id in 6...12 {
                try connection.execute(
                    "INSERT INTO Customer(id, email, age, rank) VALUES (\(id), 'c\(id)@x.io', 140, 1)")
            }
        }
        let text = errorText { _ = try fixture.update("age >= 140", ["age": try UpdateFixture.expression("age + 11")]) }
        #expect(
            text
                == "error: the new value of Customer.age breaks 'max: 150' for 7 records (ferry_pk 6, 7, 8, 9, 10, …); nothing was changed"
        )
        #expect(
            try fixture.update("age >= 140", ["age": try UpdateFixture.expression("age + 11")], validate: false) == 7)
        #expect(try fixture.update("id == 1", ["age": .constant(.integer(500))], validate: false) == 1)
    }

    @Test("constants are checked once against type and rules")
    func constantViolations() throws {
        let fixture = try UpdateFixture()
        #expect(
            errorText { _ = try fixture.update("id == 1", ["age": .constant(.integer(200))]) }
                == "error: cannot set Customer.age to '200': age 200 is greater than the maximum 150")
        #expect(
            errorText { _ = try fixture.update("id == 1", ["age": .constant(.string("old"))]) }
                == "error: cannot set Customer.age to 'old': 'old' is not an integer")
        #expect(
            errorText { _ = try fixture.update("id == 1", ["email": .constant(.null)]) }
                == "error: cannot set Customer.email to 'nil': email is required")
        #expect(
            errorText { _ = try fixture.update("id == 1", ["email": .constant(.string("nope"))]) }
                == "error: cannot set Customer.email to 'nope': email does not match the pattern [^@ ]+@[^@ ]+")
        #expect(
            errorText { _ = try fixture.update("id == 1", ["rank": .constant(.integer(40000))]) }
                == "error: cannot set Customer.rank to '40000': 40000 is out of range for int16")
    }

    @Test("a uniqueness violation rolls back with a clear message")
    func uniqueness() throws {
        let fixture = try UpdateFixture()
        let before = try fixture.snapshot()
        #expect(
            errorText { _ = try fixture.update("age > 30", ["email": .constant(.string("same@x.io"))]) }
                == "error: the update would give two Customer objects the same email (uniqueness constraint on email); nothing was changed"
        )
        #expect(
            errorText { _ = try fixture.update("TRUEPREDICATE", ["id": try UpdateFixture.expression("id / 2")]) }
                == "error: the update would give two Customer objects the same id (uniqueness constraint on id); nothing was changed"
        )
        #expect(try fixture.snapshot() == before)
        #expect(try fixture.update("id == 1", ["email": .constant(.string("same@x.io"))]) == 1)
    }

    @Test("a dry run counts and changes nothing")
    func dryRun() throws {
        let fixture = try UpdateFixture()
        let before = try fixture.snapshot()
        #expect(try fixture.update("age < 30", ["age": try UpdateFixture.expression("age + 1")], dryRun: true) == 2)
        #expect(try fixture.snapshot() == before)
        #expect(
            errorText {
                _ = try fixture.update(
                    "TRUEPREDICATE", ["age": try UpdateFixture.expression("age + 200")], dryRun: true)
            }
                == "error: the new value of Customer.age breaks 'max: 150' for 4 records (ferry_pk 1, 2, 3, 5); nothing was changed"
        )
    }

    @Test(
        "bad expressions and requests are located errors",
        arguments: [
            ("lowercase(emial)", "job.yml:4:22: error: Customer has no attribute 'emial'; did you mean 'email'?"),
            ("age +", "job.yml:4:17: error: expected a value after '+' but found end of input"),
            (
                "(age + 1",
                "job.yml:4:20: error: expected ')' to close '(' at column 12 after '1' but found end of input"
            ),
            (
                "lower(email)",
                "job.yml:4:12: error: unknown function 'lower'; see docs/expressions.md for the functions"
            ),
            ("age # 2", "job.yml:4:16: error: unexpected character '#'"),
            ("'open", "job.yml:4:12: error: unterminated string literal"),
            ("now(1)", "job.yml:4:12: error: now() takes 0 arguments () but was given 1"),
            (
                "orders + 1",
                "job.yml:4:12: error: 'orders' of Customer is a to-many relationship; value expressions can only follow to-one relationships"
            ),
            ("joined + 1", "job.yml:4:19: error: '+' needs numbers, but joined (date) is not a number"),
            (
                "uppercase(age)",
                "job.yml:4:22: error: uppercase() needs a string as argument 1, but age (integer) is not; convert it with string(…)"
            ),
            (
                "coalesce(age, name)",
                "job.yml:4:12: error: the arguments of coalesce() have different types: integer and name (string)"
            ),
            (
                "name + id",
                "job.yml:4:17: error: '+' joins strings, but id (integer) is not a string; convert it with string(…) or use concat(…)"
            ),
            ("yes", "job.yml:4:12: error: Customer has no attribute 'yes'"),
            ("$source.nmae", "job.yml:4:20: error: Customer has no attribute 'nmae'; did you mean 'name'?"),
            (
                "name.first",
                "job.yml:4:17: error: 'name' of Customer is an attribute, not a relationship, so 'first' cannot follow it"
            ),
        ])
    func badExpressions(text: String, message: String) throws {
        let fixture = try UpdateFixture()
        let rendered = errorText {
            _ = try fixture.update("TRUEPREDICATE", ["name": try UpdateFixture.expression(text)])
        }
        #expect(rendered == message)
    }

    @Test("type mismatches between an expression and its attribute")
    func typeMismatches() throws {
        let fixture = try UpdateFixture()
        #expect(
            errorText { _ = try fixture.update("TRUEPREDICATE", ["age": try UpdateFixture.expression("age * 1.5")]) }
                == "job.yml:4:12: error: 'age * 1.5' is decimal, but attribute 'age' is int16; convert it with int(…)")
        #expect(
            errorText { _ = try fixture.update("TRUEPREDICATE", ["balance": try UpdateFixture.expression("score")]) }
                == "job.yml:4:12: error: 'score' is double, but attribute 'balance' is decimal; convert it with decimal(…)"
        )
        #expect(
            errorText { _ = try fixture.update("TRUEPREDICATE", ["score": try UpdateFixture.expression("balance")]) }
                == "job.yml:4:12: error: 'balance' is decimal, but attribute 'score' is double; convert it with double(…)"
        )
        #expect(
            errorText { _ = try fixture.update("TRUEPREDICATE", ["email": try UpdateFixture.expression("nil")]) }
                == "job.yml:4:12: error: 'nil' is always nil, but attribute 'email' is not optional")
        #expect(
            errorText { _ = try fixture.update("TRUEPREDICATE", ["emial": .constant(.string("x"))]) }
                == "error: Customer has no attribute 'emial'; did you mean 'email'?")
        #expect(
            errorText { _ = try fixture.update("TRUEPREDICATE", ["orders": .constant(.null)]) }
                == "error: 'orders' is a relationship of Customer; a batch update sets attributes only (relationship 'orders' cannot be set)"
        )
        let request = BatchUpdateRequest(entity: "Customr", propertiesToUpdate: ["name": .constant(.null)])
        #expect(
            errorText { try request.check(model: UpdateFixture.model) }
                == "error: unknown entity 'Customr' in model 'Shop'; did you mean 'Customer'?")
    }
}
