import FerryCore
import FerryFormats
@_spi(Testing) import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// An import step over several files: every file's records take its reader's fast path (after
/// a sample, too), give the same store and rejects as the general path, and checkpointed
/// batches carry on across files.
@Suite("Import runner: many files")
struct MultiFileImportTests {
    func model() -> ObjectModel {
        ObjectModel(
            name: "m", version: "1",
            entities: [
                EntityDescription(
                    name: "items",
                    attributes: [
                        AttributeDescription(name: "id", type: .int64),
                        AttributeDescription(name: "name", type: .string),
                        AttributeDescription(name: "price", type: .double),
                    ])
            ])
    }

    /// Three CSV files of 40 records (one bad price each) and their glob.
    func files(_ dir: TemporaryDirectory) throws -> String {
        for file in 1...3 {
            var csv = "id,name,price\n"
            for row in 1...40 {
                let id = file * 100 + row
                csv += "\(id),item \(id),\(row == 7 ? "n/a" : "\(row).5")\n"
            }
            _ = try dir.write("part-\(file).csv", csv)
        }
        return dir.file("part-*.csv")
    }

    func run(
        _ step: ImportStep, dir: TemporaryDirectory, name: String, fastPath: Bool, sample: Int? = nil
    ) throws -> (StepReport, [[DatabaseValue]], String, Int) {
        let store = try Store.open(at: dir.file(name + ".sqlite"), model: model())
        var step = step
        step.rejectsPath = dir.file(name + ".rejects")
        step.maxRejects = .unlimited
        let reader = try sample.map { try SampledReader(ReaderFactory.open(step: step), sampleSize: $0) }
        let runner = ImportStepRunner(step: step, store: store, reader: reader)
        runner.allowsFastPath = fastPath
        let report = try runner.run()
        let rows = try store.withConnection { try $0.rows("SELECT id, name, price FROM items ORDER BY ferry_pk") }
        return (report, rows, try String(contentsOfFile: step.rejectsPath!, encoding: .utf8), runner.fastPathRecords)
    }

    @Test(
        "CSV files: the fast path takes every clean record (after a sample that spans files), as the general path would"
    )
    func csvFastPath() throws {
        let dir = TemporaryDirectory()
        let step = ImportStep(source: try files(dir), format: .csv, entity: "items")
        let fast = try run(step, dir: dir, name: "fast", fastPath: true)
        let general = try run(step, dir: dir, name: "general", fastPath: false)
        #expect(fast.0.read == 120)
        #expect(fast.0.rejected == 3)
        #expect(fast.3 == 117)
        #expect(general.3 == 0)
        #expect(fast.1 == general.1)
        #expect(fast.2 == general.2)
        #expect(fast.0.files == general.0.files)
        #expect(fast.0.files?.map(\.file) == (1...3).map { dir.file("part-\($0).csv") })
        #expect(fast.0.files?.map(\.rejected) == [1, 1, 1])
        #expect(fast.2.split(separator: "\n").map { $0.hasPrefix("{\"file\":") } == [true, true, true])

        // A sample of 50 holds all of part-1 and 10 of part-2: those go the general path, the rest fast.
        let sampled = try run(step, dir: dir, name: "sampled", fastPath: true, sample: 50)
        #expect(sampled.1 == general.1)
        #expect(sampled.2 == general.2)
        #expect(sampled.0.files == general.0.files)
        #expect(sampled.3 == 120 - 50 - 1)
    }

    @Test("checkpointed batches (atomic: false) go on across file boundaries with the same counts")
    func checkpointedAcrossFiles() throws {
        let dir = TemporaryDirectory()
        var step = ImportStep(source: try files(dir), format: .csv, entity: "items")
        step.atomic = false
        step.batchSize = 7
        let checkpointed = try run(step, dir: dir, name: "batches", fastPath: true)
        step.atomic = true
        let whole = try run(step, dir: dir, name: "whole", fastPath: true)
        #expect(checkpointed.0.read == 120)
        #expect(checkpointed.1 == whole.1)
        #expect(checkpointed.0.files == whole.0.files)
    }

    @Test("NDJSON files with keys in other orders: one set of field indexes, the JSON fast path on every file")
    func ndjsonFastPath() throws {
        let dir = TemporaryDirectory()
        _ = try dir.write(
            "a.ndjson", "{\"price\": 1.5, \"id\": 1, \"name\": \"a\"}\n{\"id\": 2, \"name\": \"b\", \"price\": 2.5}\n")
        _ = try dir.write(
            "b.ndjson",
            "{\"extra\": true, \"name\": \"c\", \"id\": 3}\n{\"id\": 4, \"price\": \"x\"}\n{\"name\": \"e\", \"price\": 5, \"id\": 5}\n"
        )
        var step = ImportStep(source: dir.file("a.ndjson"), format: .ndjson, entity: "items")
        step.sources = [dir.file("a.ndjson"), dir.file("b.ndjson")]
        step.drift.newField = .ignore  // b.ndjson's extra key
        let fast = try run(step, dir: dir, name: "fast", fastPath: true)
        let general = try run(step, dir: dir, name: "general", fastPath: false)
        #expect(fast.1 == general.1)
        #expect(fast.2 == general.2)
        #expect(fast.3 == 4)
        #expect(
            fast.1 == [
                [.integer(1), .text("a"), .real(1.5)], [.integer(2), .text("b"), .real(2.5)],
                [.integer(3), .text("c"), .null],
                [.integer(5), .text("e"), .real(5)],
            ])
        #expect(fast.0.files?.map(\.read) == [2, 3])
        #expect(fast.0.files?.map(\.rejected) == [0, 1])
    }

    @Test("natural order: digits compare as numbers, leading zeros break ties, then bytes")
    func naturalOrder() {
        let names = [
            "day10.csv", "day2.csv", "day1.csv", "day02.csv", "Day3.csv", "day1.csv.gz", "day", "a/b9", "a/b10",
        ]
        #expect(
            names.sorted(by: SourceFiles.naturallyPrecedes) == [
                "Day3.csv", "a/b9", "a/b10", "day", "day1.csv", "day1.csv.gz", "day2.csv", "day02.csv", "day10.csv",
            ])
    }
}
