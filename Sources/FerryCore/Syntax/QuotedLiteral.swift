/// The quoted string literal of ferry's small languages (predicates and expressions): `"…"` or
/// `'…'` with `\n \t \r \0 \\ \" \'` and `\uXXXX` / `\u{X…}` escapes.
enum QuotedLiteral {
    /// Reads the literal whose opening quote is at `position`; leaves `position` after the closing
    /// quote. Errors are made by `error(message, byteOffset)` so each language locates them.
    static func scan(
        _ bytes: [UInt8], position: inout Int, quote: UInt8, start: Int, error: (String, Int) -> FerryError
    ) throws(FerryError) -> String {
        func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }
        position += 1
        var result: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error("unterminated string literal", start) }
            position += 1
            if byte == quote { break }
            guard byte == UInt8(ascii: "\\") else {
                result.append(byte)
                continue
            }
            let escapeStart = position - 1
            guard let escaped = peek() else { throw error("unterminated string literal", start) }
            position += 1
            switch escaped {
            case UInt8(ascii: "n"): result.append(0x0A)
            case UInt8(ascii: "t"): result.append(0x09)
            case UInt8(ascii: "r"): result.append(0x0D)
            case UInt8(ascii: "0"): result.append(0x00)
            case UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "'"): result.append(escaped)
            case UInt8(ascii: "u"):
                var hex: [UInt8] = []
                if peek() == UInt8(ascii: "{") {
                    position += 1
                    while let b = peek(), b != UInt8(ascii: "}"), hex.count < 8 {
                        hex.append(b)
                        position += 1
                    }
                    guard peek() == UInt8(ascii: "}") else {
                        throw error("invalid Unicode escape; expected \\uXXXX or \\u{X…}", escapeStart)
                    }
                    position += 1
                } else {
                    while hex.count < 4, let b = peek() {
                        hex.append(b)
                        position += 1
                    }
                }
                guard let code = UInt32(String(decoding: hex, as: UTF8.self), radix: 16),
                    let scalar = Unicode.Scalar(code)
                else { throw error("invalid Unicode escape; expected \\uXXXX or \\u{X…}", escapeStart) }
                result.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                throw error(
                    "unknown escape sequence '\\\(String(decoding: [escaped], as: UTF8.self))' in string literal",
                    escapeStart)
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
