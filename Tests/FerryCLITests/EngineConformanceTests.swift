import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// The storage engines a store can be on, as a user names them: a ferry store in a SQLite file,
/// a Core Data store (SQLite, Core Data's layout), and a schema of the PostgreSQL test server.
enum Engine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case coreData
    case postgres

    var testDescription: String {
        switch self {
        case .sqlite: "ferry's layout on SQLite"
        case .coreData: "Core Data's layout on SQLite"
        case .postgres: "PostgreSQL"
        }
    }

    /// The engines this machine can run: PostgreSQL when a test server is there (or in CI,
    /// where a missing one fails).
    static var available: [Engine] {
        PostgresTestServer.shouldRun ? allCases : [.sqlite, .coreData]
    }
}

/// A store of one engine for one test: where it is, and the flags that create it.
struct EngineStore {
    let engine: Engine
    let directory: TemporaryDirectory
    let location: String
    private var schema: String?

    init(_ engine: Engine, name: String) throws {
        try self.init(engine, name: name, directory: TemporaryDirectory("ferry-conformance-\(engine.rawValue)"))
    }

    /// The flags of the import that creates the store.
    var creating: [String] { engine == .coreData ? ["--layout", "coredata"] : [] }

    /// Another store of `engine` in this store's directory (a copy's destination).
    func sibling(_ engine: Engine, name: String) throws -> EngineStore {
        try EngineStore(engine, name: name, directory: directory)
    }

    private init(_ engine: Engine, name: String, directory: TemporaryDirectory) throws {
        self.engine = engine
        self.directory = directory
        switch engine {
        case .sqlite, .coreData:
            location = directory.url.appendingPathComponent("\(name).sqlite").path
        case .postgres:
            let schema = "conf_\(name.lowercased())_\(UUID().uuidString.prefix(8).lowercased())"
            self.schema = schema
            location = try PostgresTestServer.requireURL() + "?schema=\(schema)"
        }
    }

    /// `text` with the store's location written as `STORE`, so that messages of stores in
    /// different places compare equal.
    func normalized(_ text: String) -> String {
        text.replacingOccurrences(of: "'\(location)'", with: "STORE").replacingOccurrences(of: location, with: "STORE")
    }

    func dropSchemas() {
        if let schema { PostgresStoreLoader.dropSchemas(startingWith: schema) }
    }
}

/// One conformance suite, every engine (issue 24): the same operations over the same models on
/// each engine, compared with each other. A cell either gives the same objects on every engine
/// or is a refusal that names what is not supported, identical wherever it applies. Written
/// before the fixes of issues 23–25, it was red on transients (read as columns by export and
/// verify), sub-entity requests (the whole root table), one-to-ones and sub-millisecond dates.
///
/// Each cell runs on every engine and is compared with ferry's SQLite store through
/// ``conforms(_:_:_:)`` (the same exports, summary lines and messages), plus fixed points that
/// hold whatever the engine; the other files hold the import cells (conflict policies, sync,
/// resume) and the store cells (export formats, copy, check, mapped migration, model features).
///
/// The models (`Fixtures/conformance`): `Garage` has every attribute type (dates with
/// sub-millisecond precision), a transient attribute, a one-to-one (`Person.passport` ↔
/// `Passport.holder`), a one-to-many and a many-to-many, and a second version (`Garage 2`: an
/// added attribute, a renamed one with a renaming identifier, a removed one; a mapping file in
/// `mappings/`); `Cars` has an entity hierarchy under an abstract root with attributes on every
/// level, a one-to-one and a many-to-many declared on the root (inherited by the sub-entities),
/// and a transient attribute; `Slots` a uniqueness constraint over two attributes (one a date),
/// `Routes` an ordered to-many, `Scores` a derived attribute.
@Suite("engine conformance: every operation on every engine, same objects or the same refusal", .serialized)
struct EngineConformanceTests {
    static let fixtures = TestPaths.packageRoot.appendingPathComponent("Tests/FerryCLITests/Fixtures/conformance")
    static func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name).path }
    /// Both versions of the Garage model; ``garage`` is its first, the one stores are loaded with.
    static let garageVersions = fixture("Garage.xcdatamodeld")
    static let garage = fixture("Garage.xcdatamodeld/Garage.xcdatamodel")
    static let cars = fixture("Cars.xcdatamodel")

    /// Runs ferry and requires exit `status` (0 unless told).
    @discardableResult
    static func ferry(_ arguments: [String], in store: EngineStore, exit status: Int32 = 0) throws -> ProcessResult {
        let result = try runFerry(arguments, cwd: store.directory.path)
        #expect(result.exitCode == status, "\(store.engine): ferry \(arguments.joined(separator: " ")): \(result)")
        return result
    }

    /// What each cell gave on ferry's SQLite store, by cell: computed once (by the SQLite case,
    /// which runs first) and compared with every other engine's.
    private static let references = Mutex<[String: [String: String]]>([:])

    /// Runs `cell` on `engine` and expects the same outcome (exports, summary lines, messages,
    /// keyed by what they are) as on ferry's SQLite store; returns the engine's outcome for the
    /// cell's fixed points.
    @discardableResult
    static func conforms(
        _ name: String, _ engine: Engine, _ cell: (Engine) throws -> [String: String]
    ) throws -> [String: String] {
        let outcome = try cell(engine)
        if engine == .sqlite { references.withLock { $0[name] = outcome } }
        let expected = try references.withLock { $0[name] } ?? cell(.sqlite)
        for key in Set(expected.keys).union(outcome.keys).sorted() {
            #expect(outcome[key] == expected[key], "\(engine): \(name): \(key) differs from ferry's SQLite store")
        }
        return outcome
    }

    /// The line of a step's counts, without its timing (`step 1 import Person from …: read 2, …`).
    static func summary(_ result: ProcessResult) -> String {
        let line = result.stdout.split(separator: "\n").last { $0.hasPrefix("step ") } ?? ""
        return String(line).replacing(#/ in [0-9.]+ s( \([^)]*\))?/#, with: "")
    }

    /// `ferry update` of `entity` where `predicate`, setting `assignment`.
    @discardableResult
    static func update(
        _ store: EngineStore, model: String, _ entity: String, where predicate: String, set assignment: String,
        _ more: [String] = ["--quiet"]
    ) throws -> ProcessResult {
        try ferry(
            [
                "update", "--store", store.location, "--model", model, "--entity", entity, "--where", predicate,
                "--set", assignment,
            ]
                + more, in: store)
    }

    /// `ferry delete` of `entity` where `predicate`, with the model's delete rules.
    static func delete(_ store: EngineStore, model: String, _ entity: String, where predicate: String) throws {
        try ferry(
            [
                "delete", "--store", store.location, "--model", model, "--entity", entity, "--where", predicate,
                "--quiet",
            ],
            in: store)
    }

    /// Imports `files` (fixture, entity) in order with `--nested`, the first import creating the
    /// store: related objects are linked by key, one-to-ones and many-to-manys included.
    static func load(_ store: EngineStore, model: String, _ files: [(file: String, entity: String)]) throws {
        var first = store.creating
        for (file, entity) in files {
            try ferry(
                [
                    "import", fixture(file), "--store", store.location, "--model", model, "--entity", entity,
                    "--nested", "--quiet",
                ]
                    + first, in: store)
            first = []
        }
    }

    /// The Garage fixtures: tags, people, passports linked to their holders by key (the
    /// one-to-one), vehicles linked to owners and tags by key (the many-to-many).
    static func loadGarage(_ store: EngineStore) throws {
        try load(
            store, model: garage,
            [
                ("tags.ndjson", "Tag"), ("people.ndjson", "Person"), ("passports.ndjson", "Passport"),
                ("vehicles.ndjson", "Vehicle"),
            ])
    }

    /// Every entity of the Garage store as NDJSON sorted by its key, with its relationships'
    /// keys from both sides.
    static func exportGarage(_ store: EngineStore) throws -> [String: String] {
        let exports: [(entity: String, sort: String, fields: String)] = [
            ("Tag", "label", "label"),
            ("Person", "personID", "personID,name,born,active,height,homepage,photo,rank,token,passport.number"),
            ("Passport", "number", "number,issued,holder.personID"),
            ("Vehicle", "vehicleID", "vehicleID,maker,price,ratio,mileage,owner.personID"),
        ]
        var result: [String: String] = [:]
        for (entity, sort, fields) in exports {
            result[entity] =
                try ferry(
                    [
                        "export", "--store", store.location, "--model", garage, "--entity", entity, "--format",
                        "ndjson",
                        "--sort", sort, "--fields", fields, "--quiet",
                    ], in: store
                ).stdout
        }
        return result
    }

    // MARK: - Garage: every attribute type, a one-to-one, a many-to-many, a transient

    @Test(
        "import, export and verify --checks all give the same objects on every engine; dates keep their microseconds",
        arguments: Engine.available)
    func garageRoundTrip(engine: Engine) throws {
        let exports = try Self.conforms("round trip", engine) { engine in
            let store = try EngineStore(engine, name: "garage")
            defer { store.dropSchemas() }
            try Self.loadGarage(store)
            try Self.ferry(["verify", store.location, "--model", Self.garage, "--checks", "all", "--quiet"], in: store)
            return try Self.exportGarage(store)
        }
        // Fixed points, whatever the engine: the one-to-one seen from both sides, microseconds.
        #expect(exports["Person"]?.contains(#""passport.number":"P-1""#) == true, "\(exports["Person"] ?? "")")
        #expect(exports["Passport"]?.contains(#""holder.personID":2"#) == true, "\(exports["Passport"] ?? "")")
        #expect(exports["Person"]?.contains("04:05:06.123456Z") == true, "\(engine): \(exports["Person"] ?? "")")
    }

    @Test(
        "update and delete change the same objects on every engine (delete rules: cascade, nullify)",
        arguments: Engine.available)
    func garageMutations(engine: Engine) throws {
        let store = try EngineStore(engine, name: "mutate")
        defer { store.dropSchemas() }
        try Self.loadGarage(store)
        try Self.update(store, model: Self.garage, "Vehicle", where: "maker == 'BMW'", set: "mileage=7")
        // Ann (1) has passport P-1 (cascade) and vehicles 10, 11 (nullify).
        try Self.delete(store, model: Self.garage, "Person", where: "personID == 1")
        let exports = try Self.exportGarage(store)
        #expect(exports["Person"]?.contains(#""name":"Ann""#) == false)
        #expect(exports["Passport"]?.contains("P-1") == false, "cascade: \(exports["Passport"] ?? "")")
        let vehicles = exports["Vehicle"] ?? ""
        #expect(vehicles.split(whereSeparator: \.isNewline).count == 4, "nullify keeps the vehicles: \(vehicles)")
        #expect(vehicles.contains(#""vehicleID":10,"maker":"BMW""#), "\(vehicles)")
        #expect(!vehicles.contains(#""owner.personID":1"#), "nullify: \(vehicles)")
        #expect(vehicles.components(separatedBy: #""mileage":7"#).count - 1 == 2, "\(vehicles)")
        try Self.ferry(["verify", store.location, "--model", Self.garage, "--checks", "all", "--quiet"], in: store)
    }

    // MARK: - Cars: a hierarchy under an abstract root

    /// The Cars fixtures, sub-entities linked to drivers (inherited many-to-many) and plates.
    static func loadCars(_ store: EngineStore) throws {
        try load(
            store, model: cars,
            [
                ("drivers.ndjson", "Driver"), ("sportcars.ndjson", "SportCar"), ("luxurycars.ndjson", "LuxuryCar"),
                ("plates.ndjson", "Plate"),
            ])
    }

    static func keys(_ store: EngineStore, _ entity: String, where predicate: String = "TRUEPREDICATE") throws -> [Int]
    {
        let result = try ferry(
            [
                "export", "--store", store.location, "--model", cars, "--entity", entity, "--where", predicate,
                "--format", "csv",
                "--fields", "carID", "--sort", "carID", "--quiet",
            ], in: store)
        return result.stdout.split(whereSeparator: \.isNewline).dropFirst().compactMap {
            Int($0.trimmingCharacters(in: .whitespaces))
        }
    }

    @Test("a request on an entity of a hierarchy selects it and its sub-entities, nothing else")
    func hierarchySelection() throws {
        let store = try EngineStore(.coreData, name: "cars")
        try Self.loadCars(store)
        #expect(try Self.keys(store, "Car") == [1, 2, 3, 4])
        #expect(try Self.keys(store, "SportCar") == [1, 2])
        #expect(try Self.keys(store, "LuxuryCar") == [3, 4])
        // A dry run counts the sub-entity's rows only; a real run changes only them.
        let dry = try Self.update(
            store, model: Self.cars, "LuxuryCar", where: "TRUEPREDICATE", set: "isLimitedEdition=false", ["--dry-run"])
        #expect(dry.stdout.contains("(dry run, rolled back): updated 2 in"), "\(dry.stdout)")
        try Self.update(store, model: Self.cars, "SportCar", where: "maker == 'BMW'", set: "topSpeed=1")
        try Self.delete(store, model: Self.cars, "SportCar", where: "maker == 'BMW'")
        let remaining = try Self.keys(store, "Car")
        #expect(remaining == [2, 3, 4], "the luxury BMW stays")
        #expect(try Self.keys(store, "SportCar") == [2])
    }

    @Test("a hierarchy with a one-to-one, a many-to-many on the root and a transient verifies")
    func hierarchyVerifies() throws {
        let store = try EngineStore(.coreData, name: "cars")
        try Self.loadCars(store)
        try Self.ferry(["verify", store.location, "--model", Self.cars, "--checks", "all", "--quiet"], in: store)
    }

    @Test(
        "a ferry store refuses entity inheritance, identically on SQLite and PostgreSQL",
        arguments: Engine.available.filter { $0 != .coreData })
    func hierarchyRefusedOnFerryLayout(engine: Engine) throws {
        let store = try EngineStore(engine, name: "carsref")
        defer { store.dropSchemas() }
        let result = try runFerry(
            [
                "import", Self.fixture("drivers.ndjson"), "--store", store.location, "--model", Self.cars, "--entity",
                "Driver", "--quiet",
            ], cwd: store.directory.path)
        #expect(result.exitCode == 64, "\(result)")
        #expect(
            result.stderr.contains(
                "a ferry store cannot hold entity inheritance: entity 'LuxuryCar' has parent entity 'Car'"),
            "\(engine): \(result.stderr)")
    }
}
