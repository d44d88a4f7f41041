import FerryCore
import FerryFormats
@_spi(Testing) import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// One rule for quoted CSV fields, at every level: they are taken literally (never trimmed,
/// never a null word), on the fast path and on the general path alike.
@Suite("Import: quoted CSV fields are taken literally")
struct QuotedFieldRuleTests {
    static let model = ObjectModel(
        name: "Q", version: "1",
        entities: [
            EntityDescription(
                name: "Row",
                attributes: [
                    AttributeDescription(name: "id", type: .int64),
                    AttributeDescription(name: "a", type: .string),
                    AttributeDescription(name: "b", type: .string),
                    AttributeDescription(name: "n", type: .int64),
                ])
        ])

    @Test("step and field null words and trim skip quoted fields", arguments: [true, false])
    func literalQuotedFields(fastPath: Bool) throws {
        let dir = TemporaryDirectory()
        let source = try dir.write(
            "rows.csv",
            """
            id,a,b,n
            1,NA,NA, 7 
            2,"NA","NA",8
            3, x ," x ",
            4,"","",9
            5,-,"-",-

            """)
        var step = ImportStep(source: source, format: .csv, entity: "Row")
        step.coercion.nullTokens = ["", "NA"]
        step.coercion.trim = true
        step.fields = [FieldMapping(attribute: "b", source: .field("b"), nullTokens: ["NA", "-", ""])]
        step.fields.append(FieldMapping(attribute: "n", source: .field("n"), nullTokens: ["-"]))
        let store = try Store.open(at: dir.file("s.sqlite"), model: Self.model)
        let runner = ImportStepRunner(step: step, store: store)
        runner.allowsFastPath = fastPath
        let report = try runner.run()
        #expect(report.inserted == 5, "\(report)")
        let rows = try store.withConnection { try $0.rows("SELECT a, b, n FROM Row ORDER BY id") }
        #expect(
            rows == [
                [.null, .null, .integer(7)],
                [.text("NA"), .text("NA"), .integer(8)],
                [.text("x"), .text(" x "), .null],
                [.text(""), .text(""), .integer(9)],
                [.text("-"), .text("-"), .null],
            ])
    }
}
