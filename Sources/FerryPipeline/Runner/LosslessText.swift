import FerryCore

/// The spellings that model inference may read as a typed value without losing what the text
/// says: a value is inferred as a number, boolean, date or UUID only when storing it and writing
/// it back out keeps its meaning. `02134` (a leading zero), `+7095` (a sign), `1.2.3`, `0x1F`,
/// `.5` and `1e400` stay strings.
enum LosslessText {
    /// A canonical integer that fits Int64: `-12`, `0`, `4711`; not `007`, `+5`, `-0`, `1.0`.
    static func isInteger(_ text: String) -> Bool {
        guard let value = Int64(text) else { return false }
        return String(value) == text
    }

    /// A plain decimal number (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, no leading zeros,
    /// no `+`) whose value a Double holds exactly as written (at most about 15 significant digits).
    /// Trailing fractional zeros (`12.50`) are allowed: they do not change the value.
    static func isDouble(_ text: String) -> Bool {
        guard hasPlainNumberSpelling(text), let value = Coercion.parseDouble(text), value.isFinite else { return false }
        guard let exact = DecimalText.canonical(text) else { return false }
        return DecimalText.canonical("\(value)") == exact
    }

    /// A plain decimal number (as for ``isDouble(_:)``) of any length, kept exactly as a decimal.
    static func isDecimal(_ text: String) -> Bool {
        hasPlainNumberSpelling(text) && DecimalText.canonical(text) != nil
    }

    /// A JSON number a Double holds exactly (JSON's grammar already excludes `+` and leading zeros).
    static func isDoubleNumber(_ text: String) -> Bool {
        guard let value = Coercion.parseDouble(text), value.isFinite, let exact = DecimalText.canonical(text) else {
            return false
        }
        return DecimalText.canonical("\(value)") == exact
    }

    /// `true` or `false` in one of the spellings tools write: lower case (ferry's own, JSON's),
    /// capitalized (Python's `True`/`False`, csvkit's) or upper case (`TRUE`/`FALSE`,
    /// spreadsheets'). The value is kept; only the letter case is not (ferry writes `true`).
    /// Mixed case (`tRuE`), `yes`, `1` and `t` stay strings.
    static func isBool(_ text: String) -> Bool {
        switch text {
        case "true", "false", "True", "False", "TRUE", "FALSE": return true
        default: return false
        }
    }

    /// An ISO-8601 date or date-time in UTC (`2024-03-01`, `2024-03-01T10:00:00Z`,
    /// `2024-03-01 10:00:00`): a date with another UTC offset stays a string, since the store
    /// keeps the instant but not the offset it was written in.
    static func isDate(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 10, DateCoding.parseISO8601(text) != nil else { return false }
        for byte in utf8.dropFirst(10) where byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") {
            return false
        }
        return true
    }

    /// A UUID in its canonical lower-case form.
    static func isUUID(_ text: String) -> Bool {
        text.utf8.count == 36 && Coercion.canonicalUUID(text) == text
    }

    private static func hasPlainNumberSpelling(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        func digits() -> Int {
            let count = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        let leadsWithZero = bytes.first == UInt8(ascii: "0")
        let integerDigits = digits()
        guard integerDigits > 0, !(leadsWithZero && integerDigits > 1) else { return false }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}
