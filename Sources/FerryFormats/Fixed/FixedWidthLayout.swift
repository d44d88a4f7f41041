public import FerryCore

/// Where the fields of a fixed-width text file are: named columns of characters, as mainframe
/// and bank exports write them (`format: fixed`).
public struct FixedWidthLayout: Sendable, Hashable {
    /// One field: `width` characters from the 1-based character position `start`.
    public struct Column: Sendable, Hashable {
        /// The field's name.
        public var name: String
        /// The 1-based character position of the column's first character.
        public var start: Int
        /// The number of characters.
        public var width: Int

        /// A column of `width` characters from position `start`.
        public init(name: String, start: Int, width: Int) {
            self.name = name
            self.start = start
            self.width = width
        }

        /// The 1-based position of the column's last character.
        public var end: Int { start + width - 1 }
    }

    /// What a line shorter than the layout is (`short_lines:`).
    public enum ShortLines: String, Sendable, Hashable, CaseIterable {
        /// A rejected record, located at the line's end: a layout that does not fit the file is
        /// never read silently (the default).
        case reject
        /// The line is padded with blanks to the layout's width, as csvkit's `in2csv` and
        /// pgloader read such lines: a column the line ends in reads what it has, a column past
        /// its end reads an empty field (null under the default null words).
        case pad
    }

    /// The columns, in any order (they may leave gaps, not overlap).
    public var columns: [Column]
    /// Lines skipped before the first record, whatever they hold (a title, a ruler).
    public var skipLines: Int
    /// What a line shorter than the layout is.
    public var shortLines: ShortLines

    /// A layout of `columns`, skipping `skipLines` lines first.
    public init(columns: [Column], skipLines: Int = 0, shortLines: ShortLines = .reject) {
        self.columns = columns
        self.skipLines = skipLines
        self.shortLines = shortLines
    }

    /// The position of the last character any column reads: a shorter line lacks a field.
    public var width: Int { columns.map(\.end).max() ?? 0 }

    /// The layout's problems: no columns, an empty or repeated name, a start below 1, a width
    /// below 1, columns that overlap. Each message names the column.
    public func problems() -> [String] {
        guard !columns.isEmpty else { return ["a fixed-width layout needs at least one column"] }
        var problems: [String] = []
        var seen = Set<String>()
        for column in columns {
            if column.name.isEmpty { problems.append("a fixed-width column needs a name") }
            if !seen.insert(column.name).inserted { problems.append("column '\(column.name)' is named twice") }
            if column.start < 1 {
                problems.append("column '\(column.name)' starts at \(column.start); positions start at 1")
            }
            if column.width < 1 {
                problems.append(
                    "column '\(column.name)' has width \(column.width); a column is at least 1 character wide")
            }
        }
        let ordered = columns.filter { $0.start >= 1 && $0.width >= 1 }.sorted { $0.start < $1.start }
        for (left, right) in zip(ordered, ordered.dropFirst()) where right.start <= left.end {
            problems.append(
                "columns '\(left.name)' (\(left.start)–\(left.end)) and '\(right.name)' (\(right.start)–\(right.end)) overlap"
            )
        }
        return problems
    }

    /// Parses the command line's `name:start:width,…` (`id:1:5,name:6:20`).
    public static func parse(_ text: String) throws(FerryError) -> [Column] {
        var columns: [Column] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = item.split(separator: ":", omittingEmptySubsequences: false).map { $0.trimmingBlanks() }
            guard parts.count == 3, !parts[0].isEmpty, let start = Int(parts[1]), let width = Int(parts[2]) else {
                throw FerryError(
                    .usage,
                    "a fixed-width column is name:start:width (1-based start, e.g. id:1:5,name:6:20), not '\(item)'")
            }
            columns.append(Column(name: parts[0], start: start, width: width))
        }
        return columns
    }
}

extension Substring {
    fileprivate func trimmingBlanks() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
