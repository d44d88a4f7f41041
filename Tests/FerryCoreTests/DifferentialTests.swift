import BigInt
import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// ferry's hand-written dates and decimals against independent references over many random
/// values: Foundation's Gregorian calendar and ISO-8601 formatter for dates, BigInt (and
/// Foundation's `Decimal` where it is exact) for decimal text and arithmetic. Seeded, so a
/// failure names a value that reproduces it.
@Suite struct DifferentialTests {
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    // MARK: Dates

    @Test func civilDatesAgreeWithFoundation() {
        var random = SeededGenerator(state: 1)
        // Years 1…9999 (Foundation's Gregorian calendar switches to Julian before 1582 unless
        // told otherwise; compare from 1583 on, where both are proleptic Gregorian).
        for _ in 0..<20_000 {
            let days = Int.random(
                in: DateCoding.days(year: 1583, month: 1, day: 1)...DateCoding.days(year: 9999, month: 12, day: 31),
                using: &random)
            let date = Date(timeIntervalSince1970: TimeInterval(days) * 86_400)
            let parts = Self.utc.dateComponents([.year, .month, .day], from: date)
            let civil = DateCoding.civil(days: days)
            #expect(civil.year == parts.year && civil.month == parts.month && civil.day == parts.day, "days \(days)")
            #expect(DateCoding.days(year: civil.year, month: civil.month, day: civil.day) == days)
        }
    }

    @Test func formattingAgreesWithFoundationsISO8601Formatter() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var random = SeededGenerator(state: 2)
        let range = DateCoding.parseISO8601("1583-01-01T00:00:00Z")!...DateCoding.storableMilliseconds.upperBound
        for _ in 0..<20_000 {
            let millis = Int64.random(in: range, using: &random)
            let text = DateCoding.format(millis)
            let date = Date(timeIntervalSince1970: TimeInterval(millis / 1000)).addingTimeInterval(
                TimeInterval(millis % 1000) / 1000)
            // Foundation's fraction can be off by one millisecond through binary floating point:
            // compare the seconds exactly and the milliseconds as ferry's integer arithmetic gives them.
            let foundation = formatter.string(from: date)
            #expect(text.prefix(19) == foundation.prefix(19), "millis \(millis): \(text) vs \(foundation)")
            #expect(DateCoding.parseISO8601(text) == millis, "\(text)")
        }
    }

    @Test func parsingWithOffsetsAgreesWithFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        var random = SeededGenerator(state: 3)
        for _ in 0..<5_000 {
            let seconds = Int64.random(in: -12_000_000_000...250_000_000_000, using: &random)
            let offsetMinutes = Int.random(in: -14 * 60...14 * 60, using: &random) / 15 * 15
            formatter.timeZone = TimeZone(secondsFromGMT: offsetMinutes * 60)
            let text = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            #expect(DateCoding.parseISO8601(text) == seconds * 1000, "\(text)")
        }
    }

    // MARK: Decimals

    /// A random decimal text with up to `digits` significant digits and up to `scale` fractional ones.
    static func decimal(_ random: inout SeededGenerator, digits: Int, scale: Int) -> String {
        let count = Int.random(in: 1...digits, using: &random)
        var text = (0..<count).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
        let fraction = Int.random(in: 0...min(scale, count), using: &random)
        if fraction > 0 { text.insert(".", at: text.index(text.endIndex, offsetBy: -fraction)) }
        if text.hasPrefix(".") { text = "0" + text }
        if Bool.random(using: &random) { text = "-" + text }
        return DecimalText.canonical(text)!
    }

    /// The exact value of canonical decimal text: an integer and a power of ten.
    static func exact(_ text: String) -> (value: BigInt, scale: Int) {
        let negative = text.hasPrefix("-")
        let body = negative ? String(text.dropFirst()) : text
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        let scale = parts.count == 2 ? parts[1].count : 0
        let magnitude = BigInt(parts.joined(), radix: 10)!
        return (negative ? -magnitude : magnitude, scale)
    }

    /// Canonical text of `value / 10^scale`.
    static func text(_ value: BigInt, scale: Int) -> String {
        let negative = value < 0
        var digits = String(value.magnitude, radix: 10)
        if scale > 0 {
            if digits.count <= scale { digits = String(repeating: "0", count: scale - digits.count + 1) + digits }
            digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -scale))
        }
        return DecimalText.canonical((negative ? "-" : "") + digits)!
    }

    static func aligned(_ a: String, _ b: String) -> (BigInt, BigInt, Int) {
        let x = exact(a)
        let y = exact(b)
        let scale = max(x.scale, y.scale)
        return (x.value * BigInt(10).power(scale - x.scale), y.value * BigInt(10).power(scale - y.scale), scale)
    }

    @Test(arguments: [(18, 6, 3_000), (60, 30, 1_000), (200, 120, 300)])
    func arithmeticAgreesWithBigInt(digits: Int, scale: Int, count: Int) {
        var random = SeededGenerator(state: UInt64(digits))
        for _ in 0..<count {
            let a = Self.decimal(&random, digits: digits, scale: scale)
            let b = Self.decimal(&random, digits: digits, scale: scale)
            let (x, y, common) = Self.aligned(a, b)
            #expect(DecimalArithmetic.add(a, b) == Self.text(x + y, scale: common), "\(a) + \(b)")
            #expect(DecimalArithmetic.subtract(a, b) == Self.text(x - y, scale: common), "\(a) - \(b)")
            let p = Self.exact(a)
            let q = Self.exact(b)
            #expect(
                DecimalArithmetic.multiply(a, b) == Self.text(p.value * q.value, scale: p.scale + q.scale),
                "\(a) * \(b)")
            #expect(DecimalText.compare(a, b) == (x < y ? -1 : x > y ? 1 : 0), "compare \(a) \(b)")
            guard y != 0 else { continue }
            // a / b = x / y exactly; rounded half away from zero to divisionScale places.
            let places = DecimalArithmetic.divisionScale
            let numerator = x.magnitude * BigInt(10).power(places).magnitude
            let denominator = y.magnitude
            let rounded = BigInt((2 * numerator + denominator) / (2 * denominator))
            let expected = Self.text((x < 0) != (y < 0) ? -rounded : rounded, scale: places)
            #expect(DecimalArithmetic.divide(a, b) == expected, "\(a) / \(b)")
        }
    }

    @Test func canonicalTextAgreesWithFoundationDecimal() {
        var random = SeededGenerator(state: 7)
        for _ in 0..<10_000 {
            // Up to 30 significant digits: Foundation's Decimal is exact there.
            let digits = (0..<Int.random(in: 1...30, using: &random)).map { _ in
                String(Int.random(in: 0...9, using: &random))
            }.joined()
            let exponent = Int.random(in: -20...20, using: &random)
            let text = (Bool.random(using: &random) ? "-" : "") + digits + "e\(exponent)"
            let canonical = DecimalText.canonical(text)
            let foundation = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
            #expect(canonical != nil && foundation != nil, "\(text)")
            guard let canonical, let foundation else { continue }
            #expect(
                Decimal(string: canonical, locale: Locale(identifier: "en_US_POSIX")) == foundation,
                "\(text) → \(canonical)")
            #expect(DecimalText.isCanonical(canonical))
        }
    }
}
