import FerryCore

/// The query of an incremental read, pushed down into the source database: the table's or the
/// query's rows whose increasing column is at or past the mark, in the column's order
/// (`SELECT * FROM (…) AS ferry_incremental WHERE "updated_at" >= ? ORDER BY "updated_at"`), the
/// mark a bound parameter. Without a mark (a first run without `initial:`) every row whose column
/// is not null is read. Rows whose column is null are never read.
struct IncrementalQuery {
    /// The source's increasing column, as its result names it.
    let column: String
    /// The index of the column in the result.
    let columnIndex: Int
    /// The wrapped query.
    let sql: String

    /// The query reading `base` past a mark when `bound` (the parameter written `placeholder`),
    /// after checking that `incremental`'s column is one of `columns` (exactly, else ignoring case).
    init(
        base: String, columns: [String], incremental: DatabaseSource.Incremental, source: DatabaseSource,
        bound: Bool, placeholder: String, quote: (String) -> String
    ) throws {
        let wanted = incremental.column
        guard
            let index = columns.firstIndex(of: wanted)
                ?? columns.firstIndex(where: { $0.lowercased() == wanted.lowercased() })
        else {
            throw FerryError(
                .invalidDefinition,
                "the incremental column '\(wanted)' is not a column of \(source.label)\(Suggestions.didYouMean(wanted, in: columns))",
                at: incremental.location ?? source.selectionLocation,
                notes: ["its columns: \(columns.prefix(50).joined(separator: ", "))"])
        }
        columnIndex = index
        column = columns[index]
        var trimmed = Substring(base)
        while let last = trimmed.last, last.isWhitespace || last == ";" { trimmed = trimmed.dropLast() }
        let quoted = quote(column)
        // The base query on lines of its own: a trailing `--` comment ends with its line.
        sql =
            "SELECT * FROM (\n\(trimmed)\n) AS ferry_incremental WHERE \(quoted) "
            + (bound ? ">= \(placeholder)" : "IS NOT NULL") + " ORDER BY \(quoted)"
    }

    /// The mark of a row whose increasing column holds `value`; nil for a null or a value that is
    /// not a number or text.
    static func mark(of value: Value) -> IncrementalMark? {
        switch value {
        case .integer(let number): return IncrementalMark(kind: "integer", value: String(number))
        case .double(let number): return IncrementalMark(kind: "real", value: String(number))
        case .string(let text), .decimal(let text), .uuid(let text): return IncrementalMark(kind: "text", value: text)
        case .date(let instant): return IncrementalMark(kind: "text", value: DateCoding.format(instant))
        default: return nil
        }
    }
}

extension DatabaseCursor {
    /// No mark: the cursor does not read incrementally.
    var lastMark: IncrementalMark? { nil }
}
