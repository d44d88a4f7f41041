import FerryCore
import FerryFormats
import Foundation

/// A `RecordReader` over a database cursor: each row is a record whose fields are the row's
/// values with their types (`FieldValue.typed(_:)`), so that an import step reads a table or a
/// query exactly as it reads a file (field mappings, conflicts, rejects, budgets).
///
/// Locations name the source and the row: the location's file is the source's label
/// (`legacy.db (table customers)`), its line the 1-based row number and its column the result
/// column's 1-based position. A record's raw text (for rejects files) is the row as a JSON object.
package final class DatabaseRecordReader: RecordReader {
    package let source: DatabaseSource
    package var sourceName: String { source.label }
    /// The result columns with the types the database declares.
    package let columns: [DatabaseColumn]
    package private(set) var fieldNames: [String]
    private let cursor: any DatabaseCursor
    private var indexByName: [String: Int] = [:]
    private var rowNumber = 0
    /// How many names that are not columns were asked for.
    private var unknownNames = 0

    init(source: DatabaseSource, cursor: any DatabaseCursor) {
        self.source = source
        self.cursor = cursor
        self.columns = cursor.columns
        self.fieldNames = cursor.columns.map(\.name)
        for (index, name) in fieldNames.enumerated() where indexByName[name] == nil { indexByName[name] = index }
    }

    /// The mark of the last row read, for an incremental source: where the next run starts.
    package var lastMark: IncrementalMark? { cursor.lastMark }

    /// Opens the cursor of a database source: nothing is read but the first rows. An incremental
    /// source reads the rows at or past `mark` (every row when nil).
    package static func open(_ source: DatabaseSource, from mark: IncrementalMark? = nil) throws -> DatabaseRecordReader
    {
        let cursor: any DatabaseCursor
        switch source.database {
        case .sqlite(let path): cursor = try SQLiteSourceCursor(path: path, source: source, from: mark)
        case .postgresql(let url): cursor = try PostgresSourceCursor(url: url, source: source, from: mark)
        case .coreData(let path): cursor = try CoreDataSourceCursor(path: path, source: source)
        }
        return DatabaseRecordReader(source: source, cursor: cursor)
    }

    /// The type each column is declared with, by column name, where every sampled value of the
    /// column converts to it (a SQLite column declared `DATE` may hold Unix seconds, one without a
    /// type anything): the columns left out are inferred from their values.
    package func declaredTypes(fitting samples: [SourceRecord]) -> [String: AttributeType] {
        var types: [String: AttributeType] = [:]
        for (index, column) in columns.enumerated() where types[column.name] == nil {
            guard let type = column.type else { continue }
            let fits = samples.allSatisfy { record in
                guard case .typed(let value)? = record[index]?.value else { return true }
                if case .success = Coercion.convert(value, to: type) { return true }
                return false
            }
            if fits { types[column.name] = type }
        }
        return types
    }

    package func fieldIndex(of name: String) -> Int {
        if let index = indexByName[name] { return index }
        // A name that is not a column gets an index that no record fills.
        let index = fieldNames.count + unknownNames
        unknownNames += 1
        indexByName[name] = index
        return index
    }

    package func hasField(_ name: String) -> Bool {
        guard let index = indexByName[name] else { return false }
        return index < fieldNames.count
    }

    package func prepare() throws {}

    package func next() throws -> SourceRecord? {
        guard let values = try cursor.next() else { return nil }
        rowNumber += 1
        let row = rowNumber
        var fields: [Field?] = []
        fields.reserveCapacity(values.count)
        for (offset, value) in values.enumerated() {
            fields.append(Field(value: value.isNull ? .null : .typed(value), line: row, column: offset + 1))
        }
        return SourceRecord(
            number: row, line: row, column: 1, fields: fields,
            rawBytes: Array(Self.jsonObject(names: fieldNames, values: values).utf8))
    }

    package var currentLocation: InputLocation {
        InputLocation(file: source.label, line: rowNumber, column: 0, record: rowNumber == 0 ? nil : rowNumber)
    }

    /// A row as a JSON object, for rejects files: numbers and booleans as JSON, dates as ISO 8601
    /// text, binary data as base64.
    static func jsonObject(names: [String], values: [Value]) -> String {
        var text = "{"
        for (offset, value) in values.enumerated() {
            if offset > 0 { text += "," }
            text += JSONText.quote(offset < names.count ? names[offset] : "column_\(offset + 1)") + ":"
            switch value {
            case .null: text += "null"
            case .integer(let v): text += String(v)
            case .double(let v): text += v.isFinite ? String(v) : JSONText.quote(String(v))
            case .bool(let v): text += v ? "true" : "false"
            case .decimal(let v): text += v
            case .json(let v): text += v
            case .string(let v), .uuid(let v), .uri(let v): text += JSONText.quote(v)
            case .date(let instant): text += JSONText.quote(DateCoding.format(instant))
            case .binary(let bytes): text += JSONText.quote(Data(bytes).base64EncodedString())
            }
        }
        return text + "}"
    }
}
