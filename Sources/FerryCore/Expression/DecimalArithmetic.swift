/// Exact arithmetic on canonical decimal text (``Value/decimal(_:)``): addition, subtraction and
/// multiplication are exact at any length; division is rounded half away from zero to
/// ``divisionScale`` fractional digits.
///
/// ```swift
/// DecimalArithmetic.add("0.1", "0.2")            // "0.3"
/// DecimalArithmetic.divide("1", "3")             // "0.3333333333333333"
/// ```
package enum DecimalArithmetic {
    /// Fractional digits kept by ``divide(_:_:)``.
    package static let divisionScale = 16

    /// `a + b`, exactly. Both operands must be canonical (or at least `[-]digits[.digits]`).
    package static func add(_ a: String, _ b: String) -> String {
        if let fast = smallSum(a, b, negateSecond: false) { return fast }
        let x = Number(a)
        let y = Number(b)
        return x.adding(y).text
    }

    /// `a - b`, exactly.
    package static func subtract(_ a: String, _ b: String) -> String {
        if let fast = smallSum(a, b, negateSecond: true) { return fast }
        var y = Number(b)
        y.negative.toggle()
        return Number(a).adding(y).text
    }

    /// `a * b`, exactly.
    package static func multiply(_ a: String, _ b: String) -> String {
        if let (x, xs) = small(a), let (y, ys) = small(b) {
            let (product, overflow) = x.multipliedReportingOverflow(by: y)
            if !overflow { return format(product, scale: xs + ys) }
        }
        let x = Number(a)
        let y = Number(b)
        let product = Number(
            negative: x.negative != y.negative, digits: multiplyMagnitudes(x.digits, y.digits), scale: x.scale + y.scale
        )
        return product.text
    }

    /// `a / b` rounded half away from zero to ``divisionScale`` fractional digits, or nil when
    /// `b` is zero.
    package static func divide(_ a: String, _ b: String) -> String? {
        let x = Number(a)
        let y = Number(b)
        guard !y.isZero else { return nil }
        // Quotient with one extra digit: (x.digits * 10^k) / y.digits has scale divisionScale + 1.
        var numerator = x.digits
        var denominator = y.digits
        let k = divisionScale + 1 + y.scale - x.scale
        if k >= 0 {
            numerator += [UInt8](repeating: 0, count: k)
        } else {
            denominator += [UInt8](repeating: 0, count: -k)
        }
        var quotient = divideMagnitudes(numerator, denominator)
        let last = quotient.removeLast()
        if quotient.isEmpty { quotient = [0] }
        if last >= 5 { quotient = addMagnitudes(quotient, [1]) }
        return Number(negative: x.negative != y.negative, digits: quotient, scale: divisionScale).text
    }

    /// The remainder of `a / b` truncated toward zero (the sign follows `a`), or nil when `b` is zero.
    package static func remainder(_ a: String, _ b: String) -> String? {
        let x = Number(a)
        let y = Number(b)
        guard !y.isZero else { return nil }
        let scale = max(x.scale, y.scale)
        let xd = x.digits + [UInt8](repeating: 0, count: scale - x.scale)
        let yd = y.digits + [UInt8](repeating: 0, count: scale - y.scale)
        let quotient = divideMagnitudes(xd, yd)
        let rest = subtractMagnitudes(xd, multiplyMagnitudes(quotient, yd))
        return Number(negative: x.negative, digits: rest, scale: scale).text
    }

    /// `a` rounded half away from zero to `places` fractional digits (`places` ≥ 0).
    package static func round(_ a: String, places: Int) -> String {
        let x = Number(a)
        guard x.scale > places else { return x.text }
        let drop = x.scale - places
        var kept = Array(x.digits.dropLast(min(drop, x.digits.count)))
        let next = drop <= x.digits.count ? x.digits[x.digits.count - drop] : 0
        if kept.isEmpty { kept = [0] }
        if next >= 5 { kept = addMagnitudes(kept, [1]) }
        return Number(negative: x.negative, digits: kept, scale: places).text
    }

    /// `-a`.
    package static func negate(_ a: String) -> String {
        if a.hasPrefix("-") { return String(a.dropFirst()) }
        return a == "0" ? a : "-" + a
    }

    /// `|a|`.
    package static func absolute(_ a: String) -> String {
        a.hasPrefix("-") ? String(a.dropFirst()) : a
    }

    /// The integer part of `a` (truncated toward zero), as decimal text.
    package static func truncated(_ a: String) -> String {
        guard let point = a.firstIndex(of: ".") else { return a }
        let integer = String(a[..<point])
        return integer == "-0" ? "0" : integer
    }

    // MARK: - Fast path: up to 18 significant digits in an Int64 with a scale

    /// The value as an integer mantissa and a scale, when it has at most 18 digits.
    static func small(_ text: String) -> (Int64, Int)? {
        var mantissa: Int64 = 0
        var scale = 0
        var negative = false
        var seenPoint = false
        var count = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "-"): negative = true
            case UInt8(ascii: "."): seenPoint = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                count += 1
                guard count <= 18 else { return nil }
                mantissa = mantissa * 10 + Int64(byte - 48)
                if seenPoint { scale += 1 }
            default: return nil
            }
        }
        return (negative ? -mantissa : mantissa, scale)
    }

    private static let powersOfTen: [Int64] = (0...18).map { (0..<$0).reduce(Int64(1)) { value, _ in value * 10 } }

    private static func smallSum(_ a: String, _ b: String, negateSecond: Bool) -> String? {
        guard let (x, xs) = small(a), let (y0, ys) = small(b) else { return nil }
        let y = negateSecond ? -y0 : y0
        let scale = max(xs, ys)
        guard scale - xs <= 18, scale - ys <= 18 else { return nil }
        let (xa, o1) = x.multipliedReportingOverflow(by: powersOfTen[scale - xs])
        let (ya, o2) = y.multipliedReportingOverflow(by: powersOfTen[scale - ys])
        let (sum, o3) = xa.addingReportingOverflow(ya)
        guard !o1, !o2, !o3 else { return nil }
        return format(sum, scale: scale)
    }

    /// Canonical text of `mantissa × 10^-scale`.
    static func format(_ mantissa: Int64, scale: Int) -> String {
        var digits = Array(String(mantissa.magnitude).utf8)
        if digits.count <= scale { digits = [UInt8](repeating: 48, count: scale - digits.count + 1) + digits }
        var fraction = Array(digits[(digits.count - scale)...])
        while fraction.last == 48 { fraction.removeLast() }
        var out: [UInt8] = mantissa < 0 ? [UInt8(ascii: "-")] : []
        out += digits[..<(digits.count - scale)]
        if !fraction.isEmpty {
            out.append(UInt8(ascii: "."))
            out += fraction
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - Representation

    /// Sign, decimal digits of the magnitude (most significant first) and number of fractional digits.
    struct Number {
        var negative: Bool
        var digits: [UInt8]
        var scale: Int

        init(negative: Bool, digits: [UInt8], scale: Int) {
            self.negative = negative
            self.digits = digits
            self.scale = scale
        }

        init(_ text: String) {
            negative = false
            digits = []
            scale = 0
            var seenPoint = false
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "-"): negative = true
                case UInt8(ascii: "."): seenPoint = true
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    digits.append(byte - 48)
                    if seenPoint { scale += 1 }
                default: break
                }
            }
            if digits.isEmpty { digits = [0] }
        }

        var isZero: Bool { digits.allSatisfy { $0 == 0 } }

        func adding(_ other: Number) -> Number {
            let scale = max(self.scale, other.scale)
            let a = digits + [UInt8](repeating: 0, count: scale - self.scale)
            let b = other.digits + [UInt8](repeating: 0, count: scale - other.scale)
            if negative == other.negative {
                return Number(negative: negative, digits: addMagnitudes(a, b), scale: scale)
            }
            if compareMagnitudes(a, b) >= 0 {
                return Number(negative: negative, digits: subtractMagnitudes(a, b), scale: scale)
            }
            return Number(negative: other.negative, digits: subtractMagnitudes(b, a), scale: scale)
        }

        /// Canonical text.
        var text: String {
            var integer = digits.count > scale ? Array(digits[..<(digits.count - scale)]) : []
            var fraction =
                digits.count > scale
                ? Array(digits[(digits.count - scale)...])
                : [UInt8](repeating: 0, count: scale - digits.count) + digits
            while integer.count > 1, integer.first == 0 { integer.removeFirst() }
            if integer.isEmpty { integer = [0] }
            while fraction.last == 0 { fraction.removeLast() }
            let zero = integer == [0] && fraction.isEmpty
            var bytes: [UInt8] = []
            bytes.reserveCapacity(integer.count + fraction.count + 2)
            if negative && !zero { bytes.append(UInt8(ascii: "-")) }
            bytes += integer.map { $0 + 48 }
            if !fraction.isEmpty {
                bytes.append(UInt8(ascii: "."))
                bytes += fraction.map { $0 + 48 }
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    // MARK: - Magnitudes (decimal digit arrays, most significant first)

    static func stripped(_ digits: [UInt8]) -> [UInt8] {
        guard let first = digits.firstIndex(where: { $0 != 0 }) else { return [0] }
        return Array(digits[first...])
    }

    static func compareMagnitudes(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let a = stripped(a)
        let b = stripped(b)
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return 0
    }

    static func addMagnitudes(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: max(a.count, b.count) + 1)
        var i = a.count - 1
        var j = b.count - 1
        var k = result.count - 1
        var carry: UInt8 = 0
        while k >= 0 {
            var sum = carry
            if i >= 0 { sum += a[i] }
            if j >= 0 { sum += b[j] }
            result[k] = sum % 10
            carry = sum / 10
            i -= 1
            j -= 1
            k -= 1
        }
        return stripped(result)
    }

    /// `a - b` for `a ≥ b`.
    static func subtractMagnitudes(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = a
        var borrow: Int = 0
        var j = b.count - 1
        var i = a.count - 1
        while i >= 0 {
            var difference = Int(a[i]) - borrow - (j >= 0 ? Int(b[j]) : 0)
            if difference < 0 {
                difference += 10
                borrow = 1
            } else {
                borrow = 0
            }
            result[i] = UInt8(difference)
            i -= 1
            j -= 1
        }
        return stripped(result)
    }

    static func multiplyMagnitudes(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [Int](repeating: 0, count: a.count + b.count)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                result[i + j + 1] += Int(a[i]) * Int(b[j])
            }
        }
        for k in stride(from: result.count - 1, to: 0, by: -1) {
            result[k - 1] += result[k] / 10
            result[k] %= 10
        }
        return stripped(result.map { UInt8($0) })
    }

    /// The integer quotient `a / b` (`b` not zero), by schoolbook long division.
    static func divideMagnitudes(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        let divisor = stripped(b)
        var quotient: [UInt8] = []
        quotient.reserveCapacity(a.count)
        var remainder: [UInt8] = [0]
        for digit in a {
            remainder = stripped(remainder + [digit])
            var count: UInt8 = 0
            while compareMagnitudes(remainder, divisor) >= 0 {
                remainder = subtractMagnitudes(remainder, divisor)
                count += 1
            }
            quotient.append(count)
        }
        return stripped(quotient)
    }
}
