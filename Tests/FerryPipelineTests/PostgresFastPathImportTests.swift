import FerryCore
import FerryFormats
@_spi(Testing) import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// PostgreSQL's import fast path (records coerced from their field bytes, on the read-ahead
/// thread or the importing one, and encoded straight into COPY rows) must change nothing but
/// the speed: the rows, counts, rejects with their locations, and errors of the general path,
/// and the counts and rejects of the same import into SQLite.
@Suite(
    "PostgreSQL import fast path", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresFastPathImportTests {
    typealias Mode = ReadAheadImportTests.Mode
    typealias Outcome = ReadAheadImportTests.Outcome

    /// How a run imports: a mode, and whether the read-ahead thread coerces every batch.
    struct Run: CustomStringConvertible {
        var mode: Mode
        var alwaysCoerce = false
        var description: String { "\(mode)\(alwaysCoerce ? "-coercing" : "")" }
        static let all =
            Mode.all.map { Run(mode: $0) } + [Run(mode: Mode(fastPath: true, readsAhead: true), alwaysCoerce: true)]
    }

    /// Imports `source` into a fresh PostgreSQL store (schema `schema`) the way `run` says; the
    /// outcome (rows with the parent's `id` instead of its key) and how many records took the
    /// fast path.
    static func importIntoPostgres(
        _ source: String, format: DataFormat, run: Run, schema: String, rejects: String,
        configure: (inout ImportStep) -> Void
    ) throws -> (outcome: Outcome, fastRecords: Int) {
        let store = try Store.open(
            at: try PostgresTestServer.requireURL() + "?schema=" + schema, model: ReadAheadImportTests.nodeModel())
        var step = ImportStep(source: source, format: format, entity: "Node")
        step.rejectsPath = rejects
        step.maxRejects = .unlimited
        step.drift.newField = .ignore  // parent_id, unless the test maps it
        configure(&step)
        let runner = ImportStepRunner(step: step, store: store)
        runner.allowsFastPath = run.mode.fastPath
        runner.readsAhead = run.mode.readsAhead
        runner.readAheadAlwaysCoerces = run.alwaysCoerce
        var error: String?
        let report: StepReport
        do {
            report = try runner.run()
        } catch let failure as ImportStepFailure {
            report = failure.report
            error = failure.description.replacingOccurrences(of: rejects, with: "REJECTS")
        }
        let rows = try store.withDatabase {
            try $0.rows(
                #"SELECT n.id, n.name, n.size, n.weight, n.price::text, n.seen::text, n.flag, p.id FROM "Node" AS n LEFT JOIN "Node" AS p ON p.ferry_pk = n.parent ORDER BY n.ferry_pk"#,
                [])
        }
        let outcome = Outcome(
            counts: [report.read, report.inserted, report.updated, report.skipped, report.rejected], rows: rows,
            rejects: (try? String(contentsOfFile: rejects, encoding: .utf8)).map(ImportRunnerTests.reasons) ?? [],
            error: error)
        return (outcome, runner.fastPathRecords)
    }

    /// Runs the import in every mode into PostgreSQL and, unless `sqlite` is false, once into
    /// SQLite; expects the same outcome everywhere (rows compared between the PostgreSQL runs) and
    /// the fast path taken. Returns the general path's outcome.
    @discardableResult
    static func expectSameEverywhere(
        _ source: String, format: DataFormat, name: String, sqlite: Bool = true,
        configure: (inout ImportStep) -> Void
    ) throws -> Outcome {
        let dir = TemporaryDirectory()
        let prefix = "ferry_fastpath_" + UUID().uuidString.lowercased().replacing("-", with: "").prefix(10)
        defer { PostgresStoreLoader.dropSchemas(startingWith: prefix) }
        var outcomes: [(Run, Outcome)] = []
        for (index, run) in Run.all.enumerated() {
            let (outcome, fastRecords) = try importIntoPostgres(
                source, format: format, run: run, schema: "\(prefix)_\(index)",
                rejects: dir.file("\(name)-\(run).rejects"), configure: configure)
            if run.mode.fastPath {
                #expect(fastRecords * 2 >= outcome.counts[1], "\(name) \(run): most records took the fast path")
            } else {
                #expect(fastRecords == 0, "\(name) \(run)")
            }
            outcomes.append((run, outcome))
        }
        let general = try #require(outcomes.first { !$0.0.mode.fastPath && !$0.0.mode.readsAhead }).1
        for (run, outcome) in outcomes {
            #expect(outcome.counts == general.counts, "\(name) \(run)")
            #expect(outcome.rejects == general.rejects, "\(name) \(run)")
            #expect(outcome.error == general.error, "\(name) \(run)")
            #expect(outcome.rows.count == general.rows.count, "\(name) \(run)")
            if let index = outcome.rows.indices.first(where: {
                $0 < general.rows.count && outcome.rows[$0] != general.rows[$0]
            }) {
                Issue.record(
                    "\(name) \(run): row \(index) is \(outcome.rows[index]), not \(general.rows[index]) as on the general path"
                )
            }
        }
        guard sqlite else { return general }
        let sqlite = try ReadAheadImportTests.importOnce(
            source, format: format, model: ReadAheadImportTests.nodeModel(), entity: "Node",
            store: dir.file("\(name).sqlite"), rejects: dir.file("\(name)-sqlite.rejects"),
            mode: Mode(fastPath: true, readsAhead: true), configure: configure
        ).outcome
        #expect(general.counts == sqlite.counts, "\(name): SQLite's counts")
        #expect(general.rejects == sqlite.rejects, "\(name): SQLite's rejects")
        return general
    }

    /// The read-ahead tests' CSV, plus records the fast path must hand to the general path (a
    /// required name left empty, a duplicate id far from its first record), text to escape, and
    /// with `nul`, text holding U+0000 (which PostgreSQL cannot store, SQLite can).
    static func nodesCSV(_ count: Int, nul: Bool = false) -> [UInt8] {
        ReadAheadImportTests.nodesCSV(count)
            + Array("\(count + 1),\(nul ? "nul\u{0}here" : "no nul"),1,1,1,,true,\n".utf8)
            + Array("\(count + 2),,1,1,1,,true,\n".utf8)
            + Array("3,late dup,1,1,1,,true,\n".utf8)
            + Array("\(count + 3),\"t\tb\\\\c\",1,1,1,,false,\n".utf8)
    }

    @Test(
        "20,000 CSV records with bad ones, references to earlier, rejected and missing records, duplicates within and across batches: every mode gives the general path's rows, counts and located rejects, and SQLite's",
        arguments: [ConflictPolicy.error, .keep])
    func recordsWithReferences(policy: ConflictPolicy) throws {
        let dir = TemporaryDirectory()
        let source = try dir.write("nodes.csv", bytes: Self.nodesCSV(20_000))
        let general = try Self.expectSameEverywhere(source, format: .csv, name: "refs-\(policy)") { step in
            step.onConflict = policy
            step.relationships = [
                RelationshipMapping(relationship: "parent", field: "parent_id", match: "id", missing: .reject)
            ]
        }
        #expect(general.counts[0] == 20_004)
        #expect(general.rejects.contains { $0 == "195 196:58 parent_id: Node.parent: no Node with id = 97" })
        if policy == .error {
            #expect(general.rejects.contains { $0.hasPrefix("20003 20004:1 id:") && $0.contains("uniqueness") })
        } else {
            #expect(general.counts[3] > 0)
        }
    }

    @Test(
        "without references the batches stream while read: duplicates collide inside a streamed batch and across batches, in batches of 3,000 or in one transaction, with the same outcome in every mode as on SQLite",
        arguments: [true, false])
    func streamingRecords(atomic: Bool) throws {
        let dir = TemporaryDirectory()
        let source = try dir.write("nodes.csv", bytes: Self.nodesCSV(30_000))
        let general = try Self.expectSameEverywhere(source, format: .csv, name: "stream-\(atomic)") { step in
            step.atomic = atomic
            step.batchSize = 3_000
        }
        #expect(general.counts[0] == 30_004)
        // Duplicate ids (record 388 repeats the one before it) are rejected at their id field.
        #expect(general.rejects.contains { $0.hasPrefix("388 389:1 id:") && $0.contains("uniqueness") })
        #expect(general.rejects.contains { $0.hasPrefix("30003 30004:1 id:") })
        #expect(general.rows.contains { $0[1] == .text("t\tb\\\\c") })
    }

    @Test(
        "text holding U+0000 rejects its record on the fast path as on the general path, with the record's line and field, whether its batch streams or not",
        arguments: [true, false])
    func nulText(streams: Bool) throws {
        let dir = TemporaryDirectory()
        let source = try dir.write("nodes.csv", bytes: Self.nodesCSV(5_000, nul: true))
        let general = try Self.expectSameEverywhere(source, format: .csv, name: "nul-\(streams)", sqlite: false) {
            step in
            if !streams {
                step.relationships = [
                    RelationshipMapping(relationship: "parent", field: "parent_id", match: "id", missing: .null)
                ]
            }
        }
        #expect(general.rejects.contains { $0.hasPrefix("5001 5002:6 name:") && $0.contains("U+0000") })
    }

    @Test("a single record refused on the fast path leaves no COPY open: the step commits its run log")
    func onlyRecordRefused() throws {
        let dir = TemporaryDirectory()
        let source = try dir.write("one.csv", "id,name\n1,\"a\u{0}b\"\n")
        let general = try Self.expectSameEverywhere(source, format: .csv, name: "one", sqlite: false) { _ in }
        #expect(general.counts == [1, 0, 0, 0, 1])
        #expect(general.error == nil)
    }

    @Test("NDJSON records with absent, null and typed fields: the same outcome in every mode as on SQLite")
    func jsonRecords() throws {
        let dir = TemporaryDirectory()
        var lines: [String] = []
        for id in 1...8_000 {
            switch id % 41 {
            case 0: lines.append(#"{"id": \#(id), "name": "n\#(id)", "size": "big"}"#)
            case 1: lines.append(#"{"id": \#(id), "name": null}"#)
            case 2: lines.append(#"{"id": \#(id), "name": "n", "flag": true, "extra": [1, {"a": 2}]}"#)
            case 3: lines.append(#"{"id": \#(id - 1), "name": "dup"}"#)
            case 4: lines.append(#"{"id": \#(id), "name": "x", "size": -1}"#)
            default:
                lines.append(
                    #"{"id": \#(id), "name": "n\#(id)", "size": \#(id % 500), "weight": 1.5e2, "price": "\#(id).25", "seen": "2024-03-01T00:00:00.000Z"}"#
                )
            }
        }
        let source = try dir.write("nodes.ndjson", lines.joined(separator: "\n") + "\n")
        let general = try Self.expectSameEverywhere(source, format: .ndjson, name: "json") { _ in }
        #expect(general.counts[0] == 8_000)
        #expect(general.rejects.contains { $0.contains("name is required") })
        #expect(general.rejects.contains { $0.contains("uniqueness") })
    }
}
