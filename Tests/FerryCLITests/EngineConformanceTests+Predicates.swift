import FerryTestSupport
import Foundation
import Testing

/// The predicate cell of the conformance suite: exports and counts of the Garage store with a
/// predicate over every attribute type (dates with sub-millisecond precision, decimals, floats,
/// booleans, null, URIs, UUIDs, binary), string functions, `IN`, key paths through a to-one and a
/// one-to-one, and `@count` of a to-many and a many-to-many: the same rows on every engine.
extension EngineConformanceTests {
    /// Predicates over Person, each with the personIDs it selects in the Garage store (Ann 1,
    /// Bob 2, Cy 3, Dee 4; see `people.ndjson`).
    static let personPredicates: [(predicate: String, keys: [Int])] = [
        ("born > CAST('1980-02-03T04:05:06.1234Z', 'NSDate')", [1]),
        ("born == CAST('1980-02-03T04:05:06.123456Z', 'NSDate')", [1]),
        ("born <= '1980-02-03T04:05:06.123Z'", [2, 4]),
        ("born BETWEEN {'1975-12-31T23:59:59.999Z', '1980-02-03T04:05:06.123Z'}", [2, 4]),
        ("born == nil", [3]),
        ("born != nil AND active == nil", [4]),
        ("active == YES", [1]),
        ("active == NO", [2]),
        ("active != YES", [2, 3, 4]),
        ("height > 1.5", [1]),
        ("rank < 0", [2]),
        ("rank == 3 OR rank == -2", [1, 2]),
        ("rank == 0 AND height == 0", [3, 4]),
        ("homepage == 'https://ann.example/'", [1]),
        ("token == '0f8fad5b-d9cb-469f-a165-70867728950e'", [1]),
        ("photo != nil", [1]),
        ("name BEGINSWITH 'B'", [2]),
        ("name CONTAINS[c] 'E'", [4]),
        ("name ENDSWITH[cd] 'N'", [1]),
        ("name LIKE 'C?'", [3]),
        ("name MATCHES '[A-C].*'", [1, 2, 3]),
        ("personID IN {1, 3, 99}", [1, 3]),
        ("NOT (name IN {'Ann', 'Bob'})", [3, 4]),
        ("passport.number BEGINSWITH 'P-'", [1, 2]),
        ("passport.issued > CAST('2020-01-01T00:00:00.2Z', 'NSDate')", [1]),
        ("passport == nil", [3, 4]),
        ("vehicles.@count >= 2", [1]),
        ("vehicles.@count == 0", [3, 4]),
        ("ANY vehicles.tags.label == 'fast'", [1, 2]),
        ("passport.holder.name == 'Ann'", [1]),
        ("born >= CAST('1980-02-03T04:05:06.123001Z', 'NSDate')", [1]),
        ("born < CAST(-662774400, 'NSDate')", [2]),
        ("name ==[c] 'ann' OR name IN[c] {'DEE'}", [1, 4]),
        ("active != NO", [1, 3, 4]),
        ("NOT (active == YES)", [2, 3, 4]),
        ("photo == nil AND token == nil", [2, 3, 4]),
        ("ANY vehicles.price > 40000", [2]),
        ("vehicles.@sum.mileage > 0", [1]),
        ("vehicles.@max.price > 40000", [2]),
        ("vehicles.@avg.price > 20000", [1, 2]),
        ("ALL vehicles.maker == 'BMW'", [2, 3, 4]),
        ("NONE vehicles.maker == 'BMW'", [3, 4]),
    ]

    /// Predicates over Vehicle, each with the vehicleIDs it selects (see `vehicles.ndjson`).
    static let vehiclePredicates: [(predicate: String, keys: [Int])] = [
        ("price >= 31999.99", [10, 12]),
        ("price == 9999.5", [11]),
        ("price < 10000", [11, 13]),
        ("price == 0", [13]),
        ("ratio == nil OR ratio < 0.05", [11, 12, 13]),
        ("ratio == 0.1", [10]),
        ("mileage BETWEEN {100000, 200000}", [10]),
        ("maker IN {'BMW', 'Lada'}", [10, 12, 13]),
        ("owner.name == 'Ann'", [10, 11]),
        ("owner.active == NO", [12]),
        ("owner.passport.number == 'P-2'", [12]),
        ("owner == nil", [13]),
        ("tags.@count == 0", [13]),
        ("tags.@count > 1", [10]),
        ("ANY tags.label IN {'old', 'red'}", [10, 11]),
        ("NOT (owner.name == 'Ann')", [12, 13]),
        ("owner.born > CAST('1980-02-03T04:05:06.1234Z', 'NSDate')", [10, 11]),
        ("price > 31999.989 AND price < 31999.991", [10]),
        ("price IN {9999.5, 45000}", [11, 12]),
        ("ratio BETWEEN {0.09, 0.11}", [10]),
        ("maker ==[c] 'bmw'", [10, 12]),
        ("ANY tags.label ==[c] 'FAST'", [10, 12]),
        ("SUBQUERY(tags, $t, $t.label BEGINSWITH 'f').@count == 1", [10, 12]),
    ]

    @Test(
        "export and count with predicates over every attribute type, key paths and @count: the same rows on every engine",
        arguments: Engine.available)
    func predicatesOverEveryType(engine: Engine) throws {
        let outcome = try Self.conforms("predicates", engine) { engine in
            let store = try EngineStore(engine, name: "predicates")
            defer { store.dropSchemas() }
            try Self.loadGarage(store)
            var outcome: [String: String] = [:]
            for (entity, key, predicates) in [
                ("Person", "personID", Self.personPredicates), ("Vehicle", "vehicleID", Self.vehiclePredicates),
            ] {
                for (predicate, _) in predicates {
                    let result = try runFerry(
                        [
                            "export", "--store", store.location, "--model", Self.garage, "--entity", entity,
                            "--where", predicate, "--format", "csv", "--fields", key, "--sort", key, "--quiet",
                        ], cwd: store.directory.path)
                    outcome["\(entity) where \(predicate)"] =
                        result.exitCode == 0
                        ? result.stdout.replacingOccurrences(of: "\r\n", with: "\n")
                        : "exit \(result.exitCode): \(store.normalized(result.stderr))"
                }
            }
            // Counts: what a dry-run delete would delete, for a predicate of each kind.
            for (entity, predicate) in [
                ("Person", "born > CAST('1980-02-03T04:05:06.1234Z', 'NSDate')"), ("Person", "vehicles.@count == 0"),
                ("Vehicle", "price >= 31999.99 AND owner.active == YES"),
            ] {
                let counted = try Self.ferry(
                    [
                        "delete", "--store", store.location, "--model", Self.garage, "--entity", entity, "--where",
                        predicate, "--dry-run",
                    ], in: store)
                outcome["count \(entity) where \(predicate)"] = Self.summary(counted)
            }
            return outcome
        }
        // Fixed points: each predicate selects the rows the fixtures say.
        for (entity, key, predicates) in [
            ("Person", "personID", Self.personPredicates), ("Vehicle", "vehicleID", Self.vehiclePredicates),
        ] {
            for (predicate, keys) in predicates {
                let expected = ([key] + keys.map(String.init)).joined(separator: "\n") + "\n"
                #expect(
                    outcome["\(entity) where \(predicate)"] == expected,
                    "\(engine): \(entity) where \(predicate): \(outcome["\(entity) where \(predicate)"] ?? "")")
            }
        }
        #expect(
            outcome["count Vehicle where price >= 31999.99 AND owner.active == YES"]?.contains("deleted 1") == true,
            "\(engine): \(outcome)")
    }
}
