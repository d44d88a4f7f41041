import Foundation

/// Value helpers shared by compiled expressions: truth, number views, comparison, conversions.
enum ExpressionRuntime {
    /// Conditions: `true` is true; `false` and nil are false.
    @inline(__always)
    static func truth(_ value: Value) -> Bool {
        if case .bool(let flag) = value { return flag }
        return false
    }

    /// `.null` for nil, else a runtime error saying what was expected.
    static func nullOrFail(
        _ value: Value, _ expected: String, _ site: ExpressionSite, _ context: any ExpressionContext
    ) throws(FerryError) -> Value {
        if value.isNull { return .null }
        throw site.fail("expected \(expected) but found \(value.typeName)", context)
    }

    /// Canonical decimal text of a number value.
    static func decimalText(_ value: Value) -> String? {
        switch value {
        case .integer(let v): return String(v)
        case .decimal(let text): return text
        case .double(let v): return v.isFinite ? DecimalText.canonical(String(v)) : nil
        default: return nil
        }
    }

    static func doubleValue(_ value: Value) -> Double? {
        switch value {
        case .integer(let v): return Double(v)
        case .decimal(let text): return Double(text)
        case .double(let v): return v
        default: return nil
        }
    }

    /// The text of a text-like value (string, uri, uuid, json).
    @inline(__always)
    static func text(_ value: Value) -> String? {
        switch value {
        case .string(let text), .uri(let text), .uuid(let text), .json(let text): return text
        default: return nil
        }
    }

    /// -1, 0 or 1 for values of one comparison class; nil when they cannot be compared.
    /// Numbers compare exactly (integers and decimals as decimals; a double makes both doubles).
    static func compare(_ a: Value, _ b: Value) -> Int? {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x == y ? 0 : x < y ? -1 : 1
        case (.date(let x), .date(let y)): return x == y ? 0 : x < y ? -1 : 1
        case (.bool(let x), .bool(let y)): return x == y ? 0 : !x ? -1 : 1
        case (.binary(let x), .binary(let y)): return x == y ? 0 : x.lexicographicallyPrecedes(y) ? -1 : 1
        case (.double, _), (_, .double):
            guard let x = doubleValue(a), let y = doubleValue(b) else { return nil }
            return x == y ? 0 : x < y ? -1 : 1
        default:
            if let x = decimalText(a), let y = decimalText(b) { return DecimalText.compare(x, y) }
            if let x = text(a), let y = text(b) { return x == y ? 0 : x < y ? -1 : 1 }
            return nil
        }
    }

    // MARK: - Conversions (the failure is the reason, for the error message)

    static func toInteger(_ value: Value) -> Result<Value, CoercionFailure> {
        switch value {
        case .null, .integer: return .success(value)
        case .bool(let flag): return .success(.integer(flag ? 1 : 0))
        case .date(let instant): return .success(.integer(instant.milliseconds))
        case .decimal(let text):
            guard let integer = Int64(DecimalArithmetic.truncated(text)) else {
                return .failure(CoercionFailure("\(text) is out of range for an integer"))
            }
            return .success(.integer(integer))
        case .double(let v):
            guard v.isFinite, let integer = Int64(exactly: v.rounded(.towardZero)) else {
                return .failure(CoercionFailure("\(v) is out of range for an integer"))
            }
            return .success(.integer(integer))
        case .string(let text):
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let integer = Coercion.parseInteger(trimmed) else {
                if let canonical = DecimalText.canonical(trimmed), !canonical.contains(".") {
                    return .failure(CoercionFailure("\(canonical) is out of range for an integer"))
                }
                return .failure(CoercionFailure("'\(Coercion.excerpt(text))' is not an integer"))
            }
            return .success(.integer(integer))
        default:
            return .failure(CoercionFailure("a \(value.typeName) cannot become an integer"))
        }
    }

    static func toDecimal(_ value: Value) -> Result<Value, CoercionFailure> {
        switch value {
        case .null, .decimal: return .success(value)
        case .integer, .double:
            guard let text = decimalText(value) else {
                return .failure(CoercionFailure("\(value) is not a finite number"))
            }
            return .success(.decimal(text))
        case .bool(let flag): return .success(.decimal(flag ? "1" : "0"))
        case .string(let text):
            guard let canonical = DecimalText.canonical(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                return .failure(CoercionFailure("'\(Coercion.excerpt(text))' is not a decimal number"))
            }
            return .success(.decimal(canonical))
        default:
            return .failure(CoercionFailure("a \(value.typeName) cannot become a decimal"))
        }
    }

    static func toDouble(_ value: Value) -> Result<Value, CoercionFailure> {
        switch value {
        case .null, .double: return .success(value)
        case .integer, .decimal: return .success(.double(doubleValue(value) ?? 0))
        case .bool(let flag): return .success(.double(flag ? 1 : 0))
        case .string(let text):
            guard let number = Coercion.parseDouble(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                return .failure(CoercionFailure("'\(Coercion.excerpt(text))' is not a number"))
            }
            return .success(.double(number))
        default:
            return .failure(CoercionFailure("a \(value.typeName) cannot become a double"))
        }
    }

    /// The text form of any value: numbers in canonical form, dates in the stored ISO-8601 form,
    /// booleans `true`/`false`, binary as base64.
    static func string(_ value: Value) -> String {
        switch value {
        case .null: return ""
        case .string(let text), .decimal(let text), .uuid(let text), .uri(let text), .json(let text): return text
        case .integer(let v): return String(v)
        case .double(let v): return String(v)
        case .bool(let flag): return flag ? "true" : "false"
        case .date(let instant): return DateCoding.format(instant)
        case .binary(let bytes): return Data(bytes).base64EncodedString()
        }
    }

    static func toBool(_ value: Value) -> Result<Value, CoercionFailure> {
        switch value {
        case .null, .bool: return .success(value)
        case .integer(let v): return .success(.bool(v != 0))
        case .decimal(let text): return .success(.bool(text != "0"))
        case .double(let v): return .success(.bool(v != 0))
        case .string(let text):
            return Coercion.coerce(text, to: .bool, options: CoercionOptions(trim: true))
        default:
            return .failure(CoercionFailure("a \(value.typeName) cannot become a bool"))
        }
    }

    static func toDate(_ value: Value, format: DateFormat?) -> Result<Value, CoercionFailure> {
        switch value {
        case .null, .date: return .success(value)
        case .integer(let v) where format == nil: return .success(.date(v))
        case .string, .integer, .decimal:
            let text = string(value)
            let format = format ?? .iso8601
            guard let millis = Coercion.parseDate(text.trimmingCharacters(in: .whitespacesAndNewlines), format: format)
            else {
                let name = format == .iso8601 ? "an ISO-8601 date" : "a date in format \(format)"
                return .failure(CoercionFailure("'\(Coercion.excerpt(text))' is not \(name)"))
            }
            return .success(.date(millis))
        default:
            return .failure(CoercionFailure("a \(value.typeName) cannot become a date"))
        }
    }

    static func toUUID(_ value: Value) -> Result<Value, CoercionFailure> {
        switch value {
        case .null, .uuid: return .success(value)
        case .string(let text):
            guard let canonical = Coercion.canonicalUUID(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                return .failure(CoercionFailure("'\(Coercion.excerpt(text))' is not a UUID"))
            }
            return .success(.uuid(canonical))
        default:
            return .failure(CoercionFailure("a \(value.typeName) cannot become a UUID"))
        }
    }

    /// A random (version 4) UUID in canonical lowercase form.
    static func randomUUID() -> Value {
        .uuid(UUID().uuidString.lowercased())
    }

    /// `["a","b"]`: a JSON array of strings.
    static func jsonArray(_ items: [Substring]) -> String {
        var out = "["
        for (index, item) in items.enumerated() {
            if index > 0 { out += "," }
            out += jsonString(item)
        }
        return out + "]"
    }

    // MARK: - Text functions (the evaluator and their SQL forms, ExpressionSQLFunctions, call these)

    /// `lowercase(text)`: Unicode lowercase mapping (`"ÀB"` → `"àb"`).
    static func lowercase(_ text: String) -> String { text.lowercased() }

    /// `uppercase(text)`: Unicode uppercase mapping (`"ß"` → `"SS"`).
    static func uppercase(_ text: String) -> String { text.uppercased() }

    /// `trim(text)`: without leading and trailing Unicode whitespace and newlines.
    static func trim(_ text: String) -> String { text.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// `split(text, separator, index)`: the part at `index` (negative counts from the end) of the
    /// text split at every occurrence of a non-empty separator, by Characters; nil outside.
    static func splitPart(_ text: String, separator: String, index: Int64) -> Value {
        if let part = asciiSplitPart(text, separator: separator, index: index) { return part }
        let parts = text.split(separator: separator, omittingEmptySubsequences: false)
        let resolved = index < 0 ? Int64(parts.count) + index : index
        guard resolved >= 0, resolved < Int64(parts.count) else { return .null }
        return .string(String(parts[Int(resolved)]))
    }

    /// `split(text, separator, index)` over bytes, giving exactly what the Character-based split
    /// gives: the separator is ASCII without CR or LF, and every match must sit on grapheme
    /// boundaries (no prepend character just before it, no combining mark, joiner or spacing
    /// mark just after it). Returns nil to send anything else to the general split.
    static func asciiSplitPart(_ text: String, separator: String, index: Int64) -> Value? {
        var text = text
        var separator = separator
        return text.withUTF8 { t -> Value? in
            separator.withUTF8 { p -> Value? in
                guard !p.isEmpty, p.allSatisfy({ $0 < 0x80 && $0 != 13 && $0 != 10 }) else { return nil }
                var starts: [Int] = [0]
                var ends: [Int] = []
                var j = 0
                let last = t.count - p.count
                while j <= last {
                    var matches = true
                    for k in 0..<p.count where t[j + k] != p[k] {
                        matches = false
                        break
                    }
                    if matches {
                        guard onGraphemeBoundaries(t, start: j, end: j + p.count) else { return nil }
                        ends.append(j)
                        j += p.count
                        starts.append(j)
                        if index >= 0 && Int64(ends.count) > index { break }
                    } else {
                        j += 1
                    }
                }
                if ends.count < starts.count { ends.append(t.count) }
                let count = Int64(starts.count)
                let resolved = index < 0 ? count + index : index
                guard resolved >= 0, resolved < count else { return .null }
                let piece = UnsafeBufferPointer(rebasing: t[starts[Int(resolved)]..<ends[Int(resolved)]])
                return .string(String(decoding: piece, as: UTF8.self))
            }
        }
    }

    /// True when the bytes `start..<end` (an ASCII match) neither follow a prepend character nor
    /// precede an extending one, so that Characters break at both ends.
    private static func onGraphemeBoundaries(_ t: UnsafeBufferPointer<UInt8>, start: Int, end: Int) -> Bool {
        if start > 0, t[start - 1] >= 0x80 {
            var lead = start - 1
            while lead > 0, t[lead] & 0xC0 == 0x80 { lead -= 1 }
            guard let scalar = decodeScalar(t, at: lead), !isPrepend(scalar) else { return false }
        }
        if end < t.count, t[end] >= 0x80 {
            guard let scalar = decodeScalar(t, at: end) else { return false }
            let properties = scalar.properties
            if properties.isGraphemeExtend || properties.generalCategory == .spacingMark || scalar.value == 0x200D
                || scalar.value == 0x0E33 || scalar.value == 0x0EB3 || (0x1F3FB...0x1F3FF).contains(scalar.value)
            {
                return false
            }
        }
        return true
    }

    private static func decodeScalar(_ t: UnsafeBufferPointer<UInt8>, at index: Int) -> Unicode.Scalar? {
        var iterator = t[index...].makeIterator()
        var decoder = UTF8()
        if case .scalarValue(let scalar) = decoder.decode(&iterator) { return scalar }
        return nil
    }

    /// Unicode's Grapheme_Cluster_Break=Prepend characters (UAX #29).
    private static func isPrepend(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0600...0x0605, 0x06DD, 0x070F, 0x0890...0x0891, 0x08E2, 0x0D4E, 0x110BD, 0x110CD, 0x111C2...0x111C3,
            0x1193F, 0x11941, 0x11A3A, 0x11A84...0x11A89, 0x11D46, 0x11F02:
            return true
        default:
            return false
        }
    }

    static func jsonString(_ text: Substring) -> String {
        JSONEscaping.quote(text)
    }
}
