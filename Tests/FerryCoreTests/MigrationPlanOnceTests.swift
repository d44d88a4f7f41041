import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// The library model's version 3: version 2 with a new optional attribute (a lightweight step).
private enum LibraryV3 {
    static let model: ObjectModel = {
        var model = LibraryModels.v2
        model.version = "3"
        if let book = model.entities.firstIndex(where: { $0.name == "Book" }) {
            model.entities[book].attributes.append(AttributeDescription(name: "shelf", type: .string))
        }
        return model
    }()

    static var bundle: ModelBundle {
        ModelBundle(name: "Library", versions: [LibraryModels.v1, LibraryModels.v2, model], currentVersion: "3")
    }

    /// The mapping of each step (the 1 → 2 mapping file's, the 2 → 3 inferred one), counting
    /// how often each step's mapping is asked for.
    final class Provider {
        private(set) var calls: [String: Int] = [:]

        func mapping(from: ObjectModel, to: ObjectModel) throws -> MappingModel {
            calls["\(from.version)→\(to.version)", default: 0] += 1
            if from.version == "1" { return try LibraryModels.mapping() }
            return MappingModel(
                source: from, destination: to, inferred: try ModelDiff(from: from, to: to).inferredMapping())
        }
    }
}

@Suite("Migration engine: planned once, one connection per concern", .serialized)
struct MigrationPlanOnceTests {
    /// Runs `body`, returning the SQLite connections it opened on this task.
    func connectionsOpened(_ body: () throws -> Void) throws -> Int {
        let counter = ConnectionOpenCounter()
        try Connection.$openCounter.withValue(counter) { try body() }
        return counter.count
    }

    @Test("plan() and run() of one migrator make each step's mapping once; run() counts no objects")
    func mappingsMadeOnce() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("library.sqlite")
        try LibraryModels.makeStore(at: path)
        let provider = LibraryV3.Provider()
        let migrator = Migrator(storePath: path, bundle: LibraryV3.bundle, mappingProvider: provider.mapping)
        let plan = try migrator.plan()
        #expect(plan.steps.map(\.destination.version) == ["2", "3"])
        #expect(plan.counts == ["Book": 5, "Loan": 3])
        #expect(try migrator.plan(countingObjects: false).counts.isEmpty)
        let report = try migrator.run()
        #expect(report.toVersion == "3")
        #expect(report.steps.count == 2)
        #expect(provider.calls == ["1→2": 1, "2→3": 1])
        #expect(try Connection(path: path).scalar("SELECT count(*) FROM Book WHERE shelf IS NULL")?.int64 == 4)
    }

    @Test("counting the objects is the only table scan of a plan: one connection more than a plan without counts")
    func countingTakesOneConnection() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("library.sqlite")
        try LibraryModels.makeStore(at: path)
        let migrator = Migrator(
            storePath: path, bundle: LibraryV3.bundle, mappingProvider: LibraryV3.Provider().mapping)
        let withoutCounts = try connectionsOpened { _ = try migrator.plan(countingObjects: false) }
        let withCounts = try connectionsOpened { _ = try migrator.plan() }
        #expect(withCounts == withoutCounts + 1)
    }

    /// A step opens three connections: one creates the new store's schema, the step's own reads
    /// the source and writes the new store (attached), one reads the new store for every check.
    /// Checksums and the journal mode reuse them (before, each opened two more of its own).
    @Test("a step opens three connections, with checksums and a store in WAL mode too", arguments: [false, true])
    func connectionsPerStep(wal: Bool) throws {
        let dir = TemporaryDirectory()
        var opened: [Int] = []
        for target in ["2", "3"] {
            let path = dir.file("library-\(target).sqlite")
            try LibraryModels.makeStore(at: path)
            if wal { _ = try Connection(path: path).rows("PRAGMA journal_mode = WAL") }
            var options = MigrationOptions(targetVersion: target, backup: false)
            options.checksums = true
            let migrator = Migrator(
                storePath: path, bundle: LibraryV3.bundle, options: options,
                mappingProvider: LibraryV3.Provider().mapping)
            var report: MigrationReport?
            opened.append(try connectionsOpened { report = try migrator.run() })
            let steps = try #require(report?.steps)
            #expect(steps.count == Int(target)! - 1)
            // The checksums were compared: the loans' readers are proven unchanged in every step.
            for step in steps {
                #expect(step.entities.first { $0.mapping == "Loan" }?.unchanged == ["reader"])
            }
            let mode = try Connection(path: path).scalar("PRAGMA journal_mode")?.text?.lowercased()
            #expect(mode == (wal ? "wal" : "delete"))
        }
        #expect(opened[1] - opened[0] == 3)
        // Around the steps: two looks at whether the file is a Core Data store (immutable, no
        // lock), the metadata read, in WAL mode the connection holding SQLite's write lock (in
        // rollback mode SQLiteWriteBarrier holds SQLite's lock bytes on a descriptor of its own,
        // no connection); and the step's three. Before, a step opened six (seven for a store in
        // WAL mode) and the run one more to count the objects no one read.
        #expect(opened[0] == (wal ? 7 : 6))
    }
}
