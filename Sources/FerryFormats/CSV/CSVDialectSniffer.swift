/// Guesses the delimiter of a CSV file from its first lines, as Python's `csv.Sniffer`,
/// csvkit and sqlite-utils do: of `,`, tab, `;` and `|`, the one that splits every sampled line
/// (outside quotes) into the same number of fields, the most fields winning, a comma on a tie.
public enum CSVDialectSniffer {
    /// The candidates, in the order that breaks ties.
    public static let candidates: [UInt8] = [UInt8(ascii: ","), UInt8(ascii: "\t"), UInt8(ascii: ";"), UInt8(ascii: "|")]

    /// How many bytes ``sniffDelimiter(path:quote:)`` reads.
    static let sampleBytes = 64 * 1024
    /// How many lines are compared.
    static let sampleLines = 50

    /// The delimiter of the file at `path`, or nil when it cannot be read or no candidate splits
    /// its lines consistently (the caller keeps its default).
    public static func sniffDelimiter(path: String, quote: UInt8 = UInt8(ascii: "\""), encoding: TextEncoding? = nil, skipLines: Int = 0, comment: UInt8? = nil) -> UInt8? {
        // Through InputFile: a compressed or UTF-16 file is sniffed in its decoded text.
        guard let input = try? InputFile(path: path, encoding: encoding) else { return nil }
        var bytes: [UInt8] = []
        while bytes.count < sampleBytes, let count = try? input.append(to: &bytes, chunkSize: sampleBytes - bytes.count), count > 0 {}
        return sniffDelimiter(bytes, quote: quote, isComplete: bytes.count < sampleBytes, skipLines: skipLines, comment: comment)
    }

    /// The delimiter of CSV text that starts with `bytes`; `isComplete` says whether the last
    /// line is whole (the end of the input) or possibly cut off (then it is not compared).
    /// Lines before `skipLines` and lines starting with `comment` are not compared.
    public static func sniffDelimiter(_ bytes: [UInt8], quote: UInt8 = UInt8(ascii: "\""), isComplete: Bool, skipLines: Int = 0, comment: UInt8? = nil) -> UInt8? {
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
}
