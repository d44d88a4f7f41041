/// A compiled Unicode date pattern (the subset of `DateFormatter` patterns that data files use):
/// `yyyy yy MM M MMM MMMM dd d HH H hh h mm m ss s S… a EEE EEEE X XX XXX Z ZZZZZ`, quoted
/// literals (`'T'`) and any other character as a literal.
public struct DatePattern: Sendable, Hashable {
    enum Token: Sendable, Hashable {
        case year(digits: Int)  // 4: exactly four digits (or more with sign), 2: two-digit year 1970-2069
        case month(digits: Int)  // 1: 1-2 digits, 2: exactly 2
        case monthName  // Jan / January
        case day(digits: Int)
        case hour24(digits: Int)
        case hour12(digits: Int)
        case minute(digits: Int)
        case second(digits: Int)
        case fraction(digits: Int)
        case amPm
        case weekday  // parsed and ignored
        case zone  // Z, ±HH:MM, ±HHMM, ±HH
        case literal(UInt8)
    }

    /// The pattern as written.
    public let text: String
    let tokens: [Token]

    /// Compiles a pattern, or fails with a message naming the unsupported letter.
    public static func compile(_ text: String) -> Result<DatePattern, FerryError> {
        let bytes = Array(text.utf8)
        var tokens: [Token] = []
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "'") {
                var j = i + 1
                while j < bytes.count, bytes[j] != UInt8(ascii: "'") {
                    tokens.append(.literal(bytes[j]))
                    j += 1
                }
                if j == i + 1, j < bytes.count { tokens.append(.literal(c)) }  // '' is a quote
                i = j + 1
                continue
            }
            let isLetter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
            guard isLetter else {
                tokens.append(.literal(c))
                i += 1
                continue
            }
            var run = 1
            while i + run < bytes.count, bytes[i + run] == c { run += 1 }
            let token: Token
            switch Character(UnicodeScalar(c)) {
            case "y", "u": token = .year(digits: run == 2 ? 2 : 4)
            case "M", "L": token = run >= 3 ? .monthName : .month(digits: run)
            case "d": token = .day(digits: run)
            case "H": token = .hour24(digits: run)
            case "h": token = .hour12(digits: run)
            case "m": token = .minute(digits: run)
            case "s": token = .second(digits: run)
            case "S": token = .fraction(digits: run)
            case "a": token = .amPm
            case "E": token = .weekday
            case "X", "x", "Z": token = .zone
            default:
                return .failure(
                    FerryError(
                        .invalidDefinition,
                        "unsupported letter '\(Character(UnicodeScalar(c)))' in date pattern '\(text)'",
                        notes: [
                            "supported: yyyy yy MM M MMM dd d HH H hh h mm ss S… a EEE X XXX Z, and 'quoted' literals"
                        ]))
            }
            tokens.append(token)
            i += run
        }
        return .success(DatePattern(text: text, tokens: tokens))
    }

    static let monthNames: [[UInt8]] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ].map { Array($0.utf8) }

    /// Milliseconds since the epoch, or nil when the text does not match the pattern.
    public func parse(_ text: String, defaultOffsetSeconds: Int = 0) -> Int64? {
        var text = text
        return text.withUTF8 { parse(bytes: $0, defaultOffsetSeconds: defaultOffsetSeconds) }
    }

    /// Milliseconds since the epoch (a fraction's digits below the millisecond dropped), or nil
    /// when the text does not match the pattern.
    package func parse(bytes: UnsafeBufferPointer<UInt8>, defaultOffsetSeconds: Int = 0) -> Int64? {
        scan(bytes, defaultOffsetSeconds: defaultOffsetSeconds).map { $0.wholeSecond + Int64($0.millis) }
    }

    /// Whole milliseconds since the epoch; nil when the text does not match the pattern or
    /// spells a fraction of a second finer than the millisecond (the import fast path leaves
    /// those to ``parseInstant(_:defaultOffsetSeconds:)``).
    package func parseWholeMilliseconds(bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard let parts = scan(bytes, defaultOffsetSeconds: 0), parts.fraction.count <= 3 else { return nil }
        return parts.wholeSecond + Int64(parts.millis)
    }

    /// The instant the text spells with every fractional digit it gives: up to three as whole
    /// milliseconds, more as the instant they spell (as ``DateCoding`` reads ISO-8601 text), so
    /// `ss.SSSSSS` keeps microseconds. Nil when the text does not match the pattern.
    package func parseInstant(_ text: String, defaultOffsetSeconds: Int = 0) -> Timestamp? {
        var text = text
        return text.withUTF8 { bytes -> Timestamp? in
            guard let parts = scan(bytes, defaultOffsetSeconds: defaultOffsetSeconds) else { return nil }
            guard parts.fraction.count > 3 else {
                return Timestamp(milliseconds: parts.wholeSecond + Int64(parts.millis))
            }
            return DateCoding.instant(wholeMillis: parts.wholeSecond, fraction: Array(bytes[parts.fraction]))
        }
    }

    /// Reads the text: the whole second as milliseconds since the epoch, the fraction as
    /// milliseconds, and where the fraction's digits are (empty without a fraction).
    private func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, defaultOffsetSeconds: Int
    ) -> (wholeSecond: Int64, millis: Int, fraction: Range<Int>)? {
        var fractionDigits = 0..<0
        var s = ByteScanner(bytes)
        var year = 1970
        var month = 1
        var day = 1
        var hour = 0
        var minute = 0
        var second = 0
        var millis = 0
        var pm: Bool? = nil
        var offset = defaultOffsetSeconds
        for token in tokens {
            switch token {
            case .year(let digits):
                if digits == 2 {
                    guard let y = s.digits(exactly: 2) else { return nil }
                    year = y < 70 ? 2000 + y : 1900 + y
                } else {
                    guard let y = s.digits(min: 4, max: 4) else { return nil }
                    year = y
                }
            case .month(let digits):
                guard let v = digits == 1 ? s.digits(min: 1, max: 2) : s.digits(exactly: 2) else { return nil }
                month = v
            case .monthName:
                guard s.position + 3 <= bytes.count else { return nil }
                let prefix = (0..<3).map { bytes[s.position + $0] | 0x20 }
                guard let index = DatePattern.monthNames.firstIndex(of: prefix) else { return nil }
                month = index + 1
                s.position += 3
                while let b = s.peek, (b | 0x20) >= 97, (b | 0x20) <= 122 { s.advance() }
            case .day(let digits):
                guard let v = digits == 1 ? s.digits(min: 1, max: 2) : s.digits(exactly: 2) else { return nil }
                day = v
            case .hour24(let digits), .hour12(let digits):
                guard let v = digits == 1 ? s.digits(min: 1, max: 2) : s.digits(exactly: 2) else { return nil }
                hour = v
            case .minute(let digits):
                guard let v = digits == 1 ? s.digits(min: 1, max: 2) : s.digits(exactly: 2) else { return nil }
                minute = v
            case .second(let digits):
                guard let v = digits == 1 ? s.digits(min: 1, max: 2) : s.digits(exactly: 2) else { return nil }
                second = v
            case .fraction:
                let start = s.position
                guard let v = s.fractionMillis() else { return nil }
                millis = v
                fractionDigits = start..<s.position
            case .amPm:
                guard s.position + 2 <= bytes.count else { return nil }
                let first = bytes[s.position] | 0x20
                guard first == UInt8(ascii: "a") || first == UInt8(ascii: "p"),
                    bytes[s.position + 1] | 0x20 == UInt8(ascii: "m")
                else { return nil }
                pm = first == UInt8(ascii: "p")
                s.position += 2
            case .weekday:
                while let b = s.peek, (b | 0x20) >= 97, (b | 0x20) <= 122 { s.advance() }
            case .zone:
                guard let z = s.zoneOffset() else { return nil }
                offset = z
            case .literal(let byte):
                guard s.take(byte) else { return nil }
            }
        }
        guard s.atEnd else { return nil }
        if let pm {
            guard (1...12).contains(hour) else { return nil }
            hour = hour % 12 + (pm ? 12 : 0)
        }
        guard (1...12).contains(month), day >= 1, day <= DateCoding.daysInMonth(year: year, month: month),
            hour < 24, minute < 60, second < 60
        else { return nil }
        let days = DateCoding.days(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return (Int64(seconds) * 1000, millis, fractionDigits)
    }
}
