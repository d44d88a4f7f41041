import FerryCore
import FerryFormats
@_spi(Testing) import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// The JSON shapes keep the JSON fast path: the same store and rejects either way.
@Suite("Import runner: JSON shapes")
struct JSONShapeImportTests {
    func model() -> ObjectModel {
        ObjectModel(
            name: "m", version: "1",
            entities: [
                EntityDescription(
                    name: "items",
                    attributes: [
                        AttributeDescription(name: "id", type: .string),
                        AttributeDescription(name: "qty", type: .int64),
                    ])
            ])
    }

    func run(
        _ step: ImportStep, dir: TemporaryDirectory, name: String, fastPath: Bool
    ) throws -> ([[DatabaseValue]], String, Int) {
        let store = try Store.open(at: dir.file(name + ".sqlite"), model: model())
        var step = step
        step.rejectsPath = dir.file(name + ".rejects")
        step.maxRejects = .unlimited
        let runner = ImportStepRunner(step: step, store: store)
        runner.allowsFastPath = fastPath
        _ = try runner.run()
        let rows = try store.withConnection { try $0.rows("SELECT id, qty FROM items ORDER BY ferry_pk") }
        return (rows, try String(contentsOfFile: step.rejectsPath!, encoding: .utf8), runner.fastPathRecords)
    }

    @Test("object and rows shapes: fast path and general path agree; clean records take the fast path")
    func fastPath() throws {
        let dir = TemporaryDirectory()
        let object = try dir.write("o.json", #"{"a": {"qty": 1}, "b": {"qty": "x"}, "c": {"qty": 3}, "d": 4}"#)
        let rows = try dir.write("r.json", #"[["id", "qty"], ["a", 1], ["b", "x"], ["c", 3], ["d"]]"#)
        var objectStep = ImportStep(source: object, format: .json, entity: "items")
        objectStep.jsonShape = .object(keyField: "id")
        var rowsStep = ImportStep(source: rows, format: .json, entity: "items")
        rowsStep.jsonShape = .rows(columns: nil)
        for (name, step) in [("object", objectStep), ("rows", rowsStep)] {
            let fast = try run(step, dir: dir, name: name + "-fast", fastPath: true)
            let general = try run(step, dir: dir, name: name + "-general", fastPath: false)
            #expect(fast.0 == general.0, "\(name)")
            #expect(fast.1 == general.1, "\(name)")
            #expect(fast.0 == [[.text("a"), .integer(1)], [.text("c"), .integer(3)]], "\(name)")
            #expect(fast.2 == 2, "\(name)")
            #expect(fast.1.split(separator: "\n").count == 2, "\(name)")
        }
    }
}
