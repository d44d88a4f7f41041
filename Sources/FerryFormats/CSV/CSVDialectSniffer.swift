import FerryCore

/// Guesses the dialect of a CSV file from its first lines, as Python's `csv.Sniffer`, csvkit
/// and sqlite-utils do.
///
/// - The quote: `"`, or `'` when fields are quoted with it and none with `"`.
/// - The delimiter: of `,`, tab, `;` and `|`, the one that splits every sampled line (outside
///   quotes) into the same number of fields, the most fields winning, a comma on a tie.
/// - The header: the first row is data, not names, only when in every column it has the same
///   kind of value (integer, number, date, text) as the rows below and some column is not text:
///   `1,Ann,34` above `2,Bob,41`. Anything less certain keeps the header.
package enum CSVDialectSniffer {
    /// The candidates, in the order that breaks ties.
    package static let candidates: [UInt8] = [
        UInt8(ascii: ","), UInt8(ascii: "\t"), UInt8(ascii: ";"), UInt8(ascii: "|"),
    ]

    /// How many bytes ``sniffDelimiter(path:quote:)`` reads.
    static let sampleBytes = 64 * 1024
    /// How many lines are compared.
    static let sampleLines = 50

    /// The first bytes of the file at `path` (decompressed and decoded, as the readers see them)
    /// and whether they are the whole file; nil when it cannot be read.
    package static func sample(path: String, encoding: TextEncoding? = nil) -> (bytes: [UInt8], isComplete: Bool)? {
        guard let input = try? InputFile(path: path, encoding: encoding) else { return nil }
        var bytes: [UInt8] = []
        while bytes.count < sampleBytes,
            let count = try? input.append(to: &bytes, chunkSize: sampleBytes - bytes.count), count > 0
        {}
        return (bytes, bytes.count < sampleBytes)
    }

    /// The quote characters ``sniffQuote(_:isComplete:skipLines:comment:)`` tells apart: the
    /// double quote (RFC 4180's, the default) and the single quote.
    package static let quoteCandidates: [UInt8] = [UInt8(ascii: "\""), UInt8(ascii: "'")]

    /// The quote character of CSV text that starts with `bytes`, as Python's `csv.Sniffer`
    /// guesses it: the single quote when some field is quoted with it (it opens the field, at the
    /// start of a line or after a delimiter candidate and blanks, and closes it, just before a
    /// delimiter candidate or the line's end) and no field is quoted with a double quote; else the
    /// double quote. An apostrophe inside text (`O'Brien`) quotes nothing. Lines before
    /// `skipLines`, lines starting with `comment` and a last line that may be cut off
    /// (`isComplete` false) are not looked at.
    package static func sniffQuote(
        _ bytes: [UInt8], isComplete: Bool, skipLines: Int = 0, comment: UInt8? = nil
    ) -> UInt8 {
        var quotedFields: [UInt8: Int] = [:]
        var lines = bytes.split(omittingEmptySubsequences: false) { $0 == 10 || $0 == 13 }.dropFirst(skipLines)
        if !isComplete { lines = lines.dropLast() }
        for line in lines.prefix(sampleLines) where !line.isEmpty && line.first != comment {
            for quote in quoteCandidates {
                quotedFields[quote, default: 0] += countQuotedFields(line, quote: quote)
            }
        }
        let double = quoteCandidates[0]
        let single = quoteCandidates[1]
        return quotedFields[single, default: 0] > 0 && quotedFields[double, default: 0] == 0 ? single : double
    }

    /// How many fields of one line open and close with `quote` (doubled quotes inside count as text).
    private static func countQuotedFields(_ line: ArraySlice<UInt8>, quote: UInt8) -> Int {
        var count = 0
        var index = line.startIndex
        var atFieldStart = true
        while index < line.endIndex {
            let byte = line[index]
            if atFieldStart && byte == UInt8(ascii: " ") {
                index += 1
                continue
            }
            if atFieldStart && byte == quote {
                // Find the closing quote: one not doubled, followed by a delimiter or the line's end.
                var close = index + 1
                var closed = false
                while close < line.endIndex {
                    if line[close] == quote {
                        if close + 1 < line.endIndex && line[close + 1] == quote {
                            close += 2
                            continue
                        }
                        closed = close + 1 == line.endIndex || candidates.contains(line[close + 1])
                        break
                    }
                    close += 1
                }
                if closed {
                    count += 1
                    index = close + 1
                    atFieldStart = index < line.endIndex
                    index += 1
                    continue
                }
            }
            atFieldStart = candidates.contains(byte)
            index += 1
        }
        return count
    }

    /// The delimiter of CSV text that starts with `bytes`; `isComplete` says whether the last
    /// line is whole (the end of the input) or possibly cut off (then it is not compared).
    /// Lines before `skipLines` and lines starting with `comment` are not compared.
    package static func sniffDelimiter(
        _ bytes: [UInt8], quote: UInt8 = UInt8(ascii: "\""), isComplete: Bool, skipLines: Int = 0, comment: UInt8? = nil
    ) -> UInt8? {
        var bytes = bytes[...]
        for _ in 0..<skipLines {
            guard let end = bytes.firstIndex(where: { $0 == 10 || $0 == 13 }) else { return nil }
            bytes = bytes[(end + 1)...]
        }
        var lines: [[UInt8: Int]] = []
        var isCommentLine = false
        var counts: [UInt8: Int] = [:]
        var inQuotes = false
        var lineHasContent = false
        for byte in bytes {
            if !lineHasContent && !inQuotes, let comment, byte == comment { isCommentLine = true }
            if isCommentLine {
                if byte == 10 || byte == 13 { isCommentLine = false }
                continue
            }
            if byte == quote {
                inQuotes.toggle()
                lineHasContent = true
            } else if !inQuotes && (byte == 10 || byte == 13) {
                if lineHasContent { lines.append(counts) }
                counts = [:]
                lineHasContent = false
                if lines.count == sampleLines { break }
            } else {
                lineHasContent = true
                if !inQuotes && candidates.contains(byte) { counts[byte, default: 0] += 1 }
            }
        }
        if isComplete && lineHasContent && !inQuotes && lines.count < sampleLines { lines.append(counts) }
        guard !lines.isEmpty else { return nil }
        var best: (delimiter: UInt8, fields: Int)?
        for candidate in candidates {
            let first = lines[0][candidate] ?? 0
            guard first > 0, lines.allSatisfy({ ($0[candidate] ?? 0) == first }) else { continue }
            if let current = best, current.fields >= first { continue }
            best = (candidate, first)
        }
        return best?.delimiter
    }

    /// The number of columns when the sampled rows show that the first row is data, not a header
    /// (see the type's notes); nil when it looks like a header or cannot be told.
    package static func headerlessColumnCount(
        _ bytes: [UInt8], delimiter: UInt8, quote: UInt8 = UInt8(ascii: "\""), isComplete: Bool, skipLines: Int = 0,
        comment: UInt8? = nil
    ) -> Int? {
        let rows = sampleRows(
            bytes, delimiter: delimiter, quote: quote, isComplete: isComplete, skipLines: skipLines, comment: comment)
        guard rows.count >= 2, let first = rows.first else { return nil }
        var typedColumns = 0
        for column in first.indices {
            let below = rows.dropFirst().compactMap {
                column < $0.count && !$0[column].isEmpty ? kind(of: $0[column]) : nil
            }
            guard let kindBelow = below.first, below.allSatisfy({ $0 == kindBelow }) else { return nil }
            guard !first[column].isEmpty, kind(of: first[column]) == kindBelow else { return nil }
            if kindBelow != .text { typedColumns += 1 }
        }
        return typedColumns > 0 ? first.count : nil
    }

    private enum ValueKind { case integer, number, date, text }

    private static func kind(of value: String) -> ValueKind {
        if Int64(value) != nil { return .integer }
        if let number = Double(value), number.isFinite, value.first?.isNumber == true || value.first == "-" {
            return .number
        }
        if value.utf8.count >= 10, DateCoding.parseISO8601(value) != nil { return .date }
        return .text
    }

    /// The first sampled lines split into fields (quotes removed, doubled quotes undone).
    private static func sampleRows(
        _ bytes: [UInt8], delimiter: UInt8, quote: UInt8, isComplete: Bool, skipLines: Int, comment: UInt8?
    ) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field: [UInt8] = []
        var inQuotes = false
        var lineStart = true
        var skipping = skipLines
        var inComment = false
        var index = bytes.startIndex
        func endField() {
            row.append(String(decoding: field, as: UTF8.self))
            field = []
        }
        while index < bytes.endIndex && rows.count < sampleLines {
            let byte = bytes[index]
            index += 1
            if skipping > 0 || inComment {
                if byte == 10 || byte == 13 {
                    if skipping > 0 { skipping -= 1 }
                    inComment = false
                    lineStart = true
                }
                continue
            }
            if lineStart, let comment, byte == comment {
                inComment = true
                continue
            }
            if byte == quote {
                if inQuotes && index < bytes.endIndex && bytes[index] == quote {
                    field.append(quote)
                    index += 1
                } else {
                    inQuotes.toggle()
                }
                lineStart = false
            } else if !inQuotes && byte == delimiter {
                endField()
                lineStart = false
            } else if !inQuotes && (byte == 10 || byte == 13) {
                if !lineStart {
                    endField()
                    rows.append(row)
                    row = []
                }
                lineStart = true
            } else {
                field.append(byte)
                lineStart = false
            }
        }
        if isComplete && !lineStart && !inQuotes && rows.count < sampleLines {
            endField()
            rows.append(row)
        }
        return rows
    }
}
