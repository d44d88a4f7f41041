/// The text form of a ``Timestamp``: whole milliseconds exactly as ferry has always written dates
/// (`2019-01-14T19:29:10.058Z`); an instant between two milliseconds (a Core Data date) with the
/// fractional digits that give its double back (`2019-01-14T19:29:10.058821Z`, at least four
/// digits, so the form never reads as whole milliseconds).
extension DateCoding {
    /// The stored form of `instant` (see the extension's summary).
    package static func format(_ instant: Timestamp) -> String {
        instant.isWholeMilliseconds ? format(instant.milliseconds) : formatBetweenMilliseconds(instant.referenceSeconds)
    }

    /// Calls `body` with the stored form's UTF-8 bytes (no allocation for whole milliseconds).
    @inline(__always)
    package static func withFormatted<T>(
        _ instant: Timestamp, _ body: (UnsafeBufferPointer<UInt8>) throws -> T
    ) rethrows -> T {
        if instant.isWholeMilliseconds { return try withFormatted(instant.milliseconds, body) }
        var text = formatBetweenMilliseconds(instant.referenceSeconds)
        return try text.withUTF8 { try body($0) }
    }

    /// Reads the stored form back: up to three fractional digits as whole milliseconds (as
    /// ``parseISO8601(_:defaultOffsetSeconds:)`` reads them), more as the exact instant they
    /// spell (the nearest reference-seconds double). Nil for text that is not a UTC date in the
    /// stored form's shape.
    package static func parseStored(_ text: String) -> Timestamp? {
        let bytes = Array(text.utf8)
        guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")), bytes.last == UInt8(ascii: "Z"),
            bytes.count - dot - 2 > 3
        else { return parseISO8601(text).map(Timestamp.init(milliseconds:)) }
        let fraction = Array(bytes[(dot + 1)..<(bytes.count - 1)])
        guard fraction.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let wholeMillis = parseISO8601(String(decoding: bytes[..<dot] + [UInt8(ascii: "Z")], as: UTF8.self))
        else { return nil }
        return instant(wholeMillis: wholeMillis, fraction: fraction)
    }

    /// Parses an ISO-8601 date (every form ``parseISO8601(_:defaultOffsetSeconds:)`` reads) with
    /// every fractional digit it gives: up to three as whole milliseconds, more as the instant
    /// they spell (the nearest reference-seconds double; for the text ferry exports a Core Data
    /// date as, the store's double bit for bit: `…T12:19:29.638733Z` is `639490769.638733`).
    /// How imports read ISO-8601 dates, so that no digit below the millisecond is lost.
    package static func parseISO8601Instant(_ text: String, defaultOffsetSeconds: Int = 0) -> Timestamp? {
        let bytes = Array(text.utf8)
        guard
            let separator = bytes.firstIndex(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ",") }),
            case let digitsEnd = bytes[(separator + 1)...].firstIndex(where: { $0 < 48 || $0 > 57 }) ?? bytes.endIndex,
            digitsEnd - separator - 1 > 3
        else {
            return parseISO8601(text, defaultOffsetSeconds: defaultOffsetSeconds).map(Timestamp.init(milliseconds:))
        }
        // The instant's whole seconds (zone applied), then its fraction exactly.
        let whole = String(decoding: bytes[..<separator] + bytes[digitsEnd...], as: UTF8.self)
        guard let wholeMillis = parseISO8601(whole, defaultOffsetSeconds: defaultOffsetSeconds) else { return nil }
        // A leap second (:60) reads as :59.999: kept to the millisecond, as parseISO8601 reads it.
        guard wholeMillis % 1000 == 0 else {
            return parseISO8601(text, defaultOffsetSeconds: defaultOffsetSeconds).map(Timestamp.init(milliseconds:))
        }
        return instant(wholeMillis: wholeMillis, fraction: Array(bytes[(separator + 1)..<digitsEnd]))
    }

    /// True when ISO-8601 text has more than three fractional digits (a fraction of a second
    /// finer than the millisecond, which ``parseISO8601Instant(_:defaultOffsetSeconds:)`` keeps).
    package static func hasSubMillisecondDigits(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let separator = bytes.firstIndex(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ",") })
        else { return false }
        var count = 0
        for byte in bytes[(separator + 1)...] {
            guard byte >= 48, byte <= 57 else { break }
            count += 1
        }
        return count > 3
    }

    /// The instant `wholeMillis` (a whole second) plus the decimal fraction `0.<fraction>` of a
    /// second, as the nearest reference-seconds double.
    package static func instant(wholeMillis: Int64, fraction: [UInt8]) -> Timestamp? {
        let offset = Int64(Timestamp.referenceDateOffset)
        let whole = wholeMillis / 1000 - offset  // seconds since 2001, the integer part of the instant
        let decimal: String
        if whole >= 0 {
            decimal = "\(whole)." + String(decoding: fraction, as: UTF8.self)
        } else if fraction.allSatisfy({ $0 == UInt8(ascii: "0") }) {
            decimal = "\(whole)"
        } else {
            // whole + 0.F = -((|whole| - 1) + (1 - 0.F))
            decimal = "-\(-whole - 1)." + String(decoding: complement(fraction), as: UTF8.self)
        }
        return Double(decimal).flatMap(Timestamp.init(referenceSeconds:))
    }

    /// The text of reference seconds that are no whole millisecond.
    private static func formatBetweenMilliseconds(_ seconds: Double) -> String {
        // The shortest decimal that reads back as `seconds`, moved to seconds since 1970.
        let (negative, integerDigits, fractionDigits) = plainDecimal(seconds)
        let offset = Int64(Timestamp.referenceDateOffset)
        let integer = Int64(String(decoding: integerDigits, as: UTF8.self)) ?? 0
        var whole: Int64
        var fraction: [UInt8]
        if !negative || fractionDigits.isEmpty {
            whole = negative ? offset - integer : offset + integer
            fraction = fractionDigits
        } else {
            whole = offset - integer - 1
            fraction = complement(fractionDigits)
        }
        while fraction.count < 4 { fraction.append(UInt8(ascii: "0")) }
        var text = Array(format(whole * 1000).utf8)
        text.removeLast(4)  // "000Z"
        text += fraction
        text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }

    /// `1 - 0.F` as the digits after the point (no trailing zeros), for digits `F` that are not
    /// all zero: the nines' complement of `F`, plus one in the last place.
    package static func complement(_ digits: [UInt8]) -> [UInt8] {
        var result = digits.map { UInt8(ascii: "9") - ($0 - UInt8(ascii: "0")) }
        var index = result.count - 1
        while index >= 0 {
            if result[index] == UInt8(ascii: "9") {
                result[index] = UInt8(ascii: "0")
                index -= 1
            } else {
                result[index] += 1
                break
            }
        }
        while result.count > 1, result.last == UInt8(ascii: "0") { result.removeLast() }
        return result
    }

    /// The sign, integer digits and fraction digits (no trailing zeros) of the shortest decimal
    /// that reads back as `value`, without an exponent.
    private static func plainDecimal(_ value: Double) -> (negative: Bool, integer: [UInt8], fraction: [UInt8]) {
        let text = Array(value.magnitude.description.utf8)
        var mantissa = text[...]
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            mantissa = text[..<e]
            exponent = Int(String(decoding: text[(e + 1)...], as: UTF8.self)) ?? 0
        }
        let point = mantissa.firstIndex(of: UInt8(ascii: ".")) ?? mantissa.endIndex
        let digits = Array(mantissa[..<point]) + Array(mantissa[point...].dropFirst())
        let integerCount = point - mantissa.startIndex + exponent
        var integer: [UInt8]
        var fraction: [UInt8]
        if integerCount <= 0 {
            integer = [UInt8(ascii: "0")]
            fraction = [UInt8](repeating: UInt8(ascii: "0"), count: -integerCount) + digits
        } else if integerCount >= digits.count {
            integer = digits + [UInt8](repeating: UInt8(ascii: "0"), count: integerCount - digits.count)
            fraction = []
        } else {
            integer = Array(digits[..<integerCount])
            fraction = Array(digits[integerCount...])
        }
        while integer.count > 1, integer.first == UInt8(ascii: "0") { integer.removeFirst() }
        while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
        return (value.sign == .minus, integer, fraction)
    }
}
