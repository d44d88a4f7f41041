import FerryCore
import FerryFormats
import FerryTestSupport
import Foundation
import Testing

@_spi(Testing) @testable import FerryPipeline

extension Result {
    var isFailure: Bool { if case .failure = self { return true } else { return false } }
}

@Suite("Model inference: lossless types and attribute names")
struct ModelInferenceTests {
    func texts(_ values: [String?]) -> [FieldValue] { values.map { $0.map(FieldValue.text) ?? .null } }

    @Test("CSV text is a number only when its spelling survives the round trip")
    func losslessNumbers() {
        #expect(ModelInference.inferType(texts(["1", "-20", "300"])) == .int64)
        #expect(ModelInference.inferType(texts(["02134", "00501"])) == .string)
        #expect(ModelInference.inferType(texts(["12", "02134"])) == .string)
        #expect(ModelInference.inferType(texts(["+7095123", "+1"])) == .string)
        #expect(ModelInference.inferType(texts(["-0"])) == .double)
        #expect(ModelInference.inferType(texts(["4.50", "12.00", "7.25"])) == .double)
        #expect(ModelInference.inferType(texts(["0.5", "1e3"])) == .double)
        #expect(ModelInference.inferType(texts([".5"])) == .string)
        #expect(ModelInference.inferType(texts(["5."])) == .string)
        #expect(ModelInference.inferType(texts(["0x1F"])) == .string)
        #expect(ModelInference.inferType(texts(["1.2.3"])) == .string)
        #expect(ModelInference.inferType(texts(["inf", "nan"])) == .string)
        #expect(ModelInference.inferType(texts(["1e400"])) == .decimal)
        // More digits than a double holds: kept exactly as a decimal.
        #expect(ModelInference.inferType(texts(["12345678901234567890.123456789"])) == .decimal)
        #expect(ModelInference.inferType(texts(["99999999999999999999"])) == .decimal)
    }

    @Test("booleans in the spellings tools write; dates and UUIDs only in the spelling ferry writes back")
    func losslessWords() {
        #expect(ModelInference.inferType(texts(["true", "false", nil])) == .bool)
        #expect(ModelInference.inferType(texts(["TRUE", "false", "True", "FALSE", "False"])) == .bool)
        #expect(ModelInference.inferType(texts(["tRuE", "false"])) == .string)
        #expect(ModelInference.inferType(texts(["yes", "no"])) == .string)
        #expect(
            ModelInference.inferType(texts(["2024-03-01", "2024-03-01T10:00:00Z", "2024-03-01T10:00:00.250Z"])) == .date
        )
        #expect(ModelInference.inferType(texts(["2024-03-01T10:00:00+02:00"])) == .string)
        #expect(ModelInference.inferType(texts(["2024-03-01T10:00:00-05:00"])) == .string)
        #expect(ModelInference.inferType(texts(["f47ac10b-58cc-4372-a567-0e02b2c3d479"])) == .uuid)
        #expect(ModelInference.inferType(texts(["F47AC10B-58CC-4372-A567-0E02B2C3D479"])) == .string)
    }

    @Test("a JSON string stays a string; an empty string is a value, not a null")
    func jsonStrings() {
        #expect(ModelInference.inferType([.text("01001"), .text("02134")], textIsUntyped: false) == .string)
        #expect(ModelInference.inferType([.text("14.90")], textIsUntyped: false) == .string)
        #expect(ModelInference.inferType([.text("12")], textIsUntyped: false) == .string)
        #expect(ModelInference.inferType([.text("true")], textIsUntyped: false) == .string)
        #expect(ModelInference.inferType([.text("2024-03-01T10:00:00Z")], textIsUntyped: false) == .date)
        #expect(ModelInference.inferType([.number("12"), .text("")], textIsUntyped: false) == .string)
        #expect(ModelInference.inferType([.number("12"), .null], textIsUntyped: false) == .int64)
        #expect(ModelInference.inferType([.text("")]) == .string)
        #expect(ModelInference.inferType([.number("14.90")], textIsUntyped: false) == .double)
        #expect(ModelInference.inferType([.number("12345678901234567890")], textIsUntyped: false) == .decimal)
        #expect(ModelInference.inferType([.number("1"), .bool(true)], textIsUntyped: false) == .string)
    }

    @Test("decimal commas: 1.234,56 reads as 1234.56; malformed groups are refused, not misread")
    func decimalComma() {
        #expect(DecimalCommaText.plain("1.234,56") == "1234.56")
        #expect(DecimalCommaText.plain("-12 500") == "-12500")
        #expect(DecimalCommaText.plain("1\u{202F}234\u{202F}567,5") == "1234567.5")
        #expect(DecimalCommaText.plain("0,5") == "0.5")
        #expect(DecimalCommaText.plain("+7") == "7")
        #expect(DecimalCommaText.plain("1.234") == "1234")
        for bad in [
            "1.23,4", "1.2345", "12.34.567,1", "1.234 567", ",5", "5,", "1,2,3", "", "-", "1e5", "abc", "1.234,5.6",
        ] {
            #expect(DecimalCommaText.plain(bad) == nil, "\(bad)")
        }
        var options = CoercionOptions()
        options.decimalComma = true
        #expect(Coercion.coerce("1.234,50", to: .decimal, options: options) == .success(.decimal("1234.5")))
        #expect(Coercion.coerce("2,5", to: .double, options: options) == .success(.double(2.5)))
        #expect(Coercion.coerce("1.000", to: .int64, options: options) == .success(.integer(1000)))
        #expect(Coercion.coerce("1,5", to: .int64, options: options).isFailure)
        #expect(Coercion.coerce("2.5", to: .double, options: options).isFailure)
        #expect(Coercion.coerce("a,b", to: .string, options: options) == .success(.string("a,b")))
        #expect(ModelInference.inferType(texts(["1.234,56", "0,5", "12"]), decimalComma: true) == .double)
        #expect(ModelInference.inferType(texts(["1.234", "12"]), decimalComma: true) == .int64)
        #expect(ModelInference.inferType(texts(["1.234,56", "n/a"]), decimalComma: true) == .string)
    }

    @Test("Excel serial dates on request: days since 1899-12-30, the fraction the time of day")
    func excelSerialDates() throws {
        let excel = try DateFormat.parse("excel").get()
        #expect(excel.description == "excel")
        #expect(Coercion.parseDate("45292", format: excel) == DateCoding.parseISO8601("2024-01-01"))
        #expect(Coercion.parseDate("45292.5", format: excel) == DateCoding.parseISO8601("2024-01-01T12:00:00Z"))
        #expect(Coercion.parseDate("1", format: excel) == DateCoding.parseISO8601("1899-12-31"))
        #expect(Coercion.parseDate("0.25", format: excel) == DateCoding.parseISO8601("1899-12-30T06:00:00Z"))
        for bad in ["", "abc", "inf", "nan", "1e300", "2024-01-01"] {
            #expect(Coercion.parseDate(bad, format: excel) == nil, "\(bad)")
        }
        var options = CoercionOptions()
        options.dateFormat = .firstOf([.iso8601, excel])
        #expect(
            Coercion.coerce("45292", to: .date, options: options)
                == Coercion.coerce("2024-01-01", to: .date, options: options))
    }

    @Test("headers become attribute names by one rule; the header stays the field name")
    func attributeNames() {
        #expect(
            AttributeNaming.attributeNames(for: ["sku", "firstName", "in_stock"]) == ["sku", "firstName", "in_stock"])
        #expect(
            AttributeNaming.attributeNames(for: ["First Name", "Price ($)", "a/b", "  Zip Code  "]) == [
                "first_name", "price", "a_b", "zip_code",
            ])
        #expect(AttributeNaming.attributeNames(for: ["Café", "Größe", "naïve-ID"]) == ["cafe", "grosse", "naive_id"])
        #expect(
            AttributeNaming.attributeNames(for: ["2024 total", "", "$", "ferry_pk", "sqlite_x"]) == [
                "_2024_total", "column_2", "column_3", "_ferry_pk", "_sqlite_x",
            ])
        #expect(AttributeNaming.attributeNames(for: ["id", "ID", "Id", "id_2"]) == ["id", "ID_2", "Id_3", "id_2_2"])
        #expect(AttributeNaming.attributeNames(for: ["日本", "名前"]) == ["column_1", "column_2"])
        #expect(AttributeNaming.entityName(fromPath: "/data/orders-2024.csv") == "orders_2024")
        #expect(AttributeNaming.entityName(fromPath: "/data/Kundenübersicht.csv") == "kundenubersicht")
        #expect(AttributeNaming.entityName(fromPath: "/data/2024.csv") == "_2024")
        #expect(AttributeNaming.entityName(fromPath: "/data/数据.csv") == "records")
        for names in [AttributeNaming.attributeNames(for: ["First Name", "", "", "x", "X", "1", "ü"])] {
            let entity = EntityDescription(
                name: "T", attributes: names.map { AttributeDescription(name: $0, type: .string) })
            #expect(ModelChecker.check(ObjectModel(name: "T", version: "1", entities: [entity])).isEmpty, "\(names)")
        }
    }

    @Test("infer maps overrides and constraints given by header to the derived attributes")
    func inferResult() {
        let record = SourceRecord(
            number: 1, line: 2,
            fields: [Field(value: .text("02134"), line: 2, column: 1), Field(value: .text("7"), line: 2, column: 7)],
            raw: "02134,7")
        let result = ModelInference.infer(
            entityNamed: "t", fieldNames: ["Zip Code", "Count"], samples: [record], overrides: ["Count": .int32],
            unique: [["Zip Code"]])
        #expect(result.entity.attributes.map(\.name) == ["zip_code", "Count"])
        #expect(result.entity.attributes.map(\.type) == [.string, .int32])
        #expect(result.entity.uniquenessConstraints == [["zip_code"]])
        #expect(result.summary == "zip_code string (from \"Zip Code\"), Count int32")
    }

    @Test("an import through a sampling reader takes the CSV fast path for every record after the sample")
    func sampledImportUsesFastPath() throws {
        let dir = TemporaryDirectory()
        var csv = "id,name,price\n"
        for id in 1...500 { csv += "\(id),name \(id),\(id).5\n" }
        let source = try dir.write("items.csv", csv)
        let step = ImportStep(source: source, format: .csv, entity: "items")
        let sampled = try SampledReader(ReaderFactory.open(step: step), sampleSize: 100)
        let inferred = ModelInference.infer(
            entityNamed: "items", fieldNames: sampled.fieldNames, samples: sampled.samples)
        let store = try Store.open(
            at: dir.file("s.sqlite"), model: ObjectModel(name: "items", version: "1", entities: [inferred.entity]))
        let runner = ImportStepRunner(step: step, store: store, reader: sampled)
        let report = try runner.run()
        #expect(report.read == 500)
        #expect(report.inserted == 500)
        #expect(runner.fastPathRecords == 400)
        #expect(
            try store.withConnection { try $0.rows("SELECT count(*), sum(id) FROM items") } == [
                [.integer(500), .integer(125_250)]
            ])
    }

    @Test("a sampled JSON import takes the JSON fast path after the sample")
    func sampledJSONImportUsesFastPath() throws {
        let dir = TemporaryDirectory()
        var ndjson = ""
        for id in 1...300 { ndjson += "{\"id\": \(id), \"zip\": \"0\(id)\"}\n" }
        let source = try dir.write("rows.ndjson", ndjson)
        let step = ImportStep(source: source, format: .ndjson, entity: "rows")
        let sampled = try SampledReader(ReaderFactory.open(step: step), sampleSize: 50)
        let inferred = ModelInference.infer(
            entityNamed: "rows", fieldNames: sampled.fieldNames, samples: sampled.samples, textIsUntyped: false)
        #expect(inferred.entity.attributes.map(\.type) == [.int64, .string])
        let store = try Store.open(
            at: dir.file("s.sqlite"), model: ObjectModel(name: "rows", version: "1", entities: [inferred.entity]))
        let runner = ImportStepRunner(step: step, store: store, reader: sampled)
        let report = try runner.run()
        #expect(report.inserted == 300)
        #expect(runner.fastPathRecords == 250)
        #expect(try store.withConnection { try $0.rows("SELECT zip FROM rows WHERE id = 7") } == [[.text("07")]])
    }
}
