/// ferry's own value forms (the lossless, sortable forms of DESIGN.md): exact decimal text,
/// fixed-width UTC ISO-8601 dates with milliseconds (a Core Data date between two milliseconds
/// with the further digits that keep it exact), lowercase UUID text, booleans as 0/1, binary as
/// BLOB.
package struct FerryValueCoding: ValueCoding {
    package init() {}

    package var name: String { "ferry" }

    /// Without the closing `Z`: a date between two milliseconds is written with more digits
    /// (`…06.123456Z`), which as text sorts before the millisecond it follows (`…06.123Z`, since
    /// a digit sorts before `Z`); without the `Z`, the millisecond's text is a prefix of the
    /// longer one and sorts first, and fractions compare digit by digit, as the instants do.
    package func orderedDate(_ expression: String) -> String { "rtrim(\(expression), 'Z')" }

    /// Decimals are text (exact, canonical form), dates text in fixed-width UTC ISO-8601 with
    /// milliseconds (see ``orderedDate(_:)`` for their order), UUIDs text in lowercase canonical
    /// form, booleans integers 0/1.
    package func storageClass(for type: AttributeType) -> DatabaseValue.StorageClass {
        switch type {
        case .int16, .int32, .int64, .bool: return .integer
        case .double, .float: return .real
        case .binary: return .blob
        case .decimal, .string, .date, .uuid, .uri, .json: return .text
        }
    }

    package func encode(_ value: Value) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .integer(let v): return .integer(v)
        case .bool(let v): return .integer(v ? 1 : 0)
        case .double(let v): return .real(v)
        case .decimal(let v), .string(let v), .uuid(let v), .uri(let v), .json(let v): return .text(v)
        case .date(let instant): return .text(DateCoding.format(instant))
        case .binary(let v): return .blob(v)
        }
    }

    /// Binds without an intermediate ``DatabaseValue`` (dates are formatted into a stack buffer,
    /// not a String).
    package func bind(_ value: Value, to statement: Statement, at index: Int) throws {
        switch value {
        case .null: try statement.bindNull(at: index)
        case .integer(let v): try statement.bind(v, at: index)
        case .bool(let v): try statement.bind(Int64(v ? 1 : 0), at: index)
        case .double(let v): try statement.bind(v, at: index)
        case .decimal(let v), .string(let v), .uuid(let v), .uri(let v), .json(let v): try statement.bind(v, at: index)
        case .date(let instant): try statement.bind(DateCoding.format(instant), at: index)
        case .binary(let v): try statement.bind(blob: v, at: index)
        }
    }

    package func decode(_ value: DatabaseValue, as type: AttributeType) -> Value {
        switch (value, type) {
        case (.null, _): return .null
        case (.integer(let v), .bool): return .bool(v != 0)
        case (.integer(let v), .int16), (.integer(let v), .int32), (.integer(let v), .int64): return .integer(v)
        case (.integer(let v), .double), (.integer(let v), .float): return .double(Double(v))
        case (.integer(let v), .decimal): return .decimal(String(v))
        case (.real(let v), .double), (.real(let v), .float): return .double(v)
        case (.real(let v), .decimal): return .decimal(DecimalText.canonical(String(v)) ?? String(v))
        case (.text(let v), .decimal): return .decimal(v)
        case (.text(let v), .string): return .string(v)
        case (.text(let v), .uuid): return .uuid(v)
        case (.text(let v), .uri): return .uri(v)
        case (.text(let v), .json): return .json(v)
        case (.text(let v), .date): return DateCoding.parseStored(v).map(Value.date) ?? .string(v)
        case (.blob(let v), .binary): return .binary(v)
        case (.text(let v), _): return (try? Coercion.coerce(v, to: type).get()) ?? .string(v)
        case (.integer(let v), _): return .integer(v)
        case (.real(let v), _): return .double(v)
        case (.blob(let v), _): return .binary(v)
        }
    }
}
