import FerryCore
import FerryPostgres
import Foundation

/// What the columns of a legacy SQLite or PostgreSQL table actually hold, next to what they
/// declare, and the attribute type and conversion a whole-database import chooses for each (the
/// habits pgloader's users meet most): a `DATETIME` column holding epoch seconds or
/// milliseconds, ISO 8601 text or day/month text dates (`15/03/2021`, `03/15/2021 14:05`); a
/// `BOOLEAN` column holding 0/1 or words (`t`/`f`, `yes`/`no`, `Y`/`N`); numbers stored as
/// text, text in a numeric column; empty strings that mean NULL.
///
/// The values are counted by one aggregate query per table (SQLite: `typeof()` and GLOB
/// patterns, its own date parser; PostgreSQL: regular expressions over a column's text), first
/// over a sample of the rows, then over the whole table for the columns the sample picks out:
/// nothing is loaded into memory, and the choice holds for every row. The decision from the
/// counts (``choice(declared:type:counts:dateFormats:)``) is the same for both databases.
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
        /// What the user can do about the choice (a day/month order the values leave open).
        package var advice: String? = nil

        /// The coercion overrides a field mapping carries for the conversion.
        package func apply(to mapping: inout FieldMapping) {
            if let dateFormat { mapping.dateFormat = dateFormat }
            // The counts trim each value (a `char(n)` column pads with blanks): so does the
            // conversion of the values they chose a type for. Text stays as it is stored.
            if type != .string { mapping.trim = true }
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
            if let advice { text += "; \(advice)" }
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

    /// The counts of one column's values, from ``countsSQL(column:)`` or
    /// ``postgresCountsSQL(column:type:)`` (one aggregate per field, in ``Counts/init(_:)``'s order).
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
        /// Text dates with the day and month first (`03/15/2021`, `15.03.2021 14:05`), in either order.
        var dayMonthTexts = 0
        /// Of those, the ones whose first field is above 12: a day, so the order is day/month.
        var firstOver12 = 0
        /// Of those, the ones whose second field is above 12: the order is month/day.
        var secondOver12 = 0
        /// Text dates with the year first and slashes (`2021/03/15`).
        var yearFirstTexts = 0
        var largest: Int64 = 0

        var values: Int { integers + reals + texts + blobs }
        /// Integers, and text spelling one: epoch times.
        var epochs: Int { integers + integerTexts }

        /// How many aggregates a column's counts take.
        static let width = 16

        init() {}

        /// The counts from the aggregates of one column, in order (a NULL sum is 0).
        init<Values: Collection<Int64?>>(_ aggregates: Values) {
            var next = aggregates.makeIterator()
            func take() -> Int { Int(next.next().flatMap { $0 } ?? 0) }
            (integers, reals, texts, empties, blobs, integerTexts, numberTexts, dateTexts) = (
                take(), take(), take(), take(), take(), take(), take(), take()
            )
            (wordTexts, bits, digitTexts, dayMonthTexts, firstOver12, secondOver12, yearFirstTexts) = (
                take(), take(), take(), take(), take(), take(), take()
            )
            largest = Int64(take())
        }
    }

    /// The date-and-time endings a day/month or year-first text date may have: none, `14:05`,
    /// `14:05:09`, hours of one or two digits.
    static let timeEndings = ["", " H:mm", " H:mm:ss"]

    /// The patterns reading text dates with the day and month first, in `order` (`d/M` or `M/d`):
    /// slashes or dots, with or without a time, one or two digits for the day and month.
    static func dayMonthPatterns(dayFirst: Bool) -> [DateFormat] {
        ["/", "."].flatMap { separator in
            timeEndings.reversed().map { ending in
                let order = dayFirst ? "d\(separator)M" : "M\(separator)d"
                return pattern("\(order)\(separator)yyyy\(ending)")
            }
        }
    }

    /// The patterns reading year-first text dates with slashes (`2021/03/15`, with or without a time).
    static let yearFirstPatterns: [DateFormat] = timeEndings.reversed().map { pattern("yyyy/M/d\($0)") }

    private static func pattern(_ text: String) -> DateFormat {
        guard case .success(let format) = DateFormat.parse(text) else { preconditionFailure(text) }
        return format
    }

    /// The GLOB patterns (SQLite) of day/month text dates, or of year-first ones, the most
    /// common first (two-digit fields, no time).
    static func dateGlobs(yearFirst: Bool) -> [String] {
        let field = ["[0-9][0-9]", "[0-9]"]
        let year = "[0-9][0-9][0-9][0-9]"
        let endings = ["", " [0-2][0-9]:[0-5][0-9]", " [0-9]:[0-5][0-9]"].flatMap {
            [$0, $0.isEmpty ? nil : $0 + ":[0-5][0-9]"]
        }
        .compactMap { $0 }
        var globs: [String] = []
        for ending in endings {
            for separator in yearFirst ? ["/"] : ["/", "."] {
                for first in field {
                    for second in field {
                        globs.append(
                            (yearFirst
                                ? "\(year)\(separator)\(first)\(separator)\(second)"
                                : "\(first)\(separator)\(second)\(separator)\(year)") + ending)
                    }
                }
            }
        }
        return globs
    }

    /// 1 when `text` matches one of `globs` after `shape` (a cheaper GLOB that every match
    /// passes), else 0. SQLite evaluates every operand of an OR; a CASE stops at the first match.
    static func matchesOne(_ text: String, shape: String, _ globs: [String]) -> String {
        "(CASE WHEN \(text) NOT GLOB '\(shape)' THEN 0 " + globs.map { "WHEN \(text) GLOB '\($0)' THEN 1 " }.joined()
            + "ELSE 0 END)"
    }

    /// The aggregates counting a column's values in SQLite, ``Counts``'s fields in order.
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
        // A cheap test first: only text shaped like a date is matched against every pattern.
        let dayMonthShape = "[0-9]*[/.][0-9]*[/.][0-9][0-9][0-9][0-9]*"
        let dayMonth = matchesOne(t, shape: dayMonthShape, dateGlobs(yearFirst: false))
        let yearFirst = matchesOne(t, shape: "[0-9][0-9][0-9][0-9]/*", dateGlobs(yearFirst: true))
        // SQLite's CAST reads the leading digits: the first field, and the one after the separator.
        let first = "CAST(\(t) AS INTEGER)"
        let second = "CAST(substr(\(t), instr(replace(\(t), '.', '/'), '/') + 1) AS INTEGER)"
        let words = (trueWords.union(falseWords)).sorted().map { "'\($0)'" }.joined(separator: ", ")
        // SQLite evaluates both sides of an AND in a value: a CASE tests the text patterns on
        // text values only (a column of integers costs a typeof() per value, not every pattern).
        func texts(_ condition: String) -> String { "sum(CASE WHEN \(isText) THEN \(condition) END)" }
        // The order's proofs count the values of a date's shape (the patterns are matched once).
        func dayMonths(_ condition: String) -> String {
            "sum(CASE WHEN \(isText) AND \(t) GLOB '\(dayMonthShape)' THEN \(condition) END)"
        }
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
            texts(dayMonth),
            dayMonths("\(first) > 12"),
            dayMonths("\(second) > 12"),
            texts(yearFirst),
            "max(CASE WHEN typeof(\(c)) = 'integer' THEN abs(\(c)) WHEN \(isText) AND \(integer) THEN abs(CAST(\(t) AS INTEGER)) END)",
        ]
    }

    /// The aggregates counting a PostgreSQL column's values, ``Counts``'s fields in order, for a
    /// column of `type` (from its declaration): integers, reals and booleans are counted as what
    /// they are, every other type by its text (a `timestamp`'s text is an ISO date).
    static func postgresCountsSQL(column: String, type: AttributeType?) -> [String] {
        let c = PostgresIdentifier.quote(column)
        let none = "0"
        switch type {
        case .int16, .int32, .int64:
            return [
                "count(\(c))", none, none, none, none, none, none, none, none,
                "count(*) FILTER (WHERE \(c) IN (0, 1))", none, none, none, none, none,
                "max(abs(\(c)::numeric))::bigint",
            ]
        case .double, .float, .decimal:
            return ["0", "count(\(c))"] + Array(repeating: none, count: Counts.width - 2)
        case .bool:
            return ["count(\(c))"] + Array(repeating: none, count: 8) + ["count(\(c))"]
                + Array(repeating: none, count: Counts.width - 10)
        default:
            break
        }
        let t = "btrim(\(c)::text)"
        let words = (trueWords.union(falseWords)).sorted().map { "'\($0)'" }.joined(separator: ", ")
        let date =
            #"'^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])([ T]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?)?(Z|[+-]\d\d(:?\d\d)?)?$'"#
        let time = #"( \d{1,2}:[0-5]\d(:[0-5]\d)?)?$'"#
        // Both separators alike, without a back reference (which would need PostgreSQL's slower engine).
        let dayMonth = #"'^\d{1,2}(/\d{1,2}/|\.\d{1,2}\.)\d{4}"# + time
        let yearFirst = #"'^\d{4}/\d{1,2}/\d{1,2}"# + time
        func texts(_ condition: String) -> String { "count(*) FILTER (WHERE \(t) <> '' AND \(condition))" }
        func dayMonths(_ field: Int) -> String {
            "count(*) FILTER (WHERE CASE WHEN \(t) ~ \(dayMonth) THEN split_part(translate(\(t), '.', '/'), '/', \(field))::int > 12 END)"
        }
        return [
            none, none,
            texts("true"),
            "count(*) FILTER (WHERE \(t) = '')",
            none,
            texts(#"\#(t) ~ '^-?(0|[1-9]\d{0,17})$'"#),
            texts(#"\#(t) ~ '^-?(0|[1-9]\d*)(\.\d+)?$'"#),
            texts("\(t) ~ \(date)"),
            texts("lower(\(t)) IN (\(words))"),
            none,
            texts(#"\#(t) ~ '^-?\d{1,18}$'"#),
            texts("\(t) ~ \(dayMonth)"),
            dayMonths(1),
            dayMonths(2),
            texts("\(t) ~ \(yearFirst)"),
            "max(CASE WHEN \(t) ~ '^-?(0|[1-9][0-9]{0,17})$' THEN abs(\(t)::numeric) END)::bigint",
        ]
    }

    /// The choices for the columns of `table` of the SQLite database at `path` whose values are
    /// not what they declare, by column name; `overrides` (by column name) are the user's types,
    /// their conversions chosen from the values; `dateFormats` read text dates whose day/month
    /// order the values leave open (`--date-format`).
    package static func sqlite(
        path: String, table: SourceSchema.Table, overrides: [String: AttributeType], dateFormats: [DateFormat] = []
    ) throws -> [String: Choice] {
        guard !table.columns.isEmpty else { return [:] }
        let connection = try Connection(path: path, readOnly: true, create: false)
        try connection.execute("PRAGMA query_only = ON")
        connection.setBusyTimeout(milliseconds: 30_000)
        return try sampledThenScanned(table.columns, overrides: overrides, dateFormats: dateFormats) { columns, whole in
            let source = whole ? SQL.quote(table.name) : "(SELECT * FROM \(SQL.quote(table.name)) LIMIT \(sampleRows))"
            let sql =
                "SELECT " + columns.flatMap { countsSQL(column: $0.name) }.joined(separator: ", ") + " FROM \(source)"
            return try connection.rows(sql).first?.map(\.int64) ?? []
        }
    }

    /// The choices for the columns of `table` of the PostgreSQL database at `url` (its schema
    /// `schema`), as ``sqlite(path:table:overrides:dateFormats:)`` chooses them: text columns
    /// (`text`, `varchar`, `char`) are read for the dates, numbers and booleans they hold; a
    /// typed column holds what it declares and is counted only for the user's type.
    package static func postgres(
        url: String, schema: String?, table: SourceSchema.Table, overrides: [String: AttributeType],
        dateFormats: [DateFormat] = []
    ) throws -> [String: Choice] {
        let columns = table.columns.filter { $0.declaredType == .string || overrides[$0.name] != nil }
        guard !columns.isEmpty else { return [:] }
        let parsed = try PostgresURL(url)
        let connection = try PostgresConnection(url: parsed)
        defer { connection.close() }
        do {
            try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            let schemaName = try schema ?? connection.execute("SELECT current_schema()").rows[0].string(0)
            let relation = PostgresIdentifier.quote(schemaName) + "." + PostgresIdentifier.quote(table.name)
            return try sampledThenScanned(columns, overrides: overrides, dateFormats: dateFormats) { columns, whole in
                let source = whole ? relation : "(SELECT * FROM \(relation) LIMIT \(sampleRows)) AS sample"
                let sql =
                    "SELECT "
                    + columns.flatMap {
                        postgresCountsSQL(column: $0.name, type: $0.declaredType).map { "(\($0))::bigint" }
                    }
                    .joined(separator: ", ") + " FROM \(source)"
                guard let row = try connection.execute(sql).rows.first else { return [] }
                return try (0..<(columns.count * Counts.width)).map { try row.isNull($0) ? nil : row.int($0) }
            }
        } catch let error as FerryError {
            throw error
        } catch {
            throw FerryError(
                .io,
                "cannot read what the columns of \(table.name) hold in \(parsed.description): \(PostgresSourceCursor.reason(error))"
            )
        }
    }

    /// The rows of a table whose values decide which columns are counted over the whole table.
    static let sampleRows = 10_000

    /// The choices for `columns`, by column name, from the aggregates `count` returns for some
    /// columns (``Counts/width`` per column, in order) over a sample of the rows (`whole` false) or
    /// the whole table. The patterns cost microseconds per text value: the sample says which
    /// columns may be read differently (or were given a type), and only those are counted whole.
    static func sampledThenScanned(
        _ columns: [SourceSchema.Column], overrides: [String: AttributeType], dateFormats: [DateFormat],
        count: (_ columns: [SourceSchema.Column], _ whole: Bool) throws -> [Int64?]
    ) throws -> [String: Choice] {
        func choices(_ columns: [SourceSchema.Column], whole: Bool) throws -> [String: Choice] {
            let aggregates = try count(columns, whole)
            guard aggregates.count == columns.count * Counts.width else { return [:] }
            var choices: [String: Choice] = [:]
            for (index, column) in columns.enumerated() {
                let counts = Counts(aggregates[(index * Counts.width)..<((index + 1) * Counts.width)])
                let declared = column.declared ?? ""
                if let type = overrides[column.name] {
                    choices[column.name] = chosen(type, declared: declared, counts: counts, dateFormats: dateFormats)
                } else if let choice = choice(
                    declared: declared, type: column.declaredType, counts: counts, dateFormats: dateFormats)
                {
                    choices[column.name] = choice
                }
            }
            return choices
        }
        let sampled = try choices(columns, whole: false)
        let scanned = columns.filter { sampled[$0.name] != nil }
        guard !scanned.isEmpty else { return [:] }
        return try choices(scanned, whole: true)
    }

    /// How a column shown as `declared` (its declaration, or "untyped") is named in a note.
    static func shown(_ declared: String) -> String { declared.isEmpty ? "untyped column" : declared }

    /// The choice for a column declared `type` holding `counts`, nil when it holds what it
    /// declares (or nothing ferry reads differently).
    static func choice(
        declared: String, type: AttributeType?, counts: Counts, dateFormats: [DateFormat] = []
    ) -> Choice? {
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
            let dates = TextDates(counts, dateFormats: dateFormats)
            if counts.epochs > dates.fits {
                let millis = counts.largest >= millisecondsFrom
                return fitting(
                    Choice(
                        type: .date, dateFormat: millis ? .unixMilliseconds : .unixSeconds,
                        holding: "\(name) holding epoch \(millis ? "milliseconds" : "seconds")"),
                    fits: counts.epochs)
            }
            if dates.orderIsOpen { return dates.undecided(name) }
            var choice = fitting(
                Choice(type: .date, dateFormat: dates.format, holding: "\(name) holding \(dates.kinds)"),
                fits: dates.fits)
            choice.isHabit =
                choice.misfits > 0 || choice.emptyIsNull || choice.type != .date || choice.dateFormat != nil
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
            } else if counts.dateTexts + counts.dayMonthTexts + counts.yearFirstTexts == values {
                let dates = TextDates(counts, dateFormats: dateFormats)
                if dates.orderIsOpen { return dates.undecided(name) }
                guard dates.fits == values else { return nil }
                return Choice(
                    type: .date, dateFormat: dates.format, emptyIsNull: counts.empties > 0,
                    holding: "\(name) holding \(dates.kinds == "ISO 8601 text" ? "ISO 8601 dates" : dates.kinds)")
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
    static func chosen(
        _ type: AttributeType, declared: String, counts: Counts, dateFormats: [DateFormat] = []
    ) -> Choice {
        let name = shown(declared)
        var choice = Choice(type: type, holding: name, isOverride: true)
        choice.emptyIsNull = type != .string && counts.empties > 0
        switch type {
        case .string:
            return choice
        case .date:
            let dates = TextDates(counts, dateFormats: dateFormats)
            if counts.epochs > dates.fits {
                let millis = counts.largest >= millisecondsFrom
                choice.dateFormat = millis ? .unixMilliseconds : .unixSeconds
                choice.holding = "\(name) holding epoch \(millis ? "milliseconds" : "seconds")"
                choice.misfits = counts.values - counts.epochs
            } else {
                choice.dateFormat = dates.format
                choice.misfits = counts.values - dates.fits
                if dates.orderIsOpen { choice.advice = TextDates.advice }
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

    /// How a column's text dates are read: ISO 8601, year first with slashes, and day/month
    /// dates in the order the values prove (a first field above 12 is a day: `15/03/2021`; a
    /// second one is: `03/15/2021`). When every day/month date reads both ways the order is open:
    /// nothing is guessed, the user's `--date-format` settles it.
    struct TextDates {
        /// The format reading them all (nil: ISO 8601, the step's default).
        var format: DateFormat?
        /// How many values it reads.
        var fits = 0
        /// What they are, as the note says it: `dd/MM/yyyy text`.
        var kinds = ""
        /// Day/month dates whose order neither the values nor the user decide.
        var orderIsOpen = false

        /// What to give when the order is open.
        static let advice =
            "the day/month order is open (every value reads both ways): give --date-format dd/MM/yyyy or --date-format MM/dd/yyyy (with a time: 'dd/MM/yyyy HH:mm' as well)"

        init(_ counts: Counts, dateFormats: [DateFormat]) {
            var formats: [DateFormat] = []
            var kinds: [String] = []
            if counts.dateTexts > 0 {
                formats.append(.iso8601)
                fits += counts.dateTexts
                kinds.append("ISO 8601 text")
            }
            if counts.yearFirstTexts > 0 {
                formats += yearFirstPatterns
                fits += counts.yearFirstTexts
                kinds.append("yyyy/MM/dd text")
            }
            if counts.dayMonthTexts > 0 {
                if counts.firstOver12 > 0, counts.firstOver12 >= counts.secondOver12 {
                    formats += dayMonthPatterns(dayFirst: true)
                    fits += counts.dayMonthTexts - counts.secondOver12
                    kinds.append("dd/MM/yyyy text")
                } else if counts.secondOver12 > 0 {
                    formats += dayMonthPatterns(dayFirst: false)
                    fits += counts.dayMonthTexts - counts.firstOver12
                    kinds.append("MM/dd/yyyy text")
                } else if !dateFormats.isEmpty {
                    formats += dateFormats
                    fits += counts.dayMonthTexts
                    kinds.append(
                        "day/month text (--date-format \(dateFormats.map(\.description).joined(separator: ", ")))")
                } else {
                    orderIsOpen = true
                }
            }
            self.kinds = kinds.isEmpty ? "ISO 8601 text" : kinds.joined(separator: " and ")
            if formats.count > 1 {
                format = .firstOf(formats)
            } else if let only = formats.first, only != .iso8601 {
                format = only
            }
        }

        /// The choice for a column whose day/month order is open: kept as text, and the note says
        /// how to choose.
        func undecided(_ name: String) -> Choice {
            Choice(type: .string, holding: "\(name) holding day/month text dates", advice: Self.advice)
        }
    }
}
