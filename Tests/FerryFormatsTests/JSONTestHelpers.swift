import FerryCore
import FerryFormats
import FerryTestSupport
import Foundation

/// The fixtures folder of the JSON reader tests.
let jsonFixtures = TestPaths.packageRoot.appendingPathComponent("Tests/FerryFormatsTests/Fixtures/json")

func jsonFixture(_ name: String) -> String { jsonFixtures.appendingPathComponent(name).path }

/// Reads every record of a reader.
func readAll(_ reader: any RecordReader) throws -> [SourceRecord] {
    var records: [SourceRecord] = []
    while let record = try reader.next() { records.append(record) }
    return records
}

/// One line per record: number, location, fields by name with their locations, problem, raw.
/// Two reads are the same when their snapshots are equal.
func snapshot(_ records: [SourceRecord], names: [String]) -> [String] {
    records.map { record in
        var text = "#\(record.number) \(record.line):\(record.column)"
        for (index, field) in record.fields.enumerated() {
            guard let field else { continue }
            text += " \(names[index])=\(render(field.value))@\(field.line):\(field.column)"
        }
        if let problem = record.problem { text += " problem=\(problem)" }
        text += " raw=\(record.raw)"
        return text
    }
}

/// A short, unambiguous rendering of a field value.
func render(_ value: FieldValue) -> String {
    switch value {
    case .text(let text): return "text(\(text))"
    case .number(let text): return "number(\(text))"
    case .bool(let flag): return "bool(\(flag))"
    case .null: return "null"
    case .json(let text): return "json(\(text))"
    case .typed(let typed): return "typed(\(typed))"
    }
}

/// The value of a named field of a record, or nil.
func value(_ record: SourceRecord, _ name: String, in reader: any RecordReader) -> FieldValue? {
    guard let index = reader.fieldNames.firstIndex(of: name) else { return nil }
    return record[index]?.value
}

/// The error thrown by `body`, rendered, or nil when it did not throw.
func thrownText(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch {
        return "\(error)"
    }
}
