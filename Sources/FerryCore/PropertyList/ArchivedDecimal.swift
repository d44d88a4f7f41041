import Foundation

/// An `NSDecimalNumber` as a keyed archive holds it (a decimal default value in a cached
/// model): `NS.mantissa` 16 bytes (eight 16-bit words, least significant first, little-endian
/// when `NS.mantissa.bo` is 1), `NS.exponent` (the value is mantissa × 10^exponent),
/// `NS.length` (words in use), `NS.negative`, `NS.compact` (no trailing zero digit in the
/// mantissa). Keys as Foundation's `-[NSDecimalNumber encodeWithCoder:]` writes them.
struct ArchivedDecimal: Hashable {
    /// The digits without sign or point.
    var mantissa: UInt128
    var exponent: Int
    var isNegative: Bool

    /// Parses decimal text (`-12.50`, `3`, `1e-3` is not accepted); nil for text that is not a
    /// plain decimal number or does not fit Foundation's 38 digits and exponent range.
    init?(_ text: String) {
        var digits = Substring(text.trimmingCharacters(in: .whitespaces))
        isNegative = digits.first == "-"
        if digits.first == "-" || digits.first == "+" { digits = digits.dropFirst() }
        let parts = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard !digits.isEmpty, parts.count <= 2, parts.allSatisfy({ $0.allSatisfy(\.isASCII) }) else { return nil }
        let whole = parts[0]
        let fraction = parts.count == 2 ? parts[1] : ""
        guard !(whole.isEmpty && fraction.isEmpty), (whole + fraction).allSatisfy({ $0 >= "0" && $0 <= "9" })
        else { return nil }
        var value: UInt128 = 0
        var exponent = -fraction.count
        for character in (whole + fraction).drop(while: { $0 == "0" }) {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow, let digit = character.wholeNumberValue else { return nil }
            let (sum, carry) = times.addingReportingOverflow(UInt128(digit))
            guard !carry else { return nil }
            value = sum
        }
        while value != 0 && value % 10 == 0 {
            value /= 10
            exponent += 1
        }
        if value == 0 { exponent = 0 }
        guard (-128...127).contains(exponent) else { return nil }
        mantissa = value
        self.exponent = exponent
        if value == 0 { isNegative = false }
    }

    /// Reads the archived fields; nil when they are not an archived decimal.
    init?(exponent: Int64?, negative: Bool?, mantissa bytes: [UInt8]?, byteOrder: Int64?) {
        guard let exponent, let bytes, bytes.count == 16 else { return nil }
        let bigEndian = byteOrder == 2
        var value: UInt128 = 0
        for word in (0..<8).reversed() {
            let (low, high) = (bytes[word * 2], bytes[word * 2 + 1])
            let number = bigEndian ? UInt16(low) << 8 | UInt16(high) : UInt16(high) << 8 | UInt16(low)
            value = value << 16 | UInt128(number)
        }
        mantissa = value
        self.exponent = Int(exponent)
        isNegative = negative ?? false
    }

    /// The number as decimal text (`-12.5`, `1200`).
    var text: String {
        var digits = String(mantissa)
        if exponent >= 0 {
            if mantissa != 0 { digits += String(repeating: "0", count: exponent) }
        } else {
            let places = -exponent
            if digits.count <= places { digits = String(repeating: "0", count: places - digits.count + 1) + digits }
            digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -places))
        }
        return (isNegative ? "-" : "") + digits
    }

    /// The fields of its archived object.
    var fields: [(String, PropertyListValue)] {
        var bytes: [UInt8] = []
        var length = 0
        for word in 0..<8 {
            let number = UInt16(truncatingIfNeeded: mantissa >> (16 * word))
            if number != 0 { length = word + 1 }
            bytes += [UInt8(number & 0xFF), UInt8(number >> 8)]
        }
        return [
            ("NS.exponent", .integer(Int64(exponent))), ("NS.length", .integer(Int64(length))),
            ("NS.negative", .bool(isNegative)), ("NS.compact", .bool(true)), ("NS.mantissa.bo", .integer(1)),
            ("NS.mantissa", .data(bytes)),
        ]
    }
}
