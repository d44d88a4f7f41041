import FerryCore
import FerryFormats
@_spi(Testing) import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// The two-core import (a read-ahead thread that parses and coerces) must change nothing but
/// the speed: the same rows, counts, rejects with their locations, errors and committed batches
/// as the one-thread import, on the fast path and on the general path.
@Suite("Import read ahead on a second thread")
struct ReadAheadImportTests {
    /// How a run imports: fast path or general path, with or without the read-ahead thread.
    struct Mode: CustomStringConvertible, Sendable {
        var fastPath: Bool
        var readsAhead: Bool
        var description: String { "\(fastPath ? "fast" : "general")-\(readsAhead ? "ahead" : "inline")" }
        static let all = [
            Mode(fastPath: true, readsAhead: true), Mode(fastPath: true, readsAhead: false),
            Mode(fastPath: false, readsAhead: true), Mode(fastPath: false, readsAhead: false),
        ]
    }

    struct Outcome: Equatable {
        var counts: [Int]
        var rows: [[DatabaseValue]]
        var rejects: [String]
        var error: String?
    }

    /// A tree of nodes: `parent` refers to a node of the same file (usually an earlier record).
    static func nodeModel() -> ObjectModel {
        ObjectModel(
            name: "Nodes", version: "1",
            entities: [
                EntityDescription(
                    name: "Node",
                    attributes: [
                        AttributeDescription(name: "id", type: .int64, isOptional: false),
                        AttributeDescription(
                            name: "name", type: .string, isOptional: false, validation: ValidationRules(maxLength: 12)),
                        AttributeDescription(
                            name: "size", type: .int32, validation: ValidationRules(minValue: .integer(0))),
                        AttributeDescription(name: "weight", type: .double),
                        AttributeDescription(name: "price", type: .decimal),
                        AttributeDescription(name: "seen", type: .date),
                        AttributeDescription(name: "flag", type: .bool, defaultValue: .bool(false)),
                    ],
                    relationships: [
                        RelationshipDescription(name: "parent", destination: "Node", inverse: "children"),
                        RelationshipDescription(
                            name: "children", destination: "Node", isToMany: true, inverse: "parent"),
                    ],
                    uniquenessConstraints: [["id"]]
                )
            ])
    }

    /// `count` CSV records over many read-ahead batches, every 97th one bad in some way.
    static func nodesCSV(_ count: Int) -> [UInt8] {
        var text = "id,name,size,weight,price,seen,flag,parent_id\n"
        var bytes: [UInt8] = []
        for id in 1...count {
            let parent = id == 1 ? "" : String(id / 2)
            var line =
                "\(id),node \(id),\(id % 1000),\(Double(id) / 8),\(id).5,2024-01-\(String(format: "%02d", id % 28 + 1))T10:00:00Z,\(id % 2 == 0 ? "true" : "false"),\(parent)"
            switch id % 97 == 0 ? (id / 97) % 8 : -1 {
            case 0: line = "\(id),node \(id),-4,1,1,,true,"  // a rule: size >= 0
            case 1: line = "\(id),\"a very long name\",1,1,1,,true,"  // max_length 12
            case 2: line = "\(id),x,1,1,1,,true,\(count + 5)"  // a parent that does not exist
            case 3: line = "\(id),x,1,1"  // too few fields
            case 4: line = "\(id - 1),dup,1,1,1,,true,"  // the same id as the record before
            case 5: line = "\(id),x,many,1,1,,true,"  // not a number
            case 6: line = "\(id),\"q, \"\"n\"\"\",7,1,1,,true,\(id - 1)"  // fine, escaped
            case 7:
                // invalid UTF-8 in a field
                text += "\(id),bad"
                bytes += Array(text.utf8) + [0xFF] + Array(",1,1,1,,true,\n".utf8)
                text = ""
                continue
            default: break
            }
            text += line + "\n"
            if text.utf8.count > 1 << 16 {
                bytes += Array(text.utf8)
                text = ""
            }
        }
        return bytes + Array(text.utf8)
    }

    func run(
        _ source: String, format: DataFormat, mode: Mode, dir: TemporaryDirectory,
        configure: (inout ImportStep) -> Void = { _ in }
    ) throws -> Outcome {
        try Self.importOnce(
            source, format: format, model: Self.nodeModel(), entity: "Node", store: dir.file("\(mode).sqlite"),
            rejects: dir.file("\(mode).rejects"), mode: mode
        ) { step in
            step.relationships = [
                RelationshipMapping(relationship: "parent", field: "parent_id", match: "id", missing: .reject)
            ]
            configure(&step)
        }.outcome
    }

    /// Imports `source` into `entity` of the store at `store` in `mode`, every reject allowed
    /// and written to `rejects` (`alwaysCoerce`: the read-ahead thread coerces every batch): the
    /// outcome, and the runner (for its statistics).
    static func importOnce(
        _ source: String, format: DataFormat, model: ObjectModel, entity: String, store storePath: String,
        rejects rejectsPath: String, mode: Mode, alwaysCoerce: Bool = false,
        configure: (inout ImportStep) -> Void = { _ in }
    ) throws -> (outcome: Outcome, runner: ImportStepRunner) {
        let store = try Store.open(at: storePath, model: model)
        var step = ImportStep(source: source, format: format, entity: entity)
        step.rejectsPath = rejectsPath
        step.maxRejects = .unlimited
        step.drift.newField = .ignore  // parent_id, unless the test maps it
        configure(&step)
        let runner = ImportStepRunner(step: step, store: store)
        runner.allowsFastPath = mode.fastPath
        runner.readsAhead = mode.readsAhead
        runner.readAheadAlwaysCoerces = alwaysCoerce
        var error: String?
        var report: StepReport
        do {
            report = try runner.run()
        } catch let failure as ImportStepFailure {
            report = failure.report
            error = failure.description
        }
        if mode.fastPath && error == nil {
            #expect(runner.fastPathRecords > 0, "\(mode) used the fast path")
        }
        let rows = try store.withConnection { try $0.rows(#"SELECT * FROM "\#(entity)" ORDER BY ferry_pk"#) }
        let rejects =
            (try? String(contentsOfFile: rejectsPath, encoding: .utf8)).map(ImportRunnerTests.reasons) ?? []
        let outcome = Outcome(
            counts: [report.read, report.inserted, report.updated, report.skipped, report.rejected], rows: rows,
            rejects: rejects, error: error)
        return (outcome, runner)
    }

    func expectSame(_ outcomes: [Outcome]) {
        for (outcome, mode) in zip(outcomes, Mode.all).dropFirst() {
            #expect(outcome.counts == outcomes[0].counts, "\(mode)")
            #expect(outcome.rejects == outcomes[0].rejects, "\(mode)")
            // The messages name each mode's own rejects file.
            #expect(
                outcome.error?.replacingOccurrences(of: "\(mode).rejects", with: "\(Mode.all[0]).rejects")
                    == outcomes[0].error, "\(mode)")
            #expect(outcome.rows.count == outcomes[0].rows.count, "\(mode)")
            #expect(outcome.rows == outcomes[0].rows, "\(mode): the same rows")
        }
    }

    @Test("20,000 CSV records with bad ones among them: the same rows, counts and located rejects in every mode")
    func manyRecords() throws {
        let dir = TemporaryDirectory()
        let source = try dir.write("nodes.csv", bytes: Self.nodesCSV(20_000))
        let outcomes = try Mode.all.map { try run(source, format: .csv, mode: $0, dir: dir) }
        expectSame(outcomes)
        let first = outcomes[0]
        #expect(first.counts[0] == 20_000)
        #expect(first.counts[1] + first.counts[4] == 20_000)
        // Every eighth bad record is fine (case 6); the rest are rejected, in input order.
        #expect(first.counts[4] > 150)
        let numbers = first.rejects.compactMap { Int($0.split(separator: " ")[0]) }
        #expect(numbers == numbers.sorted())
        #expect(first.rejects.contains { $0 == "97 98:4 name: name is longer than 12 (16)" })
        // Record 195 refers to record 97, which was rejected: resolution sees this import's rows.
        #expect(first.rejects.contains { $0 == "195 196:58 parent_id: Node.parent: no Node with id = 97" })
        #expect(first.rejects.contains { $0.hasPrefix("776 777:") && $0.contains("size") })
        #expect(first.rejects.contains { $0.contains("invalid UTF-8") })
        #expect(first.rejects.contains { $0.contains("parent: no Node with id = 20005") })
        #expect(first.rejects.contains { $0.contains("expected 8 fields but found 4") })
        #expect(first.rejects.contains { $0.contains("uniqueness constraint") })
        // Parents resolve to records of the same import.
        #expect(first.rows[1][first.rows[1].count - 1] == .integer(1))
    }

    /// NDJSON records over many batches, then a line longer than the step allows (an error
    /// that ends reading) at record `failAt`.
    static func longLineNDJSON(_ count: Int, failAt: Int) -> String {
        (1...count).map { id in
            id == failAt
                ? #"{"id": \#(id), "name": "\#(String(repeating: "x", count: 3000))"}"#
                : #"{"id": \#(id), "name": "n\#(id)", "size": \#(id % 50), "parent_id": \#(id == 1 ? "null" : String(id - 1))}"#
        }.joined(separator: "\n") + "\n"
    }

    @Test("a reader error after many records fails the step with its location, in every mode, and rolls back")
    func readerErrorMidway() throws {
        let dir = TemporaryDirectory()
        let source = try dir.write("long.ndjson", Self.longLineNDJSON(9_000, failAt: 7_001))
        let outcomes = try Mode.all.map { mode in
            try run(source, format: .ndjson, mode: mode, dir: dir) { step in step.jsonMaxRecordBytes = 1_000 }
        }
        expectSame(outcomes)
        #expect(outcomes[0].error?.contains("long.ndjson:7001:") == true)
        #expect(outcomes[0].error?.contains("longer than") == true)
        #expect(outcomes[0].counts[0] == 7_000)
        #expect(outcomes[0].rows.isEmpty)
    }

    @Test("atomic: false commits the same batches in every mode when a later batch fails")
    func checkpointedBatches() throws {
        let dir = TemporaryDirectory()
        let source = try dir.write("batches.ndjson", Self.longLineNDJSON(5_000, failAt: 4_500))
        let outcomes = try Mode.all.map { mode in
            try run(source, format: .ndjson, mode: mode, dir: dir) { step in
                step.atomic = false
                step.batchSize = 700
                step.jsonMaxRecordBytes = 1_000
            }
        }
        expectSame(outcomes)
        #expect(outcomes[0].error?.contains("longer than") == true)
        // The six full batches of 700 records committed, the seventh rolled back.
        #expect(outcomes[0].rows.count == 4_200)
    }

    @Test("a reject budget stops the step at the same record in every mode")
    func rejectBudget() throws {
        let dir = TemporaryDirectory()
        let source = try dir.write("budget.csv", bytes: Self.nodesCSV(8_000))
        let outcomes = try Mode.all.map { mode in
            try run(source, format: .csv, mode: mode, dir: dir) { step in step.maxRejects = .count(20) }
        }
        expectSame(outcomes)
        #expect(outcomes[0].error?.contains("more than 20 records were rejected") == true)
        #expect(outcomes[0].counts[4] == 21)
        #expect(outcomes[0].rows.isEmpty)
    }

    @Test(
        "NDJSON and JSON arrays: the same outcome in every mode, absent and null fields included",
        arguments: [DataFormat.ndjson, .json])
    func jsonRecords(format: DataFormat) throws {
        let dir = TemporaryDirectory()
        var objects: [String] = []
        for id in 1...6_000 {
            switch id % 53 {
            case 0: objects.append(#"{"id": \#(id), "name": "n\#(id)", "size": "big"}"#)
            case 1: objects.append(#"{"id": \#(id), "name": null}"#)
            case 2:
                objects.append(#"{"id": \#(id), "name": "n", "flag": true, "parent_id": null, "extra": [1, {"a": 2}]}"#)
            case 3: objects.append("[\(id)]")
            default:
                objects.append(
                    #"{"id": \#(id), "name": "n\#(id)", "size": \#(id % 500), "weight": 1.5e2, "price": "\#(id).25", "seen": "2024-03-01T00:00:00.000Z", "parent_id": \#(max(1, id / 3))}"#
                )
            }
        }
        let source: String
        if format == .ndjson {
            source = try dir.write("nodes.ndjson", objects.joined(separator: "\n") + "\n")
        } else {
            source = try dir.write("nodes.json", "[\n" + objects.joined(separator: ",\n") + "\n]\n")
        }
        let outcomes = try Mode.all.map { mode in
            try run(source, format: format, mode: mode, dir: dir) { step in
                step.relationships = [
                    RelationshipMapping(relationship: "parent", field: "parent_id", match: "id", missing: .null)
                ]
            }
        }
        expectSame(outcomes)
        #expect(outcomes[0].counts[0] == 6_000)
        #expect(outcomes[0].counts[4] > 300)
        #expect(outcomes[0].rejects.contains { $0.contains("name is required") || $0.contains("name") })
    }

    @Test("a sampled reader (model inference) hands over its sample, then the read-ahead thread reads the rest")
    func sampledReaderKeepsReadAhead() throws {
        let dir = TemporaryDirectory()
        let source = try dir.write("nodes.csv", bytes: Self.nodesCSV(6_000))
        var outcomes: [Outcome] = []
        for mode in Mode.all {
            let options = CSVOptions()
            let sampled = try SampledReader(try CSVReader(path: source, options: options), sampleSize: 500)
            let store = try Store.open(at: dir.file("sampled-\(mode).sqlite"), model: Self.nodeModel())
            var step = ImportStep(source: source, format: .csv, entity: "Node")
            step.drift.newField = .ignore  // parent_id: no relationship mapping here
            step.rejectsPath = dir.file("sampled-\(mode).rejects")
            step.maxRejects = .unlimited
            let runner = ImportStepRunner(step: step, store: store, reader: sampled)
            runner.allowsFastPath = mode.fastPath
            runner.readsAhead = mode.readsAhead
            let report = try runner.run()
            if mode.fastPath { #expect(runner.fastPathRecords > 5_000) }
            let rows = try store.withConnection { try $0.rows(#"SELECT * FROM "Node" ORDER BY ferry_pk"#) }
            let rejects = ImportRunnerTests.reasons(try String(contentsOfFile: step.rejectsPath!, encoding: .utf8))
            outcomes.append(
                Outcome(
                    counts: [report.read, report.inserted, report.updated, report.skipped, report.rejected], rows: rows,
                    rejects: rejects, error: nil))
        }
        expectSame(outcomes)
        #expect(outcomes[0].counts[0] == 6_000)
    }
}
