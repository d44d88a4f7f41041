import Foundation

/// Turns text from a source (CSV field, JSON string or number, YAML scalar) into a typed
/// ``Value`` of an attribute type, the same way everywhere: import, defaults, constants,
/// predicates' literals.
package enum Coercion {
    /// Coerces `text` to `type`. Null tokens and trimming from `options` apply first.
    /// Returns `.null` for a null token; fails with a reason such as `'abc' is not an int16`.
    package static func coerce(
        _ text: String, to type: AttributeType, options: CoercionOptions = CoercionOptions()
    ) -> Result<Value, CoercionFailure> {
        let text = options.trim ? text.trimmingCharacters(in: .whitespacesAndNewlines) : text
        if !options.nullTokens.isEmpty, options.nullTokens.contains(text) { return .success(.null) }
        if options.decimalComma && type.isNumeric {
            guard let plain = DecimalCommaText.plain(text) else {
                return .failure(
                    CoercionFailure("'\(excerpt(text))' is not a number written with a decimal comma (like 1.234,56)"))
            }
            return coerce(plain, to: type, options: CoercionOptions())
        }
        switch type {
        case .int16, .int32, .int64:
            guard let value = parseInteger(text) else {
                return .failure(CoercionFailure("'\(excerpt(text))' is not an integer"))
            }
            guard let range = type.integerRange, range.contains(value) else {
                return .failure(CoercionFailure("\(value) is out of range for \(type.rawValue)"))
            }
            return .success(.integer(value))
        case .decimal:
            if DecimalText.isCanonical(text) { return .success(.decimal(text)) }
            guard let canonical = DecimalText.canonical(text) else {
                return .failure(CoercionFailure("'\(excerpt(text))' is not a decimal number"))
            }
            return .success(.decimal(canonical))
        case .double, .float:
            guard let value = parseDouble(text) else {
                return .failure(CoercionFailure("'\(excerpt(text))' is not a number"))
            }
            if type == .float {
                let narrowed = Float(value)
                if narrowed.isInfinite && value.isFinite {
                    return .failure(CoercionFailure("\(text) is out of range for float"))
                }
                return .success(.double(Double(narrowed)))
            }
            return .success(.double(value))
        case .string:
            return .success(.string(text))
        case .bool:
            if options.trueWords.contains(text) { return .success(.bool(true)) }
            if options.falseWords.contains(text) { return .success(.bool(false)) }
            let lowered = text.lowercased()
            if options.trueWords.contains(where: { $0.lowercased() == lowered }) { return .success(.bool(true)) }
            if options.falseWords.contains(where: { $0.lowercased() == lowered }) { return .success(.bool(false)) }
            return .failure(
                CoercionFailure(
                    "'\(excerpt(text))' is not a boolean (expected one of \(options.trueWords.union(options.falseWords).sorted().joined(separator: ", ")))"
                ))
        case .date:
            guard let instant = parseDateInstant(text, format: options.dateFormat, timeZone: options.timeZone) else {
                return .failure(CoercionFailure("'\(excerpt(text))' is not a date in format \(options.dateFormat)"))
            }
            return storableDate(instant)
        case .binary:
            guard let data = Data(base64Encoded: text) else {
                return .failure(CoercionFailure("'\(excerpt(text))' is not base64 binary data"))
            }
            return .success(.binary([UInt8](data)))
        case .uuid:
            guard let canonical = canonicalUUID(text) else {
                return .failure(CoercionFailure("'\(excerpt(text))' is not a UUID"))
            }
            return .success(.uuid(canonical))
        case .uri:
            guard !text.isEmpty, let url = URL(string: text), url.scheme != nil else {
                return .failure(CoercionFailure("'\(excerpt(text))' is not an absolute URI"))
            }
            return .success(.uri(text))
        case .json:
            guard JSONSyntax.isValue(text) else {
                return .failure(CoercionFailure("'\(excerpt(text))' is not valid JSON"))
            }
            return .success(.json(text))
        }
    }

    /// Coerces a typed value to another attribute type where that is lossless (integers to
    /// decimals or doubles, booleans to integers, strings through ``coerce(_:to:options:)``).
    package static func convert(
        _ value: Value, to type: AttributeType, options: CoercionOptions = CoercionOptions()
    ) -> Result<Value, CoercionFailure> {
        switch (value, type) {
        case (.null, _): return .success(.null)
        case (.integer(let v), .int16), (.integer(let v), .int32), (.integer(let v), .int64):
            guard let range = type.integerRange, range.contains(v) else {
                return .failure(CoercionFailure("\(v) is out of range for \(type.rawValue)"))
            }
            return .success(.integer(v))
        case (.integer(let v), .decimal): return .success(.decimal(String(v)))
        case (.integer(let v), .double), (.integer(let v), .float): return .success(.double(Double(v)))
        case (.double(let v), .double): return .success(.double(v))
        case (.double(let v), .float): return .success(.double(Double(Float(v))))
        case (.bool(let v), .bool): return .success(.bool(v))
        case (.bool(let v), .int16), (.bool(let v), .int32), (.bool(let v), .int64):
            return .success(.integer(v ? 1 : 0))
        case (.decimal(let v), .decimal): return .success(.decimal(v))
        case (.date(let v), .date): return storableDate(v)
        case (.binary(let v), .binary): return .success(.binary(v))
        case (.uuid(let v), .uuid): return .success(.uuid(v))
        case (.uri(let v), .uri): return .success(.uri(v))
        case (.json(let v), .json): return .success(.json(v))
        case (.string(let v), _): return coerce(v, to: type, options: options)
        case (.decimal(let v), _), (.uuid(let v), _), (.uri(let v), _), (.json(let v), _):
            return coerce(v, to: type, options: options)
        case (.double(let v), _): return coerce(String(v), to: type, options: options)
        case (.integer(let v), _): return coerce(String(v), to: type, options: options)
        case (.bool(let v), _): return coerce(v ? "true" : "false", to: type, options: options)
        case (.date(let instant), .string): return .success(.string(DateCoding.format(instant)))
        default: return .failure(CoercionFailure("a \(value.typeName) value cannot become \(type.rawValue)"))
        }
    }

    /// A date a store can hold (``DateCoding/storableMilliseconds``), else the reason it cannot.
    package static func storableDate(_ millis: Int64) -> Result<Value, CoercionFailure> {
        storableDate(Timestamp(milliseconds: millis))
    }

    /// A date a store can hold (``DateCoding/storableMilliseconds``), exact to the bit, else the
    /// reason it cannot.
    package static func storableDate(_ instant: Timestamp) -> Result<Value, CoercionFailure> {
        let millis = instant.milliseconds
        guard DateCoding.storableMilliseconds.contains(millis) else {
            let year = DateCoding.civil(days: Int(millis).quotientAndRemainderFloored(dividingBy: 86_400_000).0).year
            return .failure(
                CoercionFailure("a date in the year \(year) is outside the years 0000–9999 that a store holds"))
        }
        return .success(.date(instant))
    }

    // MARK: - Parsers

    /// Parses an integer: optional sign, digits; also `12.0` and `1e3` when they are integral.
    package static func parseInteger(_ text: String) -> Int64? {
        if let value = Int64(text) { return value }
        guard let canonical = DecimalText.canonical(text), !canonical.contains(".") else { return nil }
        return Int64(canonical)
    }

    /// Parses a double: decimal notation and exponents, `inf`/`infinity` (any case, signed).
    /// NaN is refused because SQLite stores it as NULL.
    package static func parseDouble(_ text: String) -> Double? {
        guard let value = Double(text), !value.isNaN else { return nil }
        if value.isInfinite {
            let lowered = text.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "+-"))
            guard lowered == "inf" || lowered == "infinity" else { return nil }
        }
        return value
    }

    /// Parses a date in the given format into milliseconds since the epoch.
    /// The one rule for reading a date from text on import: every fractional digit the text
    /// gives is kept (beyond the millisecond, as the instant the digits spell: a timestamp's
    /// microseconds), and text without a zone of its own is read in `timeZone` (UTC when nil),
    /// at the offset the zone has at that local time (daylight saving included). Unix times are
    /// instants already; a spreadsheet's serial date is read in the zone like text.
    package static func parseDateInstant(_ text: String, format: DateFormat, timeZone: TimeZone? = nil) -> Timestamp? {
        guard let utc = parseDateInstant(text, format: format, defaultOffsetSeconds: 0) else { return nil }
        guard let timeZone else { return utc }
        // Text with its own zone reads the same whatever the default offset is.
        guard let shifted = parseDateInstant(text, format: format, defaultOffsetSeconds: 1), shifted != utc else {
            return utc
        }
        let local = Date(timeIntervalSince1970: Double(utc.milliseconds) / 1000)
        let guess = timeZone.secondsFromGMT(for: local)
        let offset = timeZone.secondsFromGMT(for: local.addingTimeInterval(-Double(guess)))
        return parseDateInstant(text, format: format, defaultOffsetSeconds: offset)
    }

    /// A date read with every fractional digit, text without a zone read at `defaultOffsetSeconds`.
    private static func parseDateInstant(_ text: String, format: DateFormat, defaultOffsetSeconds: Int) -> Timestamp? {
        switch format {
        case .iso8601:
            return DateCoding.parseISO8601Instant(text, defaultOffsetSeconds: defaultOffsetSeconds)
        case .pattern(let pattern):
            return pattern.parseInstant(text, defaultOffsetSeconds: defaultOffsetSeconds)
        case .unixSeconds:
            guard let canonical = DecimalText.canonical(text), let point = canonical.firstIndex(of: "."),
                canonical.distance(from: point, to: canonical.endIndex) > 4,
                let seconds = Int64(canonical[..<point])
            else { return parseDate(text, format: format).map(Timestamp.init(milliseconds:)) }
            let digits = Array(canonical[canonical.index(after: point)...].utf8)
            // -1.25 is -2 s plus 0.75: the fraction of a negative time counts back from the next second down.
            let negative = canonical.hasPrefix("-")
            let (whole, overflow) = (negative ? seconds - 1 : seconds).multipliedReportingOverflow(by: 1000)
            guard !overflow else { return nil }
            return DateCoding.instant(wholeMillis: whole, fraction: negative ? DateCoding.complement(digits) : digits)
        case .excelSerial:
            return parseDate(text, format: format).map {
                Timestamp(milliseconds: $0 - Int64(defaultOffsetSeconds) * 1000)
            }
        case .unixMilliseconds:
            return parseDate(text, format: format).map(Timestamp.init(milliseconds:))
        case .firstOf(let formats):
            for format in formats {
                if let instant = parseDateInstant(text, format: format, defaultOffsetSeconds: defaultOffsetSeconds) {
                    return instant
                }
            }
            return nil
        }
    }

    package static func parseDate(_ text: String, format: DateFormat) -> Int64? {
        switch format {
        case .iso8601:
            return DateCoding.parseISO8601(text)
        case .unixSeconds:
            guard let canonical = DecimalText.canonical(text) else { return nil }
            let parts = canonical.split(separator: ".", maxSplits: 1)
            guard let seconds = Int64(parts[0]) else { return nil }
            var millis: Int64 = 0
            if parts.count == 2 {
                let digits = String(parts[1].prefix(3)).padding(toLength: 3, withPad: "0", startingAt: 0)
                millis = Int64(digits) ?? 0
                if canonical.hasPrefix("-") { millis = -millis }
            }
            let (product, overflow) = seconds.multipliedReportingOverflow(by: 1000)
            return overflow ? nil : product + millis
        case .unixMilliseconds:
            return parseInteger(text)
        case .excelSerial:
            // Days since 1899-12-30 (Excel's day 0, which absorbs its 1900 leap-year bug for
            // dates after February 1900), rounded to the millisecond.
            guard let days = parseDouble(text), days.isFinite, abs(days) < 3_000_000 else { return nil }
            return Int64((days * 86_400_000).rounded()) - 2_209_161_600_000
        case .pattern(let pattern):
            return pattern.parse(text)
        case .firstOf(let formats):
            for format in formats {
                if let millis = parseDate(text, format: format) { return millis }
            }
            return nil
        }
    }

    /// The lowercase 8-4-4-4-12 form of a UUID written with or without dashes or braces.
    package static func canonicalUUID(_ text: String) -> String? {
        if isCanonicalUUID(text) { return text }
        var hex: [UInt8] = []
        hex.reserveCapacity(32)
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") {
            bytes = bytes.dropFirst().dropLast()
        }
        var dashes = 0
        for b in bytes {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): hex.append(b)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): hex.append(b | 0x20)
            case UInt8(ascii: "-"):
                guard [8, 12, 16, 20].contains(hex.count) else { return nil }
                dashes += 1
            default: return nil
            }
        }
        guard hex.count == 32, dashes == 0 || dashes == 4 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (i, b) in hex.enumerated() {
            if i == 8 || i == 12 || i == 16 || i == 20 { out.append(UInt8(ascii: "-")) }
            out.append(b)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// True when `text` is already lowercase 8-4-4-4-12 (the common case, checked without allocating).
    static func isCanonicalUUID(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return false }
        var index = 0
        for b in utf8 {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard b == UInt8(ascii: "-") else { return false }
            } else {
                guard (b >= 48 && b <= 57) || (b >= 97 && b <= 102) else { return false }
            }
            index += 1
        }
        return true
    }

    /// A short excerpt of a value for messages (never a whole large field).
    static func excerpt(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(37)) + "..."
    }
}

/// Why a value could not be coerced or validated.
package struct CoercionFailure: Error, Sendable, Hashable, CustomStringConvertible {
    package var reason: String
    package init(_ reason: String) { self.reason = reason }
    package var description: String { reason }
}

extension Value {
    /// The type name used in messages.
    public var typeName: String {
        switch self {
        case .null: return "nil"
        case .integer: return "integer"
        case .double: return "double"
        case .decimal: return "decimal"
        case .string: return "string"
        case .bool: return "bool"
        case .date: return "date"
        case .binary: return "binary"
        case .uuid: return "uuid"
        case .uri: return "uri"
        case .json: return "json"
        }
    }
}
