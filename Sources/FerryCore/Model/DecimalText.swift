/// Exact decimal numbers as canonical text: parsing, canonicalising and comparing without
/// rounding through binary floating point.
package enum DecimalText {
    /// The canonical form of a decimal written as `[+-]digits[.digits][e[+-]digits]`, or nil.
    /// Canonical: no `+`, no exponent, no leading zeros, no trailing fractional zeros, `0` not `-0`.
    /// Exponents beyond ±4000 are refused rather than expanded into huge strings.
    package static func canonical(_ text: String) -> String? {
        var negative = false
        var intDigits: [UInt8] = []
        var fracDigits: [UInt8] = []
        var exponent = 0
        var utf8 = Array(text.utf8)[...]
        guard !utf8.isEmpty else { return nil }
        if utf8.first == UInt8(ascii: "-") || utf8.first == UInt8(ascii: "+") {
            negative = utf8.first == UInt8(ascii: "-")
            utf8 = utf8.dropFirst()
        }
        var sawDigit = false
        while let b = utf8.first, b >= 48, b <= 57 {
            intDigits.append(b)
            sawDigit = true
            utf8 = utf8.dropFirst()
        }
        if utf8.first == UInt8(ascii: ".") {
            utf8 = utf8.dropFirst()
            while let b = utf8.first, b >= 48, b <= 57 {
                fracDigits.append(b)
                sawDigit = true
                utf8 = utf8.dropFirst()
            }
        }
        guard sawDigit else { return nil }
        if let e = utf8.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            utf8 = utf8.dropFirst()
            var expNegative = false
            if utf8.first == UInt8(ascii: "-") || utf8.first == UInt8(ascii: "+") {
                expNegative = utf8.first == UInt8(ascii: "-")
                utf8 = utf8.dropFirst()
            }
            var expDigits = 0
            var value = 0
            while let b = utf8.first, b >= 48, b <= 57 {
                value = value * 10 + Int(b - 48)
                expDigits += 1
                guard value <= 4000 else { return nil }
                utf8 = utf8.dropFirst()
            }
            guard expDigits > 0 else { return nil }
            exponent = expNegative ? -value : value
        }
        guard utf8.isEmpty else { return nil }
        // Shift the decimal point by the exponent.
        var digits = intDigits + fracDigits
        var pointIndex = intDigits.count + exponent
        if pointIndex < 0 {
            digits = [UInt8](repeating: 48, count: -pointIndex) + digits
            pointIndex = 0
        }
        if pointIndex > digits.count {
            digits += [UInt8](repeating: 48, count: pointIndex - digits.count)
        }
        var integerPart = Array(digits[0..<pointIndex])
        var fractionPart = Array(digits[pointIndex...])
        while integerPart.count > 1, integerPart.first == 48 { integerPart.removeFirst() }
        if integerPart.isEmpty { integerPart = [48] }
        while fractionPart.last == 48 { fractionPart.removeLast() }
        let isZero = integerPart == [48] && fractionPart.isEmpty
        var out: [UInt8] = []
        if negative && !isZero { out.append(UInt8(ascii: "-")) }
        out += integerPart
        if !fractionPart.isEmpty {
            out.append(UInt8(ascii: "."))
            out += fractionPart
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// True when `text` is already canonical (`-12.5`, `0`, `3`), checked without allocating.
    package static func isCanonical(_ text: String) -> Bool {
        var iterator = text.utf8.makeIterator()
        guard var b = iterator.next() else { return false }
        var negative = false
        if b == UInt8(ascii: "-") {
            negative = true
            guard let next = iterator.next() else { return false }
            b = next
        }
        guard b >= 48, b <= 57 else { return false }
        let leadingZero = b == 48
        var integerDigits = 1
        var sawPoint = false
        var fractionDigits = 0
        var last = b
        while let c = iterator.next() {
            if c == UInt8(ascii: ".") {
                guard !sawPoint else { return false }
                sawPoint = true
            } else if c >= 48 && c <= 57 {
                if sawPoint { fractionDigits += 1 } else { integerDigits += 1 }
            } else {
                return false
            }
            last = c
        }
        if leadingZero && integerDigits > 1 { return false }
        if sawPoint && (fractionDigits == 0 || last == 48) { return false }
        if negative && leadingZero && !sawPoint { return false }  // "-0"
        return true
    }

    /// Compares two canonical decimals exactly: -1, 0 or 1.
    package static func compare(_ a: String, _ b: String) -> Int {
        let aNegative = a.hasPrefix("-")
        let bNegative = b.hasPrefix("-")
        if aNegative != bNegative { return aNegative ? -1 : 1 }
        let magnitude = compareMagnitude(aNegative ? String(a.dropFirst()) : a, bNegative ? String(b.dropFirst()) : b)
        return aNegative ? -magnitude : magnitude
    }

    private static func compareMagnitude(_ a: String, _ b: String) -> Int {
        let aParts = a.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let bParts = b.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let aInt = aParts[0]
        let bInt = bParts[0]
        if aInt.count != bInt.count { return aInt.count < bInt.count ? -1 : 1 }
        if aInt != bInt { return aInt < bInt ? -1 : 1 }
        let aFrac = aParts.count > 1 ? aParts[1] : ""
        let bFrac = bParts.count > 1 ? bParts[1] : ""
        if aFrac == bFrac { return 0 }
        return aFrac < bFrac ? -1 : 1  // same-length integer parts: lexicographic fraction order is numeric order
    }
}
