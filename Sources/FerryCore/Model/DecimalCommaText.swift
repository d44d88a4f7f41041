/// Numbers written the continental European way: a decimal comma and `.` (or a space, a
/// no-break space, a narrow no-break space) between groups of thousands: `1.234,56`,
/// `-12 500`, `0,5`. Turned into the plain form every number parser reads (`1234.56`).
package enum DecimalCommaText {
    /// The plain spelling of `text`, or nil when it is not a number in this notation. Groups
    /// after a separator must have exactly three digits (`1.23,4` is refused, not misread).
    package static func plain(_ text: String) -> String? {
        var scalars = Substring(text).unicodeScalars[...]
        var result = ""
        if let sign = scalars.first, sign == "-" || sign == "+" {
            if sign == "-" { result.append("-") }
            scalars = scalars.dropFirst()
        }
        var group = 0
        var groups = 0
        var separator: Unicode.Scalar?
        var sawComma = false
        var fraction = 0
        for scalar in scalars {
            switch scalar {
            case "0"..."9":
                result.unicodeScalars.append(scalar)
                if sawComma { fraction += 1 } else { group += 1 }
            case ".", " ", "\u{00A0}", "\u{202F}":
                // One kind of separator per number, between complete groups.
                guard !sawComma, group > 0, separator == nil || separator == scalar else { return nil }
                guard groups == 0 ? group <= 3 : group == 3 else { return nil }
                separator = scalar
                groups += 1
                group = 0
            case ",":
                guard !sawComma, group > 0 else { return nil }
                if groups > 0 && group != 3 { return nil }
                sawComma = true
                result.append(".")
            default:
                return nil
            }
        }
        if groups > 0 && !sawComma && group != 3 { return nil }
        if sawComma && fraction == 0 { return nil }
        guard group > 0 || sawComma else { return nil }
        return result
    }
}
