import Foundation

/// Parsing and formatting of dates without Foundation's formatters, which are far too slow
/// for millions of values.
///
/// Stored form: `YYYY-MM-DDTHH:MM:SS.sssZ` (fixed width, UTC, sorts as text).
package enum DateCoding {
    // MARK: - Calendar arithmetic (Howard Hinnant's civil-date algorithms)

    /// Days since 1970-01-01 for a proleptic Gregorian date.
    package static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    /// The civil date for days since 1970-01-01.
    package static func civil(days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // MARK: - Formatting

    /// The dates a store holds: years 0000 through 9999 UTC, the range of the fixed-width stored
    /// form `YYYY-MM-DDTHH:MM:SS.sssZ` (and of what verify's types check accepts). Coercion
    /// refuses dates outside it.
    package static let storableMilliseconds: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999

    /// Now, in milliseconds since 1970 (the unit of every date ferry stores).
    package static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Now, as ferry writes dates: fixed-width UTC ISO-8601 with milliseconds.
    package static func nowText() -> String { format(nowMilliseconds()) }

    /// `YYYY-MM-DDTHH:MM:SS.sssZ` for milliseconds since the epoch (years 0000–9999).
    package static func format(_ millis: Int64) -> String {
        withFormatted(millis) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the stored form's UTF-8 bytes, formatted on the stack (no allocation for
    /// years 0000–9999): the import hot path binds them directly.
    @inline(__always)
    package static func withFormatted<T>(
        _ millis: Int64, _ body: (UnsafeBufferPointer<UInt8>) throws -> T
    ) rethrows -> T {
        let (dayCount, msOfDay) = Int(millis).quotientAndRemainderFloored(dividingBy: 86_400_000)
        let (year, month, day) = civil(days: dayCount)
        guard year >= 0 && year <= 9999 else {
            // Outside what a store holds (see `storableMilliseconds`): the extended `±YYYYYY` form.
            var bytes = [UInt8](repeating: 0, count: 32)
            let count = format(millis, into: &bytes)
            return try bytes.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[..<count])) }
        }
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            func put(_ value: Int, _ digits: Int, at start: Int) {
                var v = value
                for position in stride(from: start + digits - 1, through: start, by: -1) {
                    buffer[position] = UInt8(48 + v % 10)
                    v /= 10
                }
            }
            put(year, 4, at: 0)
            buffer[4] = UInt8(ascii: "-")
            put(month, 2, at: 5)
            buffer[7] = UInt8(ascii: "-")
            put(day, 2, at: 8)
            buffer[10] = UInt8(ascii: "T")
            put(msOfDay / 3_600_000, 2, at: 11)
            buffer[13] = UInt8(ascii: ":")
            put(msOfDay / 60_000 % 60, 2, at: 14)
            buffer[16] = UInt8(ascii: ":")
            put(msOfDay / 1000 % 60, 2, at: 17)
            buffer[19] = UInt8(ascii: ".")
            put(msOfDay % 1000, 3, at: 20)
            buffer[23] = UInt8(ascii: "Z")
            return try body(UnsafeBufferPointer(buffer))
        }
    }

    /// Writes the stored form into `buffer` (at least 24 bytes) and returns the byte count.
    package static func format(_ millis: Int64, into buffer: inout [UInt8]) -> Int {
        let (dayCount, msOfDay) = Int(millis).quotientAndRemainderFloored(dividingBy: 86_400_000)
        let (year, month, day) = civil(days: dayCount)
        var index = 0
        func put(_ value: Int, digits: Int) {
            var v = value
            var position = index + digits - 1
            while position >= index {
                buffer[position] = UInt8(48 + v % 10)
                v /= 10
                position -= 1
            }
            index += digits
        }
        func char(_ c: UInt8) {
            buffer[index] = c
            index += 1
        }
        if year < 0 || year > 9999 {
            if year < 0 { char(UInt8(ascii: "-")) } else { char(UInt8(ascii: "+")) }
            put(abs(year), digits: 6)
        } else {
            put(year, digits: 4)
        }
        if buffer.count < index + 20 { buffer += [UInt8](repeating: 0, count: 24) }
        char(UInt8(ascii: "-"))
        put(month, digits: 2)
        char(UInt8(ascii: "-"))
        put(day, digits: 2)
        char(UInt8(ascii: "T"))
        put(msOfDay / 3_600_000, digits: 2)
        char(UInt8(ascii: ":"))
        put(msOfDay / 60_000 % 60, digits: 2)
        char(UInt8(ascii: ":"))
        put(msOfDay / 1000 % 60, digits: 2)
        char(UInt8(ascii: "."))
        put(msOfDay % 1000, digits: 3)
        char(UInt8(ascii: "Z"))
        return index
    }

    // MARK: - ISO-8601 parsing

    /// Parses ISO-8601 / RFC 3339 dates: `2024-01-31`, `2024-01-31T12:30`, `2024-01-31 12:30:05`,
    /// fractions of any length (truncated to milliseconds), `Z`, `+02:00`, `+0200`, `+02`.
    /// Text without a zone is read in `defaultOffsetSeconds` (UTC unless a job says otherwise).
    package static func parseISO8601(_ text: String, defaultOffsetSeconds: Int = 0) -> Int64? {
        var text = text
        return text.withUTF8 { parseISO8601(bytes: $0, defaultOffsetSeconds: defaultOffsetSeconds) }
    }

    package static func parseISO8601(bytes: UnsafeBufferPointer<UInt8>, defaultOffsetSeconds: Int = 0) -> Int64? {
        var scanner = ByteScanner(bytes)
        // Expanded years (ISO 8601 §4.1.2.4) carry a sign and six digits: -000044, +010000.
        var year: Int
        if scanner.take(UInt8(ascii: "-")) {
            guard let y = scanner.digits(exactly: 6) else { return nil }
            year = -y
        } else if scanner.take(UInt8(ascii: "+")) {
            guard let y = scanner.digits(exactly: 6) else { return nil }
            year = y
        } else {
            guard let y = scanner.digits(exactly: 4) else { return nil }
            year = y
        }
        guard scanner.take(UInt8(ascii: "-")), let month = scanner.digits(exactly: 2),
            scanner.take(UInt8(ascii: "-")), let day = scanner.digits(exactly: 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month) else { return nil }
        var hour = 0
        var minute = 0
        var second = 0
        var millis = 0
        var offset = defaultOffsetSeconds
        if !scanner.atEnd {
            guard scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: "t")) || scanner.take(UInt8(ascii: " "))
            else { return nil }
            guard let h = scanner.digits(exactly: 2), scanner.take(UInt8(ascii: ":")),
                let m = scanner.digits(exactly: 2)
            else { return nil }
            hour = h
            minute = m
            if scanner.take(UInt8(ascii: ":")) {
                guard let s = scanner.digits(exactly: 2) else { return nil }
                second = s
                if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
                    guard let fraction = scanner.fractionMillis() else { return nil }
                    millis = fraction
                }
            }
            guard hour < 24 || (hour == 24 && minute == 0 && second == 0 && millis == 0), minute < 60, second < 61
            else { return nil }
            if !scanner.atEnd {
                guard let zone = scanner.zoneOffset() else { return nil }
                offset = zone
            }
        }
        guard scanner.atEnd else { return nil }
        let second60 = min(second, 59)  // a leap second is read as :59.999
        let extra = second == 60 ? 999 : millis
        let dayCount = days(year: year, month: month, day: day)
        let seconds = dayCount * 86_400 + hour * 3600 + minute * 60 + second60 - offset
        return Int64(seconds) * 1000 + Int64(extra)
    }
}

extension Int {
    /// Floored division, so that negative times before 1970 land on the right day.
    func quotientAndRemainderFloored(dividingBy divisor: Int) -> (Int, Int) {
        var (q, r) = quotientAndRemainder(dividingBy: divisor)
        if r < 0 {
            q -= 1
            r += divisor
        }
        return (q, r)
    }
}

/// A cursor over UTF-8 bytes for small hand-written parsers.
struct ByteScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { position >= bytes.count }
    var peek: UInt8? { position < bytes.count ? bytes[position] : nil }
    mutating func advance() { position += 1 }

    mutating func take(_ byte: UInt8) -> Bool {
        if peek == byte {
            position += 1
            return true
        }
        return false
    }

    mutating func digits(exactly count: Int) -> Int? {
        guard position + count <= bytes.count else { return nil }
        var value = 0
        for i in 0..<count {
            let b = bytes[position + i]
            guard b >= 48, b <= 57 else { return nil }
            value = value * 10 + Int(b - 48)
        }
        position += count
        return value
    }

    mutating func digits(min: Int, max: Int) -> Int? {
        var value = 0
        var n = 0
        while n < max, let b = peek, b >= 48, b <= 57 {
            value = value * 10 + Int(b - 48)
            position += 1
            n += 1
        }
        return n >= min ? value : nil
    }

    /// Fraction digits after the separator, as milliseconds (extra digits truncated).
    mutating func fractionMillis() -> Int? {
        var value = 0
        var n = 0
        while let b = peek, b >= 48, b <= 57 {
            if n < 3 { value = value * 10 + Int(b - 48) }
            n += 1
            position += 1
        }
        guard n > 0 else { return nil }
        var scale = n
        while scale < 3 {
            value *= 10
            scale += 1
        }
        return value
    }

    /// `Z`, `+HH:MM`, `+HHMM` or `+HH`, as seconds east of UTC.
    mutating func zoneOffset() -> Int? {
        if take(UInt8(ascii: "Z")) || take(UInt8(ascii: "z")) { return 0 }
        let sign: Int
        if take(UInt8(ascii: "+")) { sign = 1 } else if take(UInt8(ascii: "-")) { sign = -1 } else { return nil }
        guard let h = digits(exactly: 2), h <= 23 else { return nil }
        var m = 0
        if take(UInt8(ascii: ":")) {
            guard let mm = digits(exactly: 2) else { return nil }
            m = mm
        } else if let mm = digits(exactly: 2) {
            m = mm
        }
        guard m < 60 else { return nil }
        return sign * (h * 3600 + m * 60)
    }
}
