import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore
@testable import FerryPostgresStore

/// The one decision between a PostgreSQL migration in the server and the snapshot path
/// (`PostgresServerStep.route(for:options:)`), and the SQL of the server path, on the Book models
/// of the policy tests (Customer ↔ Order, version 2 adding Contact).
@Suite("PostgreSQL migration route")
struct PostgresMigrationRouteTests {
    typealias Models = MigrationPolicyTests

    static func inferred() throws -> MappingModel {
        try MappingModel.inferred(from: Models.v1, to: Models.v2)
    }

    static func refusal(_ mapping: MappingModel, options: MigrationOptions = MigrationOptions()) -> String? {
        if case .failure(let refusal) = PostgresServerStep.route(for: [mapping], options: options) {
            return refusal.reason
        }
        return nil
    }

    @Test(
        "an inferred step runs in the server: one INSERT … SELECT per entity from the store's schema, to-one keys kept, a new entity empty"
    )
    func inferredStepInServer() throws {
        let steps = try PostgresServerStep.route(for: [try Self.inferred()], options: MigrationOptions()).get()
        let step = try #require(steps.first)
        let layout = FerryLayout.postgreSQL
        let sql = step.entities.map { $0.insertSQL(into: "shop_next", layout: layout)?.text }
        #expect(
            sql == [
                #"INSERT INTO "shop_next"."Customer" ("ferry_pk", "id", "name", "phone") SELECT t0."ferry_pk", t0."id", t0."name", t0."phone" FROM "Customer" AS t0"#,
                #"INSERT INTO "shop_next"."Order" ("ferry_pk", "number", "customer") SELECT t0."ferry_pk", t0."number", t0."customer" FROM "Order" AS t0"#,
                nil,
            ], "\(sql)")
        #expect(step.entities[1].keptForeignKeys.map(\.destination) == ["customer"])
        #expect(step.entities[0].unchanged.map(\.destination) == ["id", "name", "phone"])
        #expect(step.links.isEmpty)
    }

    @Test("constants and defaults for nil are bound, cast to the column's PostgreSQL type; exact widenings are cast")
    func constantsAndWidenings() throws {
        var v1 = Models.v1
        v1.entities[0].attributes.append(AttributeDescription(name: "visits", type: .int16))
        var v2 = Models.v2
        v2.entities[0].attributes.append(AttributeDescription(name: "visits", type: .int64))
        v2.entities[0].attributes.append(
            AttributeDescription(name: "score", type: .decimal, isOptional: false, defaultValue: .decimal("1.50")))
        var mapping = try MappingModel.inferred(from: v1, to: v2)
        let index = try #require(mapping.entities.firstIndex { $0.name == "Customer" })
        if let phone = mapping.entities[index].attributes.firstIndex(where: { $0.destination == "phone" }) {
            mapping.entities[index].attributes[phone].value = .copy(
                source: "phone", conversion: nil, valueIfNil: .string("none"))
        }
        let step = try #require(try PostgresServerStep.route(for: [mapping], options: MigrationOptions()).get().first)
        let customer = step.entities[index]
        let sql = try #require(customer.insertSQL(into: "s_next", layout: FerryLayout.postgreSQL))
        #expect(sql.text.contains(#"COALESCE(t0."phone", CAST(? AS text))"#), "\(sql.text)")
        #expect(sql.text.contains(#"CAST(t0."visits" AS bigint)"#), "\(sql.text)")
        #expect(sql.text.contains("CAST(? AS numeric)"), "\(sql.text)")
        #expect(sql.arguments == [.text("none"), .text("1.50")])
        // The phone's default for nil and the widened visits are not compared as unchanged.
        #expect(customer.unchanged.map(\.destination) == ["id", "name"])
    }

    @Test(
        "policies, stage hooks, distinct values, expressions, inexact conversions and rules that may break send the migration to the snapshot path, saying why"
    )
    func snapshotPathReasons() throws {
        var policy = try Self.inferred()
        policy.entities[0].policy = "Uppercaser"
        #expect(Self.refusal(policy)?.contains("mapping Customer has a custom policy") == true)

        let registry = PolicyRegistry()
        registry.registerStage(from: "1", to: "2", didMigrate: { _ in })
        #expect(
            Self.refusal(try Self.inferred(), options: MigrationOptions(registry: registry))
                == "step 1 → 2 has stage hooks (Swift)")

        var distinct = try Self.inferred()
        distinct.entities[0].distinct = "$source.name"
        #expect(Self.refusal(distinct)?.hasSuffix("makes one object per distinct value") == true)

        var expression = try Self.inferred()
        expression.entities[0].attributes[1].value = .expression("uppercase($source.name)")
        #expect(Self.refusal(expression) == "step 1 → 2, mapping Customer: name is an expression (computed in Swift)")

        // A tightened rule is checked on the new version, built in the server; a step before
        // the last leaves nothing to check it on.
        var v2 = Models.v2
        v2.entities[0].attributes[1].validation.maxLength = 3
        let tightened = try MappingModel.inferred(from: Models.v1, to: v2)
        #expect(Self.refusal(tightened) == nil)
        var v3 = v2
        v3.version = "3"
        let later = try MappingModel.inferred(from: v2, to: v3)
        if case .failure(let refusal) = PostgresServerStep.route(for: [tightened, later], options: MigrationOptions()) {
            #expect(refusal.reason == "step 1 → 2 may break a validation rule of Customer, and a later step follows")
        } else {
            Issue.record("a step before the last that may break a rule ran in the server")
        }

        // A filter on Customer: the orders' links would point at customers that may not be there.
        var filtered = try Self.inferred()
        filtered.entities[0].filter = "name != 'ghost'"
        #expect(Self.refusal(filtered)?.contains("do not all keep their source's keys") == true)

        // A filter PostgreSQL computes exactly runs in the server (Order is linked to by no one);
        // one that needs ferry's evaluation (`[c]`) does not.
        var exactFilter = try Self.inferred()
        exactFilter.entities[1].filter = "number != 'O-2'"
        let step = try #require(
            try PostgresServerStep.route(for: [exactFilter], options: MigrationOptions()).get().first)
        #expect(
            step.entities[1].insertSQL(into: "s", layout: FerryLayout.postgreSQL)?.text.contains(" WHERE ")
                == true)
        var foldedFilter = try Self.inferred()
        foldedFilter.entities[1].filter = "number ==[c] 'o-2'"
        #expect(
            Self.refusal(foldedFilter)
                == "step 1 → 2, mapping Order: its filter needs ferry's own evaluation (number ==[c] 'o-2')")

        // One bad step sends the whole migration through the snapshot path.
        let second = try MappingModel.inferred(from: Models.v2, to: Models.v2)
        if case .success = PostgresServerStep.route(for: [policy, second], options: MigrationOptions()) {
            Issue.record("a step with a policy ran in the server")
        }
    }

    @Test(
        "the conversions the server computes exactly as ferry does: integer widenings, integers to numeric, double and text, float to double, uri to string; never a checked narrowing"
    )
    func exactConversions() {
        var exact: [String] = []
        for (from, targets) in TypeConversion.widenings.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            for to in targets.sorted(by: { $0.rawValue < $1.rawValue }) {
                guard let conversion = TypeConversion(from: from, to: to),
                    PostgresServerStep.exactlyInServer(conversion)
                else { continue }
                exact.append("\(from.rawValue)→\(to.rawValue)")
            }
        }
        #expect(
            exact == [
                "float→double", "int16→decimal", "int16→double", "int16→int32", "int16→int64", "int16→string",
                "int32→decimal", "int32→double", "int32→int64", "int32→string", "int64→decimal", "int64→string",
                "uri→string",
            ], "\(exact)")
        let narrowing = TypeConversion(from: .int64, to: .int16, rules: .coreData)
        #expect(narrowing.map(PostgresServerStep.exactlyInServer) == false)
    }

    @Test(
        "a server older than PostgreSQL 14 (no hash_record_extended) sends the migration through the snapshot path, with the reason; 14 and later, or an unknown version, keep the server path"
    )
    func serverVersionDecidesTheRoute() throws {
        let mapping = try Self.inferred()
        for old in [90_624, 120_017, 130_014, 139_999] {
            guard
                case .failure(let refusal) = PostgresServerStep.route(
                    for: [mapping], options: MigrationOptions(), serverVersion: old)
            else {
                Issue.record("server_version_num \(old) took the server path")
                continue
            }
            #expect(refusal.reason.contains("server_version_num \(old)"), "\(refusal.reason)")
            #expect(refusal.reason.contains("14 or later"), "\(refusal.reason)")
            #expect(refusal.reason.contains("hash_record_extended"), "\(refusal.reason)")
        }
        for supported in [140_000, 150_018, 170_002, nil] {
            let steps = try PostgresServerStep.route(
                for: [mapping], options: MigrationOptions(), serverVersion: supported
            ).get()
            #expect(steps.count == 1, "server_version_num \(supported.map(String.init) ?? "unknown")")
        }
    }
}
