import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// Stores for verification tests: made by ferry, then broken on purpose with raw SQL through
/// separate connections (so schema edits made with `writable_schema` are re-read).
struct BrokenStore {
    let dir = TemporaryDirectory("ferry-verify")
    let path: String
    let model: ObjectModel

    init(model: ObjectModel = SampleModels.shop()) throws {
        self.model = model
        path = dir.file("store.sqlite")
        _ = try Store.open(at: path, model: model)
    }

    /// Runs SQL on a fresh raw connection (foreign keys off, no ferry functions).
    func raw(_ sql: String) throws {
        try Connection(path: path).executeScript(sql)
    }

    /// Replaces text in a table's or index's CREATE statement (e.g. drops a NOT NULL).
    func editSchema(_ name: String, replacing old: String, with new: String) throws {
        let connection = try Connection(path: path)
        try connection.execute("PRAGMA writable_schema = ON")
        try connection.execute(
            "UPDATE sqlite_schema SET sql = replace(sql, ?, ?) WHERE name = ?", [.text(old), .text(new), .text(name)])
        try connection.execute("PRAGMA writable_schema = OFF")
    }

    func open() throws -> Store {
        try Store.open(at: path, model: model, options: Store.Options(createIfMissing: false, allowModelMismatch: true))
    }

    func run(_ checks: [Check], maxOffending: Int = 5) throws -> [CheckResult] {
        let store = try open()
        return Verifier(model: model, maxOffending: maxOffending).run(checks, on: store).results
    }

    func result(_ check: Check) throws -> CheckResult {
        let results = try run([check])
        return try #require(results.first)
    }
}

/// Customers 1–3 and two orders of customer 1, all valid.
func validShop(_ store: BrokenStore) throws {
    try store.raw(
        """
        INSERT INTO Customer(ferry_pk, id, email, name, age, balance, active, joined) VALUES
          (1, 1, 'ann@x.io', 'Ann', 30, '10.5', 1, '2024-01-02T03:04:05.000Z'),
          (2, 2, 'bob@x.io', 'Bob', NULL, '0', 0, NULL),
          (3, 3, 'cy@x.io', NULL, 150, '-2', 1, '2023-12-31T23:59:59.999Z');
        INSERT INTO "Order"(ferry_pk, number, total, customer) VALUES (1, 'SO-1', '9.99', 1), (2, 'SO-2', NULL, 1);
        """)
}

@Suite("Verification checks: each passes on a good store and fails on a broken one")
struct VerificationTests {
    // MARK: Counts

    @Test("counts: exact, at least, at most, between, or only measured")
    func counts() throws {
        let store = try BrokenStore()
        try validShop(store)
        let results = try store.run([
            .count(entity: "Customer", expectation: .exactly(3)),
            .count(entity: "Customer", expectation: .atLeast(4)),
            .count(entity: "Order", expectation: .atMost(1), basis: "imported by step 2"),
            .count(entity: "Order", expectation: .between(1, 2)),
            .count(entity: "Order", expectation: nil),
        ])
        #expect(results.map(\.outcome) == [.passed, .failed, .failed, .passed, .passed])
        #expect(results[0].message == "3 rows (expected exactly 3)")
        #expect(results[1].message == "expected at least 4 rows, found 3")
        #expect(results[2].message == "expected at most 1 rows, imported by step 2, found 2")
        #expect(results[3].measured == ["count": 2, "expected": "between 1 and 2"])
        #expect(results[4].message == "2 rows")
        #expect(results.allSatisfy { $0.name.hasPrefix("count ") && $0.elapsedSeconds > 0 })
    }

    @Test("a check of an unknown entity is an error, not a crash")
    func unknownEntity() throws {
        let store = try BrokenStore()
        let result = try store.result(.count(entity: "Custmer", expectation: .exactly(1)))
        #expect(result.outcome == .error)
        #expect(result.message == "model Shop has no entity 'Custmer'; did you mean 'Customer'?")
    }

    // MARK: PRAGMAs

    @Test("integrity_check and quick_check pass on a sound store")
    func integrityPasses() throws {
        let store = try BrokenStore()
        try validShop(store)
        let results = try store.run([.integrity(quick: false), .integrity(quick: true)])
        #expect(results.map(\.name) == ["integrity_check", "quick_check"])
        #expect(results.map(\.outcome) == [.passed, .passed])
        #expect(results[0].message == "ok")
    }

    @Test("integrity_check finds an index that does not match its table")
    func integrityFails() throws {
        let store = try BrokenStore()
        try validShop(store)
        // The index now claims to index `name` but holds the entries of `email`.
        try store.editSchema("ferry_unique_Customer_email", replacing: "(\"email\")", with: "(\"name\")")
        let result = try store.result(.integrity(quick: false))
        #expect(result.outcome == .failed)
        #expect(result.message.contains("ferry_unique_Customer_email"))
        #expect(result.message.hasPrefix("3 problems: ") || result.message.contains("problem"))
    }

    @Test("quick_check finds NULL in a NOT NULL column")
    func quickCheckFails() throws {
        let store = try BrokenStore()
        try validShop(store)
        try store.editSchema("Customer", replacing: "\"email\" TEXT NOT NULL", with: "\"email\" TEXT")
        try store.raw("UPDATE Customer SET email = NULL WHERE id = 2")
        try store.editSchema("Customer", replacing: "\"email\" TEXT,", with: "\"email\" TEXT NOT NULL,")
        let result = try store.result(.integrity(quick: true))
        #expect(result.outcome == .failed)
        #expect(result.message == "1 problem: NULL value in Customer.email")
    }

    @Test("foreign_key_check: passes, then names the dangling order by key")
    func foreignKeys() throws {
        let store = try BrokenStore()
        try validShop(store)
        #expect(try store.result(.foreignKeys(entity: nil)).outcome == .passed)
        try store.raw("INSERT INTO \"Order\"(ferry_pk, number, customer) VALUES (7, 'SO-7', 99)")
        let result = try store.result(.foreignKeys(entity: nil))
        #expect(result.outcome == .failed)
        #expect(result.message == "1 dangling reference (1 in Order)")
        #expect(result.offending.map(\.description) == ["Order ferry_pk=7 number=SO-7: refers to a missing Customer"])
        let scoped = try store.run([.foreignKeys(entity: "Order"), .foreignKeys(entity: "Customer")])
        #expect(scoped.map(\.outcome) == [.failed, .passed])
        #expect(scoped[0].name == "foreign_key_check Order")
    }

    // MARK: Uniqueness, required, types, validation

    @Test("uniqueness: duplicates behind a dropped unique index are found, NULLs are not duplicates")
    func uniqueness() throws {
        let store = try BrokenStore()
        try validShop(store)
        let good = try store.run([.uniqueness(entity: "Customer")])
        #expect(good.map(\.name) == ["unique Customer(id)", "unique Customer(email)"])
        #expect(good.map(\.outcome) == [.passed, .passed])
        try store.raw(
            """
            DROP INDEX ferry_unique_Customer_email;
            INSERT INTO Customer(ferry_pk, id, email, balance, active) VALUES (4, 4, 'ann@x.io', '0', 1), (5, 5, 'ann@x.io', '0', 1);
            """)
        let results = try store.run([.uniqueness(entity: "Customer")])
        #expect(results.map(\.outcome) == [.passed, .failed])
        #expect(results[1].message == "1 value of email is shared by 3 records")
        #expect(results[1].measured == ["duplicate_values": 1, "rows": 3])
        #expect(
            results[1].offending.map(\.description) == [
                "Customer ferry_pk=1 id=1: shares its email with another record",
                "Customer ferry_pk=4 id=4: shares its email with another record",
                "Customer ferry_pk=5 id=5: shares its email with another record",
            ])
    }

    @Test("required: NULLs in non-optional attributes and to-one relationships")
    func required() throws {
        let store = try BrokenStore()
        try validShop(store)
        let passed = try store.result(.required(entity: "Customer"))
        #expect(passed.outcome == .passed)
        #expect(passed.message == "3 rows, 2 required properties set")
        try store.editSchema("Customer", replacing: "\"email\" TEXT NOT NULL", with: "\"email\" TEXT")
        try store.editSchema("Order", replacing: "\"customer\" INTEGER NOT NULL", with: "\"customer\" INTEGER")
        try store.raw(
            "UPDATE Customer SET email = NULL WHERE id IN (2, 3); UPDATE \"Order\" SET customer = NULL WHERE number = 'SO-2'"
        )
        let results = try store.run([.required(entity: "Customer"), .required(entity: "Order")])
        #expect(results.map(\.outcome) == [.failed, .failed])
        #expect(results[0].message == "email is nil in 2 rows")
        #expect(
            results[0].offending.map(\.description) == [
                "Customer ferry_pk=2 id=2: email is nil", "Customer ferry_pk=3 id=3: email is nil",
            ])
        #expect(results[1].message == "customer is nil in 1 row")
        #expect(results[1].measured["nil_customer"] == 1)
    }

    @Test("types: storage classes, integer ranges, dates, decimals, UUIDs, JSON")
    func types() throws {
        let model = ObjectModel(
            name: "T", version: "1",
            entities: [
                EntityDescription(
                    name: "Thing",
                    attributes: [
                        AttributeDescription(name: "code", type: .int64),
                        AttributeDescription(name: "small", type: .int16),
                        AttributeDescription(name: "flag", type: .bool),
                        AttributeDescription(name: "amount", type: .decimal),
                        AttributeDescription(name: "at", type: .date),
                        AttributeDescription(name: "uid", type: .uuid),
                        AttributeDescription(name: "doc", type: .json),
                        AttributeDescription(name: "ratio", type: .double),
                    ], uniquenessConstraints: [["code"]])
            ])
        let store = try BrokenStore(model: model)
        try store.raw(
            """
            INSERT INTO Thing(ferry_pk, code, small, flag, amount, at, uid, doc, ratio) VALUES
              (1, 1, -32768, 0, '-12.5', '2024-02-29T00:00:00.000Z', '6f1c2d3e-0000-4000-8000-000000000002', '{"a": [1]}', 1.5),
              (2, 2, NULL, NULL, '0', NULL, NULL, NULL, NULL)
            """)
        let passed = try store.result(.types(entity: "Thing"))
        #expect(passed.outcome == .passed)
        #expect(passed.message == "2 rows, 8 attributes well-typed")
        try store.raw(
            """
            INSERT INTO Thing(ferry_pk, code, small, flag, amount, at, uid, doc, ratio) VALUES
              (3, 3, 40000, 2, '1.2.3', '2024-02-29', '6F1C2D3E-0000-4000-8000-000000000002', '{oops', 'x'),
              (4, 'x4', 'abc', 1, '12e3', '2024-02-29T00:00:00Z', 'nope', '[]', 2.0)
            """)
        let result = try store.result(.types(entity: "Thing"))
        #expect(result.outcome == .failed)
        #expect(
            result.message == """
                code is not an int64 in 1 row; small is not an int16 in 2 rows; flag is not a boolean (0 or 1) in 1 row; \
                amount is not a decimal in text form in 2 rows; at is not an ISO-8601 date (YYYY-MM-DDTHH:MM:SS.sssZ) in 2 rows; \
                uid is not a lowercase UUID in 2 rows; doc is not valid JSON text in 1 row; ratio is not a floating-point number in 1 row
                """)
        #expect(result.measured["violations"] == 12)
        #expect(result.offending.count == 5)
        #expect(result.offending[0].description == "Thing ferry_pk=4 code=x4: code is not an int64")
    }

    @Test("validation rules: min/max (decimals numerically), lengths in characters, patterns")
    func validation() throws {
        var model = SampleModels.shop()
        model.entities[1].attributes[1].validation = ValidationRules(
            minValue: .decimal("0"), maxValue: .decimal("9.99"))
        let store = try BrokenStore(model: model)
        try validShop(store)
        let passed = try store.run([.validationRules(entity: "Customer"), .validationRules(entity: "Order")])
        #expect(passed.map(\.outcome) == [.passed, .passed])
        #expect(passed[0].message == "3 rows, 4 rules kept")
        // "10" sorts before "9.99" as text but is larger as a number; "é" is one character.
        try store.raw(
            """
            INSERT INTO Customer(ferry_pk, id, email, age, balance, active) VALUES
              (4, 4, 'no-at-sign', -1, '0', 1),
              (5, 5, '\(String(repeating: "é", count: 38))@x', 151, '0', 1),
              (6, 6, '\(String(repeating: "é", count: 39))@x', 20, '0', 1);
            INSERT INTO "Order"(ferry_pk, number, total, customer) VALUES (3, 'SO-3', '10', 1), (4, 'SO-4', '-0.01', 1), (5, 'SO-5', '9.990', 1);
            """)
        let results = try store.run([.validationRules(entity: "Customer"), .validationRules(entity: "Order")])
        #expect(results.map(\.outcome) == [.failed, .failed])
        #expect(
            results[0].message == """
                email is longer than 40 characters in 1 row; email does not match the pattern [^@ ]+@[^@ ]+ in 1 row; \
                age is below the minimum 0 in 1 row; age is above the maximum 150 in 1 row
                """)
        #expect(
            results[0].offending.map(\.description) == [
                "Customer ferry_pk=6 id=6: email is longer than 40 characters",
                "Customer ferry_pk=4 id=4: email does not match the pattern [^@ ]+@[^@ ]+",
                "Customer ferry_pk=4 id=4: age is below the minimum 0",
                "Customer ferry_pk=5 id=5: age is above the maximum 150",
            ])
        #expect(results[1].message == "total is below the minimum 0 in 1 row; total is above the maximum 9.99 in 1 row")
        #expect(
            results[1].offending.map(\.description) == [
                "Order ferry_pk=4 number=SO-4: total is below the minimum 0",
                "Order ferry_pk=3 number=SO-3: total is above the maximum 9.99",
            ])
    }

    @Test("checks with nothing to check are skipped with a reason")
    func skipped() throws {
        let model = ObjectModel(
            name: "M", version: "1",
            entities: [EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)])]
        )
        let store = try BrokenStore(model: model)
        let results = try store.run([
            .uniqueness(entity: "Note"), .required(entity: "Note"), .validationRules(entity: "Note"),
            .relationships(entity: "Note"), .toManyCounts(entity: "Note"),
        ])
        #expect(results.map(\.outcome) == [.skipped, .skipped, .skipped, .skipped, .skipped])
        #expect(
            results.map(\.message) == [
                "Note has no uniqueness constraints", "Note has no required attributes or relationships",
                "Note has no validation rules",
                "Note stores no relationships of its own", "Note has no to-many relationship with a min or max count",
            ])
    }

    // MARK: Relationships

    static let linked = ObjectModel(
        name: "Links", version: "1",
        entities: [
            EntityDescription(
                name: "Person",
                attributes: [AttributeDescription(name: "name", type: .string, isOptional: false)],
                relationships: [
                    RelationshipDescription(name: "passport", destination: "Passport", inverse: "holder"),
                    RelationshipDescription(
                        name: "tags", destination: "Tag", isToMany: true, inverse: "people", minCount: 1, maxCount: 2),
                ],
                uniquenessConstraints: [["name"]]),
            EntityDescription(
                name: "Passport", attributes: [AttributeDescription(name: "number", type: .string)],
                relationships: [RelationshipDescription(name: "holder", destination: "Person", inverse: "passport")],
                uniquenessConstraints: [["number"]]),
            EntityDescription(
                name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)],
                relationships: [
                    RelationshipDescription(name: "people", destination: "Person", isToMany: true, inverse: "tags")
                ]),
        ])

    func linkedStore() throws -> BrokenStore {
        let store = try BrokenStore(model: Self.linked)
        try store.raw(
            """
            INSERT INTO Person(ferry_pk, name) VALUES (1, 'Ann'), (2, 'Bob');
            INSERT INTO Passport(ferry_pk, number, holder) VALUES (1, 'P1', 1), (2, 'P2', 2);
            INSERT INTO Tag(ferry_pk, label) VALUES (1, 'a'), (2, 'b');
            INSERT INTO ferry_link_Person_tags(ferry_source, ferry_target) VALUES (1, 1), (2, 1), (2, 2);
            """)
        return store
    }

    @Test("relationships: one-to-one and many-to-many links are whole")
    func relationshipsPass() throws {
        let store = try linkedStore()
        let results = try store.run([
            .relationships(entity: "Person"), .relationships(entity: "Passport"), .relationships(entity: "Tag"),
        ])
        #expect(
            results.map(\.name) == ["relationship Person.tags", "relationship Passport.holder", "relationship Tag"])
        #expect(results.map(\.outcome) == [.passed, .passed, .skipped])
        #expect(results[0].message == "3 links in ferry_link_Person_tags, both ends of each exist")
        #expect(results[1].message == "2 links, every one to an existing Person, none shared")
    }

    @Test("relationships: dangling links, a shared one-to-one, links to missing rows in join tables")
    func relationshipsFail() throws {
        let store = try linkedStore()
        try store.raw(
            """
            INSERT INTO Passport(ferry_pk, number, holder) VALUES (3, 'P3', 1), (4, 'P4', 9);
            INSERT INTO ferry_link_Person_tags(ferry_source, ferry_target) VALUES (1, 7), (8, 2);
            """)
        let results = try store.run([.relationships(entity: "Person"), .relationships(entity: "Passport")])
        #expect(results.map(\.outcome) == [.failed, .failed])
        #expect(results[0].message == "1 link from a missing Person; 1 link to a missing Tag in ferry_link_Person_tags")
        #expect(
            results[0].offending.map(\.description) == [
                "ferry_link_Person_tags ferry_source,ferry_target=1,7: links a missing Tag 7",
                "ferry_link_Person_tags ferry_source,ferry_target=8,2: links a missing Person 8",
            ])
        #expect(
            results[1].message
                == "1 link to a missing Person; 1 Person record is linked from more than one Passport (one-to-one with Person.passport)"
        )
        #expect(
            results[1].offending.map(\.description) == [
                "Passport ferry_pk=4 number=P4: holder refers to a missing Person",
                "Passport ferry_pk=1 number=P1: shares its holder with another Passport",
                "Passport ferry_pk=3 number=P3: shares its holder with another Passport",
            ])
    }

    @Test("to-many counts: min and max per record")
    func toManyCounts() throws {
        let store = try linkedStore()
        let passed = try store.result(.toManyCounts(entity: "Person"))
        #expect(passed.outcome == .passed)
        #expect(passed.message == "every Person has at least 1 and at most 2 tags")
        try store.raw(
            """
            INSERT INTO Tag(ferry_pk, label) VALUES (3, 'c');
            INSERT INTO ferry_link_Person_tags(ferry_source, ferry_target) VALUES (2, 3);
            INSERT INTO Person(ferry_pk, name) VALUES (3, 'Cy');
            """)
        let failed = try store.result(.toManyCounts(entity: "Person"))
        #expect(failed.outcome == .failed)
        #expect(failed.message == "2 Person records do not have at least 1 and at most 2 tags")
        #expect(
            failed.offending.map(\.description) == [
                "Person ferry_pk=2 name=Bob: tags count out of range",
                "Person ferry_pk=3 name=Cy: tags count out of range",
            ])
    }

    // MARK: Model hash

    @Test("model hash: agrees with the recorded model, and with a given model")
    func modelHashPasses() throws {
        let store = try BrokenStore()
        let result = try store.result(.modelHash(expected: SampleModels.shop(version: "1")))
        #expect(result.outcome == .passed)
        #expect(result.message == "model Shop version 1, hash \(SampleModels.shop().versionHash.prefix(12))")
    }

    @Test("model hash: a tampered hash, a tampered entity hash, another model version")
    func modelHashFails() throws {
        let store = try BrokenStore()
        try store.raw(
            "UPDATE ferry_metadata SET value = 'abcdef0123456789' WHERE key = 'model_hash'; UPDATE ferry_entities SET hash = 'x' WHERE name = 'Order'"
        )
        var other = SampleModels.shop(version: "2")
        other.entities[1].attributes.append(AttributeDescription(name: "note", type: .string))
        let result = try store.result(.modelHash(expected: other))
        #expect(result.outcome == .failed)
        let recorded = SampleModels.shop().versionHash.prefix(12)
        #expect(
            result.message == """
                the store claims model hash abcdef012345 but its recorded model Shop version 1 hashes to \(recorded); \
                entity hashes in ferry_entities differ from the recorded model for Order; \
                the store is at model Shop version 1 (hash abcdef012345), not model Shop version 2 (hash \(other.versionHash.prefix(12)))
                """)
    }

    // MARK: Assertions and records

    @Test("predicate assertions: counts, percentages, offending records, bad predicates")
    func assertions() throws {
        let store = try BrokenStore()
        try validShop(store)
        let results = try store.run([
            .assertion(PredicateAssertion(entity: "Customer", predicate: "name == nil", expectation: .exactly(0))),
            .assertion(
                PredicateAssertion(entity: "Customer", predicate: "age == nil OR age > 100", expectation: .atMost(1))),
            .assertion(
                PredicateAssertion(entity: "Customer", predicate: "active == YES", expectation: .atLeastPercent(50))),
            .assertion(
                PredicateAssertion(entity: "Customer", predicate: "active == NO", expectation: .atMostPercent(10))),
            .assertion(
                PredicateAssertion(
                    entity: "Customer", predicate: "emial == nil", expectation: .exactly(0),
                    location: InputLocation(file: "expect.yml", line: 4, column: 30))),
        ])
        #expect(results.map(\.outcome) == [.failed, .failed, .passed, .failed, .error])
        #expect(results[0].name == "assertion Customer: name == nil")
        #expect(results[0].message == "1 of 3 Customer rows match 'name == nil', expected exactly 0")
        #expect(results[0].offending.map(\.description) == ["Customer ferry_pk=3 id=3: matches 'name == nil'"])
        #expect(results[1].measured == ["matching": 2, "rows": 3, "expected": "at most 1"])
        #expect(results[2].message == "2 of 3 rows match (expected at least 50%)")
        #expect(results[3].message == "1 of 3 Customer rows match 'active == NO', expected at most 10%")
        #expect(
            results[4].message == "expect.yml:4:30: error: Customer has no attribute 'emial'; did you mean 'email'?")
    }

    @Test("record expectations: found by key, values compared in their types")
    func records() throws {
        let store = try BrokenStore()
        try validShop(store)
        let results = try store.run([
            .record(
                RecordExpectation(
                    entity: "Customer", key: [AttributeValue("id", .integer(1))],
                    expected: [
                        AttributeValue("name", .string("Ann")), AttributeValue("balance", .decimal("10.50")),
                        AttributeValue("joined", .date(1_704_164_645_000)),
                    ])),
            .record(
                RecordExpectation(
                    entity: "Customer", key: [AttributeValue("email", .string("bob@x.io"))],
                    expected: [
                        AttributeValue("name", .string("Robert")), AttributeValue("age", .integer(40)),
                    ])),
            .record(
                RecordExpectation(
                    entity: "Customer", key: [AttributeValue("id", .integer(42))],
                    expected: [AttributeValue("name", .string("Ana"))])),
        ])
        #expect(results.map(\.outcome) == [.passed, .failed, .failed])
        #expect(results[0].name == "record Customer(id = 1)")
        #expect(results[0].message == "3 values as expected")
        #expect(
            results[1].message
                == "Customer with email = \"bob@x.io\": name is \"Bob\", expected \"Robert\"; age is nil, expected 40")
        #expect(results[1].offending.map(\.description) == ["Customer ferry_pk=2 email=bob@x.io: 2 values differ"])
        #expect(results[2].message == "no Customer with id = 42")
    }

    // MARK: Checksums

    @Test("checksums ignore row order and storage form, and see any changed value")
    func checksums() throws {
        let a = try BrokenStore()
        let b = try BrokenStore()
        try a.raw("INSERT INTO Customer(id, email, balance, active) VALUES (1, 'a@x', '1.50', 1), (2, 'b@x', '2', 0)")
        try b.raw("INSERT INTO Customer(id, email, balance, active) VALUES (2, 'b@x', 2, 0), (1, 'a@x', '1.5', 1)")
        let before = try EntityChecksum.compute(
            store: a.open(), entity: "Customer", attributes: ["id", "email", "balance", "active"])
        let after = try EntityChecksum.compute(
            store: b.open(), entity: "Customer", attributes: ["id", "email", "balance", "active"])
        #expect(before.rows == 2)
        #expect(before.value.count == 16)
        #expect(before.matches(after))
        let passed = try b.result(
            .checksum(entity: "Customer", attributes: ["id", "email", "balance", "active"], expected: before))
        #expect(passed.outcome == .passed)
        try b.raw("UPDATE Customer SET email = 'B@x' WHERE id = 2")
        let failed = try b.result(
            .checksum(entity: "Customer", attributes: ["id", "email", "balance", "active"], expected: before))
        #expect(failed.outcome == .failed)
        #expect(failed.message.hasPrefix("values changed: checksum "))
        let other = try EntityChecksum.compute(
            store: b.open(), entity: "Customer", attributes: ["id", "balance", "active"])
        #expect(!other.matches(before))
        #expect(throws: FerryError.self) {
            try EntityChecksum.compute(store: b.open(), entity: "Customer", attributes: ["emial"])
        }
    }

    // MARK: Built-in sets

    @Test("every built-in check passes on a sound store; offending records are capped")
    func builtIn() throws {
        let store = try BrokenStore()
        try validShop(store)
        let checks = Verifier.builtInChecks(for: store.model, level: .all)
        let report = Verifier(model: store.model).run(checks, on: try store.open())
        #expect(report.succeeded, "\(report.failedResults)")
        #expect(report.tests == 2 + 3 + 3 + 2 * 5)  // unique: Customer has two constraints
        #expect(
            Verifier.builtInChecks(for: store.model, level: .cheap).map(\.kind) == [
                "count", "count", "quick_check", "foreign_key_check", "model_hash",
            ])
        try store.raw(
            "DROP INDEX ferry_unique_Customer_id; WITH RECURSIVE n(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM n WHERE v < 20) INSERT INTO Customer(id, email, balance, active) SELECT 1, 'dup' || v || '@x', '0', 1 FROM n"
        )
        let capped = try store.run([.uniqueness(entity: "Customer")], maxOffending: 3)
        #expect(capped[0].offending.count == 3)
        #expect(capped[0].message == "1 value of id is shared by 21 records")
    }
}
