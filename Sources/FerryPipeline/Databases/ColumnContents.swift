import FerryCore
import Foundation

/// What the columns of a legacy SQLite table actually hold, next to what they declare, and the
/// attribute type and conversion a whole-database import chooses for each (the habits pgloader's
/// users meet most): a `DATETIME` column holding epoch seconds or milliseconds, or ISO 8601 text;
/// a `BOOLEAN` column holding 0/1 or words (`t`/`f`, `yes`/`no`, `Y`/`N`); numbers stored as
/// text, text in a numeric column; empty strings that mean NULL.
///
/// The values are counted by one aggregate query over the whole table (`typeof()` and text
/// patterns, SQLite's own date parser): nothing is loaded into memory, and the choice holds for
/// every row, not only a sample's.
package enum ColumnContents {
    /// The type and conversion chosen for a column, and why.
    package struct Choice: Sendable, Hashable {
        /// The attribute type.
        package var type: AttributeType
        /// How integers or text become a date (nil: the step's, ISO 8601).
        package var dateFormat: DateFormat?
        /// Words (and 0/1) read as booleans.
        package var booleanWords = false
        /// Empty (or blank) text is read as null.
        package var emptyIsNull = false
        /// What the column declares and holds, as the note says it: `DATETIME holding epoch
        /// milliseconds`.
        package var holding: String
        /// How many values do not fit the conversion (each a rejected row).
        package var misfits = 0
        /// Whether the note is worth printing (not a column holding what it declares).
        package var isHabit = true
        /// The type was given by the user (`--type TABLE.COLUMN=TYPE`).
        package var isOverride = false

        /// The coercion overrides a field mapping carries for the conversion.
        package func apply(to mapping: inout FieldMapping) {
            if let dateFormat { mapping.dateFormat = dateFormat }
            if booleanWords {
                mapping.trueWords = ColumnContents.trueWords
                mapping.falseWords = ColumnContents.falseWords
            }
            if emptyIsNull {
                mapping.trim = true
                mapping.nullTokens = [""]
            }
        }

        /// The note printed and kept in the model: `orders.placed_at: DATETIME holding epoch
        /// milliseconds → date`.
        package func note(table: String, column: String) -> String {
            var text = "\(table).\(column): \(holding) → \(type.rawValue)"
            if isOverride { text += " (--type)" }
            if emptyIsNull { text += "; empty text read as null" }
            if misfits > 0 {
                text +=
                    "; \(misfits) value\(misfits == 1 ? " does" : "s do") not fit and \(misfits == 1 ? "is" : "are") rejected (--type \(table).\(column)=string keeps \(misfits == 1 ? "it" : "them"))"
            }
            return text
        }
    }

    /// The words (and digits) read as true.
    static let trueWords: Set<String> = ["1", "t", "true", "y", "yes"]
    /// The words (and digits) read as false.
    static let falseWords: Set<String> = ["0", "f", "false", "n", "no"]
    /// At most this share of a column's values may not fit a declared type's conversion (each
    /// rejected); with more the column is kept as text.
    static let misfitPercent = 1
    /// Epoch integers at or above this magnitude are milliseconds (1e11 seconds is the year 5138,
    /// 1e11 milliseconds 1973).
    static let millisecondsFrom: Int64 = 100_000_000_000

    /// The counts of one column's values, from ``countsSQL(column:)``.
    struct Counts {
        var integers = 0
        var reals = 0
        var texts = 0
        var empties = 0
        var blobs = 0
        var integerTexts = 0
        var numberTexts = 0
        var dateTexts = 0
        var wordTexts = 0
        var bits = 0
        /// Text of digits, leading zeros allowed (`007`): integers when the user says so.
        var digitTexts = 0
        var largest: Int64 = 0

        var values: Int { integers + reals + texts + blobs }
        /// Integers, and text spelling one: epoch times.
        var epochs: Int { integers + integerTexts }
    }

    /// The aggregates counting a column's values, ``Counts``'s fields in order.
    static func countsSQL(column: String) -> [String] {
        let c = SQL.quote(column)
        let t = "trim(\(c))"
        let unsigned = "ltrim(\(t), '-')"
        let isText = "typeof(\(c)) = 'text'"
        // Digits, no leading zero (a code such as 00123 stays text), at most 18 of them.
        let integer =
            "(\(unsigned) GLOB '[0-9]*' AND \(unsigned) NOT GLOB '*[^0-9]*' AND (\(unsigned) = '0' OR \(unsigned) NOT GLOB '0*') AND length(\(unsigned)) <= 18)"
        let number =
            "(\(unsigned) GLOB '[0-9]*' AND \(unsigned) NOT GLOB '*[^0-9.]*' AND \(unsigned) NOT GLOB '*.' AND length(\(t)) - length(replace(\(t), '.', '')) <= 1 AND (\(unsigned) NOT GLOB '0[0-9]*'))"
        let date = "(\(t) GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]*' AND julianday(\(t)) IS NOT NULL)"
        let words = (trueWords.union(falseWords)).sorted().map { "'\($0)'" }.joined(separator: ", ")
        // SQLite evaluates both sides of an AND in a value: a CASE tests the text patterns on
        // text values only (a column of integers costs a typeof() per value, not every pattern).
        func texts(_ condition: String) -> String { "sum(CASE WHEN \(isText) THEN \(condition) END)" }
        return [
            "sum(typeof(\(c)) = 'integer')",
            "sum(typeof(\(c)) = 'real')",
            texts("\(t) <> ''"),
            texts("\(t) = ''"),
            "sum(typeof(\(c)) = 'blob')",
            texts(integer),
            texts(number),
            texts(date),
            texts("lower(\(t)) IN (\(words))"),
            "sum(CASE WHEN typeof(\(c)) = 'integer' THEN \(c) IN (0, 1) END)",
            texts("\(unsigned) GLOB '[0-9]*' AND \(unsigned) NOT GLOB '*[^0-9]*' AND length(\(unsigned)) <= 18"),
            "max(CASE WHEN typeof(\(c)) = 'integer' THEN abs(\(c)) WHEN \(isText) AND \(integer) THEN abs(CAST(\(t) AS INTEGER)) END)",
        ]
    }

    /// The choices for the columns of `table` of the SQLite database at `path` whose values are
    /// not what they declare, by column name; `overrides` (by column name) are the user's types,
    /// their conversions chosen from the values.
    package static func sqlite(
        path: String, table: SourceSchema.Table, overrides: [String: AttributeType]
    ) throws -> [String: Choice] {
        guard !table.columns.isEmpty else { return [:] }
        let connection = try Connection(path: path, readOnly: true, create: false)
        try connection.execute("PRAGMA query_only = ON")
        connection.setBusyTimeout(milliseconds: 30_000)
        // The patterns cost microseconds per text value: a sample of the first rows says which
        // columns may be read differently (or were given a type), and only those are scanned whole.
        let sampled = try choices(
            for: table.columns, from: "(SELECT * FROM \(SQL.quote(table.name)) LIMIT \(sampleRows))",
            overrides: overrides, on: connection)
        let scanned = table.columns.filter { sampled[$0.name] != nil }
        guard !scanned.isEmpty else { return [:] }
        return try choices(for: scanned, from: SQL.quote(table.name), overrides: overrides, on: connection)
    }

    /// The rows of a table whose values decide which columns are counted over the whole table.
    static let sampleRows = 10_000

    /// The choices for `columns` counted over `source` (a table or a subquery), by column name.
    static func choices(
        for columns: [SourceSchema.Column], from source: String, overrides: [String: AttributeType],
        on connection: Connection
    ) throws -> [String: Choice] {
        let width = countsSQL(column: "x").count
        let sql = "SELECT " + columns.flatMap { countsSQL(column: $0.name) }.joined(separator: ", ") + " FROM \(source)"
        guard let row = try connection.rows(sql).first else { return [:] }
        var choices: [String: Choice] = [:]
        for (index, column) in columns.enumerated() {
            let values = row[(index * width)..<((index + 1) * width)].map { Int($0.int64 ?? 0) }
            var counts = Counts()
            (
                counts.integers, counts.reals, counts.texts, counts.empties, counts.blobs, counts.integerTexts,
                counts.numberTexts, counts.dateTexts, counts.wordTexts, counts.bits, counts.digitTexts
            ) = (
                values[0], values[1], values[2], values[3], values[4], values[5], values[6], values[7], values[8],
                values[9], values[10]
            )
            counts.largest = row[index * width + width - 1].int64 ?? 0
            let declared = column.declared ?? ""
            if let type = overrides[column.name] {
                choices[column.name] = chosen(type, declared: declared, counts: counts)
            } else if let choice = choice(declared: declared, type: column.declaredType, counts: counts) {
                choices[column.name] = choice
            }
        }
        return choices
    }

    /// How a column shown as `declared` (its declaration, or "untyped") is named in a note.
    static func shown(_ declared: String) -> String { declared.isEmpty ? "untyped column" : declared }

    /// The choice for a column declared `type` holding `counts`, nil when it holds what it
    /// declares (or nothing ferry reads differently).
    static func choice(declared: String, type: AttributeType?, counts: Counts) -> Choice? {
        let values = counts.values
        let name = shown(declared)
        guard let type, values + counts.empties > 0 else { return nil }
        /// A declared type whose conversion fits all but a few values; else the column stays text.
        func fitting(_ choice: Choice, fits: Int) -> Choice {
            var choice = choice
            choice.misfits = values - fits
            choice.emptyIsNull = counts.empties > 0
            guard choice.misfits * 100 > values * misfitPercent else { return choice }
            return Choice(
                type: .string,
                holding:
                    "\(name) holding values of several kinds (\(choice.misfits) of \(values) are not \(type == .date ? "dates" : type.rawValue))"
            )
        }
        switch type {
        case .date:
            if counts.epochs > counts.dateTexts {
                let millis = counts.largest >= millisecondsFrom
                return fitting(
                    Choice(
                        type: .date, dateFormat: millis ? .unixMilliseconds : .unixSeconds,
                        holding: "\(name) holding epoch \(millis ? "milliseconds" : "seconds")"),
                    fits: counts.epochs)
            }
            var choice = fitting(Choice(type: .date, holding: "\(name) holding ISO 8601 text"), fits: counts.dateTexts)
            choice.isHabit = choice.misfits > 0 || choice.emptyIsNull || choice.type != .date
            return choice
        case .bool:
            let words = counts.wordTexts > 0
            var choice = fitting(
                Choice(
                    type: .bool, booleanWords: true,
                    holding: words ? "\(name) holding words (t/f, yes/no, …)" : "\(name) holding 0 and 1"),
                fits: counts.bits + counts.wordTexts)
            choice.isHabit = words || choice.misfits > 0 || choice.emptyIsNull || choice.type != .bool
            return choice
        case .int16, .int32, .int64, .decimal, .double, .float:
            guard counts.texts + counts.empties > 0 else { return nil }
            let integral = type.integerRange != nil
            let fits = counts.integers + counts.reals + (integral ? counts.integerTexts : counts.numberTexts)
            return fitting(
                Choice(
                    type: type,
                    holding: counts.texts > 0 ? "\(name) holding numbers as text" : "\(name) holding empty text"),
                fits: fits)
        case .string:
            // Text narrows only when every value fits: text keeps everything.
            guard counts.texts > 0, counts.texts == values else { return nil }
            let narrowed: (AttributeType, String)?
            if counts.integerTexts == values {
                narrowed = (.int64, "integers")
            } else if counts.numberTexts == values {
                narrowed = (.decimal, "numbers")
            } else if counts.dateTexts == values {
                narrowed = (.date, "ISO 8601 dates")
            } else if counts.wordTexts == values {
                narrowed = (.bool, "true/false words")
            } else {
                narrowed = nil
            }
            guard let (narrowedType, what) = narrowed else { return nil }
            return Choice(
                type: narrowedType, booleanWords: narrowedType == .bool, emptyIsNull: counts.empties > 0,
                holding: "\(name) holding \(what)")
        default:
            return nil
        }
    }

    /// The conversion to the user's `type` for a column holding `counts`: epoch or ISO text for a
    /// date, words for a boolean, empty text as null but for text. Every value that does not fit
    /// is rejected.
    static func chosen(_ type: AttributeType, declared: String, counts: Counts) -> Choice {
        let name = shown(declared)
        var choice = Choice(type: type, holding: name, isOverride: true)
        choice.emptyIsNull = type != .string && counts.empties > 0
        switch type {
        case .string:
            return choice
        case .date:
            if counts.epochs > counts.dateTexts {
                let millis = counts.largest >= millisecondsFrom
                choice.dateFormat = millis ? .unixMilliseconds : .unixSeconds
                choice.holding = "\(name) holding epoch \(millis ? "milliseconds" : "seconds")"
                choice.misfits = counts.values - counts.epochs
            } else {
                choice.misfits = counts.values - counts.dateTexts
            }
        case .bool:
            choice.booleanWords = true
            choice.misfits = counts.values - counts.bits - counts.wordTexts
        case .int16, .int32, .int64:
            choice.misfits = counts.values - counts.integers - counts.digitTexts
        case .decimal, .double, .float:
            choice.misfits = counts.values - counts.integers - counts.reals - counts.numberTexts
        default:
            break
        }
        return choice
    }
}
