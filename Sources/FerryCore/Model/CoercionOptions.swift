import Foundation

/// How to read boolean words, null tokens, dates and white space in text values.
public struct CoercionOptions: Sendable, Hashable {
    /// Text read as null (compared after trimming when `trim` is on). CSV's default is `[""]`.
    public var nullTokens: Set<String>
    /// Words read as true / false, compared case-insensitively.
    public var trueWords: Set<String>
    /// Words read as false, compared case-insensitively.
    public var falseWords: Set<String>
    /// Trim white space around text before coercing it.
    public var trim: Bool
    /// How dates are written in the source.
    public var dateFormat: DateFormat
    /// Numbers are written with a decimal comma and optional thousands separators (`1.234,56`).
    public var decimalComma: Bool = false
    /// The time zone of dates written without one (`2024-03-01 10:00`, `01/03/2024`): nil reads
    /// them in UTC. Text that gives its own zone (`Z`, `+02:00`) and Unix times keep theirs.
    public var timeZone: TimeZone? = nil

    /// `true`, `yes`, `1`, `t`, `y`, `on`.
    public static let defaultTrueWords: Set<String> = ["true", "yes", "1", "t", "y", "on"]
    /// `false`, `no`, `0`, `f`, `n`, `off`.
    public static let defaultFalseWords: Set<String> = ["false", "no", "0", "f", "n", "off"]

    /// Options with the defaults: no null words, the default boolean words, no trimming, ISO-8601 dates.
    public init(
        nullTokens: Set<String> = [],
        trueWords: Set<String> = CoercionOptions.defaultTrueWords,
        falseWords: Set<String> = CoercionOptions.defaultFalseWords,
        trim: Bool = false,
        dateFormat: DateFormat = .iso8601
    ) {
        self.nullTokens = nullTokens
        self.trueWords = trueWords
        self.falseWords = falseWords
        self.trim = trim
        self.dateFormat = dateFormat
    }

    /// The zone a `timezone:` setting names: an IANA zone (`Europe/Berlin`, `America/New_York`,
    /// `UTC`) or a fixed offset from UTC (`+02:00`, `-0530`, `Z`); nil for anything else.
    public static func timeZone(named name: String) -> TimeZone? {
        if let first = name.utf8.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") || name == "Z" {
            var text = name
            let offset = text.withUTF8 { bytes -> Int? in
                var scanner = ByteScanner(bytes)
                guard let seconds = scanner.zoneOffset(), scanner.atEnd else { return nil }
                return seconds
            }
            return offset.flatMap { TimeZone(secondsFromGMT: $0) }
        }
        // Foundation also takes abbreviations (`CET`, `EST`) for identifiers; only names tzdata has are zones here.
        guard name.contains("/") || name == "UTC" || name == "GMT" else { return nil }
        return TimeZone(identifier: name)
    }

    /// Why `name` is not a zone ``timeZone(named:)`` reads, for the user.
    package static func timeZoneProblem(_ name: String) -> String {
        "'\(name)' is not a time zone: give an IANA zone such as Europe/Berlin, America/New_York or UTC, or an offset such as +02:00"
    }

    /// These options for a value taken literally (a quoted CSV field): no trimming, no null words.
    public var literal: CoercionOptions {
        var options = self
        options.trim = false
        options.nullTokens = []
        return options
    }
}

/// How dates are written in a source.
public enum DateFormat: Sendable, Hashable, CustomStringConvertible {
    /// ISO-8601 / RFC 3339, with or without time, fraction and zone.
    case iso8601
    /// Seconds since 1970 (fractions allowed).
    case unixSeconds
    /// Milliseconds since 1970.
    case unixMilliseconds
    /// An Excel serial date: days since 1899-12-30, the fraction the time of day (`45292.5` is
    /// 2024-01-01 12:00 UTC), as spreadsheets export dates.
    case excelSerial
    /// A Unicode date pattern such as `dd/MM/yyyy HH:mm:ss`.
    case pattern(DatePattern)
    /// Several formats tried in order; the first that reads the text wins
    /// (`[dd.MM.yyyy, yyyy-MM-dd, iso8601]`).
    indirect case firstOf([DateFormat])

    /// Parses `iso8601`, `unix`, `unix_ms`, `excel` or a pattern; nil with a reason when the pattern is bad.
    public static func parse(_ text: String) -> Result<DateFormat, FerryError> {
        switch text.lowercased() {
        case "iso8601", "iso-8601", "rfc3339": return .success(.iso8601)
        case "unix", "epoch", "unix_seconds": return .success(.unixSeconds)
        case "unix_ms", "epoch_ms", "unix_milliseconds": return .success(.unixMilliseconds)
        case "excel", "excel_serial": return .success(.excelSerial)
        default: return DatePattern.compile(text).map { .pattern($0) }
        }
    }

    /// The format as a job file writes it (`iso8601`, `unix`, a pattern, …).
    public var description: String {
        switch self {
        case .iso8601: return "iso8601"
        case .unixSeconds: return "unix"
        case .unixMilliseconds: return "unix_ms"
        case .excelSerial: return "excel"
        case .pattern(let pattern): return pattern.text
        case .firstOf(let formats): return formats.map(\.description).joined(separator: ", ")
        }
    }
}
